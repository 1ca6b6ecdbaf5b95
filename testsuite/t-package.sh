#!/bin/bash
# The Debian packages (debian/), as an admin meets them. Built with dpkg-buildpackage from the
# sources (cached by a hash of them in ~/.cache/kmodns-package) and checked with lintian; the -dev
# package builds a program. Then in a Debian 12 made by debootstrap (tarball cached in
# ~/.cache/kmodns-debootstrap), in a chroot: apt installs kmodns over kmod; kmod's tools are
# diverted (still runnable) and ours answer; a kmod upgrade keeps the diversion; depmod and
# kmodns check on the real 6.12 tree; mkinitramfs makes an image whose modprobe, libraries and
# policy work there; the kernel postinst hook names a doctored module in updates/dkms and exits
# 0, run by hand and then by Debian's real 6.12 kernel package (dpkg -i); dpkg --purge leaves
# every path of kmod as it was (bytes, modes, link targets). Last, that system boots in qemu
# (TCG) as a disk with Debian's 6.1 kernel and an update-initramfs image, once with kmodns and
# a policy refusing ums_alauda and warning about drm's DMA_BUF, once after its purge: the
# journal shows the initramfs's modprobe, the refusal, and udevd's warning when it loads drm
# for the VGA card (kmodns-preload); then five more boots (with, without, without, with, with;
# with kmodns, a policy that refuses none of the boot's modules), and the median time to
# multi-user.target of three boots each way, all loading the same modules, on the guest's
# instruction clock (-icount): the host's load, which moves TCG's wall-clock boots by a third,
# does not enter.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/package-lib.sh"

package_start package build || exit 0

