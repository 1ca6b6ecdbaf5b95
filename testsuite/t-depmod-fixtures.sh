#!/bin/bash
# depmod on synthetic trees (gen-fixtures --tree): for each case, Debian's kmod 30 depmod and ours
# run on two copies of the same tree with the same options; the exit codes, the set of files
# written, every file byte for byte, stdout and stderr (the copy's path replaced by ROOT) must be
# the same. Allowed differences, each checked to be exactly that and nothing more:
#  - ours also writes modules.weakdep (kmod 33's file: checked against the modules' weakdep=
#    records) and modules.namespaces (checked by t-depmod-ns.sh);
#  - modules.dep.bin: ours adds one namespace record ("kmodns-ns/1 ...", priority 0xffffffff)
#    after each module's line; without them its records are kmod's, in kmod's order;
#  - modules.symbols: kmod lists the namespace strings of exports without CRC as symbols (a kmod
#    bug, as on the real trees: see t-depmod.sh); ours must be kmod's minus those lines, and our
#    modules.symbols.bin the index of our modules.symbols.
# stderr is kmod's line for line: the cycle report too, in kmod's order; and without -E ours
# says nothing about vmlinux's namespaces (only -v or --ns-check does).
# On a failure the script prints the difference (a diff of the text, or of the decoded index).
. "$(dirname "$0")/lib.sh"
missing() { if [ "${CI:-}" = true ]; then fail "$1: $2"; else skip "$1: $2"; fi; }
kmod_depmod=
for d in /usr/sbin/depmod /sbin/depmod; do
	if [ -x "$d" ] && "$d" -V 2>/dev/null | grep -q '^kmod version'; then kmod_depmod=$d; break; fi
done
[ -n "$kmod_depmod" ] || { missing "depmod-fixtures" "Debian's kmod depmod is not installed (apt-get install kmod)"; exit 0; }
kmod_modinfo=${kmod_depmod%/depmod}/modinfo
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null || { fail "gen-fixtures --tree failed"; exit 1; }

files="modules.dep modules.dep.bin modules.alias modules.alias.bin modules.softdep modules.symbols modules.symbols.bin modules.builtin.alias.bin modules.builtin.bin modules.devname"

# name case options...; @ROOT@ is the copy of OUTDIR/<case> that depmod runs on (-b), @MODDIR@
# its module directory; @TREE@ is OUTDIR/<case> itself (one path for both runs: an absolute path
# in modules.dep must be the same).
runs=(
	"chain chain"
	"dag dag"
	"order order"
	"dups dups"
	"dups-w dups -w"
	"builtin builtin"
	"builtin-w builtin -w"
	"devname devname"
	"cycle cycle"
	"cycles cycles"
	"weak weak"
	"weak-e weak -e"
	"weak-eF weak -e -F @ROOT@/System.map"
	"config config -C @ROOT@/depmod.conf"
	"config-ext config -C @ROOT@/depmod-ext.conf"
	"config-parse config -C @ROOT@/depmod-cfg.conf"
	"config-rank config -C @ROOT@/depmod-rank.conf"
	"config-dirs config -C @ROOT@/depmod.d --config=@ROOT@/depmod.d2 -C @ROOT@/no-such-dir -C @ROOT@/single-file"
	"files config @MODDIR@/kernel/drivers/cf/cf_users.ko @MODDIR@/updates/cf_all.ko @TREE@/ext-modules2/cf_ext.ko"
	"files-a config -a @MODDIR@/kernel/drivers/cf/cf_users.ko"
	"files-relative config kernel/drivers/cf/cf_users.ko"
	"files-missing config @MODDIR@/kernel/drivers/cf/no-such.ko"
	"files-twice config @MODDIR@/updates/cf_all.ko @MODDIR@/updates/cf_all.ko"
	"crc-E crc -E @ROOT@/Module.symvers"
	"crc-eE crc -e -E @ROOT@/Module.symvers"
	"crc-eE-missing crc -e -E @ROOT@/no-such-Module.symvers"
	"nsimport nsimport -E @ROOT@/Module.symvers"
)

# Prints an index file as "key<TAB>priority<TAB>value" lines, keys in trie order.
dump_index() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
if not d:
    print('(empty file)'); sys.exit()
