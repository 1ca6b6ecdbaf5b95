#!/bin/bash
# modprobe's namespace check without loading anything (-n, -D, --show-depends): the sample and
# nsimport fixture trees and the real 6.1 and latest trees. Each refusal is one line in kmod's
# voice with the fix; nothing of a refused load set is listed for insertion; Debian's kmod 30
# modprobe gives the same insmod lines wherever we allow.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }
"$B/testsuite/gen-fixtures" --tree "$T/tr" >/dev/null || { fail "gen-fixtures --tree failed"; exit 1; }
M=$B/tools/modprobe
have_kmod=false
[ -x /sbin/modprobe ] && /sbin/modprobe -V 2>/dev/null | grep -q kmod && have_kmod=true

# mp NAME ROOT KVER ARGS...: our modprobe on ROOT's tree; stdout T/out, stderr T/err, rc $rc.
mp() {
	local root=$1 kver=$2; shift 2
	$W "$M" -d "$root" -S "$kver" "$@" >"$T/out" 2>"$T/err"; rc=$?
}
# dep_path DIR NAME: NAME's file in DIR/modules.dep, relative to DIR ('-' and '_' alike)
dep_path() {
	awk -F: -v n="$2" '{ m = $1; sub(/.*\//, "", m); sub(/\.ko.*/, "", m); gsub(/-/, "_", m) } m == n { print $1; exit }' "$1/modules.dep"
}
# the insmod lines only (what would be loaded, in order)
insmods() { grep '^insmod ' "$T/out"; }

# ---- the sample tree (6.12: the bare MODULE_IMPORT_NS(NS) form) ----
R=$T/fx/sample K=6.12.0-sample D=$T/fx/sample/lib/modules/6.12.0-sample
ln -s ../../.. "$D/build"   # build/Module.symvers: vmlinux's namespaces are known
$W "$B/tools/depmod" -b "$R" $K 2>/dev/null
core=$D/kernel/drivers/sample/sample_core.ko user=$D/kernel/drivers/sample/sample_user.ko
bad=$D/kernel/drivers/sample/sample_bad.ko

mp "$R" $K -n sample_bad
check "sample-bad-exit-1" test $rc -eq 1
check "sample-bad-one-line" test "$(wc -l <"$T/err")" -eq 1
check "sample-bad-message" grep -qxF "modprobe: ERROR: could not insert 'sample_bad': it uses sample_core_register from namespace SAMPLE_CORE (exported by sample_core) but does not import it; add MODULE_IMPORT_NS(SAMPLE_CORE) to its source" "$T/err"
mp "$R" $K -n -v sample_bad
check "sample-bad-nothing-listed" bash -c "! grep -q '^insmod ' '$T/out'"
check "sample-bad-verdict-shown" grep -qxF "namespaces sample_bad: refused: uses sample_core_register from namespace SAMPLE_CORE (exported by sample_core) but does not import it; add MODULE_IMPORT_NS(SAMPLE_CORE) to its source (depmod's record)" "$T/out"
check "sample-bad-dependency-verdict" grep -qxF "namespaces sample_core: allowed: no namespaced symbol used (depmod's record)" "$T/out"
mp "$R" $K -q -n sample_bad
check "sample-bad-quiet-still-refuses" test $rc -eq 1

mp "$R" $K -n -v sample_user
check "sample-user-exit-0" test $rc -eq 0
check "sample-user-order" test "$(insmods)" = "insmod $core 
insmod $user "
check "sample-user-verdict" grep -qxF "namespaces sample_user: allowed: SAMPLE_CORE imported (sample_core_register from sample_core), DMA_BUF imported (dma_buf_get from vmlinux) (depmod's record)" "$T/out"
check "sample-user-silent-without-v" bash -c "'$M' -d '$R' -S $K -n sample_user 2>&1 | { ! read -r; }"

# --force and friends do not bypass the check (the kernel does not either); --no-ns-check does.
for f in --force --force-modversion --force-vermagic; do
	mp "$R" $K -n $f sample_bad
	check "sample-bad$f-still-refused" test $rc -eq 1
done
mp "$R" $K -n -v --no-ns-check sample_bad
check "no-ns-check-exit-0" test $rc -eq 0
check "no-ns-check-lists-all" test "$(insmods)" = "insmod $core 
insmod $bad "
check "no-ns-check-no-verdicts" bash -c "! grep -q '^namespaces ' '$T/out'"
# -D / --show-depends and -R only say what modprobe would do: no check, as kmod's
mp "$R" $K -D sample_bad
check "show-depends-not-checked" test $rc -eq 0 -a "$(grep -c '^insmod ' "$T/out")" -eq 2

