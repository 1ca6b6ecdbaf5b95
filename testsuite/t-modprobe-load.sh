#!/bin/bash
# modprobe and insmod loading for real, through the syscall trap (kmodns-trap.so): the exact
# order of finit_module calls, and on a refusal none at all — where Debian's modprobe, given
# the kernel's EINVAL for the same module, has already loaded its dependencies. The sample
# fixture tree and the real 6.1 tree.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
[ -f "$trap_so" ] || { fail "no $trap_so (make check-programs)"; exit 1; }
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }
KMOD_MODPROBE=$(kmod_tool modprobe) || KMOD_MODPROBE=
before=$(real_modules_state)

# load NAME ROOT TOOL ARGS...: TOOL under the trap; T/out, T/err, T/log (the trap's calls), $rc
load() {
	local root=$1; shift
	: >"$T/log"
	KMODNS_TRAP_LOG=$T/log trap_run "$root" "$@" >"$T/out" 2>"$T/err"; rc=$?
}
calls() { awk '{ print $1, $2, $NF }' "$T/log" | tr '\n' ';'; }
fresh() { rm -rf "$1" && trap_new "$1" "$2" && $W "$B/tools/depmod" -b "$1" "$(basename "$2")" 2>/dev/null; }

K=6.12.0-sample
R=$T/root
fresh "$R" "$T/fx/sample/lib/modules/$K" || { fail "trap root of the sample tree"; exit 1; }
D=$R/lib/modules/$K/kernel/drivers/sample

load "$R" "$B/tools/modprobe" sample_user
check "good-exit-0" test $rc -eq 0
check "good-order" test "$(calls)" = "finit_module sample_core 0;finit_module sample_user 0;"
check "good-loaded" test "$(trap_loaded "$R" | tr '\n' ' ')" = "sample_user sample_core "
trap_unload_all "$R"

load "$R" "$B/tools/modprobe" sample_bad
check "refused-exit-1" test $rc -eq 1
check "refused-one-line" test "$(wc -l <"$T/err")" -eq 1
check "refused-no-finit_module" test ! -s "$T/log"
check "refused-nothing-loaded" test ! -s "$R/proc/modules"

# What happens without the check: the kernel (here the trap, told to answer as the kernel
# does) refuses sample_bad after its dependency went in.
load "$R" "$B/tools/modprobe" --no-ns-check sample_bad
check "no-ns-check-loads" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_bad 0;"
trap_unload_all "$R"
if [ -n "$KMOD_MODPROBE" ]; then
	KMODNS_TRAP_FAIL=sample_bad:EINVAL load "$R" "$KMOD_MODPROBE" sample_bad
	check "kmod-leaves-dependency-loaded" test $rc -eq 1 -a "$(trap_loaded "$R")" = sample_core
	trap_unload_all "$R"
else
	fail "kmod-leaves-dependency-loaded: no Debian kmod modprobe (apt-get install kmod)"
fi

# softdeps of a refused module are not loaded either
echo "softdep sample_bad pre: sample_user" >"$R/etc/modprobe.d/soft.conf"
load "$R" "$B/tools/modprobe" sample_bad
check "refused-softdep-not-loaded" test $rc -eq 1 -a ! -s "$T/log"
# ... and a refused softdep stops the module that wants it
echo "softdep sample_user pre: sample_bad" >"$R/etc/modprobe.d/soft.conf"
load "$R" "$B/tools/modprobe" sample_user
check "refused-softdep-stops-all" test $rc -eq 1 -a ! -s "$T/log"
rm "$R/etc/modprobe.d/soft.conf"

# parameters from the command line and from modprobe.d reach finit_module
echo "options sample_user debug=1" >"$R/etc/modprobe.d/opt.conf"
load "$R" "$B/tools/modprobe" sample_user verbose=2
check "parameters" grep -qxF 'finit_module sample_user "debug=1 verbose=2" -> 0' "$T/log"
rm "$R/etc/modprobe.d/opt.conf"
trap_unload_all "$R"

# A kernel that only warns: loaded, with one warning.
echo CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y >"$R/lib/modules/$K/config"
load "$R" "$B/tools/modprobe" sample_bad
check "allow-missing-loads" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_bad 0;"
check "allow-missing-warns" grep -q "^modprobe: WARNING: 'sample_bad' uses sample_core_register" "$T/err"
rm "$R/lib/modules/$K/config"
trap_unload_all "$R"

