#!/bin/bash
# Real Debian kernels (5.10, 6.1, 6.12, latest): for every module,
#  (a) our modinfo prints exactly what Debian's kmod modinfo prints;
#  (b) the exports libkmodns reads (both methods) equal the module rows of Module.symvers;
#  (c) the imports equal `modinfo -F import_ns`, deduplicated in first-seen order.
. "$(dirname "$0")/lib.sh"

kmod_modinfo=
for m in /usr/sbin/modinfo /sbin/modinfo; do
	if [ -x "$m" ] && "$m" -V 2>/dev/null | grep -q '^kmod version'; then kmod_modinfo=$m; break; fi
done
T=$(tmpdir); trap 'rm -rf "$T"' EXIT

for era in $eras; do
	dir=$corpus/$era
	if [ ! -f "$dir/ok" ]; then
		missing "corpus-$era" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels $era)"
		continue
	fi
	kver=$(cat "$dir/kver")
	mdir=$dir/root/lib/modules/$kver
	# KMODNS_CORPUS_EVERY=N takes every Nth module (for slow wrappers such as valgrind).
	find "$mdir/" -name '*.ko*' | LC_ALL=C sort | awk -v n="${KMODNS_CORPUS_EVERY:-1}" 'NR % n == 1 || n == 1' >"$T/list"
	n=$(wc -l <"$T/list")

	# (a) modinfo, byte for byte; one file per tool, modules in the same order.
	if [ -z "$kmod_modinfo" ]; then
		missing "modinfo-identical-$era" "Debian's kmod modinfo is not installed (apt-get install kmod)"
	else
		xargs -a "$T/list" -d '\n' $W "$B/tools/modinfo" >"$T/ours" 2>"$T/ours.err"; r1=$?
		xargs -a "$T/list" -d '\n' "$kmod_modinfo" >"$T/kmod" 2>"$T/kmod.err"; r2=$?
		if [ $r1 -eq $r2 ] && cmp -s "$T/ours" "$T/kmod" && [ ! -s "$T/ours.err" ]; then
			echo "modinfo $era: $n modules, output identical ($(wc -c <"$T/ours") bytes)"
			pass "modinfo-identical-$era"
		else
			diff "$T/kmod" "$T/ours" | head -20
			head -5 "$T/ours.err"
			fail "modinfo-identical-$era: outputs differ (exit $r1 vs $r2)"
		fi
	fi

	# (a') the field options, on every 10th module: same bytes as kmod's.
	if [ -n "$kmod_modinfo" ]; then
		awk 'NR % 10 == 1' "$T/list" >"$T/list10"
		bad=
		for opts in "-F parm" "-p" "-0" "-n" "-a" "-d" "-l" "-F vermagic" "-0 -F alias" "-F signer" "-F import_ns" "-F filename"; do
			xargs -a "$T/list10" -d '\n' $W "$B/tools/modinfo" $opts >"$T/o1" 2>&1
			xargs -a "$T/list10" -d '\n' "$kmod_modinfo" $opts >"$T/o2" 2>&1
			cmp -s "$T/o1" "$T/o2" || bad="$bad [$opts]"
		done
		if [ -z "$bad" ]; then pass "modinfo-options-$era ($(wc -l <"$T/list10") modules, 12 option sets)"
		else fail "modinfo-options-$era: differ for$bad"; fi
	fi

	# (b) the census: every export of every module, against Module.symvers.
	awk -F'\t' '$3 != "vmlinux" { n = split($3, p, "/"); m = p[n]; gsub("-", "_", m); print $2 "\t" m "\t" $4 "\t" $5 }' \
		"$dir/Module.symvers" | LC_ALL=C sort >"$T/symvers"
	for method in symbols relocations; do
		flag=; [ $method = relocations ] && flag=--relocations
		if ! xargs -a "$T/list" -d '\n' $W "$B/testsuite/ns-dump" $flag >"$T/dump-$method" 2>"$T/dump.err"; then
			head -5 "$T/dump.err"
			fail "census-$method-$era: ns-dump failed on a real module"
			continue
		fi
		awk '$1 == "module" { m = $2 } $1 == "export" { print $2 "\t" m "\t" $3 "\t" ($4 == "-" ? "" : $4) }' \
			"$T/dump-$method" | LC_ALL=C sort >"$T/ours-$method"
		d=$(diff "$T/symvers" "$T/ours-$method" | grep -c '^[<>]')
		all=$(wc -l <"$T/ours-$method")
		nsd=$(awk -F'\t' '$4 != ""' "$T/ours-$method" | wc -l)
		nss=$(awk -F'\t' '$4 != ""' "$T/ours-$method" | cut -f4 | sort -u | wc -l)
		echo "census $era ($method): $n modules, $all exports ($nsd namespaced in $nss namespaces), Module.symvers module rows $(wc -l <"$T/symvers"), $d differences"
		if [ "${KMODNS_CORPUS_EVERY:-1}" != 1 ]; then
			# a sample: every export read must be a Module.symvers row
			d=$(comm -13 "$T/symvers" "$T/ours-$method" | wc -l)
		fi
		if [ "$d" -eq 0 ] && [ "$all" -gt 0 ]; then
			pass "census-$method-$era"
		else
			diff "$T/symvers" "$T/ours-$method" | head -10
			fail "census-$method-$era: $d differences from Module.symvers"
		fi
	done

	# (b') export CRCs (__crc_ symbols), against Module.symvers' first column.
	awk -F'\t' '$3 != "vmlinux" { print $1 " " $2 }' "$dir/Module.symvers" | LC_ALL=C sort >"$T/crc-symvers"
	if xargs -a "$T/list" -d '\n' $W "$B/testsuite/ns-dump" --export-crcs 2>"$T/dump.err" | LC_ALL=C sort >"$T/crc-ours"; then
		d=$(comm -3 "$T/crc-symvers" "$T/crc-ours" | wc -l)
		[ "${KMODNS_CORPUS_EVERY:-1}" != 1 ] && d=$(comm -13 "$T/crc-symvers" "$T/crc-ours" | wc -l)
		echo "export CRCs $era: $(wc -l <"$T/crc-ours") exports, $d differences from Module.symvers"
		if [ "$d" -eq 0 ]; then pass "export-crcs-$era"; else fail "export-crcs-$era: $d differences"; fi
	else
		fail "export-crcs-$era: ns-dump failed"
	fi

	# (c) imports: Debian's modinfo import_ns records, deduplicated per module in first-seen order.
	if [ -n "$kmod_modinfo" ] && [ -s "$T/kmod" ]; then
		awk '/^filename:/ { if (f) print f "\t" s; f = $2; s = ""; delete seen; next }
		     /^import_ns:/ { if (!($2 in seen)) { seen[$2] = 1; s = s " " $2 } }
		     END { if (f) print f "\t" s }' "$T/kmod" >"$T/imports-kmod"
		awk '$1 == "module" { if (m) print s; m = 1; s = "" } $1 == "import" { s = s " " $2 } END { if (m) print s }' \
			"$T/dump-symbols" | paste "$T/list" - | sed 's/\t/\t/' >"$T/imports-ours"
		with=$(awk -F'\t' '$2 != ""' "$T/imports-ours" | wc -l)
		raw=$(grep -c '^import_ns:' "$T/kmod")
		if cmp -s "$T/imports-kmod" "$T/imports-ours"; then
			echo "imports $era: $with modules import namespaces ($raw import_ns records before deduplication), identical"
			pass "imports-$era"
		else
			diff "$T/imports-kmod" "$T/imports-ours" | head -10
			fail "imports-$era: imports differ from modinfo -F import_ns"
		fi
	fi
done
