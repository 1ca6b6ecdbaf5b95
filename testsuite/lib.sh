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
