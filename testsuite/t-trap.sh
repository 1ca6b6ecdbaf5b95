#!/bin/bash
# The syscall trap (kmodns-trap.so, trap-root) with Debian's own kmod 30 tools, which know
# nothing of it: on the fixture "chain" and "order" trees and on the real Debian 6.1 tree,
#  - modprobe's loads are logged one by one, in libkmod's exact order, and are seen loaded by the
#    next libkmod call (sysfs: initstate, refcnt, holders; /proc/modules in the kernel's format);
#  - KMODNS_TRAP_FAIL makes one load fail with the errno given; a missing provider is ENOENT, a
#    second load EEXIST, compressed modules go through init_module;
#  - rmmod and modprobe -r remove them; a module in use is refused (EAGAIN, as the kernel);
#  - paths and uname are redirected only under KMODNS_TRAP_ROOT; as user nobody too;
#  - the real /proc/modules and /sys/module are the same after all of it.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
before=$(real_modules_state)

if [ ! -f "$trap_so" ]; then fail "trap-built: $trap_so missing (make check-programs)"; exit 1; fi
pass "trap-built"
modprobe=$(kmod_tool modprobe) rmmod=$(kmod_tool rmmod) lsmod=$(kmod_tool lsmod) insmod=$(kmod_tool insmod)
if [ -z "$modprobe" ] || [ -z "$rmmod" ] || [ -z "$lsmod" ] || [ -z "$insmod" ]; then
	missing "trap-kmod" "Debian's kmod tools are not installed (apt-get install kmod)"; exit 0
fi
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null || { fail "gen-fixtures --tree failed"; exit 1; }
export KMODNS_TRAP_LOG=$T/log
unset KMODNS_TRAP_FAIL KMODNS_TRAP_UNAME_R KMODNS_TRAP_FORCE_UNLOAD

# expect NAME FILE TEXT: FILE holds exactly TEXT (a diff otherwise).
expect() {
	if [ "$(cat "$2")" = "$3" ]; then pass "$1"; else
		fail "$1: $2 differs:"; diff <(echo "$3") "$2" | sed 's/^/    /'
	fi
}
# bad input: one line naming the file, exit 1
KMODNS_BUILDDIR=$B "$trap_root_cmd" new "$T/bad" "$T/no-such-dir" 2>"$T/err"
check "trap-root-bad-moddir" test $? -eq 1 -a "$(wc -l <"$T/err")" -eq 1 -a -n "$(grep -F "$T/no-such-dir" "$T/err")"
KMODNS_BUILDDIR=$B "$trap_root_cmd" run "$T" true 2>"$T/err"
check "trap-root-not-a-root" test $? -eq 1 -a "$(wc -l <"$T/err")" -eq 1 -a -n "$(grep -F "$T" "$T/err")"

R=$T/chain V=1.0.0-chain
trap_new "$R" "$T/trees/chain/lib/modules/$V" || { fail "trap-new-chain"; exit 1; }
KMODNS_TRAP_SO=$T/none.so KMODNS_BUILDDIR=$B "$trap_root_cmd" run "$R" true 2>"$T/err"
check "trap-root-no-object" test $? -eq 1 -a "$(wc -l <"$T/err")" -eq 1 -a -n "$(grep -F "$T/none.so" "$T/err")"
check "trap-new-layout" test -d "$R/sys/module" -a -f "$R/proc/modules" -a -s "$R/proc/cmdline" -a \
	-f "$R/lib/modules/$V/modules.dep.bin" -a -d "$R/etc/modprobe.d"
check "trap-uname-osrelease" test "$(trap_run "$R" uname -r)" = "$V"
check "trap-uname-env" test "$(KMODNS_TRAP_UNAME_R=9.9.9 trap_run "$R" uname -r)" = "9.9.9"
check "trap-cmdline" test "$(trap_run "$R" cat /proc/cmdline)" = "$(cat "$R/proc/cmdline")"
check "trap-off-without-root" test "$(LD_PRELOAD=$trap_so uname -r)" = "$(uname -r)" -a \
	"$(LD_PRELOAD=$trap_so cat /proc/cmdline 2>&1)" = "$(cat /proc/cmdline 2>&1)"