magic, version, root = struct.unpack('>III', d[:12])
print('magic %08x version %08x root %08x' % (magic, version, root))
def node(word, key):
    p = word & 0x0FFFFFFF
    if word & 0x80000000:
        e = d.index(b'\0', p); key += d[p:e].decode('ascii', 'replace'); p = e + 1
    kids = []
    if word & 0x20000000:
        first, last = d[p], d[p + 1]; p += 2
        for i in range(last - first + 1):
            c, = struct.unpack('>I', d[p:p + 4]); p += 4
            if c: kids.append((chr(first + i), c))
    if word & 0x40000000:
        n, = struct.unpack('>I', d[p:p + 4]); p += 4
        for _ in range(n):
            prio, = struct.unpack('>I', d[p:p + 4]); p += 4
            e = d.index(b'\0', p); print('%s\t%d\t%s' % (key, prio, d[p:e].decode('ascii', 'replace'))); p = e + 1
    for ch, c in kids:
        node(c, key + ch)
node(root, '')
EOF
}

# show_diff A B FILE: what differs, at most 40 lines.
show_diff() {
	case $3 in
	*.bin)
		dump_index "$1" >"$T/dump.kmod" 2>&1; dump_index "$2" >"$T/dump.ours" 2>&1
		if cmp -s "$T/dump.kmod" "$T/dump.ours"; then
			echo "  $3: same records, different bytes: $(cmp "$1" "$2" 2>&1)"
		else
			echo "  $3 decoded, kmod (<) vs ours (>):"; diff "$T/dump.kmod" "$T/dump.ours" | head -40 | sed 's/^/    /'
		fi ;;
	*) echo "  $3, kmod (<) vs ours (>):"; diff "$1" "$2" | head -40 | sed 's/^/    /' ;;
	esac
}

# Every file under DIR with its checksum, to see what a run wrote.
snapshot() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0r sha256sum); }

