#!/bin/bash
# depmod on the real Debian trees: every file kmod 30's depmod writes is byte-identical,
# except where kmod is wrong (modules.symbols on kernels without MODVERSIONS lists namespace
# strings as symbols; that difference is checked to be exactly those lines) and for our
# namespace records in modules.dep.bin (without them it is kmod's file to the byte).
. "$(dirname "$0")/lib.sh"
kmod_depmod=
for d in /usr/sbin/depmod /sbin/depmod; do
	if [ -x "$d" ] && "$d" -V 2>/dev/null | grep -q '^kmod version'; then kmod_depmod=$d; break; fi
done
[ -n "$kmod_depmod" ] || { missing "depmod" "Debian's kmod depmod is not installed (apt-get install kmod)"; exit 0; }
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
files="modules.dep modules.dep.bin modules.alias modules.alias.bin modules.softdep modules.symbols modules.symbols.bin modules.builtin.alias.bin modules.builtin.bin modules.devname"

for era in $eras; do
	dir=$corpus/$era
	[ -f "$dir/ok" ] || { missing "depmod-$era" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels $era)"; continue; }
	kver=$(cat "$dir/kver")
	farm "$T" "$dir" "$kver" || { fail "farm-$era: could not copy $dir"; continue; }
	"$kmod_depmod" -b "$T/kmod" "$kver" 2>"$T/kmod.err"; r1=$?
	$W "$B/tools/depmod" -b "$T/ours" "$kver" 2>"$T/ours.err"; r2=$?
	if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
		head -5 "$T/ours.err"; fail "depmod-runs-$era: exit $r2 (kmod: $r1)"; continue
	fi
	same=0 total=0
	for f in $files; do
		a=$T/kmod/lib/modules/$kver/$f b=$T/ours/lib/modules/$kver/$f
		total=$((total + 1))
		if [ "$f" = modules.dep.bin ]; then
			# ours adds a namespace record after each module's line: without them, kmod's bytes
			"$B/testsuite/index-from-text" dep "$T/ours/lib/modules/$kver/modules.dep" "$T/dep.bin"
			n_rec=$("$B/testsuite/index-from-text" lookup "$b" $(awk -F: '{ n = split($1, p, "/"); m = p[n]; sub(/\..*/, "", m); gsub("-", "_", m); print m }' "$T/ours/lib/modules/$kver/modules.dep") | grep -c '^kmodns-ns/1 ')
			if cmp -s "$T/dep.bin" "$a" && [ "$n_rec" -eq "$(wc -l <"$T/ours/lib/modules/$kver/modules.dep")" ]; then
				same=$((same + 1)); pass "depmod-$era-$f (kmod's bytes plus $n_rec namespace records)"
			else
				fail "depmod-$era-$f: not kmod's index plus one record per module ($n_rec records)"
			fi
		elif cmp -s "$a" "$b"; then
			same=$((same + 1)); pass "depmod-$era-$f ($(stat -c %s "$b") bytes)"
		elif [ "$f" = modules.symbols ] || [ "$f" = modules.symbols.bin ]; then
			# kmod's extra lines must be namespace strings and nothing else
			if [ "$f" = modules.symbols ]; then
				diff "$a" "$b" | grep '^[<>]' >"$T/symdiff"
				cut -f5 "$dir/Module.symvers" | sort -u | sed '/^$/d' >"$T/namespaces"
				extra=$(grep -c '^<' "$T/symdiff"); ours_only=$(grep -c '^>' "$T/symdiff")
				bogus=$(grep '^< alias symbol:' "$T/symdiff" | awk '{ sub("symbol:", "", $3); print $3 }' | grep -cxFf "$T/namespaces")
				echo "modules.symbols $era: kmod lists $extra lines more ($bogus of them namespace strings), ours $ours_only more"
				if [ "$ours_only" -eq 0 ] && [ "$extra" -eq "$bogus" ] && [ "$extra" -gt 0 ]; then
					pass "depmod-$era-$f (differs from kmod only by its $extra namespace-string lines)"
				else
					fail "depmod-$era-$f: differs beyond kmod's namespace-string lines"
				fi
			else
				# ours is the index of our (correct) modules.symbols, built as kmod builds it
				"$B/testsuite/index-from-text" symbols "${b%.bin}" "$T/symbols.bin" "$T/ours/lib/modules/$kver/modules.dep"
				check "depmod-$era-$f (the index of our modules.symbols)" cmp -s "$T/symbols.bin" "$b"
			fi
		else
			fail "depmod-$era-$f: differs from kmod's ($(stat -c %s "$a") vs $(stat -c %s "$b") bytes)"
		fi
	done
	echo "depmod $era: $same of $total files byte-identical to kmod's"
done
