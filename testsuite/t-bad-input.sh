#!/bin/bash
# Bad input: every damaged module gets one clear line naming the file and exit 1 from
# `modinfo --namespaces` (our reader); kmod's path (plain modinfo) must not crash either.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'chmod -R u+rwX "$T"; rm -rf "$T"' EXIT
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }

# without_refused_allocations FILE: the file without ASan's notice of an allocation it refused
# (allocator_may_return_null=1, as under check-all): an xz index may claim any size, and the
# reader must survive malloc's NULL; the notice is the sanitizer's, not the tool's output
without_refused_allocations() {
	grep -vE '^==[0-9]+==WARNING: AddressSanitizer failed to allocate 0x[0-9a-f]+ bytes$' "$1" >"$1.f"
	mv "$1.f" "$1"
}

# expect_error NAME FILE [ARGS...]: exit 1, exactly one stderr line, naming FILE, nothing on stdout.
expect_error() {
	local name=$1 file=$2 rc lines; shift 2
	$W "$B/tools/modinfo" --namespaces "$@" "$file" >"$T/out" 2>"$T/err"; rc=$?
	without_refused_allocations "$T/err"
	lines=$(wc -l <"$T/err")
	if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && grep -qF -- "$file" "$T/err" && [ ! -s "$T/out" ]; then
		pass "$name"
	else
		fail "$name: exit $rc, $lines stderr lines: $(head -c 300 "$T/err" | tr '\n' '|')"
		return
	fi
	# kmod's own reading of the same file: any clean exit, never a crash or a sanitizer report.
	$W "$B/tools/modinfo" "$file" >/dev/null 2>"$T/err2"; rc=$?
	without_refused_allocations "$T/err2"
	if [ $rc -ge 2 ] || grep -qE 'Sanitizer|runtime error' "$T/err2"; then
		fail "$name-kmod-path: exit $rc $(head -c 200 "$T/err2")"
	fi
}

# Truncations at many offsets of 64/32-bit, both byte orders, stripped (relocation method).
for base in v6.12.ko i386.ko ppc64.ko stripped.ko v7.2.ko; do
	f=$T/fx/$base size=$(stat -c %s "$f") step=$((size / 25)) bad=0 total=0
	for off in 1 4 16 52 64 $(seq $step $step $((size - 1))) $((size - 1)); do
		head -c "$off" "$f" >"$T/trunc.ko"
		total=$((total + 1))
		out=$(expect_error "x" "$T/trunc.ko")
		case $out in PASS*) ;; *) bad=$((bad + 1)); echo "truncated $base at $off: $out";; esac
	done
	if [ $bad -eq 0 ]; then pass "truncated-$base ($total offsets)"; else fail "truncated-$base: $bad of $total offsets"; fi
done

# Damaged headers, tables and strings.
for base in v6.12.ko i386.ko ppc64.ko; do
	for kind in shoff-huge shnum-huge shstrndx-bad class-bad data-bad type-exec symtab-link symbol-name kstrtabns-offset; do
		"$B/testsuite/mutate" "$T/fx/$base" "$T/$kind.ko" $kind || { fail "mutate $kind $base"; continue; }
		expect_error "$kind-$base" "$T/$kind.ko"
	done
	for sec in __ksymtab_strings .symtab .strtab .modinfo __ksymtab_gpl; do
		for kind in section-offset section-size section-name; do
			"$B/testsuite/mutate" "$T/fx/$base" "$T/$kind.ko" $kind $sec || { fail "mutate $kind $sec"; continue; }
			expect_error "$kind-$sec-$base" "$T/$kind.ko"
		done
	done
	# Strings without their NUL: namespace strings, .modinfo records.
	for sec in __ksymtab_strings .modinfo; do
		"$B/testsuite/mutate" "$T/fx/$base" "$T/unterminated.ko" fill-A $sec
		expect_error "unterminated-$sec-$base" "$T/unterminated.ko"
	done
done
"$B/testsuite/mutate" "$T/fx/stripped.ko" "$T/reloc.ko" reloc-symbol .rela__ksymtab_gpl &&
	expect_error "relocation-symbol-out-of-range" "$T/reloc.ko"
"$B/testsuite/mutate" "$T/fx/stripped-rel.ko" "$T/reloc32.ko" reloc-symbol .rel__ksymtab_gpl &&
	expect_error "relocation-symbol-out-of-range-rel" "$T/reloc32.ko"