for run in "${runs[@]}"; do
	read -r name case opts <<<"$run"
	kver=1.0.0-$case
	declare -A rc=()
	for who in kmod ours; do
		root=$T/run/$name/$who
		mkdir -p "$T/run/$name"; cp -a "$T/trees/$case" "$root"
		snapshot "$root" >"$T/$who.before"
		args=()
		for o in $opts; do
			o=${o//@MODDIR@/$root/lib/modules/$kver}; o=${o//@TREE@/$T/trees/$case}
			args+=("${o//@ROOT@/$root}")
		done
		if [ $who = kmod ]; then
			# bounded: kmod 30's cycle report can grow without end (see gen-fixtures' cycle case)
			(ulimit -v 4000000; exec timeout 120 "$kmod_depmod" -b "$root" "$kver" "${args[@]}") >"$T/$who.out" 2>"$T/$who.err"; rc[$who]=$?
		else
			$W "$B/tools/depmod" -b "$root" "$kver" "${args[@]}" >"$T/$who.out" 2>"$T/$who.err"; rc[$who]=$?
		fi
		snapshot "$root" >"$T/$who.after"
		# files new or changed, relative to the module directory
		diff "$T/$who.before" "$T/$who.after" | sed -n 's/^> [0-9a-f]*  \.\///p' |
			sed "s|^lib/modules/$kver/||" | sort >"$T/$who.written"
		for s in out err; do sed "s|$root|ROOT|g" "$T/$who.$s" >"$T/$who.$s.n"; done
	done
	if [ "${rc[kmod]}" = "${rc[ours]}" ]; then
		pass "$name-exit (${rc[ours]})"
	else
		head -5 "$T/ours.err"; fail "$name-exit: ours exited ${rc[ours]}, kmod ${rc[kmod]}"
	fi
	# ours' own files, when kmod wrote its files at all
	if [ -s "$T/kmod.written" ]; then
		grep -vx -e modules.weakdep -e modules.namespaces -e modules.kmodns.cache "$T/ours.written" >"$T/ours.written.kmod"
	else
		cp "$T/ours.written" "$T/ours.written.kmod"
	fi
	# the harness itself: a successful kmod run wrote all its files
	if [ "${rc[kmod]}" = 0 ] && [ "$(grep -cxF "$(printf '%s\n' $files)" "$T/kmod.written")" -ne 10 ]; then
		fail "$name-harness: kmod wrote only $(tr '\n' ' ' <"$T/kmod.written")"
	fi
	if cmp -s "$T/kmod.written" "$T/ours.written.kmod"; then
		pass "$name-written ($(wc -l <"$T/kmod.written") files$(cmp -s "$T/ours.written" "$T/ours.written.kmod" || echo ", and ours' modules.weakdep, modules.namespaces, modules.kmodns.cache"))"
	else
		diff "$T/kmod.written" "$T/ours.written.kmod" | sed 's/^/  /'
		fail "$name-written: the files written differ (kmod <, ours >)"
	fi
	K=$T/run/$name/kmod/lib/modules/$kver O=$T/run/$name/ours/lib/modules/$kver
	ns=$T/trees/$case/kmod-namespace-strings
	for f in $(sort -u "$T/kmod.written" "$T/ours.written"); do
		a=$K/$f b=$O/$f
		if [ "$f" = modules.weakdep ] && [ ! -f "$a" ] && [ -f "$b" ]; then
			# kmod 33's file: a header, then "weakdep <module> <value>" per record, module order
			{
				echo "# Weak dependencies extracted from modules themselves."
				sed 's/:.*//' "$O/modules.dep" | while read -r m; do
					n=${m##*/}; n=${n%%.*}; n=${n//-/_}
					case $m in /*) p=$m ;; *) p=$O/$m ;; esac
					"$kmod_modinfo" -F weakdep "$p" | sed "s/^/weakdep $n /"
				done
			} >"$T/weakdep"
			if cmp -s "$T/weakdep" "$b"; then
				pass "$name-$f (ours only: the modules' weakdep records)"
			else
				show_diff "$T/weakdep" "$b" "$f (expected < vs ours >)"; fail "$name-$f: not the modules' weakdep records"
			fi
			continue
		elif [ "$f" = modules.namespaces ] && [ ! -f "$a" ]; then
			continue # ours only, checked by t-depmod-ns.sh
		elif [ ! -f "$a" ] || [ ! -f "$b" ]; then
			continue # reported by -written
		elif cmp -s "$a" "$b"; then
			pass "$name-$f ($(stat -c %s "$b") bytes)"
		elif [ "$f" = modules.dep.bin ]; then
			# kmod's records, then one namespace record after each module's own
			dump_index "$a" | tail -n +2 >"$T/dep.kmod"
			dump_index "$b" | tail -n +2 >"$T/dep.ours.all"
			rec=$'\t4294967295\tkmodns-ns/1 '
			grep -v -- "$rec" "$T/dep.ours.all" >"$T/dep.ours"
			n_rec=$(grep -c -- "$rec" "$T/dep.ours.all"); n_mod=$(wc -l <"$O/modules.dep")
			misplaced=$(awk -F'\t' '$2 == 4294967295 && $3 ~ /^kmodns-ns\/1 / && prev != $1 { n++ } { prev = $1 } END { print n + 0 }' "$T/dep.ours.all")
			if cmp -s "$T/dep.kmod" "$T/dep.ours" && [ "$n_rec" -eq "$n_mod" ] && [ "$misplaced" -eq 0 ]; then
				pass "$name-$f (kmod's records plus $n_rec namespace records)"
			else
				echo "  $f decoded without our namespace records, kmod (<) vs ours (>); $n_rec records for $n_mod modules, $misplaced misplaced:"
				diff "$T/dep.kmod" "$T/dep.ours" | head -40 | sed 's/^/    /'
				fail "$name-$f: not kmod's records plus one namespace record per module"
			fi
		elif [ "$f" = modules.symbols ] && [ -s "$ns" ]; then
			diff "$a" "$b" | grep '^[<>]' >"$T/symdiff"
			extra=$(grep -c '^<' "$T/symdiff"); ours_only=$(grep -c '^>' "$T/symdiff")
			bogus=$(grep '^< alias symbol:' "$T/symdiff" | awk '{ sub("symbol:", "", $3); print $3 }' | grep -cxFf "$ns")
			if [ "$ours_only" -eq 0 ] && [ "$extra" -eq "$bogus" ]; then
				pass "$name-$f (kmod's plus $extra namespace-string lines)"
			else
				show_diff "$a" "$b" "$f"; fail "$name-$f: differs beyond kmod's namespace-string lines"
			fi
		elif [ "$f" = modules.symbols.bin ] && [ -s "$ns" ]; then
			"$B/testsuite/index-from-text" symbols "$O/modules.symbols" "$T/symbols.bin" "$O/modules.dep"
			if cmp -s "$T/symbols.bin" "$b"; then
				pass "$name-$f (the index of our modules.symbols)"
			else
				show_diff "$T/symbols.bin" "$b" "$f"; fail "$name-$f: not the index of our modules.symbols"
			fi
		else
			show_diff "$a" "$b" "$f"
			fail "$name-$f: differs from kmod's ($(stat -c %s "$a") vs $(stat -c %s "$b") bytes)"
		fi
	done
	if cmp -s "$T/kmod.out.n" "$T/ours.out.n"; then
		pass "$name-stdout"
	else
		show_diff "$T/kmod.out.n" "$T/ours.out.n" stdout; fail "$name-stdout: differs from kmod's"
	fi
	if cmp -s "$T/kmod.err.n" "$T/ours.err.n"; then
		pass "$name-stderr ($(wc -l <"$T/ours.err.n") lines)"
	else
		show_diff "$T/kmod.err.n" "$T/ours.err.n" stderr; fail "$name-stderr: differs from kmod's"
	fi
	unset rc
done
