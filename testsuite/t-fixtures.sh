#!/bin/bash
# Fixture modules of every era, class, byte order and relocation kind (made by gen-fixtures):
# libkmodns reads exactly what the generator wrote, by symbols and by relocations; modinfo
# --namespaces reports requires and missing imports on the sample tree.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }

n=0
for f in "$T"/fx/*.ko*; do
	name=$(basename "$f"); name=${name%%.ko*}
	[ -f "$T/fx/$name.expected" ] || { fail "$name: no .expected"; continue; }
	n=$((n + 1))
	if $W "$B/testsuite/ns-dump" "$f" >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$T/fx/$name.expected"; then
		pass "read-$name"
	else
		diff "$T/fx/$name.expected" "$T/got" | head -10; head -3 "$T/err"
		fail "read-$name"
	fi
	# The relocation method reads the same exports when the local symbols are there too.
	if $W "$B/testsuite/ns-dump" --relocations "$f" >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$T/fx/$name.expected"; then
		pass "relocations-$name"
	else
		diff "$T/fx/$name.expected" "$T/got" | head -10; head -3 "$T/err"
		fail "relocations-$name"
	fi
done
[ $n -ge 15 ] && pass "fixture-count ($n modules)" || fail "fixture-count: only $n fixture modules"

# Debian's kmod reads our fixtures as modules too (they are believable .ko files).
if command -v modinfo >/dev/null && modinfo -V 2>/dev/null | grep -q kmod; then
	for f in "$T"/fx/v6.12.ko "$T"/fx/i386.ko "$T"/fx/ppc64.ko "$T"/fx/v6.12-xz.ko.xz; do
		check "kmod-reads-$(basename "$f")" bash -c "modinfo -F name '$f' | grep -q ."
	done
fi

# The sample tree: requires, missing and unused imports, text and JSON.
S_ROOT=$T/fx/sample
D=$S_ROOT/lib/modules/6.12.0-sample/kernel/drivers/sample
run_ns() { $W "$B/tools/modinfo" --namespaces "$@" 2>"$T/err"; }
run_ns -E "$S_ROOT/Module.symvers" "$D/sample_bad.ko" >"$T/bad"
check "sample-bad-missing" grep -qx 'missing_ns:     SAMPLE_CORE sample_core sample_core_register' "$T/bad"
check "sample-bad-unused" grep -qx 'unused_ns:      UNUSED_NS' "$T/bad"
# judged for the kernel it was built for (vermagic 6.12: the bare form of the import line)
check "sample-bad-verdict" grep -qxF 'verdict:        refused: uses sample_core_register from namespace SAMPLE_CORE (exported by sample_core) but does not import it; add MODULE_IMPORT_NS(SAMPLE_CORE) to its source' "$T/bad"
run_ns -E "$S_ROOT/Module.symvers" "$D/sample_user.ko" >"$T/user"
check "sample-user-requires" grep -qx 'require_ns:     DMA_BUF vmlinux dma_buf_get' "$T/user"
check "sample-user-nothing-missing" bash -c "! grep -q missing_ns '$T/user'"
run_ns -E "$S_ROOT/Module.symvers" "$D/sample_core.ko" >"$T/core"
check "sample-core-exports" grep -qx 'export_ns:      SAMPLE_CORE 2 (2 GPL)' "$T/core"
run_ns --json -E "$S_ROOT/Module.symvers" "$D/sample_bad.ko" >"$T/json"
check "sample-json-valid" python3 -c "import json,sys; json.load(open('$T/json'))"
check "sample-json-missing" python3 -c "
import json; o = json.load(open('$T/json'))
r = o['requires'][0]
assert o['module'] == 'sample_bad' and o['imports'] == ['UNUSED_NS']
assert r == {'namespace': 'SAMPLE_CORE', 'exporter': 'sample_core', 'symbol': 'sample_core_register', 'imported': False, 'allowed': False}, r
assert o['unused_imports'] == ['UNUSED_NS']"
run_ns "$D/sample_bad.ko" >"$T/unknown"
check "sample-requires-unknown" grep -qx 'require_ns:     unknown (no Module.symvers; use -E)' "$T/unknown"
run_ns --json "$D/sample_bad.ko" >"$T/unknown.json"
check "sample-json-requires-omitted" python3 -c "import json; assert 'requires' not in json.load(open('$T/unknown.json'))"

# By name, with build/Module.symvers found in the module directory.
ln -s ../../.. "$S_ROOT/lib/modules/6.12.0-sample/build"
cp "$S_ROOT/Module.symvers" "$S_ROOT/Module.symvers.copy"
if command -v depmod >/dev/null; then
	depmod -b "$S_ROOT" 6.12.0-sample 2>/dev/null
	run_ns -b "$S_ROOT" -k 6.12.0-sample sample_bad >"$T/byname"
	check "sample-by-name-build-symvers" grep -qx 'missing_ns:     SAMPLE_CORE sample_core sample_core_register' "$T/byname"
	# Without Module.symvers: module exporters come from depmod's modules.symbols.
	rm "$S_ROOT/lib/modules/6.12.0-sample/build"
	run_ns -b "$S_ROOT" -k 6.12.0-sample sample_bad >"$T/depmod"
	check "sample-by-name-depmod" grep -qx 'missing_ns:     SAMPLE_CORE sample_core sample_core_register' "$T/depmod"
	check "sample-vmlinux-unknown" grep -q 'unknown for symbols of vmlinux' "$T/depmod"
	# Plain modinfo by name is kmod's, byte for byte.
	for m in sample_core sample_user sample_bad; do
		check "modinfo-by-name-$m" cmp -s <("$B/tools/modinfo" -b "$S_ROOT" -k 6.12.0-sample $m 2>&1) \
			<(modinfo -b "$S_ROOT" -k 6.12.0-sample $m 2>&1)
	done
else
	skip "sample-by-name: Debian's depmod (kmod) is not installed"
fi
