#!/bin/bash
# The Debian packages on Debian 13, whose kmod (34) has its tools in /usr/sbin and /usr/bin: in a
# trixie made by debootstrap with the Build-Depends (tarball cached in ~/.cache/kmodns-debootstrap),
# dpkg-buildpackage builds them there; the package built on Debian 12 (paths in /sbin) is refused
# by its preinst before anything changed; apt installs the one built there: exactly kmod's /usr
# paths are diverted, ours answer, kmod's still run from /usr/lib/kmodns/kmod; dpkg --purge
# leaves every path of kmod's as it was (bytes, modes, link targets).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/package-lib.sh"

# the Debian 12 package, for the refusal (t-package builds the same one, from the same cache)
package_start package-trixie "the Debian 12 build" || exit 0

# ---- Debian 13 with what the package needs to build -----------------------------------------
bdeps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$S/debian/control" | sed '1s/^Build-Depends://; $d' |
	tr ',' '\n' | sed 's/(.*)//; s/[[:space:]]//g; s/^debhelper-compat$/debhelper/' | grep . | paste -sd,)
t=$(date +%s)
if ! tarball=$(debootstrapped trixie "kmod,build-essential,dpkg-dev,$bdeps" "$T"); then
	missing "package-trixie: debootstrap" "debootstrap trixie failed (no network?)"; exit 0
fi
unpack_root "$tarball" || { fail "package-trixie: unpacking $tarball"; exit 0; }
kver=$(in_root dpkg-query -W -f='${Version}' kmod)
tools="/usr/sbin/modprobe /usr/sbin/insmod /usr/sbin/rmmod /usr/sbin/lsmod /usr/sbin/modinfo /usr/sbin/depmod /usr/bin/lsmod"
bad=
for f in $tools; do in_root dpkg-query -S "$f" >/dev/null 2>&1 || bad="$bad $f"; done
if [ -n "$bad" ]; then
	fail "package-trixie: Debian 13's kmod $kver does not ship$bad: the test's premise changed"; exit 0
fi
kmod_state >"$T/state.before"

# ---- built there ------------------------------------------------------------------------------
t=$(date +%s)
package_copy_sources "$R/tmp/src" || { fail "package-trixie: copying the sources"; exit 0; }
if in_root sh -c "cd /tmp/src/kmodns && dpkg-buildpackage -b -us -uc -j$(nproc)" >"$T/build13.log" 2>&1; then
	pass "package-trixie: dpkg-buildpackage -b on Debian 13 with kmod $kver ($(took "$t"))"
else
	tail -20 "$T/build13.log"; fail "package-trixie: dpkg-buildpackage -b on Debian 13"; exit 0
fi
for p in kmodns libkmodns0; do
	[ -f "$(ls "$R"/tmp/src/${p}_*.deb 2>/dev/null)" ] || { fail "package-trixie: $p was not built"; exit 0; }
done
ctl=$(dpkg-deb -I "$(ls "$R"/tmp/src/kmodns_*.deb)" preinst | grep '^kmod_tools=')
check "package-trixie: the package diverts kmod's /usr paths ($ctl)" test "$ctl" = "kmod_tools=\"$tools\""

# ---- the Debian 12 package is refused there, nothing changed ---------------------------------
mkdir -p "$R/tmp/debs12" && cp "$(ls "$D"/kmodns_*.deb)" "$R/tmp/debs12/"
if in_root dpkg -i "/tmp/debs12/$(basename "$(ls "$D"/kmodns_*.deb)")" >"$T/dpkg12.log" 2>&1; then
	fail "package-trixie: dpkg -i of the Debian 12 package succeeded on Debian 13"
elif ! grep -q "kmodns: the installed kmod has no /sbin/modprobe: build kmodns on this release" "$T/dpkg12.log"; then
	cat "$T/dpkg12.log"; fail "package-trixie: the Debian 12 package failed on Debian 13 for another reason"
elif kmod_state | cmp -s - "$T/state.before" &&
	! in_root dpkg-query -W -f='${Status}\n' kmodns 2>/dev/null | grep -qv 'not-installed$' &&
	[ ! -e "$R/usr/lib/kmodns" ]; then
	pass "package-trixie: the Debian 12 package's preinst refuses Debian 13's kmod ($(grep -m1 'has no' "$T/dpkg12.log")); kmod unchanged, no diversion"
else
	fail "package-trixie: the refused Debian 12 package left changes behind"
fi

# ---- installed with apt: the diversions, the tools --------------------------------------------
if in_root sh -c 'apt-get install -y --no-install-recommends /tmp/src/kmodns_*.deb /tmp/src/libkmodns0_*.deb' \
	>"$T/apt.log" 2>&1; then
	pass "package-trixie: apt-get install ./kmodns_*.deb on Debian 13"
else
	tail -20 "$T/apt.log"; fail "package-trixie: apt-get install ./kmodns_*.deb on Debian 13"; exit 0
fi
check_diverted package-trixie "$tools"

# ---- purged: kmod as it was -------------------------------------------------------------------
check_purged package-trixie
echo "  t-package-trixie: $(took "$t0") in all"