# modprobe: softdep pre (fan_hub), the diamond, softdep post (pipe5), then the module.
: >"$T/log"
trap_run "$R" "$modprobe" chain_e >"$T/out" 2>&1
check "modprobe-exit-0" test $? -eq 0 -a ! -s "$T/out"
expect "modprobe-load-order" "$T/log" 'finit_module chain_d "" -> 0
finit_module chain_c "" -> 0
finit_module chain_b "" -> 0
finit_module fan_x2 "" -> 0
finit_module fan_x3 "" -> 0
finit_module fan_x1 "" -> 0
finit_module fan_hub "" -> 0
finit_module chain_a "" -> 0
finit_module pipe1 "" -> 0
finit_module pipe2 "" -> 0
finit_module pipe3 "" -> 0
finit_module pipe4 "" -> 0
finit_module pipe5 "" -> 0
finit_module chain_e "" -> 0'
check "proc-modules-format" test -z "$(grep -Ev '^[a-z0-9_]+ [0-9]+ [0-9]+ (-|([a-z0-9_]+,)+) Live 0x[0-9a-f]{16}$' "$R/proc/modules")"
check "proc-modules-newest-first" test "$(trap_loaded "$R" | head -1),$(trap_loaded "$R" | tail -1)" = "chain_e,chain_d"
expect "proc-modules-users" <(grep '^chain_d ' "$R/proc/modules") 'chain_d 4096 4 pipe3,fan_x2,chain_b,chain_c, Live 0x0000000000000000'
check "sysfs-module" test "$(cat "$R/sys/module/chain_a/initstate")" = live -a "$(cat "$R/sys/module/chain_a/refcnt")" = 1 -a \
	"$(readlink "$R/sys/module/chain_a/holders/chain_e")" = ../../chain_e
check "sysfs-holders" test "$(ls "$R/sys/module/chain_d/holders" | sort | tr '\n' ' ')" = "chain_b chain_c fan_x2 pipe3 "
# the next libkmod call sees them loaded: nothing more is inserted
: >"$T/log"
trap_run "$R" "$modprobe" chain_e >"$T/out" 2>&1
check "modprobe-again-loads-nothing" test $? -eq 0 -a ! -s "$T/log"
trap_run "$R" "$modprobe" --first-time chain_e >"$T/out" 2>&1
check "modprobe-first-time-sees-loaded" grep -q "chain_e.*already in kernel" "$T/out"
trap_run "$R" "$lsmod" >"$T/out"
check "lsmod-sees-loaded" test "$(sed 1d "$T/out" | wc -l)" -eq 14 -a "$(awk '$1 == "chain_d" { print $3 }' "$T/out")" = 4

# removal: refused in use (rmmod asks sysfs first; -f asks the kernel, which says EAGAIN)
: >"$T/log"
trap_run "$R" "$rmmod" chain_d 2>"$T/err"
check "rmmod-in-use-refused" test $? -eq 1 -a ! -s "$T/log"
check "rmmod-in-use-message" grep -q "Module chain_d is in use by: " "$T/err"
trap_run "$R" "$rmmod" -f chain_d 2>"$T/err"
check "rmmod-f-in-use-eagain" test $? -eq 1
expect "rmmod-f-log" "$T/log" 'delete_module chain_d O_NONBLOCK|O_TRUNC -> -11 EAGAIN'
: >"$T/log"
trap_run "$R" "$rmmod" chain_e
check "rmmod-removes" test $? -eq 0 -a ! -d "$R/sys/module/chain_e" -a -z "$(grep '^chain_e ' "$R/proc/modules")" -a \
	! -e "$R/sys/module/chain_a/holders/chain_e" -a "$(cat "$R/sys/module/chain_a/refcnt")" = 0
