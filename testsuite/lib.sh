# Shared by the test scripts: source it.  Reports go to stdout, one line per case.
B=${KMODNS_BUILDDIR:?run through testsuite/run or make check}
S=${KMODNS_SRCDIR:?}
W=${KMODNS_TEST_WRAPPER:-}
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; }
# skip NAME WHY; under CI a real-corpus test may not skip: it fails instead.
skip() { echo "SKIP: $*"; }
# check NAME COMMAND...: PASS when the command succeeds.
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n"; fi; }
tmpdir() { local d; d=$(mktemp -d "${TMPDIR:-/tmp}/kmodns-test.XXXXXX"); echo "$d"; }

# The real Debian kernels (../shared/corpus/fetch-debian-kernels), and the eras to test.
corpus=${KMODNS_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/kmodns-corpus}/amd64
eras=${KMODNS_ERAS:-5.10 6.1 6.12 latest}
# missing NAME WHY: a real-corpus test that cannot run; under CI it may not skip, so it fails.
missing() { if [ "${CI:-}" = true ]; then fail "$1: $2"; else skip "$1: $2"; fi; }
# farm T ERA_DIR KVER: two symlink farms of a corpus tree's module directory, T/kmod and T/ours
# (new each time), for two depmods to write into: the corpus itself is never written.
farm() {
	local who
	for who in kmod ours; do
		rm -rf "${1:?}/$who" && mkdir -p "$1/$who/lib/modules" &&
			cp -rs "$2/root/lib/modules/$3/" "$1/$who/lib/modules/$3" || return 1
	done
}
# same_outputs NAME DIR REF: every file in REF (the outputs of a reference run) is in DIR alike.
same_outputs() {
	local f bad=
	for f in "$3"/modules.*; do
		cmp -s "$f" "$2/$(basename "$f")" || bad="$bad $(basename "$f")"
	done
	if [ -z "$bad" ]; then pass "$1"; else fail "$1: differs in$bad"; fi
}

# ---- the syscall trap (testsuite/trap.c, testsuite/trap-root) ---------------------------------
trap_so=$B/testsuite/kmodns-trap.so
trap_root_cmd=$S/testsuite/trap-root
# kmod_tool NAME: Debian's kmod NAME (modprobe, insmod, rmmod, lsmod, depmod): a link to the kmod
# binary (lsmod has no -V of its own), or nothing.
kmod_tool() {
	local d k
	for d in /usr/sbin /sbin /usr/bin /bin; do
		k=$(readlink -f "$d/$1" 2>/dev/null) || continue
		if [ -x "$k" ] && [ "$(basename "$k")" = kmod ] && "$k" -V 2>/dev/null | grep -q '^kmod version'; then
			echo "$d/$1"; return 0
		fi
	done
	return 1
}
# trap_new ROOT MODDIR [CMDLINE]: a trap root of the module directory MODDIR (lib/modules/VER),
# depmod'ed by kmod's depmod (-b ROOT) when MODDIR has no modules.dep.bin; stderr of depmod is
# dropped. Fails (non-zero) when either step fails.
trap_new() {
	local ver dm
	ver=$(basename "$2")
	KMODNS_BUILDDIR=$B "$trap_root_cmd" new "$@" || return 1
	[ -f "$2/modules.dep.bin" ] && return 0
	dm=$(kmod_tool depmod) || dm=$B/tools/depmod
	"$dm" -b "$1" "$ver" 2>/dev/null
}
# trap_cache CMD: asks trap-root once per shell which objects to preload into CMD (ldd is slow).
declare -A trap_preloads
trap_cache() {
	local exe
	exe=$(command -v "$1") || { echo "trap_run: $1: command not found" >&2; return 127; }
	if [ -z "${trap_preloads[$exe]:-}" ]; then
		trap_preloads[$exe]=$(KMODNS_BUILDDIR=$B "$trap_root_cmd" preload "$exe") || return 1
	fi
	trap_preload=${trap_preloads[$exe]}
}
# trap_run ROOT CMD [ARGS...]: CMD under the trap in ROOT (KMODNS_TRAP_* pass through).
trap_run() {
	local trap_preload
	trap_cache "$2" || return
	KMODNS_TRAP_PRELOAD=$trap_preload KMODNS_BUILDDIR=$B "$trap_root_cmd" run "$@"
}
# trap_loaded ROOT: the loaded modules, newest first, one name a line (ROOT/proc/modules).
trap_loaded() { awk '{ print $1 }' "$1/proc/modules"; }
# trap_unload_all ROOT [RMMOD]: removes every loaded module, newest first (holders before what
# they hold), with RMMOD (kmod's rmmod by default); fails when one stays.
trap_unload_all() {
	local rm=${2:-$(kmod_tool rmmod)}
	[ -s "$1/proc/modules" ] || return 0
	trap_run "$1" "$rm" $(trap_loaded "$1") && [ ! -s "$1/proc/modules" ]
}
# trap_set_refcnt ROOT NAME N: NAME held N times by something else than modules (a user, an fd).
trap_set_refcnt() {
	echo "$3" >"$1/sys/module/$2/refcnt" &&
		awk -v m="$2" -v n="$3" '$1 == m { $3 = n } { print }' "$1/proc/modules" >"$1/proc/.m" &&
		mv "$1/proc/.m" "$1/proc/modules"
}
# trap_log_names FILE: the module names of a trap log, one a line ("finit_module NAME ...").
trap_log_names() { awk '{ print $2 }' "$1"; }
# real_modules_state: what the real system shows of its modules (for "the trap touched nothing").
real_modules_state() { { cat /proc/modules 2>&1; ls -1 /sys/module 2>&1; } | md5sum; }