# Debian's modprobe agrees on every insmod line where we allow (and on the refused one with
# --no-ns-check): same tree, same indexes.
if $have_kmod; then
	for m in sample_core sample_user; do
		mp "$R" $K -n -v $m; grep -v '^namespaces ' "$T/out" >"$T/ours"
		/sbin/modprobe -d "$R" -S $K -n -v $m >"$T/kmod" 2>&1
		check "sample-$m-as-kmod" cmp -s "$T/ours" "$T/kmod"
	done
	mp "$R" $K -n -v --no-ns-check sample_bad
	/sbin/modprobe -d "$R" -S $K -n -v sample_bad >"$T/kmod" 2>&1
	check "sample-bad-no-ns-check-as-kmod" cmp -s "$T/out" "$T/kmod"
	# the rest of modprobe's face: stdout (our verdict lines aside), stderr, exit status
	while read -r name args; do
		mp "$R" $K $args; grep -v '^namespaces ' "$T/out" >"$T/o1"; sed 's/^[^ :]*modprobe:/modprobe:/' "$T/err" >"$T/e1"
		/sbin/modprobe -d "$R" -S $K $args >"$T/o2" 2>"$T/e2"; r2=$?
		sed -i 's/^[^ :]*modprobe:/modprobe:/' "$T/e2"
		check "as-kmod-$name" eval 'cmp -s "$T/o1" "$T/o2" && cmp -s "$T/e1" "$T/e2" && [ $rc = $r2 ]' ||
			{ diff "$T/o1" "$T/o2"; diff "$T/e1" "$T/e2"; echo "exit $rc, kmod's $r2"; } | head -6
	done <<'EOF'
config -c
resolve-alias -R sample_user
show-depends -D sample_user
not-found nosuchmod
not-found-verbose -n -v nosuchmod
bad-option --bogus
remove-dry-run -r -n -v sample_user
all -n -a sample_core sample_user
first-time -n -v --first-time sample_core
parameters -n -v sample_core foo=1 bar
quiet-not-found -q nosuchmod
no-name -n
EOF
else
	skip "sample-as-kmod: Debian's kmod modprobe is not installed (apt-get install kmod)"
fi

# A kernel that only warns (CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y, in the module
# directory's config or the root's /boot/config-RELEASE): a warning, and the load goes on.
echo CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y >"$D/config"
mp "$R" $K -n -v sample_bad
check "allow-missing-exit-0" test $rc -eq 0
check "allow-missing-warns" grep -qxF "modprobe: WARNING: 'sample_bad' uses sample_core_register from namespace SAMPLE_CORE (exported by sample_core) but does not import it; add MODULE_IMPORT_NS(SAMPLE_CORE) to its source; the kernel loads it anyway (CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y)" "$T/err"
check "allow-missing-loads-all" test "$(grep -c '^insmod ' "$T/out")" -eq 2
echo "# CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS is not set" >"$D/config"
mkdir -p "$R/boot" && echo CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y >"$R/boot/config-$K"
mp "$R" $K -n sample_bad
check "allow-missing-boot-config-first" test $rc -eq 0
rm -r "$R/boot" "$D/config"

# A module newer than depmod's record is judged from its file, and the verdict says so.
cp "$bad" "$T/bad.ko" && touch -d '+1 hour' "$bad"
mp "$R" $K -n -v sample_bad
check "stale-record-reads-file" grep -q "^namespaces sample_bad: refused: .* (module file)$" "$T/out"
check "stale-record-still-refused" test $rc -eq 1
cp "$T/bad.ko" "$bad" && touch -d '-1 hour' "$bad" "$core" "$user"
# The same whole second for both, as in an initramfs (mkinitramfs copies and runs depmod in
# one second): the record counts as current, so early boot reads no module file.
touch -d @1700000000 "$bad" "$D/modules.dep.bin"
mp "$R" $K -n -v sample_bad
check "same-second-takes-record" grep -q "^namespaces sample_bad: refused: .* (depmod's record)$" "$T/out"
touch -d @1700000001 "$bad"
mp "$R" $K -n -v sample_bad
check "a-second-later-reads-file" grep -q "^namespaces sample_bad: refused: .* (module file)$" "$T/out"
touch -d '-1 hour' "$bad" && touch "$D/modules.dep.bin"
mp "$R" $K -n -v sample_bad
check "older-module-takes-record" grep -q "^namespaces sample_bad: refused: .* (depmod's record)$" "$T/out"
# The same module fixed on disk (its record not yet rewritten): the file's word counts.
cp "$user" "$bad" && touch -d '+1 hour' "$bad"
mp "$R" $K -n sample_bad
check "stale-record-fixed-file-allowed" test $rc -eq 0
cp "$T/bad.ko" "$bad" && touch -d '-1 hour' "$bad"

