#!/bin/bash
# The index writer against Debian's kmod 30 depmod, byte for byte, and the index reader:
#  (a) real trees: depmod writes text and .bin; index-from-text rebuilds each of the five .bin
#      kinds from depmod's text and must produce the very same bytes;
#  (b) the reader returns every modules.dep line by its module name, and survives damaged files;
#  (c) synthetic cases: empty index, shared prefixes, value order, depmod's input quirks.
. "$(dirname "$0")/lib.sh"
X=$B/testsuite/index-from-text
T=$(tmpdir); trap 'rm -rf "$T"' EXIT

depmod=
for d in /usr/sbin/depmod /sbin/depmod; do
	if [ -x "$d" ] && "$d" -V 2>/dev/null | grep -q '^kmod version'; then depmod=$d; break; fi
done
now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }

# rebuild KIND DIR OUT: index-from-text on depmod's text in DIR.
rebuild() {
	local kind=$1 d=$2 out=$3
	case $kind in
	dep) $W "$X" dep "$d/modules.dep" "$out" ;;
	alias) $W "$X" alias "$d/modules.alias" "$out" "$d/modules.dep" ;;
	symbols) $W "$X" symbols "$d/modules.symbols" "$out" "$d/modules.dep" ;;
	builtin) $W "$X" builtin "$d/modules.builtin" "$out" ;;
	builtin.alias) $W "$X" builtin.alias "$d/modules.builtin.modinfo" "$out" ;;
	esac
}

# lookup_ok FILE KEY...: the reader ends cleanly (exit 0 or 1, no signal, no sanitizer report).
lookup_ok() {
	local rc
	$W "$X" lookup "$@" >/dev/null 2>"$T/lookup.err"; rc=$?
	[ $rc -le 1 ] && ! grep -qE 'Sanitizer|runtime error' "$T/lookup.err"
}

# ---- (a) real trees --------------------------------------------------------------------------
reader_era= reader_dir=
for era in $eras; do
	dir=$corpus/$era
	if [ ! -f "$dir/ok" ]; then
		missing "index-$era" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels $era)"
		continue
	fi
	if [ -z "$depmod" ]; then
		missing "index-$era" "Debian's kmod depmod is not installed (apt-get install kmod)"
		continue
	fi
	kver=$(cat "$dir/kver")
	# root/lib/modules may be a symlink (usrmerge): the trailing slash follows it.
	if ! mdir=$(cd "$dir/root/lib/modules/$kver/" && pwd -P); then
		fail "index-$era: no module tree for $kver in $dir"
		continue
	fi
	root=$T/$era
	mkdir -p "$root/lib/modules"
	# A symlink farm: depmod replaces files by rename, so the corpus is never written.
	if ! cp -rs "$mdir/" "$root/lib/modules/$kver"; then
		fail "index-$era: cannot copy $mdir"
		continue
	fi
	t0=$(now)
	"$depmod" -b "$root" "$kver" 2>/dev/null; rc=$?
	t1=$(now)
	d=$root/lib/modules/$kver
	if [ $rc -ne 0 ] || [ ! -s "$d/modules.dep.bin" ]; then
		fail "index-$era: depmod exited $rc"
		continue
	fi
	echo "$era ($kver): depmod $(ms "$t0" "$t1") ms, $(wc -l <"$d/modules.dep") modules"
	for kind in dep alias symbols builtin builtin.alias; do
		rm -f "$T/ours.bin"
		t0=$(now)
		rebuild $kind "$d" "$T/ours.bin" 2>"$T/err"; rc=$?
		t1=$(now)
		theirs=$d/modules.$kind.bin
		if [ $rc -eq 0 ] && cmp -s "$T/ours.bin" "$theirs"; then
			echo "$era $kind: $(stat -c %s "$theirs") bytes identical, built in $(ms "$t0" "$t1") ms"
			pass "index-$kind-$era"
		else
			head -3 "$T/err"
			cmp "$T/ours.bin" "$theirs" 2>&1 | head -1
			fail "index-$kind-$era: exit $rc, $(stat -c %s "$T/ours.bin" 2>/dev/null) bytes vs depmod's $(stat -c %s "$theirs")"
		fi
	done
	[ -n "$reader_era" ] || reader_era=$era reader_dir=$d
