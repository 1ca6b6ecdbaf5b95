#!/bin/bash
# Where depmod reads and writes, as kmod takes its paths: a relative -b names files by absolute
# paths in messages (kmod 30's words, compared with Debian's depmod); -o DIR (relative, trailing
# slash) writes DIR/lib/modules/VERSION and nothing in the module directory; -m takes the module
# directory below the base directory with or without a leading slash (kmod 34); every file is
# written by temporary name and renamed (no temporary file is left), the same bytes in each case.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null || { fail "gen-fixtures --tree failed"; exit 1; }
tree=$T/trees/chain
kver=$(ls "$tree/lib/modules")
# kmod's depmod warns without these two (the chain tree has none): a run here says nothing
: >"$tree/lib/modules/$kver/modules.builtin"
: >"$tree/lib/modules/$kver/modules.builtin.modinfo"
files="modules.dep modules.dep.bin modules.alias modules.alias.bin modules.softdep modules.weakdep modules.symbols modules.symbols.bin modules.builtin.bin modules.builtin.alias.bin modules.devname modules.namespaces"
# same NAME DIR: DIR has every file of the reference run, byte for byte
same() {
	local f bad=
	for f in $files; do cmp -s "$T/ref/lib/modules/$kver/$f" "$2/$f" || bad="$bad $f"; done
	if [ -z "$bad" ]; then pass "$1"; else fail "$1: differs in$bad"; fi
}
leftovers() { find "$T" -name '.modules.*' | wc -l; }
snapshot() { (cd "$1" && find . -type f | sort); }

cp -a "$tree" "$T/ref"
$W "$B/tools/depmod" -b "$T/ref" "$kver" 2>"$T/err"; rc=$?
check "reference-run (exit $rc)" test $rc -eq 0 -a ! -s "$T/err"

# -b relative: the messages name files as kmod's do (absolute paths)
kmod_depmod=
for d in /usr/sbin/depmod /sbin/depmod; do
	if [ -x "$d" ] && "$d" -V 2>/dev/null | grep -q '^kmod version'; then kmod_depmod=$d; break; fi
done
: >"$T/empty.map"
cp -a "$tree" "$T/rel-ours"
(cd "$T" && $W "$B/tools/depmod" -b rel-ours -e -F "$T/empty.map" "$kver") >"$T/out.ours" 2>"$T/err.ours"; rc=$?
check "relative-basedir-exit ($rc)" test $rc -eq 0
check "relative-basedir-absolute-paths" grep -q "^depmod: WARNING: $T/rel-ours/lib/modules/$kver/.* needs unknown symbol" "$T/err.ours"
same "relative-basedir-files" "$T/rel-ours/lib/modules/$kver"
if [ -n "$kmod_depmod" ]; then
	cp -a "$tree" "$T/rel-kmod"
	(cd "$T" && "$kmod_depmod" -b rel-kmod -e -F "$T/empty.map" "$kver") >"$T/out.kmod" 2>"$T/err.kmod"
	sed "s|$T/rel-kmod|ROOT|g" "$T/err.kmod" >"$T/err.kmod.n"
	sed "s|$T/rel-ours|ROOT|g" "$T/err.ours" >"$T/err.ours.n"
	if cmp -s "$T/err.kmod.n" "$T/err.ours.n"; then
		pass "relative-basedir-stderr-as-kmod ($(wc -l <"$T/err.ours.n") lines)"
	else
		diff "$T/err.kmod.n" "$T/err.ours.n" | head -10 | sed 's/^/  /'; fail "relative-basedir-stderr-as-kmod"
	fi
else
	missing "relative-basedir-stderr-as-kmod" "Debian's kmod depmod is not installed (apt-get install kmod)"
fi

# -o relative with a trailing slash: DIR/lib/modules/VERSION, created; the module directory untouched
cp -a "$tree" "$T/o"
snapshot "$T/o" >"$T/o.before"
(cd "$T" && $W "$B/tools/depmod" -b o -o out/ "$kver") 2>"$T/err"; rc=$?
check "outdir-exit ($rc)" test $rc -eq 0 -a ! -s "$T/err"
same "outdir-files" "$T/out/lib/modules/$kver"
snapshot "$T/o" >"$T/o.after"
check "outdir-module-directory-untouched" cmp -s "$T/o.before" "$T/o.after"

# -m with and without a leading slash: below the base directory either way
for m in /foobar foobar2 //foobar3; do
	d=${m##*/}
	mkdir -p "$T/m/$d"
	cp -a "$tree/lib/modules/$kver" "$T/m/$d/$kver"
	$W "$B/tools/depmod" -b "$T/m" -m "$m" "$kver" 2>"$T/err"; rc=$?
	check "moduledir-$d-exit ($rc)" test $rc -eq 0 -a ! -s "$T/err"
	same "moduledir-$d-files" "$T/m/$d/$kver"
done
# -m and -o together: OUTDIR/MODULEDIR/VERSION
$W "$B/tools/depmod" -b "$T/m" -m foobar -o "$T/mo" "$kver" 2>"$T/err"; rc=$?
check "moduledir-outdir-exit ($rc)" test $rc -eq 0 -a ! -s "$T/err"
same "moduledir-outdir-files" "$T/mo/foobar/$kver"

# an output directory that cannot be created: one line naming it, nothing written
: >"$T/blocker"
$W "$B/tools/depmod" -b "$T/ref" -o "$T/blocker/sub" "$kver" 2>"$T/err"; rc=$?
check "outdir-uncreatable-exit-1" test $rc -eq 1
check "outdir-uncreatable-one-line ($(wc -l <"$T/err"))" test "$(wc -l <"$T/err")" -eq 1
check "outdir-uncreatable-named" grep -q "$T/blocker/sub" "$T/err"

check "no-temporary-file-left ($(leftovers))" test "$(leftovers)" -eq 0