# A damaged module file with no current record: one warning naming the module, the kernel
# decides (modprobe does not invent a refusal), and no crash.
head -c 300 "$T/bad.ko" >"$bad" && touch -d '+1 hour' "$bad"
mp "$R" $K -n sample_bad
check "damaged-file-warns" grep -q "^modprobe: WARNING: could not check the namespaces of 'sample_bad': " "$T/err"
check "damaged-file-no-crash" test $rc -lt 128
cp "$T/bad.ko" "$bad" && touch -d '-1 hour' "$bad"

# ---- 6.13 and later: MODULE_IMPORT_NS("NS"); the same tree under a 6.13 release ----
R2=$T/r613 K2=6.13.0-sample
mkdir -p "$R2/lib/modules" && cp -a "$D" "$R2/lib/modules/$K2" && rm "$R2/lib/modules/$K2/build" &&
	cp "$R/Module.symvers" "$R2/" && ln -s ../../.. "$R2/lib/modules/$K2/build"
$W "$B/tools/depmod" -b "$R2" $K2 2>/dev/null
mp "$R2" $K2 -n sample_bad
check "string-import-form" grep -qF 'add MODULE_IMPORT_NS("SAMPLE_CORE") to its source' "$T/err"

# ---- module: namespaces (the nsimport tree: each module judged by its own vermagic) ----
R=$T/tr/nsimport K=1.0.0-nsimport D=$T/tr/nsimport/lib/modules/1.0.0-nsimport
$W "$B/tools/depmod" -b "$R" -E "$R/Module.symvers" $K 2>/dev/null
mp "$R" $K -n nsi_bad
check "module-import-refused" test $rc -eq 1
check "module-import-message" grep -qxF "modprobe: ERROR: could not insert 'nsi_bad': it imports namespace module:nsi_friend,nsi_user*, which the kernel refuses: a \"module:\" namespace is granted by its exporter's list of modules, never by an import; remove MODULE_IMPORT_NS(\"module:nsi_friend,nsi_user*\") (and 1 more namespace)" "$T/err"
for m in nsi_friend nsi_user_new nsi_old; do
	mp "$R" $K -n $m
	check "module-list-$m-allowed" test $rc -eq 0
done
mp "$R" $K -n nsi_user_old
check "pre-6.16-module-colon-is-a-name" grep -qxF "modprobe: ERROR: could not insert 'nsi_user_old': it uses nsi_friends_fn from namespace module:nsi_friend,nsi_user* (exported by nsi_core) but does not import it; add MODULE_IMPORT_NS(\"module:nsi_friend,nsi_user*\") to its source" "$T/err"
# On a 7.2 target the list decides for every module; a module it does not name is told that
# no import can grant the symbol.
R3=$T/r72 K3=7.2.0-nsimport
mkdir -p "$R3/lib/modules" && cp -a "$D" "$R3/lib/modules/$K3"
# nsi_odd: nsi_old renamed (same length) and without its import of the module: namespace
python3 - "$R3/lib/modules/$K3/kernel/drivers/nsi/nsi_old.ko" "$R3/lib/modules/$K3/kernel/drivers/nsi/nsi_odd.ko" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
data = data.replace(b'nsi_old\0', b'nsi_odd\0').replace(b'import_ns=module:', b'xmport_ns=module:')
open(sys.argv[2], 'wb').write(data)
EOF
echo kernel/drivers/nsi/nsi_odd.ko >>"$R3/lib/modules/$K3/modules.order"
$W "$B/tools/depmod" -b "$R3" -E "$R/Module.symvers" $K3 2>/dev/null
mp "$R3" $K3 -n nsi_odd
check "module-list-not-named" grep -qxF "modprobe: ERROR: could not insert 'nsi_odd': it uses nsi_friends_fn, which nsi_core exports only to the modules module:nsi_friend,nsi_user* names; no import can grant it" "$T/err"
mp "$R3" $K3 -n nsi_user_old
check "module-list-7.2-names-user-old" test $rc -eq 0

