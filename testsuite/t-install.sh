#!/bin/bash
# `make install DESTDIR=X` installs modinfo under kmod's name, the multicall binary with its
# links (modprobe, insmod, rmmod, lsmod), libkmodns.so with only its
# versioned public symbols, the header, the pkg-config file and the man pages; a program
# built against the installed copy through pkg-config runs.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
if ! make -s -C "$B" install DESTDIR="$T/root" >"$T/log" 2>&1; then
	tail -5 "$T/log"; fail "make-install"; exit 0
fi
pass "make-install"
prefix=$(sed -n 's/^prefix = //p' "$B/Makefile")
libdir=$(sed -n 's/^libdir = //p' "$B/Makefile" | sed "s|\${exec_prefix}|$prefix|;s|\$(exec_prefix)|$prefix|")
R=$T/root
check "installed-modinfo" test -x "$R$prefix/sbin/modinfo"
check "installed-header" test -f "$R$prefix/include/libkmodns.h"
check "installed-pkgconfig" test -f "$R$libdir/pkgconfig/libkmodns.pc"
check "installed-man" test -f "$R$prefix/share/man/man8/modinfo.8" -a -f "$R$prefix/share/man/man3/libkmodns.3"
# the multicall binary under each tool's name, as kmod's links
for t in modprobe insmod rmmod lsmod; do
	check "installed-link-$t" test -x "$R$prefix/sbin/$t" -a "$(readlink "$R$prefix/sbin/$t")" = kmodns
done
check "installed-man-rmmod-lsmod" test -f "$R$prefix/share/man/man8/rmmod.8" -a -f "$R$prefix/share/man/man8/lsmod.8"
"$R$prefix/sbin/lsmod" extra 2>"$T/lsmod.err"
check "installed-lsmod-runs" test $? -eq 1 -a "$(cat "$T/lsmod.err")" = "Usage: $R$prefix/sbin/lsmod"
"$R$prefix/sbin/rmmod" --help >"$T/rmmod.out"
check "installed-rmmod-runs" grep -q "^	rmmod \[options\] modulename ...$" "$T/rmmod.out"
check "installed-man-loaders" test -f "$R$prefix/share/man/man8/modprobe.8" -a -f "$R$prefix/share/man/man8/insmod.8"
# the interposer for libkmod's other users, its systemd drop-ins naming it, and its man page
pkglibdir=$(sed -n 's/^pkglibdir = //p' "$B/Makefile" | sed "s|\$(libdir)|$libdir|;s|\${libdir}|$libdir|")
pre=$pkglibdir/kmodns-preload.so
check "installed-preload" test -f "$R$pre" -a ! -e "$R$pkglibdir/kmodns-preload.la"
check "installed-preload-defines-three" test "$(nm -D --defined-only "$R$pre" | awk '$2 == "T" { print $3 }' | sort | tr '\n' ' ')" = "dlopen kmod_module_insert_module kmod_module_probe_insert_module "
for u in systemd-udevd systemd-modules-load; do
	check "installed-dropin-$u" grep -qxF "Environment=LD_PRELOAD=$pre" "$R$prefix/lib/systemd/system/$u.service.d/kmodns.conf"
done
check "installed-man-preload" test -f "$R$prefix/share/man/man8/kmodns-preload.8"
so=$(ls "$R$libdir"/libkmodns.so.* 2>/dev/null | head -1)
check "installed-library" test -n "$so"
# Only kmodns_* symbols are exported, every one at version LIBKMODNS_1.
if [ -n "$so" ]; then
	nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | grep -v '^LIBKMODNS_1$' | sort >"$T/syms"
	check "exports-only-public-api" bash -c "! grep -v '^kmodns_.*@@LIBKMODNS_1$' '$T/syms'"
	n_header=$(grep -o 'kmodns_[a-z_]*(' "$S/libkmodns/libkmodns.h" | sort -u | wc -l)
	check "exports-every-header-function ($n_header)" test "$(wc -l <"$T/syms")" -eq "$n_header"
fi
cp "$S/testsuite/demo-exports.c" "$T/demo.c"
export PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_PATH=$R$libdir/pkgconfig
san=$(sed -n 's/^SANITIZER_LDFLAGS = //p' "$B/Makefile")
if cc $san -o "$T/demo" "$T/demo.c" $(pkg-config --cflags --libs libkmodns) 2>"$T/cc.log"; then
	"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null
	LD_LIBRARY_PATH=$R$libdir "$T/demo" "$T/fx/v6.12.ko" >"$T/out"
	check "pkg-config-program-runs" grep -q ' USB_STORAGE$' "$T/out"
else
	cat "$T/cc.log"; fail "pkg-config-program-builds"
fi
