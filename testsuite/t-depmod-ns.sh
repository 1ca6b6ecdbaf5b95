#!/bin/bash
# depmod's namespace records on the real Debian trees: stock kmod tools behave identically on a
# tree indexed by our depmod and by kmod's; modules.namespaces agrees with what libkmodns reads
# (imports) and Debian's kernels have 0 missing imports (--ns-check exits 0); the record of a
# module comes back through the library's lookup; modinfo --namespaces answers from the records
# exactly as from Module.symvers. On the sample tree, the missing import and the unused one are
# reported exactly and --ns-check fails. On the nsimport tree (gen-fixtures --tree), explicit
# imports of module: namespaces are refused on 6.16+ and ordinary before, alike in
# modules.namespaces, the records and --ns-check; modinfo answers from a record alone.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); [ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT

for era in $eras; do
	dir=$corpus/$era
	[ -f "$dir/ok" ] || { missing "depmod-ns-$era" "no corpus at $dir"; continue; }
	kver=$(cat "$dir/kver")
	farm "$T" "$dir" "$kver" || { fail "farm-$era: could not copy $dir"; continue; }
	M=$T/ours/lib/modules/$kver
	/usr/sbin/depmod -b "$T/kmod" "$kver" 2>/dev/null
	$W "$B/tools/depmod" -b "$T/ours" -E "$dir/Module.symvers" --ns-check "$kver" 2>"$T/err"; rc=$?
	check "ns-check-$era-debian-has-no-missing-import" test $rc -eq 0
	check "namespaces-$era-vmlinux-known" grep -qx '# vmlinux namespaces known' "$M/modules.namespaces"
	n_missing=$(grep -c ' missing ' "$M/modules.namespaces")
	n_req=$(grep -c ' require ' "$M/modules.namespaces")
	n_unused=$(grep -c ' unused ' "$M/modules.namespaces")
	echo "modules.namespaces $era: $(grep -c ' import ' "$M/modules.namespaces") imports, $n_req requirements, $n_missing missing, $n_unused unused"
	check "namespaces-$era-0-missing" test "$n_missing" -eq 0

	# Imports in modules.namespaces = what libkmodns reads from the files (the census).
	find "$M/" -name '*.ko*' | LC_ALL=C sort >"$T/list"
	xargs -a "$T/list" -d '\n' "$B/testsuite/ns-dump" | awk '$1 == "module" { m = $2 } $1 == "import" { print m " import " $2 }' | LC_ALL=C sort >"$T/census"
	grep ' import ' "$M/modules.namespaces" | LC_ALL=C sort >"$T/ns-imports"
	check "namespaces-$era-imports-equal-census ($(wc -l <"$T/census"))" cmp -s "$T/census" "$T/ns-imports"

	# Stock kmod: identical answers from both trees (records are invisible to it).
	awk -F: 'NR % 40 == 1 { n = split($1, p, "/"); m = p[n]; sub(/\..*/, "", m); print m }' "$M/modules.dep" >"$T/names"
	echo ums_alauda >>"$T/names"
	for who in kmod ours; do
		while read -r m; do
			/usr/sbin/modprobe -d "$T/$who" -S "$kver" --show-depends "$m" 2>&1
			/usr/sbin/modprobe -d "$T/$who" -S "$kver" -n -v --ignore-install "$m" 2>&1 | sed 's/^insmod .*/(insmod)/'
			/usr/sbin/modinfo -b "$T/$who" -k "$kver" "$m" 2>&1
		done <"$T/names" | sed "s|$T/$who||g" >"$T/stock-$who"
	done
	check "stock-kmod-ignores-records-$era ($(wc -l <"$T/names") modules: modprobe -D, -n, modinfo)" cmp -s "$T/stock-kmod" "$T/stock-ours"

	# The record, by name, through libkmodns: one lookup, no ELF.
	"$B/testsuite/ns-dump" --record "$M" ums-alauda >"$T/rec" 2>&1
	check "record-lookup-$era" grep -qx 'require USB_STORAGE usb_storage usb_stor_.* allowed' "$T/rec"

	# modinfo --namespaces from the records (no build/Module.symvers in the tree) = from -E, for
	# every module with imports or namespaced requirements, as text and as JSON.
	awk '$2 == "import" || $2 == "refused-import" || $2 == "require" || $2 == "missing" { print $1 }' \
		"$M/modules.namespaces" | awk '!seen[$0]++' >"$T/ns-names"
	same=true
	for json in "" --json; do
		xargs -a "$T/ns-names" $W "$B/tools/modinfo" --namespaces $json -b "$T/ours" -k "$kver" >"$T/mi-rec" 2>&1
		xargs -a "$T/ns-names" $W "$B/tools/modinfo" --namespaces $json -E "$dir/Module.symvers" -b "$T/ours" -k "$kver" >"$T/mi-E" 2>&1
		cmp -s "$T/mi-rec" "$T/mi-E" || { same=false; diff "$T/mi-E" "$T/mi-rec" | head -10; }
	done
	check "modinfo-records-equal-symvers-$era ($(wc -l <"$T/ns-names") modules, text and JSON)" $same