# ---- the real trees: nothing real is refused; a real module stripped of an import is ----
for era in 6.1 latest; do
	case " $eras " in *" $era "*) ;; *) continue ;; esac
	dir=$corpus/$era
	[ -f "$dir/ok" ] || { missing "modprobe-$era" "no corpus at $dir"; continue; }
	kver=$(cat "$dir/kver")
	farm "$T/$era" "$dir" "$kver" || { fail "modprobe-$era: farm"; continue; }
	R=$T/$era/ours D=$R/lib/modules/$kver
	rm -rf "$D/build" && mkdir "$D/build" && ln -s "$dir/Module.symvers" "$D/build/Module.symvers"
	$W "$B/tools/depmod" -b "$R" $kver 2>"$T/err" || { fail "modprobe-$era: depmod: $(head -1 "$T/err")"; continue; }
	sed -e 's|.*/||' -e 's|\.ko.*||' "$D/modules.order" | tr - _ >"$T/names"
	n=$(wc -l <"$T/names")
	# every module of the tree in one load set: the kernel would load each, so must we
	$W "$M" -d "$R" -S "$kver" -n -a $(cat "$T/names") >"$T/out" 2>"$T/err"; rc=$?
	check "real-$era-none-refused ($n modules)" test $rc -eq 0 -a ! -s "$T/err"
	# --show-exports of the modules exporting into a namespace = the kernel's Module.symvers
	awk '$2 == "export" { print $1 }' "$D/modules.namespaces" | uniq | head -30 >"$T/exporters"
	bad=
	while read -r m; do
		path=$(dep_path "$D" "$m")
		$W "$M" -d "$R" -S "$kver" --show-exports "$m" 2>&1 | sort >"$T/ours"
		p=${path%%.ko*}
		awk -F'\t' -v p="${p#kernel/}" '$3 == p { print $1 "\t" $2 "\t" $5 }' "$dir/Module.symvers" |
			sed 's/\t$//' | sort >"$T/want"
		[ -s "$T/want" ] && cmp -s "$T/ours" "$T/want" || bad="$bad $m"
	done <"$T/exporters"
	check "real-$era-show-exports-as-symvers ($(wc -l <"$T/exporters") modules)" test -s "$T/exporters" -a -z "$bad" || echo "differs:$bad"
	# the modules that use a namespace (depmod's modules.namespaces), with Debian's modprobe
	# for the insmod lines
	awk '$2 == "require" { print $1 }' "$D/modules.namespaces" | uniq | head -40 >"$T/nsnames"
	if $have_kmod && [ -s "$T/nsnames" ]; then
		bad=
		while read -r m; do
			$W "$M" -d "$R" -S "$kver" -n -v "$m" 2>&1 | grep -v '^namespaces ' >"$T/ours"
			/sbin/modprobe -d "$R" -S "$kver" -n -v "$m" >"$T/kmod" 2>&1
			cmp -s "$T/ours" "$T/kmod" || bad="$bad $m"
		done <"$T/nsnames"
		check "real-$era-as-kmod ($(wc -l <"$T/nsnames") users of namespaces)" test -z "$bad" || echo "differs:$bad"
	else
		fail "real-$era-as-kmod: no kmod modprobe or no module using a namespace"
	fi
	# a real user of a namespace with its import renamed away (same length, the file stays
	# whole; a compressed one is compressed again alike)
	read -r name ns < <(awk '$2 == "require" && $3 !~ /^module:/ { print $1, $3; exit }' "$D/modules.namespaces")
	rel=$(dep_path "$D" "$name")
	victim=$D/$rel
	[ -n "$name" ] && [ -n "$rel" ] || { fail "real-$era: no module using a namespace"; continue; }
	case $victim in
	*.ko.xz) unpack="xz -dc" pack="xz -c --check=crc32" ;;
	*.ko.zst) unpack="zstd -dcq" pack="zstd -cq" ;;
	*.ko.gz) unpack="gzip -dc" pack="gzip -c" ;;
	*) unpack=cat pack=cat ;;
	esac
	$unpack "$(readlink -f "$victim")" >"$T/victim.ko" && rm "$victim" &&
	python3 - "$T/victim.ko" "$ns" <<'EOF' && $pack "$T/victim.ko" >"$victim" || { fail "real-$era: could not strip $name's import of $ns"; continue; }
import sys
path, ns = sys.argv[1], sys.argv[2].encode()
data = open(path, 'rb').read()
old = b'import_ns=' + ns + b'\0'
assert old in data, old
open(path, 'wb').write(data.replace(old, b'xmport_ns=' + ns + b'\0', 1))
EOF
	$W "$B/tools/depmod" -b "$R" $kver 2>/dev/null
	mp "$R" "$kver" -n -v "$name"
	check "real-$era-stripped-refused ($name, $ns)" test $rc -eq 1
	check "real-$era-stripped-message" grep -q "^modprobe: ERROR: could not insert '$name': it uses .* from namespace $ns (exported by .*) but does not import it; add MODULE_IMPORT_NS(\"*$ns\"*) to its source$" "$T/err"
	check "real-$era-stripped-nothing-listed" bash -c "! grep -q '^insmod ' '$T/out'"
done
