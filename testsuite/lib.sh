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