expect "rmmod-log" "$T/log" 'delete_module chain_e O_NONBLOCK -> 0'
trap_run "$R" "$rmmod" chain_e 2>"$T/err"
check "rmmod-absent" test $? -eq 1 -a "$(cat "$T/err")" = "rmmod: ERROR: Module chain_e is not currently loaded"
# refcnt > 0 without holders (a user holds it): kmod refuses, -f asks the kernel: EAGAIN, or
# removal on a kernel with CONFIG_MODULE_FORCE_UNLOAD
trap_set_refcnt "$R" pipe5 1
trap_run "$R" "$rmmod" pipe5 2>"$T/err"
check "rmmod-refcnt-refused" test $? -eq 1 -a "$(cat "$T/err")" = "rmmod: ERROR: Module pipe5 is in use"
: >"$T/log"
trap_run "$R" "$rmmod" -f pipe5 2>/dev/null
check "rmmod-f-refcnt-eagain" test $? -eq 1 -a "$(cat "$T/log")" = 'delete_module pipe5 O_NONBLOCK|O_TRUNC -> -11 EAGAIN'
KMODNS_TRAP_FORCE_UNLOAD=1 trap_run "$R" "$rmmod" -f pipe5 2>/dev/null
check "rmmod-f-force-unload" test $? -eq 0 -a ! -d "$R/sys/module/pipe5" -a "$(cat "$R/sys/module/pipe1/refcnt")" = 1
: >"$T/log"
trap_run "$R" "$modprobe" -r chain_a pipe4 -a 2>"$T/err"
check "modprobe-r-exit" test $? -eq 0 -a ! -s "$T/err"
# libkmod 30 walks the dependencies of each removed module backwards, one level: pipe4's
# pipe2, pipe1 and chain_d are still held when it tries them
expect "modprobe-r-order" "$T/log" 'delete_module chain_a O_NONBLOCK -> 0
delete_module chain_c O_NONBLOCK -> 0
delete_module chain_b O_NONBLOCK -> 0
delete_module fan_hub O_NONBLOCK -> 0
delete_module fan_x2 O_NONBLOCK -> 0
delete_module fan_x3 O_NONBLOCK -> 0
delete_module fan_x1 O_NONBLOCK -> 0
delete_module pipe4 O_NONBLOCK -> 0
delete_module pipe3 O_NONBLOCK -> 0'
check "modprobe-r-leaves-held" test "$(trap_loaded "$R" | tr '\n' ' ')" = "pipe2 pipe1 chain_d "
: >"$T/log"
trap_run "$R" "$rmmod" pipe2 pipe1 chain_d
check "rmmod-several" test $? -eq 0 -a "$(trap_log_names "$T/log" | tr '\n' ' ')" = "pipe2 pipe1 chain_d "
check "all-removed" test ! -s "$R/proc/modules" -a -z "$(ls "$R/sys/module")"

# failures: injected, a missing provider, twice the same, parameters
: >"$T/log"
KMODNS_TRAP_FAIL=chain_b:EINVAL trap_run "$R" "$modprobe" chain_a 2>"$T/err"
check "fail-inject-exit" test $? -eq 1
expect "fail-inject-log" "$T/log" 'finit_module chain_d "" -> 0
finit_module chain_c "" -> 0
finit_module chain_b "" -> -22 EINVAL'
check "fail-inject-message" test "$(cat "$T/err")" = "modprobe: ERROR: could not insert 'chain_a': Invalid argument"
check "fail-inject-not-loaded" test "$(trap_loaded "$R" | tr '\n' ' ')" = "chain_c chain_d "
: >"$T/log"
KMODNS_TRAP_FAIL=other:1,chain_b:8 trap_run "$R" "$modprobe" chain_b 2>/dev/null
check "fail-inject-number" test "$(cat "$T/log")" = 'finit_module chain_b "" -> -8 ENOEXEC'
: >"$T/log"
trap_run "$R" "$insmod" "$R/lib/modules/$V/kernel/net/pipe/pipe2.ko" 2>"$T/err"
check "missing-provider-enoent" test $? -eq 1 -a "$(cat "$T/log")" = 'finit_module pipe2 "" -> -2 ENOENT'
check "missing-provider-message" grep -q "Unknown symbol in module" "$T/err"
: >"$T/log"
trap_run "$R" "$insmod" "$R/lib/modules/$V/kernel/lib/chain_d.ko" 2>"$T/err"
check "second-load-eexist" test $? -eq 1 -a "$(cat "$T/log")" = 'finit_module chain_d "" -> -17 EEXIST'
: >"$T/log"
trap_run "$R" "$modprobe" pipe1 'opt=1' 'name=two words' 2>/dev/null
# the parameters as the kernel gets them (modprobe quotes a value with a space)
check "params-logged" test "$(cat "$T/log")" = 'finit_module pipe1 "opt=1 name="two words"" -> 0'
check "unload-all" trap_unload_all "$R"

# compressed modules: libkmod 30 decompresses them and calls init_module with the image
O=$T/order
trap_new "$O" "$T/trees/order/lib/modules/1.0.0-order" || fail "trap-new-order"
: >"$T/log"
trap_run "$O" "$modprobe" ord_base 2>"$T/err"
check "init-module-xz" test $? -eq 0 -a "$(cat "$T/log")" = 'init_module ord_base "" -> 0' -a "$(trap_loaded "$O")" = ord_base
: >"$T/log"
trap_run "$O" "$insmod" "$O/lib/modules/1.0.0-order/kernel/drivers/ord/ord-dash.ko.zst" 2>"$T/err"
check "init-module-zstd" test $? -eq 0 -a "$(cat "$T/log")" = 'init_module ord_dash "" -> 0'
# the name is the module's own (.modinfo name=), not its file's
cp "$T/trees/chain/lib/modules/$V/kernel/net/pipe/pipe1.ko" "$T/renamed-file.ko"
: >"$T/log"
trap_run "$O" "$insmod" "$T/renamed-file.ko" 2>"$T/err"
check "name-from-module" test $? -eq 0 -a "$(cat "$T/log")" = 'finit_module pipe1 "" -> 0' -a -d "$O/sys/module/pipe1"

