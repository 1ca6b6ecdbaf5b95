#!/bin/bash
# depmod's run stamp (modules.kmodns.stamp): a rerun whose inputs are those of the last complete
# run writes nothing and dates the files now; any change of a module's content, an output, the
# configuration, modules.order or builtin, or vmlinux's source makes it a full run again, and
# the files then equal those of a run without cache or stamp. A run that said anything leaves
# no stamp, so that a rerun says it again. On a fixture tree and on the real 6.1 tree.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
stamp=modules.kmodns.stamp

# reference DIR BASE KVER REF: the outputs of a run without cache on a link farm of the tree.
reference() {
	local r=$T/refroot/lib/modules/$3
	rm -rf "$T/refroot" "$4"; mkdir -p "$T/refroot/lib/modules" "$4"
	cp -rs "$(readlink -f "$1")/" "$r"
	find "$r" -maxdepth 1 -name 'modules.*' ! -name modules.order ! -name modules.builtin \
		! -name modules.builtin.modinfo -delete
	[ -e "$2/boot" ] && cp -rs "$(readlink -f "$2/boot")/" "$T/refroot/boot"
	"$B/tools/depmod" --no-cache -b "$T/refroot" "$3" 2>/dev/null
	cp "$r"/modules.* "$4/"
	rm -f "$4/modules.order" "$4/modules.builtin" "$4/modules.builtin.modinfo"
}
# inodes DIR: the inode of every output (a rewrite renames new files in: new inodes).
inodes() { (cd "$1" && stat -c '%n %i' modules.dep modules.dep.bin modules.alias modules.alias.bin \
	modules.symbols modules.symbols.bin modules.builtin.bin modules.devname modules.namespaces); }
# run NAME BASE KVER [args]: depmod -v, output in $T/out and $T/err, exit in $rc.
run() { local n=$1 base=$2 kver=$3; shift 3; $W "$B/tools/depmod" -v "$@" -b "$base" "$kver" >"$T/out" 2>"$T/err"; rc=$?; }
skipped() { grep -q '^depmod: the files in .* are up to date: not rewritten$' "$T/out"; }
unchanged() { sed -n 's/^depmod: \([0-9]*\) of [0-9]* modules unchanged since the last run$/\1/p' "$T/out"; }
# full_run NAME DIR: the last run rewrote every file (new inodes), and said nothing of skipping.
full_run() {
	if ! skipped && ! diff -q <(inodes "$2") "$T/inodes" >/dev/null; then pass "$1"; else fail "$1: not rewritten"; fi
}

