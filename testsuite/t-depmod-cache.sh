#!/bin/bash
# depmod's cache of read modules (modules.kmodns.cache): output with the cache is the output
# without it, only changed files (size, mtime, inode) are re-read, and a damaged, truncated
# or foreign cache is noticed and ignored. On the real 6.1 (plain) and latest (xz) trees and
# on every fixture tree.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
cache=modules.kmodns.cache


# unchanged OUT: the "N of M modules unchanged" count depmod -v printed.
unchanged() { sed -n 's/^depmod: \([0-9]*\) of [0-9]* modules unchanged since the last run$/\1/p' "$1"; }

# cache_cases NAME BASE KVER [quick]: the cases on one tree under BASE/lib/modules/KVER
# (writable); "quick" leaves out those that re-read the whole tree more than twice.
cache_cases() {
	local name=$1 base=$2 kver=$3 dir=$2/lib/modules/$3 quick=${4:-} n victim size mtime
	# reference: a run that neither reads nor writes a cache
	# (a tree with a dependency cycle exits 1, as kmod's: every run must exit the same)
	$W "$B/tools/depmod" --no-cache -b "$base" "$kver" 2>"$T/err"; rc=$?
	[ ! -e "$dir/$cache" ]; check "$name-no-cache-writes-none" [ $? -eq 0 ]
	if [ $rc -ne 0 ]; then
		# a failed run (a dependency cycle) writes nothing, the cache neither
		$W "$B/tools/depmod" -b "$base" "$kver" 2>"$T/err"
		[ $? -eq $rc ] && [ ! -e "$dir/$cache" ]
		check "$name-failed-run-writes-no-cache" [ $? -eq 0 ]
		return
	fi
	rm -rf "$T/ref"; mkdir "$T/ref"; cp "$dir"/modules.* "$T/ref/"

	# first run writes the cache; the second reads every module from it
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out1" 2>"$T/err"
	check "$name-first-exit-0" [ $? -eq 0 ]
	check "$name-cache-written" [ -s "$dir/$cache" ]
	cp "$dir/$cache" "$T/cache1"
	same_outputs "$name-first-run-same-as-no-cache" "$dir" "$T/ref"
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out2" 2>"$T/err"
	check "$name-cached-exit-0" [ $? -eq 0 ]
	n=$(grep -c . "$dir/modules.dep")
	check "$name-all-from-cache ($(unchanged "$T/out2") of $n)" [ "$(unchanged "$T/out2")" = "$n" ]
	same_outputs "$name-cached-run-same-as-no-cache" "$dir" "$T/ref"
	check "$name-cache-stable" cmp -s "$dir/$cache" "$T/cache1"

	# a module whose bytes change behind an unchanged size, mtime and inode is not re-read:
	# the cache, not the file, gave the result (a copy replaces the farm's symlink first)
	victim=$dir/$(grep -v '^/' "$dir/modules.dep" | head -1 | cut -d: -f1)
	cp "$(readlink -f "$victim")" "$T/victim.orig"
	cp --remove-destination "$T/victim.orig" "$victim"
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"
	check "$name-copied-module-re-read ($(unchanged "$T/out") of $n)" [ "$(unchanged "$T/out")" = $((n - 1)) ]
	size=$(stat -c %s "$victim") mtime=$(stat -c %y "$victim")
	dd if=/dev/zero of="$victim" bs=1 count=64 seek=$((size / 2)) conv=notrunc status=none
	touch -d "$mtime" "$victim"
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"
	check "$name-unchanged-key-from-cache" [ "$(unchanged "$T/out")" = "$n" ]
	same_outputs "$name-unchanged-key-same-output" "$dir" "$T/ref"
	# the same file with a new mtime is re-read
	touch "$victim"
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"
	check "$name-touched-module-re-read" [ "$(unchanged "$T/out")" = $((n - 1)) ]
	cp --remove-destination "$T/victim.orig" "$victim"
	$W "$B/tools/depmod" -b "$base" "$kver" 2>"$T/err"
	# a new inode with the same size and mtime is re-read too
	cp -p "$victim" "$victim.new" && mv "$victim.new" "$victim"
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"
	check "$name-new-inode-re-read" [ "$(unchanged "$T/out")" = $((n - 1)) ]
	same_outputs "$name-after-changes-same-output" "$dir" "$T/ref"
	[ -z "$quick" ] || return

	# damaged caches: noticed, said with -v, ignored; the output stays right
	for damage in checksum truncated foreign empty; do
		cp "$dir/$cache" "$T/good"
		case $damage in
		checksum) printf '\x55' | dd of="$dir/$cache" bs=1 seek=$(($(stat -c %s "$dir/$cache") / 2)) conv=notrunc status=none; why="checksum mismatch" ;;
		truncated) truncate -s $(($(stat -c %s "$dir/$cache") - 100)) "$dir/$cache"; why=truncated ;;
		foreign) head -c 4096 /dev/urandom >"$dir/$cache"; why="not a kmodns cache" ;;
		empty) : >"$dir/$cache"; why="not a kmodns cache" ;;
		esac
		$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"; r=$?
		if [ $r -eq 0 ] && grep -q "ignoring the module cache: $why" "$T/err" && [ -z "$(unchanged "$T/out")" ]; then
			pass "$name-cache-$damage-ignored"
		else
			fail "$name-cache-$damage-ignored: exit $r, $(head -1 "$T/err")"
		fi
		same_outputs "$name-cache-$damage-same-output" "$dir" "$T/ref"
		check "$name-cache-$damage-rewritten" cmp -s "$dir/$cache" "$T/good"
	done

	# a removed module leaves its entry unused: output as a fresh run's
	rm -f "$victim"
	$W "$B/tools/depmod" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"
	mkdir -p "$T/fresh/lib/modules"; rm -rf "$T/fresh/lib/modules/$kver"
	cp -a "$dir" "$T/fresh/lib/modules/$kver"; rm -f "$T/fresh/lib/modules/$kver/modules."*
	cp "$dir/modules.order" "$dir/modules.builtin"* "$T/fresh/lib/modules/$kver/" 2>/dev/null
	"$B/tools/depmod" --no-cache -b "$T/fresh" "$kver" 2>/dev/null
	check "$name-removed-module ($(unchanged "$T/out") of $((n - 1)) from cache)" [ "$(unchanged "$T/out")" = $((n - 1)) ]
	same_outputs "$name-removed-module-same-as-fresh" "$dir" "$T/fresh/lib/modules/$kver"
	rm -rf "$T/fresh"
}

# every fixture tree (testsuite/gen-fixtures --tree)
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null || fail "gen-fixtures-tree"
for base in "$T"/trees/*/; do
	base=${base%/}
	for kdir in "$base"/lib/modules/*/; do
		kver=$(basename "$kdir")
		[ -f "$kdir/modules.dep" ] && continue
		cache_cases "fixture-$(basename "$base")" "$base" "$kver"
	done
done

for era in 6.1 latest; do
	case " $eras " in *" $era "*) ;; *) continue ;; esac
	dir=$corpus/$era
	[ -f "$dir/ok" ] || { missing "cache-$era" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels $era)"; continue; }
	kver=$(cat "$dir/kver")
	farm "$T" "$dir" "$kver" || { fail "farm-$era: could not copy $dir"; continue; }
	# the xz tree takes seconds per full read: its damage cases are the plain tree's
	cache_cases "$era" "$T/ours" "$kver" $([ "$era" = latest ] && echo quick)
	rm -rf "$T/ours" "$T/kmod"
done