done

# ---- (b) the reader ----------------------------------------------------------------------------
if [ -n "$reader_era" ]; then
	d=$reader_dir
	bin=$d/modules.dep.bin
	# Every module's key (base name to its first '.', '-' as '_') must give back its line.
	awk -F: '{ n = split($1, p, "/"); k = p[n]; sub(/\..*/, "", k); gsub("-", "_", k); print k }' \
		"$d/modules.dep" >"$T/keys"
	xargs -a "$T/keys" -d '\n' $W "$X" lookup "$bin" >"$T/values" 2>"$T/err"; rc=$?
	if [ $rc -eq 0 ] && cmp -s "$T/values" "$d/modules.dep"; then
		pass "reader-dep-$reader_era ($(wc -l <"$T/keys") keys, each gives exactly its modules.dep line)"
	else
		fail "reader-dep-$reader_era: exit $rc, $(diff "$d/modules.dep" "$T/values" | grep -c '^[<>]') lines differ"
	fi
	# Absent keys: a prefix of a key, a key plus a byte, a byte beyond the child tables.
	k=$(head -1 "$T/keys")
	out=$($W "$X" lookup "$bin" "${k%?}" "${k}x" "" "zzzzzzzz" $'\x7f' $'\xc3\xa9' 2>&1); rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then pass "reader-absent"; else fail "reader-absent: exit $rc: $out"; fi
	# Keys of several modules: every value, in module order (= ascending priority), like the
	# text.  Bracketed aliases are left out so that awk's normalisation is a plain gsub.
	awk 'NR > 1 { m = $NF; a = substr($0, 7, length($0) - 7 - length(m)); if (a ~ /[][]/) next;
		gsub("-", "_", a); if (!(a in n)) order[++k] = a; v[a] = v[a] m "\n"; n[a]++ }
	     END { for (i = 1; i <= k; i++) if (n[order[i]] > 1) { print order[i] > KEYS; printf "%s", v[order[i]] } }' \
		KEYS="$T/mkeys" "$d/modules.alias" >"$T/mexpected"
	xargs -a "$T/mkeys" -d '\n' $W "$X" lookup "$d/modules.alias.bin" >"$T/mvalues" 2>"$T/err"; rc=$?
	if [ $rc -eq 0 ] && [ -s "$T/mkeys" ] && cmp -s "$T/mvalues" "$T/mexpected"; then
		pass "reader-alias-multi ($(wc -l <"$T/mkeys") keys of several modules, $(wc -l <"$T/mvalues") values in module order)"
	else
		fail "reader-alias-multi: exit $rc, $(diff "$T/mexpected" "$T/mvalues" | grep -c '^[<>]') lines differ"
	fi

	# Damaged files: truncations everywhere, bad headers, flipped bytes. Either a clean answer
	# or "Bad message"; never a crash.
	size=$(stat -c %s "$bin")
	sample=$(awk 'NR % 97 == 1' "$T/keys" | head -40)
	bad=0 total=0 ebadmsg=0
	for off in 0 1 4 8 11 12 13 100 $(seq $((size / 17)) $((size / 17)) $((size - 1))) $((size - 4)) $((size - 1)); do
		head -c "$off" "$bin" >"$T/trunc.bin"
		total=$((total + 1))
		# shellcheck disable=SC2086
		lookup_ok "$T/trunc.bin" $sample || { bad=$((bad + 1)); echo "truncated at $off: $(head -2 "$T/lookup.err")"; }
		grep -q 'Bad message' "$T/lookup.err" && ebadmsg=$((ebadmsg + 1))
	done
	if [ $bad -eq 0 ] && [ $ebadmsg -eq $total ]; then
		pass "reader-truncated ($total lengths, all Bad message)"
	else
		fail "reader-truncated: $bad crashes, $ebadmsg of $total said Bad message"
	fi
	# Garbage: wrong magic, wrong major version, random bytes behind a good header.
	printf 'not an index at all' >"$T/g1.bin"
	printf '\xb0\x07\xf4\x57\x00\x03\x00\x01\x00\x00\x00\x0c' >"$T/g2.bin"
	{ printf '\xb0\x07\xf4\x57\x00\x02\x00\x01\xe0\x00\x00\x0c'; head -c 65536 /dev/urandom; } >"$T/g3.bin"
	ok=1
	for g in g1 g2; do
		out=$($W "$X" lookup "$T/$g.bin" x 2>&1); rc=$?
		case $rc:$out in 1:*"Bad message"*) ;; *) ok=0; echo "$g: exit $rc: $out";; esac
	done
	# shellcheck disable=SC2086
	lookup_ok "$T/g3.bin" $sample || { ok=0; echo "g3: $(head -2 "$T/lookup.err")"; }
	# A child pointing back at its own node: the walk must still end (one key byte per step).
	printf '\xb0\x07\xf4\x57\x00\x02\x00\x01\x20\x00\x00\x0c\x61\x61\x20\x00\x00\x0c' >"$T/g4.bin"
	out=$($W "$X" lookup "$T/g4.bin" aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 2>&1); rc=$?
	if [ $rc -ne 0 ] || [ -n "$out" ]; then ok=0; echo "g4: exit $rc: $out"; fi
	# A value count far beyond the file.
	printf '\xb0\x07\xf4\x57\x00\x02\x00\x01\x40\x00\x00\x0c\x7f\xff\xff\xff\x00\x00\x00\x00v\x00' >"$T/g5.bin"
	out=$($W "$X" lookup "$T/g5.bin" "" 2>&1); rc=$?
	case $rc:$out in 1:*"Bad message"*) ;; *) ok=0; echo "g5: exit $rc: $out";; esac
	if [ $ok = 1 ]; then pass "reader-garbage"; else fail "reader-garbage"; fi
	# Flipped bytes at 200 spread offsets, each file probed with the sample keys.
	bad=0
	for i in $(seq 1 200); do
		cp "$bin" "$T/flip.bin"
		off=$(((i * 7919 * 131) % size))
		printf "\\x$(printf %02x $(((i * 37) % 256)))" | dd of="$T/flip.bin" bs=1 seek=$off conv=notrunc status=none
		# shellcheck disable=SC2086
		lookup_ok "$T/flip.bin" $sample || { bad=$((bad + 1)); echo "flip at $off: $(head -2 "$T/lookup.err")"; }
	done
	if [ $bad -eq 0 ]; then pass "reader-flipped-bytes (200 files)"; else fail "reader-flipped-bytes: $bad crashes"; fi
