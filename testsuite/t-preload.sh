#!/bin/bash
# kmodns-preload.so under the syscall trap: loaders that call libkmod themselves — probe-prog on
# Debian's libkmod.so.2, Debian 12's systemd-modules-load (systemd 252, libkmod linked) and
# Debian 13's (systemd 257, libkmod opened with dlopen) — refuse a module the namespace rule
# refuses, load nothing of its load set, and say why in one line; each case also shows the
# same loader without the preload loading that module.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
P=$B/tools/kmodns-preload.so
PLAIN=$B/testsuite/dlopen-plain.so
for f in "$trap_so" "$P" "$PLAIN" "$B/testsuite/probe-prog" "$B/tools/systemd/kmodns.conf"; do
	[ -f "$f" ] || { fail "no $f (make check-programs)"; exit 1; }
done
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }
before=$(real_modules_state)

# load PRELOAD CMD ARGS...: CMD under the trap with PRELOAD after the trap ("" for none);
# T/out, T/err, T/log (the trap's calls), $rc
# In a sanitizer build the preload links ASan's runtime, which must come first of all preloads.
P_SANITIZERS=$(ldd "$P" 2>/dev/null | awk '$1 ~ /^lib(asan|ubsan)\.so/ && $3 ~ /^\// { printf "%s ", $3 }')
load() {
	local pre=$1 trap_preload; shift
	: >"$T/log"
	trap_cache "$1" || return
	# after the trap's own list, and not in trap-root's environment (bash has no ASan runtime)
	[ -z "$pre" ] || trap_preload="$P_SANITIZERS$trap_preload $pre"
	# foreign loaders leak what they like at exit; our own leaks are valgrind's to find
	ASAN_OPTIONS=${P_SANITIZERS:+detect_leaks=0} KMODNS_TRAP_PRELOAD=$trap_preload KMODNS_TRAP_LOG=$T/log \
		KMODNS_BUILDDIR=$B "$trap_root_cmd" run "$R" "$@" >"$T/out" 2>"$T/err"; rc=$?
}
calls() { awk '{ print $1, $2, $NF }' "$T/log" | tr '\n' ';'; }
unload() { trap_unload_all "$R" || fail "unload: $(trap_loaded "$R" | tr '\n' ' ')"; }
# the refusal, as modprobe words it (vmlinux's namespaces unknown: no build/Module.symvers here)
REFUSAL="kmodns: could not insert 'sample_bad': it uses sample_core_register from namespace SAMPLE_CORE (exported by sample_core) but does not import it; add MODULE_IMPORT_NS(SAMPLE_CORE) to its source; namespaces of vmlinux's exports unknown, left to the kernel"
refused_alone() { test "$(cat "$T/err")" = "$REFUSAL"; }

K=6.12.0-sample
R=$T/root
trap_new "$R" "$T/fx/sample/lib/modules/$K" && $W "$B/tools/depmod" -b "$R" "$K" 2>/dev/null ||
	{ fail "trap root of the sample tree"; exit 1; }
prog=$B/testsuite/probe-prog

# ---- (a) a program linked against Debian's libkmod.so.2 ----
load "$P" "$prog" sample_bad
check "probe-refused" test $rc -eq 1 -a "$(cat "$T/out")" = "sample_bad -1"
check "probe-refused-nothing-loaded" test ! -s "$T/log" -a ! -s "$R/proc/modules"
check "probe-refused-one-line" refused_alone
load "" "$prog" sample_bad
check "probe-without-preload-loads-it" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_bad 0;"
unload

load "$P" "$prog" sample_user
check "probe-allowed-in-order" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_user 0;"
check "probe-allowed-silent" test ! -s "$T/err"
unload

load "$P" "$prog" -i sample_bad
check "insert-refused" test $rc -eq 1 -a ! -s "$T/log" && check "insert-refused-one-line" refused_alone
load "$P" "$prog" -i sample_core
check "insert-allowed" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;"
# already loaded: libkmod's dry run leaves sample_core out, and the set is still judged
load "$P" "$prog" sample_user
check "probe-already-loaded-skipped" test $rc -eq 0 -a "$(calls)" = "finit_module sample_user 0;"
unload