done

# The sample tree: sample_bad uses SAMPLE_CORE without importing it and imports UNUSED_NS.
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null
S_ROOT=$T/fx/sample
$W "$B/tools/depmod" -b "$S_ROOT" -E "$S_ROOT/Module.symvers" --ns-check 6.12.0-sample 2>"$T/err"; rc=$?
N=$S_ROOT/lib/modules/6.12.0-sample/modules.namespaces
check "sample-ns-check-fails" test $rc -eq 1
check "sample-ns-check-one-line" test "$(grep -c 'does not import it' "$T/err")" -eq 1
check "sample-ns-check-names-module" grep -q "module sample_bad uses symbol sample_core_register from namespace SAMPLE_CORE, but does not import it." "$T/err"
check "sample-namespaces-missing" grep -qx 'sample_bad missing SAMPLE_CORE sample_core sample_core_register' "$N"
check "sample-namespaces-unused" grep -qx 'sample_bad unused UNUSED_NS' "$N"
check "sample-namespaces-require" grep -qx 'sample_user require DMA_BUF vmlinux dma_buf_get' "$N"
check "sample-namespaces-export" grep -qx 'sample_core export SAMPLE_CORE' "$N"
"$B/testsuite/ns-dump" --record "$S_ROOT/lib/modules/6.12.0-sample" sample_bad >"$T/rec"
check "sample-record-refused" grep -qx 'require SAMPLE_CORE sample_core sample_core_register refused' "$T/rec"
# Without any Module.symvers or kernel image: quiet by default as kmod's depmod (not a byte on
# stdout or stderr), said once with -v (and --ns-check); recorded as unknown either way.
unknown="depmod: WARNING: no Module.symvers or kernel image for 6.12.0-sample (use -E): namespaces of vmlinux's exports are unknown"
ls "$S_ROOT/boot" 2>/dev/null | grep -q vmlinuz && fail "sample tree has a kernel image: the case below proves nothing"
rm -f "$S_ROOT/lib/modules/6.12.0-sample/modules.dep"
# (kmod's depmod warns without these two, and so does ours: they are not the point here)
: >"$S_ROOT/lib/modules/6.12.0-sample/modules.builtin"
: >"$S_ROOT/lib/modules/6.12.0-sample/modules.builtin.modinfo"
$W "$B/tools/depmod" -b "$S_ROOT" 6.12.0-sample >"$T/out" 2>"$T/err"; rc=$?
check "sample-vmlinux-unknown-exit-0" test $rc -eq 0
check "sample-vmlinux-unknown-quiet-stderr ($(wc -l <"$T/err") lines)" test ! -s "$T/err"
check "sample-vmlinux-unknown-quiet-stdout" test ! -s "$T/out"
check "sample-vmlinux-unknown-recorded" grep -qx '# vmlinux namespaces unknown' "$N"
$W "$B/tools/depmod" -v -b "$S_ROOT" 6.12.0-sample >"$T/out" 2>"$T/err"
check "sample-vmlinux-unknown-verbose-said-once" test "$(grep -cxF "$unknown" "$T/err")" -eq 1
check "sample-vmlinux-unknown-verbose-nothing-else" test "$(wc -l <"$T/err")" -eq 1
$W "$B/tools/depmod" --ns-check -b "$S_ROOT" 6.12.0-sample >"$T/out" 2>"$T/err"
check "sample-vmlinux-unknown-ns-check-said-once" test "$(grep -cxF "$unknown" "$T/err")" -eq 1