# ours under the trap (an ASan build gets its libasan preloaded first): the same loads
if [ -x "$B/tools/modprobe" ]; then
	: >"$T/log"
	trap_run "$R" "$B/tools/modprobe" chain_e >"$T/out" 2>&1
	check "ours-modprobe-under-trap" test $? -eq 0 -a "$(trap_log_names "$T/log" | tr '\n' ' ')" = \
		"chain_d chain_c chain_b fan_x2 fan_x3 fan_x1 fan_hub chain_a pipe1 pipe2 pipe3 pipe4 pipe5 chain_e "
	check "ours-then-kmod-removes" trap_unload_all "$R"
fi

# as user nobody: no privilege needed, the root is all the trap writes
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	N=$T/nobody
	trap_new "$N" "$T/trees/chain/lib/modules/$V" && chown -R -h nobody "$N" && chmod 777 "$T"
	asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env KMODNS_TRAP_LOG="$T/nobody.log" \
		"$trap_root_cmd" run "$N" "$@"; }
	asnobody "$modprobe" chain_e 2>"$T/err" && asnobody "$rmmod" chain_e 2>>"$T/err"
	check "unprivileged-load-remove" test $? -eq 0 -a ! -s "$T/err" -a "$(wc -l <"$T/nobody.log")" -eq 15 -a \
		"$(tail -1 "$T/nobody.log")" = 'delete_module chain_e O_NONBLOCK -> 0'
	export KMODNS_BUILDDIR=$B
else
	skip "unprivileged-load-remove: no user nobody or no setpriv"
fi

# the real Debian 6.1 tree, depmod'ed into the root: loads in modprobe -D's order, removal
era=6.1 dir=$corpus/6.1
if [ ! -f "$dir/ok" ]; then
	missing "trap-corpus-6.1" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels 6.1)"
else
	kver=$(cat "$dir/kver") C=$T/c61
	if ! trap_new "$C" "$dir/root/lib/modules/$kver" || [ ! -s "$C/lib/modules/$kver/modules.dep" ]; then
		fail "trap-corpus-6.1-depmod"
	else
		pass "trap-corpus-6.1-depmod"
		for m in btrfs snd-hda-intel nf_tables xfs ext4 kvm-amd; do
			: >"$T/log"
			# what -D lists, less what is already loaded
			trap_run "$C" "$modprobe" -D "$m" | awk '$1 == "insmod" { n = $2; sub(".*/", "", n); sub("\\.ko.*", "", n); gsub("-", "_", n); print n }' |
				grep -vxF -f <(trap_loaded "$C"; echo /) >"$T/want"
			trap_run "$C" "$modprobe" "$m" 2>"$T/err"
			r=$?
			if [ $r -eq 0 ] && [ -s "$T/want" ] && diff -q "$T/want" <(trap_log_names "$T/log") >/dev/null && ! grep -qv ' -> 0$' "$T/log"; then
				pass "corpus-6.1-load-$m ($(wc -l <"$T/log") modules)"
			else
				fail "corpus-6.1-load-$m: exit $r, $(head -c 300 "$T/err")"; diff "$T/want" <(trap_log_names "$T/log") | head -5
			fi
		done
		trap_run "$C" "$lsmod" >"$T/out"
		check "corpus-6.1-lsmod" test "$(sed 1d "$T/out" | wc -l)" -eq "$(wc -l <"$C/proc/modules")"
		trap_run "$C" "$rmmod" btrfs 2>"$T/err"
		check "corpus-6.1-rmmod-btrfs" test $? -eq 0 -a ! -d "$C/sys/module/btrfs"
		trap_run "$C" "$rmmod" libcrc32c 2>"$T/err"
		check "corpus-6.1-rmmod-in-use" grep -q "Module libcrc32c is in use by: " "$T/err"
		: >"$T/log"
		trap_run "$C" "$modprobe" -r snd-hda-intel 2>"$T/err"
		check "corpus-6.1-modprobe-r" test $? -eq 0 -a ! -s "$T/err" -a "$(head -1 "$T/log")" = "delete_module snd_hda_intel O_NONBLOCK -> 0" -a \
			! -d "$C/sys/module/snd_hda_intel" -a ! -d "$C/sys/module/snd_intel_dspcfg"
		trap_unload_all "$C"
		check "corpus-6.1-unload-all" test $? -eq 0 -a -z "$(ls "$C/sys/module")"
	fi
fi

check "real-system-untouched" test "$(real_modules_state)" = "$before"