# a refused softdep stops the module that wants it, as in modprobe
echo "softdep sample_user pre: sample_bad" >"$R/etc/modprobe.d/soft.conf"
load "$P" "$prog" sample_user
check "probe-refused-softdep-stops-all" test $rc -eq 1 -a ! -s "$T/log" && check "probe-refused-softdep-one-line" refused_alone
rm "$R/etc/modprobe.d/soft.conf"
# blacklisted for udev (KMOD_PROBE_APPLY_BLACKLIST): libkmod's answer, nothing judged or said
echo "blacklist sample_bad" >"$R/etc/modprobe.d/bl.conf"
load "$P" "$prog" -b sample_bad
check "probe-blacklist-is-libkmods" test $rc -eq 0 -a "$(cat "$T/out")" = "sample_bad 131072" -a ! -s "$T/err" -a ! -s "$T/log"
rm "$R/etc/modprobe.d/bl.conf"
# an install command is libkmod's to run (a modprobe in it checks on its own)
echo "install sample_bad echo ran-install" >"$R/etc/modprobe.d/inst.conf"
load "$P" "$prog" sample_bad
check "probe-install-command-left-to-it" test $rc -eq 0 -a "$(head -1 "$T/out")" = ran-install -a "$(calls)" = "finit_module sample_core 0;"
rm "$R/etc/modprobe.d/inst.conf"
unload
# a kernel that only warns: loaded, with one warning
echo CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y >"$R/lib/modules/$K/config"
load "$P" "$prog" sample_bad
check "probe-allow-missing-loads" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_bad 0;"
test "$(wc -l <"$T/err")" -eq 1 && grep -q "^kmodns: 'sample_bad' uses sample_core_register" "$T/err"
check "probe-allow-missing-warns" [ $? -eq 0 ]
rm "$R/lib/modules/$K/config"
unload

# libkmod opened with dlopen() and used through dlsym(), as systemd 257
load "$P" "$prog" -l sample_bad
check "dlopen-refused" test $rc -eq 1 -a ! -s "$T/log" && check "dlopen-refused-one-line" refused_alone
load "$P" "$prog" -l sample_user
check "dlopen-allowed-in-order" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_user 0;"
unload
# The preload without its dlopen() cover (dlopen-plain.so answers first): dlsym() gives libkmod's
# own probe, whose inner kmod_module_insert_module() call (through libkmod's PLT) still reaches
# the preload: the module is refused, but only after its dependency went in.
load "$PLAIN $P" "$prog" -l sample_bad
check "dlopen-uncovered-dependency-loaded-first" test $rc -eq 1 -a "$(calls)" = "finit_module sample_core 0;"
unload

# The admin's policy (kmodns.d(5)) installed in the root, applied with the same all-or-nothing rule
mkdir -p "$R/etc/kmodns.d" && echo "refuse SAMPLE_CORE module=sample_user" >"$R/etc/kmodns.d/t.conf"
load "$P" "$prog" sample_user
check "policy-refused-nothing-loaded" test $rc -eq 1 -a ! -s "$T/log"
test "$(wc -l <"$T/err")" -eq 1 &&
	grep -q "^kmodns: could not insert 'sample_user': it uses namespace SAMPLE_CORE, refused to it by policy /etc/kmodns.d/t.conf:1" "$T/err"
check "policy-refusal-names-the-line" [ $? -eq 0 ]
echo "warn SAMPLE_CORE module=sample_user" >"$R/etc/kmodns.d/t.conf"
load "$P" "$prog" -l sample_user
check "policy-warned-loads" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_user 0;"
test "$(wc -l <"$T/err")" -eq 1 && grep -q "^kmodns: 'sample_user' uses namespace SAMPLE_CORE" "$T/err"
check "policy-warns-one-line" [ $? -eq 0 ]
rm "$R/etc/kmodns.d/t.conf"
unload

# A daemon outlives depmod: a tree whose modules.dep.bin changed is read again. sample_bad
# starts as a good module (its record says so), then the bad file comes back, older than the
# new index, and depmod runs, all between two loads of one process.
D=$R/lib/modules/$K/kernel/drivers/sample
cp --remove-destination "$(readlink -f "$D/sample_bad.ko")" "$T/bad.ko"
cp --remove-destination "$D/sample_user.ko" "$D/sample_bad.ko"
$W "$B/tools/depmod" -b "$R" "$K" 2>/dev/null
touch -d '-1 hour' "$T/bad.ko"
sleep 1
load "$P" "$prog" sample_core "!cp -p '$T/bad.ko' '$D/sample_bad.ko' && '$B/tools/depmod' -b '$R' '$K' 2>/dev/null" sample_bad
check "probe-reads-a-new-index" test $rc -eq 1 -a "$(calls)" = "finit_module sample_core 0;" && check "probe-new-index-one-line" grep -qxF "$REFUSAL" "$T/err"
unload