# The nsimport tree: module: imports refused on 6.16+ (nsi_bad), ordinary on 6.15 (nsi_old); a
# module: namespace's symbols allowed by its patterns on 7.2 (nsi_user_new) but not on 6.15
# (nsi_user_old).
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null
R=$T/trees/nsimport; K=1.0.0-nsimport; D=$R/lib/modules/$K
$W "$B/tools/depmod" -b "$R" -E "$R/Module.symvers" --ns-check $K 2>"$T/err"; rc=$?
check "nsimport-ns-check-exit" test $rc -eq 1
grep ERROR "$T/err" | sed "s|$R|ROOT|g" >"$T/err.errors"
cat >"$T/want" <<'EOF'
depmod: ERROR: ROOT/lib/modules/1.0.0-nsimport/kernel/drivers/nsi/nsi_bad.ko: module nsi_bad explicitly imports namespace "module:nsi_friend,nsi_user*", which is not allowed
depmod: ERROR: ROOT/lib/modules/1.0.0-nsimport/kernel/drivers/nsi/nsi_user_old.ko: module nsi_user_old uses symbol nsi_friends_fn from namespace module:nsi_friend,nsi_user*, but does not import it.
EOF
check "nsimport-ns-check-lines" cmp -s "$T/want" "$T/err.errors" || diff "$T/want" "$T/err.errors"
cat >"$T/want" <<'EOF'
# Symbol namespaces of modules: imports, exports, requirements.
# vmlinux namespaces known
nsi_core export NSI_CORE
nsi_core export module:nsi_friend,nsi_user*
nsi_friend require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn
nsi_bad import NSI_CORE
nsi_bad refused-import module:nsi_friend,nsi_user*
nsi_bad refused-import module:nowhere
nsi_bad require NSI_CORE nsi_core nsi_core_fn
nsi_bad require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn
nsi_bad unused module:nowhere
nsi_old import module:nsi_friend,nsi_user*
nsi_old import module:nowhere
nsi_old require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn
nsi_old unused module:nowhere
nsi_user_old missing module:nsi_friend,nsi_user* nsi_core nsi_friends_fn
nsi_user_new require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn
EOF
check "nsimport-namespaces" cmp -s "$T/want" "$D/modules.namespaces" || diff "$T/want" "$D/modules.namespaces"
"$B/testsuite/ns-dump" --record "$D" nsi_bad nsi_old nsi-user-old >"$T/rec" 2>&1
cat >"$T/want" <<'EOF'
record nsi_bad vmlinux=known unresolved=1
import NSI_CORE allowed
import module:nsi_friend,nsi_user* refused
import module:nowhere refused
require NSI_CORE nsi_core nsi_core_fn allowed
require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn allowed
unused module:nowhere
record nsi_old vmlinux=known unresolved=0
import module:nsi_friend,nsi_user* allowed
import module:nowhere allowed
require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn allowed
unused module:nowhere
record nsi-user-old vmlinux=known unresolved=0
require module:nsi_friend,nsi_user* nsi_core nsi_friends_fn refused
EOF
check "nsimport-records" cmp -s "$T/want" "$T/rec" || diff "$T/want" "$T/rec"
# The stored bytes: a verdict only on the refused imports, names percent-encoded.
"$B/testsuite/index-from-text" lookup "$D/modules.dep.bin" nsi_bad nsi_old 2>/dev/null | grep '^kmodns-ns/' >"$T/rec"
cat >"$T/want" <<'EOF'
kmodns-ns/1 vmlinux=known unresolved=1 import=NSI_CORE import=module:nsi_friend%2Cnsi_user*,module-import import=module:nowhere,module-import require=NSI_CORE,nsi_core,nsi_core_fn,imported require=module:nsi_friend%2Cnsi_user*,nsi_core,nsi_friends_fn,imported unused=module:nowhere traits=intree
kmodns-ns/1 vmlinux=known unresolved=0 import=module:nsi_friend%2Cnsi_user* import=module:nowhere require=module:nsi_friend%2Cnsi_user*,nsi_core,nsi_friends_fn,imported unused=module:nowhere traits=intree
EOF
check "nsimport-record-bytes" cmp -s "$T/want" "$T/rec" || diff "$T/want" "$T/rec"
# Without -E the refusals stand; the unused lines go, the records keep them.
$W "$B/tools/depmod" -b "$R" --ns-check $K 2>"$T/err"; rc=$?
check "nsimport-ns-check-exit-without-E" test $rc -eq 1
check "nsimport-refused-without-E" test "$(grep -c ' refused-import ' "$D/modules.namespaces")" -eq 2
check "nsimport-no-unused-lines-without-E" test "$(grep -c ' unused ' "$D/modules.namespaces")" -eq 0
"$B/testsuite/ns-dump" --record "$D" nsi_bad >"$T/rec" 2>&1
check "nsimport-record-unused-without-E" grep -qx 'unused module:nowhere' "$T/rec"

