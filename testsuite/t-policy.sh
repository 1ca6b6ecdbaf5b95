#!/bin/bash
# The admin's namespace policy (kmodns.d(5)) as modprobe, insmod and `kmodns` apply it: every
# directive and condition, the three directories and their overrides, malformed lines, owner
# and mode, warn against refuse, all-or-nothing loads under the syscall trap; then
# `kmodns policy --check`, `explain` and `check` on the fixture tree and the real 6.12 and
# latest trees.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); [ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
[ -f "$trap_so" ] || { fail "no $trap_so (make check-programs)"; exit 1; }
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }

K=6.12.0-sample
R=$T/root
M=$R/lib/modules/$K
trap_new "$R" "$T/fx/sample/lib/modules/$K" && $W "$B/tools/depmod" -b "$R" $K 2>/dev/null ||
	{ fail "trap root of the sample tree"; exit 1; }
P=$T/policy # --policy-root for most cases
mkdir -p "$P/etc/kmodns.d" "$P/run/kmodns.d" "$P/usr/lib/kmodns.d"

# policy TEXT: the only installed policy file, $P/etc/kmodns.d/test.conf
policy() { rm -f "$P"/*/kmodns.d/*.conf "$P"/usr/lib/kmodns.d/*.conf; printf '%s\n' "$@" >"$P/etc/kmodns.d/test.conf"; }
# probe ARGS: modprobe -n under the policy root; T/out, T/err, $rc
probe() { $W "$B/tools/modprobe" -n -d "$R" -S $K --policy-root "$P" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# load ARGS: a real modprobe under the trap; T/log gets the finit_module calls
load() {
	: >"$T/log"
	KMODNS_TRAP_LOG=$T/log trap_run "$R" "$B/tools/modprobe" --policy-root "$P" "$@" >"$T/out" 2>"$T/err"; rc=$?
}
refused_by() { test $rc -eq 1 && grep -q "^modprobe: ERROR: could not insert '$1': it uses namespace $2, refused to it by policy $3 (" "$T/err"; }
allowed() { test $rc -eq 0 && ! grep -q "ERROR\|WARNING" "$T/err"; }

# ---- namespace rules and their conditions ----
policy "refuse SAMPLE_CORE module!=sample_other"
probe sample_user
check "only-refuses-others" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
check "refusal-one-line" test "$(wc -l <"$T/err")" -eq 1
check "refusal-quotes-rule" grep -q "(refuse SAMPLE_CORE module!=sample_other)$" "$T/err"
policy "refuse SAMPLE_CORE module!=sample-user"
probe sample_user
check "only-lets-listed-dash-as-underscore" allowed
policy "refuse SAMPLE_CORE module=sample-u*"
probe sample_user
check "module-glob-refuses" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
policy "refuse SAMPLE_CORE module=other_*,sample_bad"
probe sample_user
check "module-list-not-matching-allows" allowed
policy "refuse SAMPLE_*"
probe sample_user
check "namespace-glob-matches" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
policy "refuse OTHER_*"
probe sample_user
check "namespace-glob-not-matching" allowed
policy "refuse DMA_BUF"
probe sample_user
check "import-of-vmlinux-namespace" refused_by sample_user DMA_BUF "$P/etc/kmodns.d/test.conf:1"
policy "allow SAMPLE_CORE module=sample_user" "refuse *"
probe sample_user
test $rc -eq 1 && refused_by sample_user DMA_BUF "$P/etc/kmodns.d/test.conf:2"
check "first-match-allow-wins" [ $? -eq 0 ]
policy "allow * module=sample_user" "refuse *"
probe sample_user
check "allow-exception" allowed
policy "refuse SAMPLE_CORE out-of-tree"
probe sample_user
check "out-of-tree-refused" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
policy "refuse SAMPLE_CORE in-tree"
probe sample_user
check "in-tree-rule-skips-out-of-tree" allowed
policy "refuse SAMPLE_CORE unsigned"
probe sample_user
check "unsigned-refused" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"

# the same module, in-tree and signed: intree=Y in its .modinfo, a signature marker appended
U=$M/kernel/drivers/sample/sample_user.ko
cp "$U" "$T/user.orig"
"$B/testsuite/mutate" "$T/user.orig" "$U" modinfo-replace license=GPL intree=Y 2>"$T/err" &&
	printf '\0\0\0\0\0\0\0\0\0\0\0\0~Module signature appended~\n' >>"$U" && touch -d '-1 min' "$U" &&
	$W "$B/tools/depmod" -b "$R" $K 2>/dev/null || fail "in-tree signed sample_user: $(head -1 "$T/err")"
policy "refuse SAMPLE_CORE out-of-tree" "refuse SAMPLE_CORE unsigned"
probe sample_user
check "in-tree-signed-allowed" allowed
policy "refuse SAMPLE_CORE in-tree signed"
probe sample_user
check "in-tree-signed-refused" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
check "record-has-traits" bash -c "'$B/testsuite/index-from-text' lookup '$M/modules.dep.bin' sample_user | grep -q ' traits=intree,signed$'"
# the record of an older depmod has no traits: the file is read for them
probe --policy /dev/null sample_user
cp "$U" "$T/user.signed"
sleep 1; touch "$U" # newer than the record
probe sample_user
check "traits-from-file-when-record-stale" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
cp "$T/user.orig" "$U"; $W "$B/tools/depmod" -b "$R" $K 2>/dev/null

# dir=: the module moved to updates/ (as DKMS installs)
mkdir -p "$M/updates/dkms" && mv "$U" "$M/updates/dkms/" && $W "$B/tools/depmod" -b "$R" $K 2>/dev/null
policy "refuse SAMPLE_CORE dir=updates/,extra"
probe sample_user
check "dir-refuses-updates" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
policy "refuse SAMPLE_CORE dir=extra"
probe sample_user
check "dir-other-allows" allowed
policy "refuse SAMPLE_CORE dir=$M/updates"
probe sample_user
check "dir-absolute" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
mv "$M/updates/dkms/sample_user.ko" "$U" && rm -rf "$M/updates" && $W "$B/tools/depmod" -b "$R" $K 2>/dev/null

# ---- warn against refuse, and what a missing import does ----
policy "warn SAMPLE_CORE"
probe -v sample_user
check "warn-loads" test $rc -eq 0 -a "$(grep -c '^insmod ' "$T/out")" -eq 2
check "warn-one-line" grep -qx "modprobe: WARNING: 'sample_user' uses namespace SAMPLE_CORE, warned about by policy $P/etc/kmodns.d/test.conf:1 (warn SAMPLE_CORE)" "$T/err"
policy "missing-import warn"
probe sample_bad
test $rc -eq 0 && grep -q "^modprobe: WARNING: 'sample_bad' uses sample_core_register .* (policy $P/etc/kmodns.d/test.conf:1: missing-import warn); namespaces of vmlinux's exports unknown, left to the kernel$" "$T/err"
check "missing-import-warn" [ $? -eq 0 ]
policy "missing-import allow"
probe sample_bad
check "missing-import-allow-silent" allowed
policy "missing-import kernel"
probe sample_bad
check "missing-import-kernel-refuses" test $rc -eq 1
# a kernel built with CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y only warns; the policy hardens it
echo CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y >"$M/config"
policy ""
probe sample_bad
test $rc -eq 0 && grep -q "CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y" "$T/err"
check "allow-missing-kernel-warns" [ $? -eq 0 ]
policy "missing-import refuse"
probe sample_bad
test $rc -eq 1 && grep -q "^modprobe: ERROR: could not insert 'sample_bad': it uses .* (policy $P/etc/kmodns.d/test.conf:1: missing-import refuse); namespaces of vmlinux's exports unknown, left to the kernel$" "$T/err"
check "missing-import-refuse-hardens" [ $? -eq 0 ]
policy "missing-import warn" "missing-import refuse"
probe sample_bad
check "missing-import-first-line-decides" test $rc -eq 0
rm "$M/config"

# ---- the three directories ----
policy
echo "refuse SAMPLE_CORE" >"$P/usr/lib/kmodns.d/50-x.conf"
probe sample_user
check "usr-lib-read" refused_by sample_user SAMPLE_CORE "$P/usr/lib/kmodns.d/50-x.conf:1"
echo "# nothing" >"$P/run/kmodns.d/50-x.conf"
probe sample_user
check "run-overrides-usr-lib" allowed
echo "warn SAMPLE_CORE" >"$P/etc/kmodns.d/50-x.conf"
probe sample_user
test $rc -eq 0 && grep -q "by policy $P/etc/kmodns.d/50-x.conf:1" "$T/err"
check "etc-overrides-run" [ $? -eq 0 ]
ln -sf /dev/null "$P/etc/kmodns.d/50-x.conf"
probe sample_user
check "dev-null-masks" allowed
rm -f "$P"/*/kmodns.d/*.conf "$P"/usr/lib/kmodns.d/*.conf
echo "allow SAMPLE_CORE" >"$P/usr/lib/kmodns.d/10-a.conf"
echo "refuse SAMPLE_CORE" >"$P/etc/kmodns.d/20-b.conf"
probe sample_user
check "order-by-name-across-dirs" allowed
echo "refuse SAMPLE_CORE" >"$P/run/kmodns.d/05-c.conf"
probe sample_user
check "order-by-name-run-first" refused_by sample_user SAMPLE_CORE "$P/run/kmodns.d/05-c.conf:1"
echo "refuse SAMPLE_CORE" >"$P/etc/kmodns.d/notconf.txt"
rm "$P/run/kmodns.d/05-c.conf"
probe sample_user
check "only-conf-files" allowed
rm "$P/etc/kmodns.d/notconf.txt"

# ---- malformed lines: an error naming file:line, the rest applies ----
policy "refuse SAMPLE_CORE bogus" "refsue DMA_BUF" "warn" "refuse X module=a,,b" "missing-import maybe" \
	"refuse X in-tree out-of-tree" "refuse X dir=../x" "# a comment" "   " "refuse SAMPLE_CORE"
probe sample_user
check "malformed-rest-applies" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:10"
for l in 1 2 3 4 5 6 7; do
	check "malformed-line-$l-named" grep -q "^modprobe: ERROR: $P/etc/kmodns.d/test.conf:$l: " "$T/err"
done
check "malformed-no-more-errors" test "$(grep -c ERROR "$T/err")" -eq 8
printf 'refuse SAMPLE_CORE\0 x\nrefuse DMA_BUF\n' >"$P/etc/kmodns.d/test.conf"
probe sample_user
grep -q "test.conf:1: contains a NUL byte" "$T/err" && refused_by sample_user DMA_BUF "$P/etc/kmodns.d/test.conf:2"
check "nul-byte-line" [ $? -eq 0 ]

# ---- owner and mode: root's alone, as sudoers; --policy takes any file ----
policy "refuse SAMPLE_CORE"
chmod 664 "$P/etc/kmodns.d/test.conf"
probe sample_user
test $rc -eq 0 && grep -qx "modprobe: ERROR: $P/etc/kmodns.d/test.conf: ignored: writable by group or others" "$T/err"
check "group-writable-ignored" [ $? -eq 0 ]
chmod 646 "$P/etc/kmodns.d/test.conf"
probe sample_user
test $rc -eq 0 && grep -q "ignored: writable by group or others" "$T/err"
check "other-writable-ignored" [ $? -eq 0 ]
chmod 644 "$P/etc/kmodns.d/test.conf"
if [ "$(id -u)" = 0 ]; then
	chown nobody "$P/etc/kmodns.d/test.conf"
	probe sample_user
	test $rc -eq 0 && grep -qx "modprobe: ERROR: $P/etc/kmodns.d/test.conf: ignored: not owned by root" "$T/err"
	check "not-root-owned-ignored" [ $? -eq 0 ]
	probe --policy "$P/etc/kmodns.d/test.conf" sample_user
	check "named-policy-any-owner" refused_by sample_user SAMPLE_CORE "$P/etc/kmodns.d/test.conf:1"
	chown root "$P/etc/kmodns.d/test.conf"
else
	skip "not-root-owned-ignored: needs root to chown a policy file"
	skip "named-policy-any-owner: needs root to chown a policy file"
fi
echo "allow *" >"$T/named.conf"
probe --policy "$T/named.conf" sample_user
check "named-policy-replaces-installed" allowed
probe --policy "$T/missing.conf" sample_user
check "named-policy-missing-named" grep -q "^modprobe: ERROR: $T/missing.conf: No such file or directory$" "$T/err"
probe --no-ns-check sample_user
check "no-ns-check-skips-policy" allowed

# ---- read at the first need: a load set that uses no namespace meets no line ----
policy "refuse SAMPLE_CORE bogus"
probe sample_core
check "policy-unread-without-namespaces" test $rc -eq 0 -a ! -s "$T/err"
probe sample_user
check "policy-read-for-a-namespace" grep -q "^modprobe: ERROR: $P/etc/kmodns.d/test.conf:1: 'bogus' is not a condition" "$T/err"
probe -D sample_user
test $rc -eq 0 -a ! -s "$T/err" && grep -q "sample_user.ko" "$T/out"
check "policy-unread-by-show-depends" [ $? -eq 0 ]

# ---- loads under the trap: all or nothing; the installed policy read from the root ----
policy "refuse SAMPLE_CORE"
load sample_user
check "trap-refused-nothing-loaded" test $rc -eq 1 -a ! -s "$T/log" -a ! -s "$R/proc/modules"
policy "warn SAMPLE_CORE"
load sample_user
check "trap-warned-loads" test $rc -eq 0 -a "$(trap_log_names "$T/log" | tr '\n' ' ')" = "sample_core sample_user "
trap_unload_all "$R"
mkdir -p "$R/etc/kmodns.d" && echo "refuse SAMPLE_CORE" >"$R/etc/kmodns.d/t.conf"
: >"$T/log"
KMODNS_TRAP_LOG=$T/log trap_run "$R" "$B/tools/modprobe" sample_user >"$T/out" 2>"$T/err"; rc=$?
test $rc -eq 1 -a ! -s "$T/log" && grep -q "by policy /etc/kmodns.d/t.conf:1" "$T/err"
check "trap-installed-etc-policy" [ $? -eq 0 ]
rm "$R/etc/kmodns.d/t.conf"
# insmod: the file itself, the same policy
policy "refuse SAMPLE_CORE"
: >"$T/log"
KMODNS_TRAP_LOG=$T/log trap_run "$R" "$B/tools/insmod" --policy-root "$P" "$U" >"$T/out" 2>"$T/err"; rc=$?
test $rc -eq 1 -a ! -s "$T/log" && grep -q "^insmod: ERROR: could not insert 'sample_user': it uses namespace SAMPLE_CORE, refused to it by policy" "$T/err"
check "insmod-policy-refuses" [ $? -eq 0 ]

# ---- kmodns policy --check, explain, check on the sample tree ----
kmodns() { $W "$B/tools/kmodns" "$@" -d "$R" -S $K --policy-root "$P" >"$T/out" 2>"$T/err"; rc=$?; }
policy "refuse SAMPLE_CORE module!=sample_usr" "warn NO_SUCH_NS" "refuse SAMPLE_* module=nomod_*" "bad line"
kmodns policy --check
check "lint-exit-1-on-error" test $rc -eq 1
check "lint-names-error" grep -q "^kmodns: ERROR: $P/etc/kmodns.d/test.conf:4: unknown directive 'bad'" "$T/err"
check "lint-unknown-namespace" grep -q "^kmodns: WARNING: $P/etc/kmodns.d/test.conf:2: namespace 'NO_SUCH_NS' matches no namespace" "$T/err"
check "lint-unknown-module" grep -q "^kmodns: WARNING: $P/etc/kmodns.d/test.conf:1: module 'sample_usr' matches no module" "$T/err"
check "lint-unknown-module-glob" grep -q "test.conf:3: module 'nomod_\*' matches no module" "$T/err"
check "lint-summary" grep -qx "1 file, 3 rules, missing imports: kernel; 1 error, 3 warnings" "$T/out"
policy "refuse SAMPLE_CORE module!=sample_user"
kmodns policy --check
check "lint-clean-exit-0" test $rc -eq 0 -a ! -s "$T/err"
policy "refuse SAMPLE_CORE module!=other"
kmodns explain sample_user
check "explain-exit-0" test $rc -eq 0
check "explain-imports" grep -q "^imports: *SAMPLE_CORE$" "$T/out"
check "explain-requires" grep -q "^requires: *SAMPLE_CORE: sample_core_register from sample_core: imported$" "$T/out"
check "explain-rule" grep -q "^policy: *SAMPLE_CORE: $P/etc/kmodns.d/test.conf:1: refuse SAMPLE_CORE module!=other (decided)$" "$T/out"
check "explain-verdict" grep -q "^verdict: *refused: uses namespace SAMPLE_CORE, refused to it by policy" "$T/out"
check "explain-traits" grep -q "^traits: *out-of-tree, unsigned$" "$T/out"
kmodns explain --json sample_user
check "explain-json" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["module"] == "sample_user" and j["verdict"] == "refused", j
assert j["policy"][0]["line"] == 1 and j["policy"][0]["decided"] and j["policy"][0]["action"] == "refuse"
assert {"namespace": "SAMPLE_CORE", "symbol": "sample_core_register", "exporter": "sample_core", "refused": False} in j["requires"]
assert j["intree"] is False and j["signed"] is False and "SAMPLE_CORE" in j["imports"]
' "$T/out"
kmodns explain no_such_module
test $rc -eq 1 && grep -q "^kmodns: ERROR: Module no_such_module not found" "$T/err"
check "explain-unknown-module" [ $? -eq 0 ]
kmodns check
check "check-tree-exit-1" test $rc -eq 1
check "check-tree-lines" test "$(grep -c ': refused: ' "$T/out")" -eq 2
check "check-tree-summary" grep -qx "3 modules: 1 allowed, 0 warned, 2 refused" "$T/out"
kmodns check sample_core
check "check-one-allowed" test $rc -eq 0 -a "$(cat "$T/out")" = "1 module: 1 allowed, 0 warned, 0 refused"
policy "warn SAMPLE_CORE"
kmodns check -v sample_user sample_core
test $rc -eq 0 && grep -q "^sample_user: warned: " "$T/out" && grep -q "^sample_core: allowed: " "$T/out"
check "check-warned-exit-0" [ $? -eq 0 ]

# ---- the real 6.12 and latest trees ----
for era in 6.12 latest; do
	case " $eras " in *" $era "*) ;; *) continue ;; esac
	dir=$corpus/$era
	[ -f "$dir/ok" ] || { missing "policy-$era" "no corpus at $dir"; continue; }
	kver=$(cat "$dir/kver")
	farm "$T/$era" "$dir" "$kver" || { fail "policy-$era: farm"; continue; }
	RR=$T/$era/ours
	$W "$B/tools/depmod" -b "$RR" $kver 2>"$T/err" || { fail "policy-$era: depmod: $(head -1 "$T/err")"; continue; }
	# the users of USB_STORAGE by depmod's records, to compare with what the policy refuses
	users=$(awk '$2 == "require" && $3 == "USB_STORAGE" { print $1 }' "$RR/lib/modules/$kver/modules.namespaces" | sort -u)
	n=$(echo "$users" | grep -c .)
	kr() { $W "$B/tools/kmodns" "$@" -d "$RR" -S $kver --policy-root "$P" >"$T/out" 2>"$T/err"; rc=$?; }
	policy
	kr check
	total=$(find "$RR/lib/modules/$kver" -name '*.ko*' | wc -l)
	test $rc -eq 0 && grep -qx "$total modules: $total allowed, 0 warned, 0 refused" "$T/out"
	check "real-$era-check-all-allowed ($total modules)" [ $? -eq 0 ]
	policy "refuse USB_STORAGE module!=usb_storage" "refuse * out-of-tree" "refuse * unsigned"
	kr check
	got=$(sed -n 's/: refused: .*//p' "$T/out" | sort -u)
	check "real-$era-check-refuses-usb-storage-users ($n modules)" test "$n" -gt 5 -a "$got" = "$users"
	kr policy --check
	check "real-$era-lint-clean" test $rc -eq 0 -a ! -s "$T/err"
	kr explain "$(echo "$users" | head -1)"
	check "real-$era-explain-traits" grep -q "^traits: *in-tree, signed$" "$T/out"
	check "real-$era-explain-decided" grep -q "^policy: *USB_STORAGE: .*test.conf:1: refuse USB_STORAGE module!=usb_storage (decided)$" "$T/out"
	policy "refuse USB_STORAGE module!=usb_storage" "warn DRM_NO_SUCH* module=nosuchmodule"
	kr policy --check
	test $rc -eq 0 && test "$(grep -c WARNING "$T/err")" -eq 2
	check "real-$era-lint-flags-unknown" [ $? -eq 0 ]
done
