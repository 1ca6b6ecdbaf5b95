#!/bin/bash
# vmlinux's exports read from the kernel image (kmodns_symvers_new_from_vmlinuz): gen-fixtures'
# kernels (every class, byte order, entry layout and payload compression) read as written; on
# the real Debian kernels: every export of boot/vmlinuz-* (symbol, namespace, export type, CRC) equals the
# vmlinux rows of that era's Module.symvers; the same for the decompressed vmlinux ELF and for
# bzImages rebuilt here with gzip and lz4 (legacy) payloads. Bad images fail with one line
# naming the file. depmod without -E reads the image: the same modules.namespaces and records
# as with -E Module.symvers; with neither it warns once.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT

# le32 FILE OFFSET: a little-endian 32-bit field of the file.
le32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
# le32_bytes N: N as 4 little-endian bytes.
le32_bytes() { printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"; }
# payload_start IMAGE: the file offset of the bzImage payload (setup header, boot protocol 2.08+).
payload_start() {
	local setup; setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$1" | tr -d ' ')
	[ "$setup" -eq 0 ] && setup=4
	echo $(((setup + 1) * 512 + $(le32 "$1" $((0x248)))))
}

# vmlinux_rows ERA: Module.symvers' vmlinux rows as ns-dump --vmlinuz prints them, sorted.
vmlinux_rows() {
	awk -F'\t' -v OFS='\t' '$3 == "vmlinux" { print $2, $5, $4, $1 }' "$corpus/$1/Module.symvers" | LC_ALL=C sort
}

# compare NAME ERA IMAGE: the image's exports equal the era's Module.symvers vmlinux rows.
# An image without __kcrctab (CONFIG_MODVERSIONS off) prints "-": Module.symvers says 0x00000000.
compare() {
	local name=$1 era=$2 img=$3 t0 t1 rc n_img n_sv n_crc n_diff
	t0=$(date +%s%N)
	$W "$B/testsuite/ns-dump" --vmlinuz "$img" >"$T/img.raw" 2>"$T/img.err"; rc=$?
	t1=$(date +%s%N)
	LC_ALL=C sort "$T/img.raw" >"$T/img"
	vmlinux_rows "$era" >"$T/sv"
	n_img=$(wc -l <"$T/img") n_sv=$(wc -l <"$T/sv") n_crc=$(grep -vc $'\t-$' "$T/img")
	sed 's/\t-$/\t0x00000000/' "$T/img" | diff - "$T/sv" >"$T/diff"
	n_diff=$(grep -c '^[<>]' "$T/diff")
	echo "$name: $n_img exports from the image ($n_crc with CRC), $n_sv vmlinux rows in Module.symvers, $n_diff differences, $(((t1 - t0) / 1000000)) ms"
	if [ $rc -eq 0 ] && [ ! -s "$T/img.err" ] && [ "$n_sv" -gt 0 ] && [ "$n_diff" -eq 0 ]; then
		pass "$name"
	else
		head -3 "$T/img.err"; head -6 "$T/diff"
		fail "$name: exit $rc, $n_diff differences"
	fi
}

# bad NAME FILE: fails (not by a signal) with exactly one line on stderr, naming the file.
bad() {
	local name=$1 file=$2 rc
	$W "$B/testsuite/ns-dump" --vmlinuz "$file" >"$T/bad.out" 2>"$T/bad.err"; rc=$?
	echo "$name: exit $rc: $(head -1 "$T/bad.err")"
	if [ $rc -ne 0 ] && [ $rc -lt 128 ] && [ "$(wc -l <"$T/bad.err")" -eq 1 ] &&
		grep -qF "$file" "$T/bad.err" && [ ! -s "$T/bad.out" ]; then
		pass "$name"
	else
		fail "$name: exit $rc, stderr: $(head -3 "$T/bad.err")"
	fi
}

# Fixtures made by gen-fixtures: vmlinux ELF files of both classes and byte orders, entries as
# 32-bit offsets or pointers, 5.4's null namespace, 7.1's __kflagstab, and bzImages with each
# payload compression; the reader must print exactly FILE.expected.
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || fail "gen-fixtures failed"
n=0
for f in "$T"/fx/kernel/*; do
	case $f in *.expected) continue ;; esac
	n=$((n + 1)) name=$(basename "$f")
	if $W "$B/testsuite/ns-dump" --vmlinuz "$f" >"$T/got" 2>"$T/err" && cmp -s "$T/got" "$f.expected"; then
		pass "fixture-$name ($(wc -l <"$T/got") exports)"
	else
		diff "$f.expected" "$T/got" | head -6; head -3 "$T/err"
		fail "fixture-$name"
	fi
done
[ $n -ge 9 ] && pass "fixture-kernel-count ($n images)" || fail "fixture-kernel-count: only $n images"
fx=$T/fx/kernel
size=$(stat -c %s "$fx/vmlinuz-lz4")
head -c $((size - 200)) "$fx/vmlinuz-lz4" >"$T/fx-truncated"
bad "bad-fixture-truncated-bzimage" "$T/fx-truncated"
head -c 700 "$fx/x86_64.elf" >"$T/fx-truncated.elf"
bad "bad-fixture-truncated-elf" "$T/fx-truncated.elf"
for c in gzip xz zstd-7.1 lz4; do
	cp "$fx/vmlinuz-$c" "$T/fx-corrupt-$c"
	head -c 200 /dev/zero | tr '\0' '\377' | dd of="$T/fx-corrupt-$c" bs=1 seek=$((1024 + 0x40 + 40)) conv=notrunc status=none
	bad "bad-fixture-corrupt-payload-$c" "$T/fx-corrupt-$c"
done

for era in $eras; do
	dir=$corpus/$era
	if [ ! -f "$dir/ok" ]; then
		missing "vmlinuz-$era" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels $era)"
		continue
	fi
	kver=$(cat "$dir/kver")
	compare "vmlinuz-$era-equals-module-symvers" "$era" "$dir/root/boot/vmlinuz-$kver"
	[ -f "$dir/root/usr/lib/modules/$kver/vmlinuz.unsigned" ] &&
		compare "vmlinuz-unsigned-$era-equals-module-symvers" "$era" "$dir/root/usr/lib/modules/$kver/vmlinuz.unsigned"
done

# The 6.1 image (xz) unpacked by xz(1) and repacked here: the plain ELF, gzip and lz4 payloads.
era=6.1 dir=$corpus/6.1
if [ -f "$dir/ok" ]; then
	img=$dir/root/boot/vmlinuz-$(cat "$dir/kver")
	start=$(payload_start "$img") len=$(le32 "$img" $((0x24c)))
	tail -c +$((start + 1)) "$img" | head -c $((len - 4)) | xz -dc >"$T/vmlinux"
	compare "vmlinux-elf-$era-equals-module-symvers" "$era" "$T/vmlinux"
	size=$(stat -c %s "$T/vmlinux")
	for c in gzip lz4; do
		case $c in
		gzip) gzip -1 -n -c "$T/vmlinux" >"$T/payload.$c" ;;
		lz4) lz4 -q -l -c "$T/vmlinux" >"$T/payload.$c" ;;
		esac
		{ head -c "$start" "$img"; cat "$T/payload.$c"; le32_bytes "$size"; } >"$T/vmlinuz.$c"
		le32_bytes $(($(stat -c %s "$T/payload.$c") + 4)) |
			dd of="$T/vmlinuz.$c" bs=1 seek=$((0x24c)) conv=notrunc status=none
		compare "vmlinuz-$c-payload-$era-equals-module-symvers" "$era" "$T/vmlinuz.$c"
	done

	# Bad input: each fails with one line naming the file.
	head -c $((start + len / 2)) "$img" >"$T/truncated"
	bad "bad-truncated-image" "$T/truncated"
	for c in xz gzip lz4; do
		[ $c = xz ] && cp "$img" "$T/corrupt.$c" || cp "$T/vmlinuz.$c" "$T/corrupt.$c"
		head -c 4096 /dev/zero | dd of="$T/corrupt.$c" bs=1 seek=$((start + 100000)) conv=notrunc status=none
		bad "bad-corrupt-payload-$c" "$T/corrupt.$c"
	done
	cp "$img" "$T/wrong-size"
	le32_bytes 12345 | dd of="$T/wrong-size" bs=1 seek=$((start + len - 4)) conv=notrunc status=none
	bad "bad-payload-size-disagrees" "$T/wrong-size"
	head -c $((size / 2)) "$T/vmlinux" >"$T/vmlinux.truncated"
	bad "bad-truncated-vmlinux-elf" "$T/vmlinux.truncated"
	cp "$img" "$T/bzip2-payload"
	printf 'BZh9' | dd of="$T/bzip2-payload" bs=1 seek="$start" conv=notrunc status=none
	bad "bad-unsupported-payload-format" "$T/bzip2-payload"
	rm -f "$T/vmlinux" "$T"/payload.* "$T"/vmlinuz.* "$T"/corrupt.* "$T/vmlinux.truncated"
else
	missing "vmlinuz-repacked-$era" "no corpus at $dir"
fi
echo "this is not a kernel" >"$T/text"
bad "bad-not-a-kernel-image" "$T/text"
: >"$T/empty"
bad "bad-empty-file" "$T/empty"
bad "bad-missing-file" "$T/does-not-exist"
bad "bad-elf-without-exports" "$B/testsuite/ns-dump"
ko=$(find "$T/fx/" -name '*.ko' | head -1)
bad "bad-module-not-kernel" "$ko"

# depmod: without -E it reads the image; the result equals that with -E Module.symvers.
for era in 6.1 latest; do
	dir=$corpus/$era
	[ -f "$dir/ok" ] || { missing "depmod-vmlinuz-$era" "no corpus at $dir"; continue; }
	kver=$(cat "$dir/kver")
	for how in symvers image modules-only; do
		R=$T/$how; rm -rf "$R"; mkdir -p "$R/lib/modules" "$R/boot"
		cp -rs "$dir/root/lib/modules/$kver/" "$R/lib/modules/$kver"
		rm -f "$R/lib/modules/$kver/vmlinuz.unsigned" "$R/lib/modules/$kver/vmlinuz"
		[ $how = image ] && ln -s "$(readlink -f "$dir/root/boot/vmlinuz-$kver")" "$R/boot/vmlinuz-$kver"
	done
	$W "$B/tools/depmod" -b "$T/symvers" -E "$dir/Module.symvers" "$kver" 2>"$T/err.symvers"
	$W "$B/tools/depmod" -b "$T/image" "$kver" 2>"$T/err.image"
	$W "$B/tools/depmod" -b "$T/modules-only" "$kver" 2>"$T/err.modules-only"
	M=lib/modules/$kver
	check "depmod-image-$era-vmlinux-known" grep -qx '# vmlinux namespaces known' "$T/image/$M/modules.namespaces"
	check "depmod-image-$era-no-warning" test ! -s "$T/err.image"
	check "depmod-image-$era-namespaces-equal-symvers ($(wc -l <"$T/image/$M/modules.namespaces") lines)" \
		cmp -s "$T/symvers/$M/modules.namespaces" "$T/image/$M/modules.namespaces"
	check "depmod-image-$era-records-equal-symvers" cmp -s "$T/symvers/$M/modules.dep.bin" "$T/image/$M/modules.dep.bin"
	"$B/testsuite/ns-dump" --record "$T/image/$M" ums-alauda >"$T/rec" 2>&1
	check "depmod-image-$era-record" grep -qx 'record ums-alauda vmlinux=known unresolved=0' "$T/rec"
	# A second run takes vmlinux's exports from our cache: the same files. (Without the run
	# stamp: with it, an unchanged tree is not indexed again at all; t-depmod-stamp.)
	rm "$T/image/$M/modules.kmodns.stamp"
	$W "$B/tools/depmod" -v -b "$T/image" "$kver" >"$T/err.cached" 2>&1
	check "depmod-image-$era-cached" grep -q "vmlinux's exports of .*/boot/vmlinuz-$kver from the cache" "$T/err.cached"
	check "depmod-image-$era-cached-same-records" cmp -s "$T/symvers/$M/modules.dep.bin" "$T/image/$M/modules.dep.bin"
	# Keyed by the image's size, mtime and inode: rewritten in place under the same key it is
	# not read again (the damage goes unseen); touched, it is read and its damage reported.
	img=$T/image/boot/vmlinuz-$kver
	cp --remove-destination "$(readlink -f "$img")" "$img"
	$W "$B/tools/depmod" -b "$T/image" "$kver" 2>/dev/null
	mtime=$(stat -c %.9Y "$img")
	dd if=/dev/zero of="$img" bs=4096 count=16 conv=notrunc status=none
	touch -d "@$mtime" "$img"
	rm "$T/image/$M/modules.kmodns.stamp"
	$W "$B/tools/depmod" -b "$T/image" "$kver" 2>"$T/err.samekey"
	check "depmod-image-$era-same-key-not-read" test ! -s "$T/err.samekey"
	check "depmod-image-$era-same-key-same-records" cmp -s "$T/symvers/$M/modules.dep.bin" "$T/image/$M/modules.dep.bin"
	touch "$img"
	$W "$B/tools/depmod" -b "$T/image" "$kver" 2>"$T/err.touched"
	check "depmod-image-$era-touched-read-again" grep -q "boot/vmlinuz-$kver: not a kernel image" "$T/err.touched"
	check "depmod-image-$era-touched-vmlinux-unknown" grep -qx '# vmlinux namespaces unknown' "$T/image/$M/modules.namespaces"
	check "depmod-neither-$era-quiet" test ! -s "$T/err.modules-only"
	check "depmod-neither-$era-vmlinux-unknown" grep -qx '# vmlinux namespaces unknown' "$T/modules-only/$M/modules.namespaces"
	# The image in the module directory (newer Debian), found when boot/ has none.
	ln -s "$(readlink -f "$dir/root/boot/vmlinuz-$kver")" "$T/modules-only/$M/vmlinuz.unsigned"
	$W "$B/tools/depmod" -b "$T/modules-only" "$kver" 2>"$T/err.moddir"
	check "depmod-moddir-image-$era" cmp -s "$T/symvers/$M/modules.namespaces" "$T/modules-only/$M/modules.namespaces"
	# A broken boot image says why, and the next one is used.
	echo broken >"$T/modules-only/boot/vmlinuz-$kver"
	$W "$B/tools/depmod" -b "$T/modules-only" "$kver" 2>"$T/err.broken"
	if [ "$(wc -l <"$T/err.broken")" -eq 1 ] && grep -q "boot/vmlinuz-$kver: not a kernel image" "$T/err.broken" &&
		cmp -s "$T/symvers/$M/modules.namespaces" "$T/modules-only/$M/modules.namespaces"; then
		pass "depmod-broken-boot-image-$era-falls-back"
	else
		fail "depmod-broken-boot-image-$era-falls-back: $(head -2 "$T/err.broken")"
	fi
	rm -rf "$T/symvers" "$T/image" "$T/modules-only"
done