fi

# ---- (c) synthetic -------------------------------------------------------------------------------
# The empty index: exactly the 12 header bytes, root at 12 with no flags; and depmod agrees.
: >"$T/empty.txt"
"$X" records "$T/empty.txt" "$T/empty.bin"
if [ "$(od -An -tx1 "$T/empty.bin" | tr -d ' \n')" = b007f457000200010000000c ]; then
	pass "empty-index"
else
	fail "empty-index: $(od -An -tx1 "$T/empty.bin")"
fi
if [ -n "$depmod" ]; then
	# depmod on a tree with no modules, crafted builtin files full of depmod's input quirks:
	# shared prefixes, one key many values at equal priority, lines depmod refuses or mangles.
	s=$T/syn/lib/modules/1.0.0
	mkdir -p "$s"
	: >"$s/modules.order"
	printf '%s\n' kernel/a/a.ko kernel/a/ab.ko kernel/a/abc.ko kernel/a/abd.ko kernel/b/abcdef.ko \
		kernel/a/x.y-z.ko kernel/b/a-b.ko kernel/c/plain kernel/d/dup.ko kernel/e/dup.ko "" \
		/abs/path.ko " space" k/.hidden "k/a b.ko" kernel/f/q-r.ko.xz >"$s/modules.builtin"
	printf 'last-no-newline' >>"$s/modules.builtin"
	printf '%s\0' a.alias=foo b.alias=foo c.alias=foo a.alias=fo b.alias=f a.alias=foobar \
		'a.alias=x-[a-b]-y' a.alias='a[b[c]-d' 'a.alias=x[]-]y' 'a.alias=[]' m-n.alias=bar-baz \
		a.description=hi noDot=zz 'a.alias=un]match-ed' 'a.alias=un[match-ed' a.alias= \
		b.alias=p a.alias=p a.alias=p a.alias b.alias=swallowed c.alias=kept . b.alias=ok2 \
		= .alias=x a.b.alias=y alias=z 'x.alias=a b' >"$s/modules.builtin.modinfo"
	printf 'tail.alias=unterminated' >>"$s/modules.builtin.modinfo"
	"$depmod" -b "$T/syn" 1.0.0 2>/dev/null
	if cmp -s "$T/empty.bin" "$s/modules.dep.bin"; then pass "empty-index-depmod"; else fail "empty-index-depmod: depmod's differs"; fi
	for kind in builtin builtin.alias; do
		rebuild $kind "$s" "$T/syn.bin" 2>/dev/null
		if cmp -s "$T/syn.bin" "$s/modules.$kind.bin"; then
			pass "synthetic-$kind-depmod ($(stat -c %s "$T/syn.bin") bytes identical)"
		else
			fail "synthetic-$kind-depmod: differs from depmod's"
		fi
	done
	out=$("$X" lookup "$s/modules.builtin.alias.bin" foo p | tr '\n' ' ')
	if [ "$out" = "c b a a a b " ]; then pass "equal-priority-last-first (depmod: $out)"; else fail "equal-priority-last-first: $out"; fi
