#!/bin/bash
# depmod never leaves a half-written set: an injected write failure (RLIMIT_FSIZE, EFBIG) and a
# kill in the middle of writing (SIGXFSZ) leave the previous files exactly as they were; a
# corrupt module is reported with its path and skipped, the rest indexed, as kmod does.
. "$(dirname "$0")/lib.sh"
dir=$corpus/6.1
[ -f "$dir/ok" ] || { missing "corpus" "no corpus at $dir"; exit 0; }
kver=$(cat "$dir/kver")
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/root/lib/modules"
cp -rs "$dir/root/lib/modules/$kver/" "$T/root/lib/modules/$kver"
M=$T/root/lib/modules/$kver
sums() { (cd "$M" && sha256sum modules.* 2>/dev/null | grep -v 'modules\.\(order\|builtin\|builtin\.modinfo\) *$'); }
leftovers() { find "$M" -maxdepth 1 -name '.modules.*' | wc -l; }

$W "$B/tools/depmod" -b "$T/root" "$kver" 2>"$T/err" || { cat "$T/err"; fail "baseline run"; exit 0; }
sums >"$T/before"
# A change, so that a completed run would write different files.
rm "$M/kernel/drivers/usb/storage/ums-alauda.ko"

# Injected write failure: writes past 800 KiB fail with EFBIG (the signal ignored).
( ulimit -f 800; trap '' XFSZ; exec $W "$B/tools/depmod" -b "$T/root" "$kver" ) 2>"$T/err"; rc=$?
sums >"$T/after"
check "write-failure-exit-1" test $rc -eq 1
check "write-failure-one-clear-line" grep -q "^depmod: ERROR: could not write $M/modules\." "$T/err"
check "write-failure-only-one-error-line ($(grep -c ERROR "$T/err"))" test "$(grep -c ERROR "$T/err")" -eq 1
check "write-failure-previous-files-intact" cmp -s "$T/before" "$T/after"
check "write-failure-no-temporary-left" test "$(leftovers)" -eq 0

# Only our cache (written by its own thread, 13 MB) fails: nothing is replaced either.
( ulimit -f 4096; trap '' XFSZ; exec $W "$B/tools/depmod" -b "$T/root" "$kver" ) 2>"$T/err"; rc=$?
sums >"$T/after"
check "cache-write-failure-exit-1" test $rc -eq 1
check "cache-write-failure-named" grep -q "^depmod: ERROR: could not write $M/modules.kmodns.cache" "$T/err"
check "cache-write-failure-previous-files-intact" cmp -s "$T/before" "$T/after"
check "cache-write-failure-no-temporary-left" test "$(leftovers)" -eq 0

# Killed while writing (SIGXFSZ at the same point): the previous files stay.
( ulimit -f 800; exec $W "$B/tools/depmod" -b "$T/root" "$kver" ) 2>/dev/null; rc=$?
sums >"$T/after"
check "killed-by-signal ($rc)" test $rc -gt 128
check "killed-previous-files-intact" cmp -s "$T/before" "$T/after"
find "$M" -maxdepth 1 -name '.modules.*' -delete

# And a complete run replaces them all.
$W "$B/tools/depmod" -b "$T/root" "$kver" 2>"$T/err"; rc=$?
sums >"$T/after"
check "complete-run-replaces" test $rc -eq 0 -a "$(diff "$T/before" "$T/after" | grep -c "^[<>]")" -gt 0
check "complete-run-drops-removed-module" bash -c "! grep -q ums-alauda '$M/modules.dep'"

# A corrupt module among good ones: reported with its path, the rest indexed; kmod's files.
head -c 3000 "$dir/root/lib/modules/$kver/kernel/drivers/usb/storage/ums-alauda.ko" >"$M/kernel/drivers/usb/storage/ums-alauda.ko"
cp -r "$T/root" "$T/kmodroot"
$W "$B/tools/depmod" -b "$T/root" "$kver" 2>"$T/err"; rc=$?
check "corrupt-module-exit-0" test $rc -eq 0
check "corrupt-module-named" grep -q "ums-alauda.ko" "$T/err"
if [ -x /usr/sbin/depmod ]; then
	/usr/sbin/depmod -b "$T/kmodroot" "$kver" 2>/dev/null
	for f in modules.dep modules.alias modules.symbols modules.alias.bin; do
		check "corrupt-module-$f-as-kmod" cmp -s "$M/$f" "$T/kmodroot/lib/modules/$kver/$f"
	done
	# modules.dep.bin: kmod's bytes once our namespace records are left out
	"$B/testsuite/index-from-text" dep "$M/modules.dep" "$T/dep.bin"
	check "corrupt-module-modules.dep.bin-as-kmod" cmp -s "$T/dep.bin" "$T/kmodroot/lib/modules/$kver/modules.dep.bin"
fi