# ---- systemd-modules-load: a good and a bad module in a modules-load.d file ----
# systemd opens its configuration directories from "/" one component at a time, which the trap
# does not redirect: the file is given by name, as systemd-modules-load(8) allows.
mkdir -p "$R/etc/modules-load.d"
printf 'sample_user\nsample_bad\n' >"$R/etc/modules-load.d/kmodns-test.conf"
CONF=$R/etc/modules-load.d/kmodns-test.conf
echo sample_bad >"$R/etc/modules-load.d/kmodns-bad.conf"
# The shipped drop-in's LD_PRELOAD value, its installed directory replaced by the build's.
dropin=$(sed -n 's/^Environment=LD_PRELOAD=//p' "$B/tools/systemd/kmodns.conf")
dropin_built=$B/tools/$(basename "$dropin")
check "dropin-names-the-preload ($dropin)" test "$(basename "$dropin")" = kmodns-preload.so -a -f "$dropin_built"

# modules_load LABEL PRELOAD CMD...: the good module loads; with the preload the bad one not
modules_load() {
	local label=$1 pre=$2; shift 2
	load "$pre" "$@" "$CONF"
	check "$label-good-loads-bad-refused" test $rc -ne 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_user 0;"
	check "$label-refusal-line" grep -qxF "$REFUSAL" "$T/err"
	check "$label-logs-eperm" grep -qxF "Failed to insert module 'sample_bad': Operation not permitted" "$T/err"
	echo "# $label stderr:"; sed 's/^/#   /' "$T/err"
	unload
}
# modules_load_unchecked LABEL PRELOAD CMD...: the bad module loads
modules_load_unchecked() {
	local label=$1 pre=$2; shift 2
	load "$pre" "$@" "$CONF"
	check "$label-loads-the-bad-one" test $rc -eq 0 -a "$(calls)" = "finit_module sample_core 0;finit_module sample_user 0;finit_module sample_bad 0;"
	unload
}

ML12=/lib/systemd/systemd-modules-load
if [ -x "$ML12" ] && ldd "$ML12" | grep -q 'libkmod\.so\.2'; then
	modules_load "systemd-$("$ML12" --version | awk 'NR == 1 { print $2 }')" "$P" "$ML12"
	modules_load "systemd-dropin-env" "$dropin_built" "$ML12"
	modules_load_unchecked "systemd-without-preload" "" "$ML12"
else
	missing "systemd-modules-load" "no $ML12 linked against libkmod.so.2 (apt-get install systemd)"
fi

# Debian 13's, run by trixie's own ld.so on trixie's libraries
if X=$("$S/testsuite/fetch-trixie-systemd" 2>"$T/fetch.err"); then
	ldso=$X/usr/lib64/ld-linux-x86-64.so.2
	ML13=("$ldso" --library-path "$X/usr/lib/x86_64-linux-gnu/systemd:$X/usr/lib/x86_64-linux-gnu"
		"$X/usr/lib/systemd/systemd-modules-load")
	v=$("${ML13[@]}" --version | awk 'NR == 1 { print $2 }')
	if readelf -d "${ML13[-1]}" | grep -q 'NEEDED.*libkmod'; then
		fail "systemd-$v links libkmod: not the dlopen case"
	fi
	modules_load "systemd-$v-dlopen" "$P" "${ML13[@]}"
	modules_load "systemd-$v-dropin-env" "$dropin_built" "${ML13[@]}"
	# the bad module alone: with the cover nothing at all is loaded; without it (dlopen-plain.so
	# first) libkmod's inner insertion call still reaches the preload, after the dependency
	load "$P" "${ML13[@]}" "$R/etc/modules-load.d/kmodns-bad.conf"
	check "systemd-$v-dlopen-bad-alone-nothing-loaded" test $rc -ne 0 -a ! -s "$T/log"
	load "$PLAIN $P" "${ML13[@]}" "$R/etc/modules-load.d/kmodns-bad.conf"
	check "systemd-$v-without-dlopen-cover-dependency-loaded" test $rc -ne 0 -a "$(calls)" = "finit_module sample_core 0;"
	unload
	modules_load_unchecked "systemd-$v-without-preload" "" "${ML13[@]}"
	# the policy reaches it too: sample_user refused by it, sample_bad by the kernel's rule
	echo "refuse SAMPLE_CORE module=sample_user" >"$R/etc/kmodns.d/t.conf"
	load "$P" "${ML13[@]}" "$CONF"
	check "systemd-$v-policy-refuses" test $rc -ne 0 -a ! -s "$T/log" &&
		check "systemd-$v-policy-line" grep -q "^kmodns: could not insert 'sample_user': it uses namespace SAMPLE_CORE, refused to it by policy /etc/kmodns.d/t.conf:1" "$T/err"
	rm "$R/etc/kmodns.d/t.conf"
else
	missing "systemd-trixie" "fetch-trixie-systemd failed: $(tail -1 "$T/fetch.err")"
fi

check "real-system-untouched" test "$(real_modules_state)" = "$before"