fi
# Mixed priorities: ascending, and the last added first among equals; the empty key on the root.
printf 'k\t5\te\nk\t1\ta\nk\t5\tf\nk\t0\tz\nk\t1\tb\n\t3\troot\nkk\t2\tx\n' >"$T/prio.txt"
"$X" records "$T/prio.txt" "$T/prio.bin"
out=$("$X" lookup -p "$T/prio.bin" k "" kk | tr '\n' '|')
if [ "$out" = "0 z|1 b|1 a|5 f|5 e|3 root|2 x|" ]; then pass "value-order"; else fail "value-order: $out"; fi
# Prefix chains and branching: every key finds its own value.
printf '%s\n' a ab abc abcd abd b ba bab '' abcdefghij abcdefghik z zz | awk '{ print $0 "\t" NR "\tv" NR }' >"$T/pfx.txt"
"$X" records "$T/pfx.txt" "$T/pfx.bin"
ok=1
while IFS= read -r line; do
	k=${line%%$'\t'*} rest=${line#*$'\t'}
	[ "$("$X" lookup -p "$T/pfx.bin" "$k")" = "${rest%%$'\t'*} ${rest#*$'\t'}" ] || { ok=0; echo "key '$k'"; }
done <"$T/pfx.txt"
if [ $ok = 1 ]; then pass "shared-prefixes"; else fail "shared-prefixes"; fi
# A 4000-deep chain of nested keys (8M key bytes): no recursion to overflow.
awk 'BEGIN { k = ""; for (i = 1; i <= 4000; i++) { k = k "a"; print k "\t" i "\tv" } }' >"$T/deep.txt"
t0=$(now)
if $W "$X" records "$T/deep.txt" "$T/deep.bin" &&
	[ "$("$X" lookup -p "$T/deep.bin" "$(tail -1 "$T/deep.txt" | cut -f1)")" = "4000 v" ]; then
	pass "deep-chain ($(stat -c %s "$T/deep.bin") bytes in $(ms "$t0" "$(now)") ms)"
else
	fail "deep-chain"
fi
# 400000 keys (ten times a modules.alias): the writer scales.
awk 'BEGIN { for (i = 0; i < 400000; i++) printf "pci:v%dd%dsv*sd*bc*sc*i*\t%d\tmod%d\n", (i * 2654435761) % 4294967296, i, i % 4000, i % 4000 }' >"$T/big.txt"
t0=$(now)
if $W "$X" records "$T/big.txt" "$T/big.bin"; then
	t1=$(now)
	pass "big-index (400000 keys, $(stat -c %s "$T/big.bin") bytes in $(ms "$t0" "$t1") ms)"
else
	fail "big-index"
fi
# Bytes depmod cannot index are refused, not written.
printf 'caf\xc3\xa9\t0\tv\n' >"$T/utf8.txt"
if ! "$X" records "$T/utf8.txt" "$T/utf8.bin" 2>"$T/err" && grep -q 'Invalid argument' "$T/err"; then
	pass "non-ascii-refused"
else
	fail "non-ascii-refused"
fi