# ---- lintian -------------------------------------------------------------------------------
# lintian's verdict is kept with the packages it judged
if [ ! -f "$D/lintian.rc" ]; then
	(cd "$D" && nice lintian -I --pedantic ./*.deb 2>&1 >lintian.log |
		grep -v '^running with root privileges' >>lintian.log; echo "${PIPESTATUS[0]}" >lintian.rc)
fi
sed 's/^/  lintian: /' "$D/lintian.log"
if [ "$(cat "$D/lintian.rc")" -le 1 ] && ! grep -q '^[EW]: ' "$D/lintian.log"; then
	pass "package: lintian (no error or warning; $(grep -c '^[IPX]: ' "$D/lintian.log") info/pedantic tags)"
else
	fail "package: lintian reports errors or warnings"
fi
deb() { ls "$D/$1"_*.deb; }
for p in kmodns libkmodns0 libkmodns-dev; do
	deb $p >/dev/null 2>&1 || { fail "package: $p was not built"; exit 0; }
done

# ---- libkmodns-dev: the header, pkg-config file and library build and run a program -------
mkdir "$T/dev"
dpkg-deb -x "$(deb libkmodns-dev)" "$T/dev" && dpkg-deb -x "$(deb libkmodns0)" "$T/dev"
libdir=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
cp "$S/testsuite/demo-exports.c" "$T/demo.c"
K=
[ -f "$corpus/6.12/kver" ] && K=$(cat "$corpus/6.12/kver")
M=$corpus/6.12/root/lib/modules/$K
if [ -z "$K" ] || [ ! -d "$M/kernel" ]; then
	missing "package: corpus" "the real 6.12 tree is not in $corpus (../shared/corpus/fetch-debian-kernels)"; exit 0
fi
if PKG_CONFIG_SYSROOT_DIR=$T/dev PKG_CONFIG_PATH=$T/dev$libdir/pkgconfig \
	cc -o "$T/demo" "$T/demo.c" $(PKG_CONFIG_SYSROOT_DIR=$T/dev PKG_CONFIG_PATH=$T/dev$libdir/pkgconfig \
		pkg-config --cflags --libs libkmodns) 2>"$T/cc.log" &&
	LD_LIBRARY_PATH=$T/dev$libdir "$T/demo" "$M/kernel/drivers/usb/storage/usb-storage.ko.xz" >"$T/demo.out"; then
	check "package: libkmodns-dev builds a program that reads usb-storage's USB_STORAGE exports" \
		grep -q ' USB_STORAGE$' "$T/demo.out"
else
	cat "$T/cc.log"; fail "package: libkmodns-dev: a program against libkmodns.pc does not build or run"
fi

# ---- a Debian 12 system (debootstrap, cached) --------------------------------------------
# kmod and initramfs-tools as Debian installs them; systemd for a system that can boot.
# linux-base: bookworm's point release has 4.12 (linux-run-hooks), which newer kernel packages need
includes=systemd-sysv,udev,kmod,initramfs-tools,linux-base,libelf1,libssl3,liblz4-1,zstd
t=$(date +%s)
if ! tarball=$(debootstrapped bookworm "$includes" "$T"); then
	missing "package: debootstrap" "debootstrap bookworm failed (no network?)"; exit 0
fi
unpack_root "$tarball" || { fail "package: unpacking $tarball"; exit 0; }
kmod_state >"$T/state.before"

# install_kmodns LOG: apt installs the built kmodns and libkmodns0 (copied to the root's /tmp/debs)
install_kmodns() {
	in_root apt-get install -y --no-install-recommends "/tmp/debs/$(basename "$(deb kmodns)")" \
		"/tmp/debs/$(basename "$(deb libkmodns0)")" >"$1" 2>&1
}
mkdir "$R/tmp/debs" && cp "$(deb kmodns)" "$(deb libkmodns0)" "$R/tmp/debs/"
if install_kmodns "$T/apt.log"; then
	pass "package: apt-get install ./kmodns_*.deb on Debian 12 with kmod"
else
	tail -20 "$T/apt.log"; fail "package: apt-get install ./kmodns_*.deb failed"; exit 0
fi

check_diverted package "/sbin/modprobe /sbin/insmod /sbin/rmmod /sbin/lsmod /sbin/modinfo /sbin/depmod /bin/lsmod"

# a kmod upgrade unpacks under the diversion: Debian's kmod package with a higher version (the
# same files), so dpkg runs a real upgrade (old prerm and postrm, new files over old)
kmod_deb=$(ls "$R"/var/cache/apt/archives/kmod_*.deb | head -1)
kmod_old=$(in_root dpkg-query -W -f='${Version}' kmod)
if dpkg-deb -R "$kmod_deb" "$T/kmod-up" &&
	sed -i 's/^Version: .*/&+kmodns.up1/' "$T/kmod-up/DEBIAN/control" &&
	dpkg-deb -b "$T/kmod-up" "$R/tmp/debs/kmod-up.deb" >/dev/null &&
	in_root dpkg -i /tmp/debs/kmod-up.deb >"$T/kmod.log" 2>&1 &&
	[ "$(in_root dpkg-query -W -f='${Version}' kmod)" = "$kmod_old+kmodns.up1" ] &&
	grep -qF "Unpacking kmod ($kmod_old+kmodns.up1) over ($kmod_old)" "$T/kmod.log" &&
	in_root modprobe --version | grep -q '^kmodns version' &&
	in_root /usr/lib/kmodns/kmod/sbin/modprobe --version | grep -q '^kmod version' &&
	[ "$(in_root dpkg-divert --listpackage /sbin/modprobe)" = kmodns ]; then
	pass "package: upgrading kmod ($kmod_old -> $kmod_old+kmodns.up1) keeps the diversion (modprobe stays ours, kmod's in /usr/lib/kmodns/kmod)"
else
	tail -5 "$T/kmod.log"; fail "package: upgrading kmod broke the diversion"
fi

# the real 6.12 tree, hard links (nothing below writes into a module file), and its kernel image
mkdir -p "$R/lib/modules" && cp -al "$M" "$R/lib/modules/$K" &&
	cp -al "$corpus/6.12/root/boot/." "$R/boot/"
rm -f "$R/lib/modules/$K"/modules.{dep,dep.bin,alias,alias.bin,symbols,symbols.bin,namespaces}
t=$(date +%s)
if in_root depmod "$K" 2>"$T/depmod.err" && [ -s "$R/lib/modules/$K/modules.namespaces" ] &&
	[ -s "$R/lib/modules/$K/modules.dep.bin" ]; then
	pass "package: depmod $K is ours (modules.namespaces written, $(took "$t"))"
else
	cat "$T/depmod.err"; fail "package: depmod $K"
fi
if in_root kmodns check -q -S "$K" >"$T/check.out" 2>&1; then
	pass "package: kmodns check -S $K under the installed default policy: no module refused"
else
	head -5 "$T/check.out"; fail "package: kmodns check -S $K refuses modules of Debian's own tree"
fi
check "package: the default policy (/usr/lib/kmodns.d) passes kmodns policy --check" \
	in_root kmodns policy --check -q -S "$K"

# ---- the initramfs: our modprobe, the libraries it opens, the policy, the records ----------
printf 'usb-storage\nums-alauda\n' >>"$R/etc/initramfs-tools/modules"
sed -i 's/^MODULES=.*/MODULES=list/' "$R/etc/initramfs-tools/initramfs.conf"
t=$(date +%s)
if in_root mkinitramfs -o /tmp/initrd.img "$K" >"$T/mkinitramfs.log" 2>&1 &&
	in_root unmkinitramfs /tmp/initrd.img /tmp/initrd >>"$T/mkinitramfs.log" 2>&1; then
	I=$R/tmp/initrd; [ -d "$I/main" ] && I=$I/main
	bad=
	[ "$(readlink "$I/usr/sbin/modprobe")" = kmodns ] && [ -x "$I/usr/sbin/kmodns" ] || bad="$bad modprobe"
	for so in libelf.so.1 libzstd.so.1 liblzma.so.5 libz.so.1 liblz4.so.1 libkmod.so.2 libcrypto.so.3; do
		[ -e "$I$libdir/$so" ] || bad="$bad $so"
	done
	[ -f "$I/usr/lib/kmodns.d/50-default.conf" ] || bad="$bad policy"
	[ -f "$I/lib/modules/$K/modules.dep.bin" ] || bad="$bad modules.dep.bin"
	if [ -n "$bad" ]; then
		fail "package: mkinitramfs ($(took "$t")): the image lacks$bad"
	elif chroot "$I" /usr/sbin/modprobe --version | grep -q '^kmodns version' &&
		chroot "$I" /usr/sbin/modprobe --show-exports -S "$K" usb-storage >"$T/explain" 2>&1 &&
		grep -q 'usb_stor_.*USB_STORAGE$' "$T/explain" &&
		chroot "$I" /usr/sbin/modprobe -n -v -S "$K" ums_alauda >"$T/probe" 2>&1 &&
		grep -q 'ums-alauda' "$T/probe"; then
		pass "package: mkinitramfs ($(took "$t")): modprobe is kmodns, reads usb-storage's exports there (libelf, liblzma dlopen'ed) and resolves ums_alauda; policy and modules.dep.bin in the image"
	else
		sed 's/^/  --show-exports: /' "$T/explain" | tail -3; sed 's/^/  modprobe -n -v: /' "$T/probe" 2>/dev/null
		fail "package: mkinitramfs: our modprobe does not work inside the image"
	fi
else
	tail -10 "$T/mkinitramfs.log"; fail "package: mkinitramfs $K failed"
fi

# ---- the kernel postinst hook on a tree with a doctored DKMS module ------------------------
up=$R/lib/modules/$K/updates/dkms
mkdir -p "$up" && xz -dc "$M/kernel/drivers/usb/storage/ums-alauda.ko.xz" >"$T/plain.ko"
if [ ! -x "$B/testsuite/mutate" ]; then
	missing "package: kernel hook" "$B/testsuite/mutate not built (make check-programs)"
elif "$B/testsuite/mutate" "$T/plain.ko" "$up/ums-alauda.ko" modinfo-replace import_ns=USB_STORAGE "" &&
	in_root depmod "$K" 2>/dev/null; then
	in_root /etc/kernel/postinst.d/kmodns "$K" "/boot/vmlinuz-$K" >"$T/hook.out" 2>&1
	rc=$?
	sed 's/^/  hook: /' "$T/hook.out"
	if [ "$rc" -eq 0 ] && [ "$(grep -c 'WARNING.*ums_alauda' "$T/hook.out")" -eq 1 ] &&
		grep -q 'ums_alauda.*MODULE_IMPORT_NS(USB_STORAGE)' "$T/hook.out" &&
		cmp -s "$R/etc/kernel/postinst.d/kmodns" "$R/etc/kernel/header_postinst.d/kmodns"; then
		pass "package: /etc/kernel/postinst.d/kmodns names updates/dkms/ums-alauda with its fix, exit 0"
	else
		fail "package: kernel postinst hook (exit $rc) did not name ums_alauda once with its fix"
	fi
	cp "$up/ums-alauda.ko" "$T/dkms-ums-alauda.ko"
	rm -rf "$R/lib/modules/$K/kernel"
	if in_root /etc/kernel/postinst.d/kmodns "$K" "/boot/vmlinuz-$K" >"$T/hook2.out" 2>&1 &&
		[ "$(wc -l <"$T/hook2.out")" -le 6 ]; then
		pass "package: the kernel postinst hook exits 0 on a tree it cannot read, in at most 6 lines"
	else
		fail "package: the kernel postinst hook on a tree it cannot read: exit $?, $(wc -l <"$T/hook2.out") lines"
	fi
else
	fail "package: doctoring ums-alauda into updates/dkms"
fi

# ---- the same hook run by a real kernel package: Debian's 6.12 image, dpkg -i -----------------
# Its postinst runs depmod (ours), then /etc/kernel/postinst.d through linux-run-hooks:
# initramfs-tools' hook (update-initramfs, our modprobe into the image), then ours, which must
# name the DKMS module already in updates/dkms; the package must end up installed.
rm -rf "$R/lib/modules/$K" "$R/boot/"*"$K"
img=$(ls "$corpus/../.debs/linux-image-$K-unsigned_"*_amd64.deb 2>/dev/null | head -1)
if [ -z "$img" ]; then
	missing "package: kernel package" "linux-image-$K-unsigned's .deb is not in $corpus/../.debs (../shared/corpus/fetch-debian-kernels)"
elif [ ! -f "$T/dkms-ums-alauda.ko" ]; then
	fail "package: kernel package: no doctored ums-alauda (the hook test above failed)"
else
	t=$(date +%s)
	mkdir -p "$R/lib/modules/$K/updates/dkms" && cp "$T/dkms-ums-alauda.ko" "$R/lib/modules/$K/updates/dkms/ums-alauda.ko"
	cp "$img" "$R/tmp/debs/"
	in_root dpkg -i "/tmp/debs/$(basename "$img")" >"$T/kpkg.log" 2>&1
	rc=$?
	grep -E 'kmodns|ums_alauda|update-initramfs' "$T/kpkg.log" | sed 's/^/  dpkg -i: /'
	status=$(in_root dpkg-query -W -f='${Status}' "linux-image-$K-unsigned" 2>/dev/null)
	if [ "$rc" -eq 0 ] && [ "$status" = "install ok installed" ] &&
		[ "$(grep -c 'WARNING.*ums_alauda.*MODULE_IMPORT_NS(USB_STORAGE)' "$T/kpkg.log")" -eq 1 ] &&
		[ -s "$R/lib/modules/$K/modules.namespaces" ] && [ -f "$R/boot/initrd.img-$K" ]; then
		pass "package: dpkg -i linux-image-$K-unsigned ($(took "$t")): depmod is ours, the postinst hook names updates/dkms/ums-alauda with its fix, the package is installed with its initramfs"
	else
		tail -15 "$T/kpkg.log"
		fail "package: dpkg -i linux-image-$K-unsigned: exit $rc, status '$status', the hook's warning $(grep -c 'WARNING.*ums_alauda' "$T/kpkg.log") times"
	fi
	in_root dpkg --purge "linux-image-$K-unsigned" >"$T/kpurge.log" 2>&1 || tail -5 "$T/kpurge.log"
fi

# ---- purge: kmod exactly as before -----------------------------------------------------------
rm -rf "$R/lib/modules/$K" "$R/boot/"*"$K"
check_purged package

# ---- a real boot: that Debian 12 with its 6.1 kernel in qemu, kmodns installed --------------
# The initramfs comes from update-initramfs; a policy refuses ums_alauda (which the kernel would
# load); a unit at the end of the boot tries it and reports on the serial console, then the same
# disk boots again with kmodns purged, for the boot time without it.
K1=
[ -f "$corpus/6.1/kver" ] && K1=$(cat "$corpus/6.1/kver")
umount "$R/proc"; rm -rf "$R"
if [ -z "$K1" ] || ! command -v qemu-system-x86_64 >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
	missing "package: boot" "needs the 6.1 corpus tree, qemu-system-x86 and e2fsprogs"
	echo "  t-package: $(took "$t0") in all"; exit 0
fi
t=$(date +%s)
unpack_root "$tarball" && mkdir -p "$R/tmp/debs" "$R/lib/modules" && cp "$(deb kmodns)" "$(deb libkmodns0)" "$R/tmp/debs/" &&
	cp -al "$corpus/6.1/root/lib/modules/$K1" "$R/lib/modules/" && cp -al "$corpus/6.1/root/boot/." "$R/boot/"
echo kmodns-vm >"$R/etc/hostname"
echo '/dev/vda / ext4 defaults 0 1' >"$R/etc/fstab"
printf 'virtio_pci\nvirtio_blk\next4\n' >>"$R/etc/initramfs-tools/modules"
sed -i 's/^MODULES=.*/MODULES=list/' "$R/etc/initramfs-tools/initramfs.conf"
# early boot: which modprobe the initramfs holds, into the kernel log
mkdir -p "$R/etc/initramfs-tools/scripts/init-top"
cat >"$R/etc/initramfs-tools/scripts/init-top/kmodns-proof" <<'SH'
#!/bin/sh
[ "$1" = prereqs ] && exit 0
v=$(/sbin/modprobe --version | { read -r l; echo "$l"; })
echo "kmodns-proof: initramfs modprobe -> $(readlink /sbin/modprobe || readlink /usr/sbin/modprobe): $v" >/dev/kmsg
SH
chmod 755 "$R/etc/initramfs-tools/scripts/init-top/kmodns-proof"
cat >"$R/usr/local/sbin/kmodns-proof" <<'SH'
#!/bin/sh
# what this boot shows, on the serial console, then power off
{
	udevadm settle -t 60
	modprobe ums_alauda; echo "modprobe ums_alauda: exit $?"
	grep -q '^ums_alauda ' /proc/modules && echo "ums_alauda: loaded" || echo "ums_alauda: not loaded"
	modprobe --version | head -1
	journalctl -b -o cat | grep 'ums_alauda' | sed 's/^/journal: /'
	# udev's own loads (bochs for the VGA card pulls in drm): what kmodns-preload said in udevd
	grep -q '^drm ' /proc/modules && echo "drm: loaded" || echo "drm: not loaded"
	journalctl -b -o cat -u systemd-udevd.service | grep 'kmodns' | sed 's/^/udevd: /'
	# the initramfs's line (journald keeps user-written kmsg records apart)
	dmesg | grep 'kmodns-proof: ' | sed 's/^/dmesg: /'
	# this boot's time: kernel start to multi-user.target (systemd's own stamp, in microseconds)
	echo "multi-user: $(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)"
	# and where it went: the real root's systemd started (the kernel and the initramfs before it)
	echo "userspace: $(systemctl show -P UserspaceTimestampMonotonic)"
} 2>&1 | sed 's/^/PROOF: /' >/dev/ttyS0
systemctl poweroff --no-block
SH
chmod 755 "$R/usr/local/sbin/kmodns-proof"
cat >"$R/etc/systemd/system/kmodns-proof.service" <<'UNIT'
[Unit]
Description=kmodns boot proof
After=multi-user.target
[Service]
Type=oneshot
# a load as any unit makes it: its refusal goes to the journal
ExecStartPre=-/sbin/modprobe ums_alauda
ExecStart=/usr/local/sbin/kmodns-proof
[Install]
WantedBy=multi-user.target
UNIT
ln -s /etc/systemd/system/kmodns-proof.service "$R/etc/systemd/system/multi-user.target.wants/"
# a getty would hang up the serial console under the report
ln -s /dev/null "$R/etc/systemd/system/serial-getty@ttyS0.service"
# with the interposer (kmodns-preload.so) packaged, systemd-modules-load's own load is checked too
preload=
if dpkg-deb -c "$(deb kmodns)" | grep 'kmodns-preload\.so$' >/dev/null; then
	preload=y; echo ums_alauda >"$R/etc/modules-load.d/kmodns-proof.conf"
fi
# boot VARIANT: the disk as it stands, its serial console into $T/boot-VARIANT.log. The guest's
# clock counts its instructions (1 ns each) and follows the host's only while the guest idles, so
# its boot time is its own work and waits: the same disk's wall-clock boots under TCG here range
# from 21 to 36 s. Idle time is not skipped (sleep=off): the clock would jump to the next timer
# while the host still reads the disk, and a slow host could run the guest's timeouts out.
boot() {
	local t rc
	umount "$R/proc"
	# made first: mkfs.ext4 says "Creating regular file" even with -q
	rm -f "$T/disk.img" && truncate -s 2G "$T/disk.img" && mkfs.ext4 -q -F -L root -d "$R" "$T/disk.img" || return 1
	mount -t proc proc "$R/proc"
	t=$(date +%s)
	timeout 400 qemu-system-x86_64 -icount shift=0,sleep=on -m 1024 -smp 1 -nographic -no-reboot \
		-kernel "$R/boot/vmlinuz-$K1" -initrd "$R/boot/initrd.img-$K1" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 quiet" \
		-drive "file=$T/disk.img,if=virtio,format=raw" >"$T/boot-$1.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && return 0
	echo "  boot $1: qemu exit $rc after $(took "$t"); the console's last lines:"
	tr -d '\r' <"$T/boot-$1.log" | tail -8 | sed 's/^/    /'
	return 1
}
# proof VARIANT: that boot's report lines, each from its "PROOF: " on (a kernel message on the
# same console may have started the line)
proof() { tr -d '\r' <"$T/boot-$1.log" | grep -ao 'PROOF: .*'; }
# with_kmodns MODE POLICY: kmodns installed with $T/POLICY as /etc/kmodns.d/10-proof.conf, its
# records, and the initramfs made (update-initramfs MODE: -c the first time); without_kmodns:
# purged, kmod's initramfs again. The proof's policy refuses ums_alauda; the timed boots' refuses
# nothing of the boot's (ums_alauda is in-tree), so with and without load the same modules.
printf 'refuse USB_STORAGE module=ums_alauda\nwarn DMA_BUF module=drm\n' >"$T/proof.conf"
printf 'refuse USB_STORAGE out-of-tree\nwarn DMA_BUF module=drm\n' >"$T/timed.conf"
with_kmodns() {
	install_kmodns "$T/apt2.log" || { echo "  apt-get install kmodns failed:"; tail -5 "$T/apt2.log"; return 1; }
	cp "$T/$2" "$R/etc/kmodns.d/10-proof.conf" && in_root depmod "$K1" ||
		{ echo "  policy or depmod $K1 failed"; return 1; }
	in_root update-initramfs "$1" -k "$K1" >>"$T/uinit.log" 2>&1 ||
		{ echo "  update-initramfs $1 with kmodns failed:"; tail -5 "$T/uinit.log"; return 1; }
}
without_kmodns() {
	in_root dpkg --purge kmodns libkmodns0 >>"$T/purge2.log" 2>&1 ||
		{ echo "  dpkg --purge kmodns failed:"; tail -5 "$T/purge2.log"; return 1; }
	in_root update-initramfs -u -k "$K1" >>"$T/uinit.log" 2>&1 ||
		{ echo "  update-initramfs -u without kmodns failed:"; tail -5 "$T/uinit.log"; return 1; }
}
if with_kmodns -c proof.conf && boot with; then
	proof with | sed 's/^/  /'
	b=$(proof with)
	if grep -q "PROOF: dmesg: .*kmodns-proof: initramfs modprobe -> kmodns: kmodns version" <<<"$b" &&
		grep -q "PROOF: journal: .*could not insert 'ums_alauda'.*policy /etc/kmodns.d/10-proof.conf:1" <<<"$b" &&
		grep -q 'PROOF: ums_alauda: not loaded' <<<"$b" &&
		{ [ -z "$preload" ] || { grep -q "PROOF: journal: Failed to insert module 'ums_alauda'" <<<"$b" &&
			grep -q "PROOF: udevd: kmodns: 'drm' .*policy /etc/kmodns.d/10-proof.conf:2" <<<"$b" &&
			grep -q 'PROOF: drm: loaded' <<<"$b"; }; }; then
		pass "package: boot with kmodns ($(took "$t")): the initramfs's modprobe is ours; the policy's refusal of ums_alauda (modprobe${preload:+, systemd-modules-load through kmodns-preload}) is in the journal and it is not loaded${preload:+; udevd's own load of drm (for bochs) went through the check: its warning is in udevd's journal and drm is loaded}"
	else
		tr -d '\r' <"$T/boot-with.log" | tail -15; fail "package: boot with kmodns"
	fi
	# the same disk without kmodns: kmod's tools, kmod's modprobe in the initramfs
	t=$(date +%s)
	if without_kmodns && boot without; then
		b=$(proof without)
		if grep -q 'PROOF: dmesg: .*kmodns-proof: initramfs modprobe -> [^:]*kmod: kmod version' <<<"$b" &&
			grep -q 'PROOF: ums_alauda: loaded' <<<"$b"; then
			pass "package: boot without kmodns ($(took "$t")): kmod's modprobe, ums_alauda loads"
		else
			tr -d '\r' <"$T/boot-without.log" | tail -15; fail "package: boot without kmodns"
		fi
	else
		fail "package: boot without kmodns: setup failed"
	fi
	# the time: three boots each way (the one above without, then with, without, without, with,
	# with), every one loading ums_alauda: the medians
	t=$(date +%s)
	if with_kmodns -u timed.conf && boot with2 && without_kmodns && boot without2 && boot without3 &&
		with_kmodns -u timed.conf && boot with3 && boot with4 && without_kmodns; then
		# secs VARIANT FIELD: a boot's systemd stamp (microseconds since the kernel started), in seconds
		secs() { proof "$1" | sed -n "s/^PROOF: $2: \([0-9]*\)\$/\1/p" | awk '{ printf "%.2f", $1 / 1e6 }'; }
		median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
		w=() wo=() uw=() uwo=()
		for b in with2 with3 with4; do w+=("$(secs $b multi-user)"); uw+=("$(secs $b userspace)"); done
		for b in without without2 without3; do wo+=("$(secs $b multi-user)"); uwo+=("$(secs $b userspace)"); done
		notloaded=$(for b in with2 with3 with4 without2 without3; do
			proof "$b" | grep -q '^PROOF: ums_alauda: loaded' || echo " $b"; done)
		if [ -n "$notloaded" ]; then
			fail "package: boot time: ums_alauda not loaded in boot(s)$notloaded, so the boots did not do the same work"
		elif [ "$(printf '%s\n' "${w[@]}" "${wo[@]}" | grep -c .)" -eq 6 ]; then
			mw=$(median "${w[@]}") mwo=$(median "${wo[@]}")
			ratio=$(awk -v a="$mw" -v b="$mwo" 'BEGIN { printf "%.3f", a / b }')
			pass "package: boot time to multi-user.target on the guest's instruction clock ($(took "$t") for five more boots; all load ums_alauda, with kmodns checked by a policy that refuses none of them): with kmodns ${w[*]} s, without ${wo[*]} s; medians $mw s and $mwo s: ratio $ratio ($(awk -v r="$ratio" 'BEGIN { print (r <= 1.05 ? "meets" : "misses") }') the goal of 1.05); the real root's systemd started at ${uw[*]} s with kmodns, ${uwo[*]} s without"
		else
			fail "package: boot time: a boot did not report reaching multi-user.target (${w[*]} / ${wo[*]})"
		fi
	else
		fail "package: the timed boots: setup failed"
	fi
else
	fail "package: boot with kmodns: setup failed"
fi
echo "  t-package: $(took "$t0") in all"