# Compression: garbage after each magic, truncated streams, a stream that is not ELF.
printf '\xfd7zXZ\x00garbage garbage garbage' >"$T/garbage-xz.ko.xz"
printf '\x28\xb5\x2f\xfdgarbage garbage garbage' >"$T/garbage-zst.ko.zst"
printf '\x1f\x8bgarbage garbage garbage' >"$T/garbage-gz.ko.gz"
for f in garbage-xz.ko.xz garbage-zst.ko.zst garbage-gz.ko.gz; do expect_error "$f" "$T/$f"; done
for f in v6.12-xz.ko.xz v6.12-zst.ko.zst v6.12-gz.ko.gz; do
	size=$(stat -c %s "$T/fx/$f")
	for off in 20 $((size / 2)) $((size - 5)); do
		head -c "$off" "$T/fx/$f" >"$T/trunc-$f"
		expect_error "truncated-$f-at-$off" "$T/trunc-$f"
	done
done
echo "not a module" | xz >"$T/text.ko.xz"
expect_error "xz-of-text" "$T/text.ko.xz"
printf 'not an elf file at all' >"$T/text.ko"
expect_error "not-elf" "$T/text.ko"

# Files that are not files.
: >"$T/empty.ko"
expect_error "empty-file" "$T/empty.ko"
mkdir "$T/dir.ko"
expect_error "directory" "$T/dir.ko"
expect_error "missing-file" "$T/nonexistent.ko"
cp "$T/fx/v6.12.ko" "$T/unreadable.ko"; chmod 000 "$T/unreadable.ko"
if [ "$(id -u)" -eq 0 ]; then
	# root reads anything: drop to nobody for this one
	chmod 755 "$T"
	if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
		W="setpriv --reuid=65534 --regid=65534 --clear-groups $W" expect_error "unreadable-file" "$T/unreadable.ko"
	else
		skip "unreadable-file: running as root and setpriv cannot drop privileges"
	fi
else
	expect_error "unreadable-file" "$T/unreadable.ko"
fi

# A malformed Module.symvers: the error names the file and the line.
printf '0x1\tgood\tvmlinux\tEXPORT_SYMBOL\t\n0x2\tbad line\n' >"$T/Module.symvers"
$W "$B/tools/modinfo" --namespaces -E "$T/Module.symvers" "$T/fx/v6.12.ko" >"$T/out" 2>"$T/err"; rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF "$T/Module.symvers:2: malformed line" "$T/err"; then
	pass "malformed-symvers-line"
else
	fail "malformed-symvers-line: exit $rc: $(cat "$T/err")"
fi