# stamp_cases NAME BASE KVER: BASE/lib/modules/KVER (writable, its modules copies or links)
# with a kernel image or Module.symvers and builtin files: a silent tree.
stamp_cases() {
	local name=$1 base=$2 kver=$3 dir=$2/lib/modules/$3 n victim other f start dated
	# the tree's own files become copies: they are touched below (a farm links into the corpus)
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -L "$dir/$f" ] && cp --remove-destination "$(readlink -f "$dir/$f")" "$dir/$f"
	done
	reference "$dir" "$base" "$kver" "$T/ref"

	run "$name-first" "$base" "$kver"
	check "$name-first-run-silent" [ $rc -eq 0 -a ! -s "$T/err" ]
	check "$name-stamp-written" [ -s "$dir/$stamp" ]
	same_outputs "$name-first-run-as-no-cache" "$dir" "$T/ref"
	n=$(grep -c . "$dir/modules.dep")

	# nothing changed: nothing rewritten (same inodes), the files dated now, the same bytes
	inodes "$dir" >"$T/inodes"
	# "now" as the kernel dates files (its coarse clock, a tick behind date's fine one):
	# a file touched just before the run on the same file system
	: >"$base/.start" && start=$(stat -c %.9Y "$base/.start") && rm -f "$base/.start"
	run "$name-rerun" "$base" "$kver"
	check "$name-rerun-exit-0-silent" [ $rc -eq 0 -a ! -s "$T/err" ]
	check "$name-rerun-not-rewritten" skipped
	check "$name-rerun-same-inodes" diff -q <(inodes "$dir") "$T/inodes"
	check "$name-rerun-all-unchanged ($(unchanged) of $n)" [ "$(unchanged)" = "$n" ]
	dated=$(stat -c %.9Y "$dir/modules.dep")
	check "$name-rerun-dated-now" [ "${dated/./}" -ge "${start/./}" ]
	same_outputs "$name-rerun-same-bytes" "$dir" "$T/ref"

	# a module replaced by an identical copy (a package reinstalled): read again, the same
	victim=$dir/$(grep -v '^/' "$dir/modules.dep" | head -1 | cut -d: -f1)
	cp "$(readlink -f "$victim")" "$T/victim.orig"
	cp --remove-destination "$T/victim.orig" "$victim"
	run "$name-copy" "$base" "$kver"
	check "$name-identical-copy-not-rewritten" skipped
	check "$name-identical-copy-re-read ($(unchanged) of $n)" [ "$(unchanged)" = $((n - 1)) ]
	check "$name-identical-copy-same-inodes" diff -q <(inodes "$dir") "$T/inodes"
	# modules.dep is newer than the copy: depmod -A finds the tree up to date (kmod's rule)
	$W "$B/tools/depmod" -A -v -b "$base" "$kver" >"$T/out" 2>&1
	check "$name-quick-after-skip-up-to-date" grep -q 'is up to date$' "$T/out"
	# and the stamp knows the copy: a run that must read modules takes it from the cache
	# (its key there is the old one; the stamp vouches for its content)
	touch "$dir/modules.order"
	run "$name-order-touched" "$base" "$kver"
	full_run "$name-order-touched-full-run" "$dir"
	check "$name-copy-from-cache-by-digest ($(unchanged) of $n)" [ "$(unchanged)" = "$n" ]
	same_outputs "$name-order-touched-same-bytes" "$dir" "$T/ref"

	# a module whose content changes: another module's bytes under its name
	other=$dir/$(grep -v '^/' "$dir/modules.dep" | sed -n 2p | cut -d: -f1)
	cp --remove-destination "$(readlink -f "$other")" "$victim"
	inodes "$dir" >"$T/inodes"
	run "$name-content" "$base" "$kver"
	full_run "$name-changed-module-full-run" "$dir"
	reference "$dir" "$base" "$kver" "$T/ref2"
	same_outputs "$name-changed-module-as-no-cache" "$dir" "$T/ref2"
	cp --remove-destination "$T/victim.orig" "$victim"
	run "$name-restored" "$base" "$kver"
	same_outputs "$name-restored-as-no-cache" "$dir" "$T/ref"

	# an output replaced behind our back (kmod's depmod writes modules.dep.bin without our
	# records), or removed: rewritten
	if [ -x /usr/sbin/depmod ]; then
		/usr/sbin/depmod -b "$base" "$kver" 2>/dev/null
		inodes "$dir" >"$T/inodes"
		run "$name-after-kmod" "$base" "$kver"
		full_run "$name-after-kmod-full-run" "$dir"
		same_outputs "$name-after-kmod-same-bytes" "$dir" "$T/ref"
	fi
	rm "$dir/modules.alias.bin"
	run "$name-output-removed" "$base" "$kver"
	check "$name-output-removed-rewritten" [ -s "$dir/modules.alias.bin" ]
	check "$name-output-removed-full-run" bash -c "! grep -q 'not rewritten' '$T/out'"
	same_outputs "$name-output-removed-same-bytes" "$dir" "$T/ref"

	# the configuration: a new depmod.d file is an input
	mkdir -p "$base/etc/depmod.d"
	echo "# nothing" >"$base/etc/depmod.d/empty.conf"
	inodes "$dir" >"$T/inodes"
	run "$name-config" "$base" "$kver" -C "$base/etc/depmod.d"
	full_run "$name-new-config-full-run" "$dir"
	run "$name-config-again" "$base" "$kver" -C "$base/etc/depmod.d"
	check "$name-same-config-not-rewritten" skipped
	echo "exclude nothing-here" >>"$base/etc/depmod.d/empty.conf"
	inodes "$dir" >"$T/inodes"
	run "$name-config-changed" "$base" "$kver" -C "$base/etc/depmod.d"
	full_run "$name-changed-config-full-run" "$dir"
	run "$name-config-options" "$base" "$kver"
	full_run "$name-other-options-full-run" "$dir"

	# another depmod program (rebuilt, updated): a full run
	cp "$B/tools/depmod" "$T/depmod-copy"
	inodes "$dir" >"$T/inodes"
	$W "$T/depmod-copy" -v -b "$base" "$kver" >"$T/out" 2>"$T/err"
	full_run "$name-other-program-full-run" "$dir"
	run "$name-back-to-program" "$base" "$kver"

	# vmlinux's source: a new key is a full run
	inodes "$dir" >"$T/inodes"
	touch "$(vmlinux_source "$base" "$kver")"
	run "$name-vmlinux" "$base" "$kver"
	full_run "$name-vmlinux-source-touched-full-run" "$dir"

	# damaged stamps: said with -v, ignored, a full run writes a good one
	for damage in checksum truncated foreign; do
		inodes "$dir" >"$T/inodes"
		case $damage in
		checksum) printf '\x55' | dd of="$dir/$stamp" bs=1 seek=$(($(stat -c %s "$dir/$stamp") - 3)) conv=notrunc status=none; why="checksum mismatch" ;;
		truncated) truncate -s $(($(stat -c %s "$dir/$stamp") - 10)) "$dir/$stamp"; why=truncated ;;
		foreign) head -c 512 /dev/urandom >"$dir/$stamp"; why="not a kmodns cache" ;;
		esac
		run "$name-stamp-$damage" "$base" "$kver"
		check "$name-stamp-$damage-said" grep -q "$stamp: ignoring the run stamp: $why" "$T/err"
		full_run "$name-stamp-$damage-full-run" "$dir"
		same_outputs "$name-stamp-$damage-same-bytes" "$dir" "$T/ref"
		run "$name-stamp-$damage-again" "$base" "$kver"
		check "$name-stamp-$damage-replaced" skipped
	done

	# what never skips: -n prints, --ns-check judges, --no-cache reads all and leaves no stamp
	$W "$B/tools/depmod" -n -b "$base" "$kver" >"$T/out" 2>&1
	check "$name-dry-run-prints" grep -q '^# Aliases extracted from modules themselves.' "$T/out"
	inodes "$dir" >"$T/inodes"
	run "$name-ns-check" "$base" "$kver" --ns-check
	full_run "$name-ns-check-full-run" "$dir"
	check "$name-ns-check-leaves-no-stamp" [ ! -e "$dir/$stamp" ]
	run "$name-before-no-cache" "$base" "$kver"
	check "$name-stamp-before-no-cache" [ -e "$dir/$stamp" ]
	run "$name-no-cache" "$base" "$kver" --no-cache
	check "$name-no-cache-removes-stamp" [ ! -e "$dir/$stamp" ]
	run "$name-after-no-cache" "$base" "$kver"
	check "$name-after-no-cache-full-run" bash -c "! grep -q 'not rewritten' '$T/out'"

	# a run that warns leaves no stamp: the rerun warns again
	mv "$dir/modules.builtin" "$T/builtin"
	run "$name-warns" "$base" "$kver"
	check "$name-warning-run-no-stamp" [ ! -e "$dir/$stamp" ]
	run "$name-warns-again" "$base" "$kver"
	check "$name-rerun-warns-again" grep -q 'could not open modules.builtin' "$T/err"
	mv "$T/builtin" "$dir/modules.builtin"

	# writing the stamp fails (the files stand): one error naming it, exit 1; the next run is full
	run "$name-restamp" "$base" "$kver"
	run "$name-stamp-ok" "$base" "$kver"
	check "$name-stamp-ok-skipped" skipped
	cp --remove-destination "$T/victim.orig" "$victim"
	( ulimit -f $(($(stat -c %s "$dir/$stamp") / 2048)); trap '' XFSZ
	  exec $W "$B/tools/depmod" -b "$base" "$kver" ) 2>"$T/err"; rc=$?
	check "$name-stamp-write-failure-exit-1" [ $rc -eq 1 ]
	check "$name-stamp-write-failure-one-line" [ "$(grep -c ERROR "$T/err")" -eq 1 ]
	check "$name-stamp-write-failure-named" grep -q "^depmod: ERROR: could not write $dir/$stamp" "$T/err"
	check "$name-stamp-write-failure-no-temporary" [ "$(find "$dir" -maxdepth 1 -name '.modules.*' | wc -l)" -eq 0 ]
	same_outputs "$name-stamp-write-failure-files-stand" "$dir" "$T/ref"
}