# insmod reads the file itself, always
load "$R" "$B/tools/insmod" "$D/sample_bad.ko"
check "insmod-refused" test $rc -eq 1 -a ! -s "$T/log"
# (no build/Module.symvers in this root: vmlinux's namespaces are unknown, and it says so)
check "insmod-refused-message" grep -qxF "insmod: ERROR: could not insert 'sample_bad': it uses sample_core_register from namespace SAMPLE_CORE (exported by sample_core) but does not import it; add MODULE_IMPORT_NS(SAMPLE_CORE) to its source; namespaces of vmlinux's exports unknown, left to the kernel" "$T/err"
load "$R" "$B/tools/insmod" "$D/sample_core.ko"
check "insmod-good" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;"
load "$R" "$B/tools/insmod" "$D/sample_user.ko" debug=1
check "insmod-good-parameters" grep -qxF 'finit_module sample_user "debug=1" -> 0' "$T/log"
trap_unload_all "$R"
# a module fixed after depmod ran: modprobe judges the newer file, not the record
cp "$D/sample_bad.ko" "$T/bad.ko"
rm "$D/sample_bad.ko" && cp "$D/sample_user.ko" "$D/sample_bad.ko" && touch -d '+1 hour' "$D/sample_bad.ko"
load "$R" "$B/tools/modprobe" sample_bad
check "stale-record-file-wins" test $rc -eq 0
trap_unload_all "$R"

# ---- the real 6.1 tree: a real user of a namespace, with dependencies ----
dir=$corpus/6.1
if [ -f "$dir/ok" ] && echo " $eras " | grep -q ' 6.1 '; then
	kver=$(cat "$dir/kver")
	R=$T/r61
	fresh "$R" "$dir/root/lib/modules/$kver" || fail "real-6.1: trap root"
	mkdir -p "$R/lib/modules/$kver/build" && ln -sf "$dir/Module.symvers" "$R/lib/modules/$kver/build/Module.symvers"
	$W "$B/tools/depmod" -b "$R" "$kver" 2>/dev/null
	# ums-alauda imports USB_STORAGE and needs usb-storage, usbcore, ...: -D's order is the load order
	"$B/tools/modprobe" -d "$R" -S "$kver" -D ums-alauda | awk '/^insmod/ { n = $2; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n); print n }' >"$T/want"
	load "$R" "$B/tools/modprobe" ums-alauda
	trap_log_names "$T/log" >"$T/got"
	test $rc -eq 0 -a -s "$T/want" && cmp -s "$T/want" "$T/got"
	check "real-6.1-order-as-show-depends ($(wc -l <"$T/want") modules)" [ $? -eq 0 ] ||
		diff "$T/want" "$T/got" | head -5
	trap_unload_all "$R"
	# the same module with its import renamed away: nothing at all is loaded
	m=$(awk -F: '$1 ~ /\/ums-alauda\.ko/ { print $1 }' "$R/lib/modules/$kver/modules.dep")
	src=$(readlink -f "$R/lib/modules/$kver/$m")
	rm -f "$R/lib/modules/$kver/$m"
	python3 - "$src" "$R/lib/modules/$kver/$m" <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
assert b'import_ns=USB_STORAGE\0' in data
open(sys.argv[2], 'wb').write(data.replace(b'import_ns=USB_STORAGE\0', b'xmport_ns=USB_STORAGE\0'))
EOF
	$W "$B/tools/depmod" -b "$R" "$kver" 2>/dev/null
	load "$R" "$B/tools/modprobe" ums-alauda
	check "real-6.1-refused-exit-1" test $rc -eq 1
	check "real-6.1-refused-nothing-loaded" test ! -s "$T/log" -a ! -s "$R/proc/modules"
	check "real-6.1-refused-message" grep -qE "^modprobe: ERROR: could not insert 'ums_alauda': it uses [A-Za-z0-9_]+ from namespace USB_STORAGE \(exported by usb_storage\) but does not import it; add MODULE_IMPORT_NS\(USB_STORAGE\) to its source$" "$T/err"
	if [ -n "$KMOD_MODPROBE" ]; then
		KMODNS_TRAP_FAIL=ums_alauda:EINVAL load "$R" "$KMOD_MODPROBE" ums-alauda
		check "real-6.1-kmod-loads-dependencies-first ($(trap_loaded "$R" | wc -l) left loaded)" \
			test $rc -eq 1 -a "$(trap_loaded "$R" | wc -l)" -ge 2
		trap_unload_all "$R"
	fi
else
	missing "real-6.1" "no 6.1 corpus at $dir"
fi

check "real-system-untouched" test "$(real_modules_state)" = "$before"