# modinfo --namespaces takes the record: with the exporting module's file emptied, nsi_bad's
# requirements are still known (resolving its symbols through modules.symbols reads
# nsi_core.ko); by name and by the file's path.
$W "$B/tools/depmod" -b "$R" -E "$R/Module.symvers" $K 2>/dev/null
: >"$D/kernel/drivers/nsi/nsi_core.ko"
cat >"$T/want" <<'EOF'
filename:       ROOT/lib/modules/1.0.0-nsimport/kernel/drivers/nsi/nsi_bad.ko
name:           nsi_bad
import_ns:      NSI_CORE
import_ns:      module:nsi_friend,nsi_user*
import_ns:      module:nowhere
require_ns:     NSI_CORE nsi_core nsi_core_fn
require_ns:     module:nsi_friend,nsi_user* nsi_core nsi_friends_fn
refused_ns:     module:nsi_friend,nsi_user*
refused_ns:     module:nowhere
verdict:        refused: imports namespace module:nsi_friend,nsi_user*, which the kernel refuses: a "module:" namespace is granted by its exporter's list of modules, never by an import; remove MODULE_IMPORT_NS("module:nsi_friend,nsi_user*") (and 1 more namespace)
EOF
$W "$B/tools/modinfo" --namespaces -b "$R" -k $K nsi_bad 2>&1 | sed "s|$R|ROOT|g" >"$T/mi"
check "modinfo-takes-record-by-name" cmp -s "$T/want" "$T/mi" || diff "$T/want" "$T/mi"
$W "$B/tools/modinfo" --namespaces -b "$R" -k $K "$D/kernel/drivers/nsi/nsi_bad.ko" 2>&1 | sed "s|$R|ROOT|g" >"$T/mi"
check "modinfo-takes-record-by-path" cmp -s "$T/want" "$T/mi" || diff "$T/want" "$T/mi"
# The same verdicts in JSON, and for the other modules of the tree, each judged by its own
# vermagic (the release 1.0.0-nsimport names no kernel): 6.15's module: is an ordinary name.
$W "$B/tools/modinfo" --namespaces --json -b "$R" -k $K nsi_bad >"$T/mi.json" 2>&1
check "modinfo-json-refused-imports" python3 -c "
import json; o = json.load(open('$T/mi.json'))
assert o['refused_imports'] == ['module:nsi_friend,nsi_user*', 'module:nowhere'], o
assert o['unused_imports'] == [], o
assert o['verdict'].startswith('refused: imports namespace module:nsi_friend,nsi_user*'), o"
verdict_of() { $W "$B/tools/modinfo" --namespaces -b "$R" -k $K "$1" 2>&1 | sed -n 's/^verdict: *//p'; }
check "modinfo-verdict-friend-allowed" test "$(verdict_of nsi_friend)" = \
	"allowed: module:nsi_friend,nsi_user* names it (nsi_friends_fn from nsi_core)"
check "modinfo-verdict-user-new-allowed" test "$(verdict_of nsi_user_new)" = \
	"allowed: module:nsi_friend,nsi_user* names it (nsi_friends_fn from nsi_core)"
check "modinfo-verdict-old-imported" test "$(verdict_of nsi_old)" = \
	"allowed: module:nsi_friend,nsi_user* imported (nsi_friends_fn from nsi_core)"
check "modinfo-verdict-user-old-missing" test "$(verdict_of nsi_user_old)" = \
	"refused: uses nsi_friends_fn from namespace module:nsi_friend,nsi_user* (exported by nsi_core) but does not import it; add MODULE_IMPORT_NS(\"module:nsi_friend,nsi_user*\") to its source"
# A copy outside the tree is not the tree's module: no record for it.
cp "$D/kernel/drivers/nsi/nsi_bad.ko" "$T/nsi_bad.ko"
$W "$B/tools/modinfo" --namespaces -b "$R" -k $K "$T/nsi_bad.ko" >"$T/mi" 2>&1
check "modinfo-no-record-for-other-file" grep -qx 'require_ns:     unknown for symbols of vmlinux (no Module.symvers; use -E)' "$T/mi"