# vmlinux_source BASE KVER: the file vmlinux's exports come from in these trees.
vmlinux_source() {
	if [ -e "$1/boot/vmlinuz-$2" ]; then readlink -f "$1/boot/vmlinuz-$2"; else echo "$1/lib/modules/$2/build/Module.symvers"; fi
}

# a fixture tree made silent: builtin files and a Module.symvers
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null || fail "gen-fixtures-tree"
for case in chain order; do
	base=$T/trees/$case kver=1.0.0-$case
	dir=$base/lib/modules/$kver
	: >"$dir/modules.builtin"; : >"$dir/modules.builtin.modinfo"
	mkdir -p "$dir/build"; : >"$dir/build/Module.symvers"
	stamp_cases "fixture-$case" "$base" "$kver"
done

era=6.1 dir=$corpus/6.1
if case " $eras " in *" $era "*) true ;; *) false ;; esac; then
	if [ -f "$dir/ok" ]; then
		kver=$(cat "$dir/kver")
		farm "$T" "$dir" "$kver" || fail "farm-$era: could not copy $dir"
		rm -f "$T/ours/lib/modules/$kver/vmlinuz"* "$T/ours/lib/modules/$kver/build"
		mkdir -p "$T/ours/boot"
		cp "$(readlink -f "$dir/root/boot/vmlinuz-$kver")" "$T/ours/boot/vmlinuz-$kver"
		stamp_cases "$era" "$T/ours" "$kver"
	else
		missing "stamp-$era" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels $era)"
	fi
fi
