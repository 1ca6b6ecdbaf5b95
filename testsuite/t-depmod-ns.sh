#!/bin/bash
# depmod's namespace records on the real Debian trees: stock kmod tools behave identically on a
# tree indexed by our depmod and by kmod's; modules.namespaces agrees with what libkmodns reads
# (imports) and Debian's kernels have 0 missing imports (--ns-check exits 0); the record of a
# module comes back through the library's lookup. On the sample tree, the missing import and
# the unused one are reported exactly and --ns-check fails.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT

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
# Without any Module.symvers: said once, recorded as unknown.
rm -f "$S_ROOT/lib/modules/6.12.0-sample/modules.dep"
$W "$B/tools/depmod" -b "$S_ROOT" 6.12.0-sample 2>"$T/err"
check "sample-vmlinux-unknown-said-once" test "$(grep -c 'namespaces of vmlinux' "$T/err")" -eq 1
check "sample-vmlinux-unknown-recorded" grep -qx '# vmlinux namespaces unknown' "$N"