# The fuzzers' findings (testsuite/fuzz-findings): an export whose __ksymtab_ value reaches the
# reader's kind byte is damage, named; an empty .modinfo without a buffer is no module text.
findings=$S/testsuite/fuzz-findings
if [ -d "$findings" ]; then
	cp "$findings/ksymtab-index-out-of-bounds.ko" "$T/ksymtab-index-out-of-bounds.ko"
	expect_error "fuzz-ksymtab-index-out-of-bounds" "$T/ksymtab-index-out-of-bounds.ko"
	check "fuzz-ksymtab-index-out-of-bounds-says-why" grep -q ': corrupt module: __ksymtab_ symbol value out of range$' "$T/err"
	$W "$B/tools/modinfo" --namespaces "$findings/modinfo-null-offset.ko" >"$T/out" 2>"$T/err"; rc=$?
	check "fuzz-modinfo-null-offset-clean" eval '[ $rc -le 1 ] && ! grep -qE "Sanitizer|runtime error" "$T/err"'
	# xz streams whose index claims more than memory holds (liblzma's allocation fails: clean)
	for f in xz-index-huge-allocation.ko.xz xz-index-huge-allocation-2.ko.xz; do
		cp "$findings/$f" "$T/$f"
		expect_error "fuzz-$f" "$T/$f"
	done
	# a kernel image with an empty __kcrctab beside a full __ksymtab (a CRC was read per export)
	cp "$findings/vmlinuz-empty-kcrctab.elf" "$T/vmlinuz-empty-kcrctab.elf"
	$W "$B/testsuite/ns-dump" --vmlinuz "$T/vmlinuz-empty-kcrctab.elf" >"$T/out" 2>"$T/err"; rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		grep -qF "$T/vmlinuz-empty-kcrctab.elf: corrupt kernel image: __kcrctab and __ksymtab disagree" "$T/err"; then
		pass "fuzz-vmlinuz-empty-kcrctab"
	else
		fail "fuzz-vmlinuz-empty-kcrctab: exit $rc: $(head -c 300 "$T/err")"
	fi
	# a depmod.d version pattern stacking repetitions ("l+++..."): glibc's regcomp took all memory
	cp -r "$T/fx/sample" "$T/cfgtree"
	timeout 120 $W "$B/tools/depmod" -C "$findings/depmod-config-stacked-repetition.conf" -b "$T/cfgtree" \
		6.12.0-sample >"$T/out" 2>"$T/err"; rc=$?
	check "fuzz-depmod-config-stacked-repetition" eval '[ $rc -le 1 ] && ! grep -qE "Sanitizer|runtime error" "$T/err"'
	# optional pieces repeated and repeated again ("C???+++++++"): regcomp took 0.9 s, 30 s under ASan
	timeout 120 $W "$B/tools/depmod" -C "$findings/depmod-config-nested-optional-repetition.conf" -b "$T/cfgtree" \
		6.12.0-sample >"$T/out" 2>"$T/err"; rc=$?
	check "fuzz-depmod-config-nested-optional-repetition" eval '[ $rc -le 1 ] && ! grep -qE "Sanitizer|runtime error" "$T/err"'
	# repetitions nested in groups multiply the same way ("((a+)+)+...", "(a{1,255}){1,255}",
	# glibc's "{,n}"), and optional pieces repeated ("C???+++++++") take regcomp seconds:
	# such a version pattern never matches, at once; a large but sane one still does. Without a
	# matching override depmod takes the copy in extra/, with one the copy in kernel/.
	m=$T/cfgtree/lib/modules/6.12.0-sample
	mkdir -p "$m/extra" && cp "$m/kernel/drivers/sample/sample_core.ko" "$m/extra/"
	nest=$(printf '%.0s(' $(seq 30))a$(printf '%.0s+)' $(seq 30))+
	printf 'override sample_core %s kernel/drivers/sample\n' "$nest" '(.{1,255}){1,255}' \
		'((a{,255}){,255}){,255}' 'C???+++++++' '((((((((((((C?)?)?)+)+)+)+)+)+)+)+)+)+' >"$T/nested.conf"
	printf 'override sample_core %s kernel/drivers/sample\n' '^6(\.1[0-9]?){1,2}\.0-s[a-z]{2,}.{,300}$' \
		'^6(\.[0-9]+)+-sample$' >"$T/large.conf"
	for c in nested large; do
		timeout 20 $W "$B/tools/depmod" -C "$T/$c.conf" -b "$T/cfgtree" 6.12.0-sample >"$T/out" 2>"$T/err"
		echo "exit $?" >"$T/$c.dep"
		grep -o '^[^:]*sample_core.ko:' "$m/modules.dep" >>"$T/$c.dep"
	done
	check "depmod-config-nested-repetition" diff -u - "$T/nested.dep" <<<"$(printf 'exit 0\nextra/sample_core.ko:')"
	check "depmod-config-large-pattern-matches" diff -u - "$T/large.dep" \
		<<<"$(printf 'exit 0\nkernel/drivers/sample/sample_core.ko:')"
	# ten bytes of zstd frame claiming 138 MB: the claim alone bought the allocation (libFuzzer's
	# malloc limit); in 100 MiB of address space the reader must still say what is wrong
	cp "$findings/zstd-content-size-claim.ko.zst" "$T/zstd-content-size-claim.ko.zst"
	if [ -n "$W" ] || grep -q -- '-fsanitize=address' "$B/Makefile"; then
		skip "fuzz-zstd-content-size-claim: an address-space limit does not suit ASan or valgrind"
	else
		prlimit --as=$((100 << 20)) "$B/tools/modinfo" --namespaces "$T/zstd-content-size-claim.ko.zst" \
			>"$T/out" 2>"$T/err"; rc=$?
		check "fuzz-zstd-content-size-claim" eval '[ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
			grep -qF "$T/zstd-content-size-claim.ko.zst: zstd: " "$T/err"'
	fi
	expect_error "fuzz-zstd-content-size-claim-sanitizers" "$T/zstd-content-size-claim.ko.zst"
else
	fail "fuzz-findings: no $findings"
fi
