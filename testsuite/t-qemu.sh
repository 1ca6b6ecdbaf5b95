#!/bin/bash
# Our verdict against the real kernel's: Debian's 6.1 and latest (7.2, with module:
# namespaces) kernels boot in qemu (TCG) with a small initramfs (busybox-static, our kmodns
# binary and its shared libraries, one module tree per case). For each case the guest runs our
# modprobe/insmod as a user would ("ours"); after a refusal of ours, again with --no-ns-check
# ("control": the kernel's own finit_module verdict and dmesg; otherwise our own run reached
# the kernel), and prints the results and /proc/modules on the serial console. Here:
# refused by us <=> the kernel refuses it (EINVAL/EPERM, with its namespace line in dmesg);
# allowed by us <=> the kernel loads it; a refusal of ours loads nothing of the load set.
# The mutated modules (import removed, module: import added, an export's namespace changed,
# a module renamed off a module: list) come from testsuite/mutate, signature cut off.
# Initramfs cached in ~/.cache/kmodns-qemu (key: binaries, busybox, this script, kernel).
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
qemu_eras=${KMODNS_QEMU_ERAS:-6.1 latest}

# Valgrind and sanitizer runs repeat the suite: the guest would run the same binary unwrapped.
if [ -n "$W" ]; then skip "qemu: runs once, on the plain build (KMODNS_TEST_WRAPPER is set)"; exit 0; fi
if grep -q '^SANITIZER_CFLAGS = .*-fsanitize' "$B/Makefile" 2>/dev/null ||
	nm "$B/tools/kmodns" 2>/dev/null | grep -q __asan_init; then
	skip "qemu: runs once, on the plain build (this is a sanitizer build)"; exit 0
fi
need=
for p in qemu-system-x86_64 busybox xz sha256sum ldd; do command -v $p >/dev/null || need="$need $p"; done
[ -z "$need" ] || { missing qemu "not installed:$need (.ci/install-deps)"; exit 0; }
bb=$(command -v busybox)
ldd "$bb" 2>&1 | grep -q 'not a dynamic' ||
	{ missing qemu "$bb is not static (busybox-static)"; exit 0; }
for x in tools/kmodns tools/depmod tools/modinfo testsuite/mutate; do
	[ -x "$B/$x" ] || { missing qemu "$B/$x not built (make all check-programs)"; exit 0; }
done

# ---- the cases -----------------------------------------------------------------------------
# name|eras (both, 6.1 or latest)|tool|target module|expected on 6.1 (ours/kernel)|on latest
# ours: refused (before loading), allowed, warned (ALLOW_MISSING=y: handed to the kernel)
# kernel: loads, EINVAL, EPERM
cases='good-deps|both|modprobe|ums_alauda|allowed/loads|allowed/loads
good-vmlinux-ns|both|modprobe|cmac|allowed/loads|allowed/loads
noimport-vmlinux-ns|both|modprobe|cmac|refused/EINVAL|refused/EINVAL
noimport-deps|both|modprobe|ums_alauda|refused/EINVAL|refused/EINVAL
import-renamed|both|modprobe|ums_alauda|refused/EINVAL|refused/EINVAL
stale-record|both|modprobe|ums_alauda|refused/EINVAL|refused/EINVAL
export-ns-changed|both|modprobe|ums_alauda|refused/EINVAL|refused/EINVAL
export-ns-module-listed|both|modprobe|ums_alauda|refused/EINVAL|allowed/loads
export-ns-module-unlisted|both|modprobe|ums_alauda|refused/EINVAL|refused/EINVAL
module-import|both|modprobe|ums_alauda|allowed/loads|refused/EPERM
module-ns-listed|both|modprobe|autofs4|allowed/loads|allowed/loads
module-ns-unlisted|both|modprobe|autofx4|allowed/loads|refused/EINVAL
allow-missing-y|both|modprobe|cmac|warned/EINVAL|warned/EINVAL
insmod-good|both|insmod|cmac|allowed/loads|allowed/loads
insmod-noimport|both|insmod|cmac|refused/EINVAL|refused/EINVAL
insmod-module-import|both|insmod|cmac|allowed/loads|refused/EPERM
src-import|6.1|modprobe|kmodns_demo_user|allowed/loads|-
src-noimport|6.1|modprobe|kmodns_demo_noimport|refused/EINVAL|-
policy-refuses|both|modprobe|ums_alauda|refused/loads|refused/loads'
# src-*: a provider and two consumers built here from testsuite/qemu-src against the booted
# kernel's headers (linux-headers-KVER; 7.2's need a newer compiler than Debian 12's), one
# consumer with MODULE_IMPORT_NS, one without.
# stale-record: depmod ran on the real module, then the copy without the import replaced it
# (newer than modules.dep.bin): depmod's record is out of date, the file must be read.
# policy-refuses: the admin's policy (the case's etc/kmodns.d, --policy-root) lets only
# usb-storage itself use USB_STORAGE: we refuse what the kernel loads, by design, and load
# nothing of the set.
# allow-missing-y: the module directory's config says =y while Debian's kernel has it off: we
# warn and hand the module over, the kernel refuses. Expected, and the one case where the two
# verdicts differ by design (the config file lies).

# ---- building one kernel's initramfs ---------------------------------------------------------
# modfile NAME: the corpus file of module NAME (- and _ alike), relative to the module dir.
modfile() { grep -m1 -E "/$(echo "$1" | sed 's/[-_]/[-_]/g')\.ko(\.xz|\.zst|\.gz)?\$" "$G/files"; }
# closure NAME: NAME's file and those of its dependencies, each once, added to $seen
# (memoized per kernel: few forks).
declare -A deps_memo
closure() {
	local f d
	if [ -z "${deps_memo[$kver/$1]:-}" ]; then
		f=$(modfile "$1") || { echo "no module $1" >&2; return 1; }
		deps_memo[$kver/$1]="$f $("$B/tools/modinfo" -F depends "$M/$f" | tr ',' ' ')"
	fi
	set -- ${deps_memo[$kver/$1]}
	f=$1; shift
	case " $seen " in *" $f "*) return 0 ;; esac
	seen="$seen $f"
	for d in "$@"; do closure "$d" || return 1; done
}
# real CASE NAME...: the unchanged modules and their dependencies, as relative links into the pool.
real() {
	local c=$1 f m up p; shift
	seen=
	for m in "$@"; do closure "$m" || return 1; done
	for f in $seen; do
		p=cases/$c/$MD/${f%/*} up=
		mkdir -p "$R/pool/${f%/*}" "$R/$p"
		[ -e "$R/pool/$f" ] || cp "$M/$f" "$R/pool/$f" || return 1
		while [ -n "$p" ]; do up=../$up; [ "$p" = "${p#*/}" ] && p= || p=${p#*/}; done
		ln -sf "${up}pool/$f" "$R/cases/$c/$MD/$f"
	done
}
# mutated CASE NAME [NEWNAME] KIND OLD NEW: NAME's file, decompressed and mutated (unsigned).
mutated() {
	local c=$1 m=$2 new=$2 f out; shift 2
	[ "$1" = rename ] && new=$3
	f=$(modfile "$m") || return 1
	out=$R/cases/$c/$MD/$(dirname "$f")/$new.ko
	mkdir -p "$(dirname "$out")"
	rm -f "$R/cases/$c/$MD/$f" "$out" # links into the pool: never write through them
	case $f in
	*.xz) xz -dc "$M/$f" >"$G/plain.ko" ;;
	*) cp "$M/$f" "$G/plain.ko" ;;
	esac || return 1
	"$B/testsuite/mutate" "$G/plain.ko" "$out" "$@"
}
# finish CASE [CONFIG-LINE]: config file, modules.builtin, build link, our depmod.
finish() {
	local d=$R/cases/$1/$MD
	mkdir -p "$d"
	echo "${2:-$cfg_line}" >"$d/config"
	cp "$M/modules.builtin" "$d/"
	ln -sfn "/$MD/build" "$d/build"
	"$B/tools/depmod" --no-cache -b "$R/cases/$1" -E "$C/Module.symvers" "$kver" || return 1
}

# wanted NAME ERAS: whether case NAME runs on this era (src-* only where the headers are).
wanted() {
	[ "$2" = both ] || [ "$2" = "$era" ] || return 1
	case $1 in src-*) [ -d "/usr/src/linux-headers-$kver" ] ;; esac
}
# built_src: the demo modules of testsuite/qemu-src, built once per kernel (KBUILD_NSDEPS: modpost
# would refuse the consumer without the import; the kernel is the one to refuse it here).
built_src() {
	[ -f "$G/src/kmodns_demo_noimport.ko" ] && return 0
	rm -rf "$G/src" && cp -r "$S/testsuite/qemu-src" "$G/src" &&
		make -s -C "/usr/src/linux-headers-$kver" M="$G/src" KBUILD_NSDEPS=1 modules >"$G/src.log" 2>&1 ||
		{ cat "$G/src.log"; return 1; }
}
# from_src CASE CONSUMER: the provider and CONSUMER in the case's extra/.
from_src() {
	built_src && mkdir -p "$R/cases/$1/$MD/extra" &&
		cp "$G/src/kmodns_demo_provider.ko" "$G/src/$2.ko" "$R/cases/$1/$MD/extra/"
}

# setup CASE: that case's module tree in the guest (modprobe: a root for -d; insmod: files).
setup() {
	local c=$1 ans=ums-alauda x f
	case $c in
	good-deps) real $c $ans ;;
	good-vmlinux-ns) real $c cmac ;;
	noimport-vmlinux-ns | allow-missing-y | insmod-noimport)
		mutated $c cmac modinfo-replace import_ns=CRYPTO_INTERNAL "" ;;
	noimport-deps)
		real $c $ans && mutated $c $ans modinfo-replace import_ns=USB_STORAGE "" ;;
	import-renamed)
		real $c $ans && mutated $c $ans modinfo-replace import_ns=USB_STORAGE import_ns=USB_STORAGF ;;
	export-ns-changed | export-ns-module-listed | export-ns-module-unlisted)
		x=USB_STORAGX
		[ $c = export-ns-module-listed ] && x='module:ums*'
		[ $c = export-ns-module-unlisted ] && x='module:xyz*'
		real $c $ans && mutated $c usb-storage export-ns USB_STORAGE "$x" ;;
	module-import)
		real $c $ans && mutated $c $ans modinfo-replace description= import_ns=module:usb_storage ;;
	insmod-module-import)
		mutated $c cmac modinfo-replace description= import_ns=module:cmac ;;
	module-ns-listed) real $c autofs4 ;;
	module-ns-unlisted) mutated $c autofs4 rename autofs4 autofx4 ;;
	insmod-good) real $c cmac ;;
	policy-refuses)
		real $c $ans && mkdir -p "$R/cases/$c/etc/kmodns.d" &&
			echo "refuse USB_STORAGE module!=usb_storage" >"$R/cases/$c/etc/kmodns.d/50-usb.conf" ;;
	stale-record) real $c $ans ;; # replaced after depmod, below
	src-import) from_src $c kmodns_demo_user ;;
	src-noimport) from_src $c kmodns_demo_noimport ;;
	*) echo "no setup for $c" >&2; return 1 ;;
	esac || return 1
	if [ $c = allow-missing-y ]; then
		finish $c "CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y"
	elif [ $c = stale-record ]; then
		finish $c && mutated $c $ans modinfo-replace import_ns=USB_STORAGE "" || return 1
		x=$(modfile $ans) && f=$R/cases/$c/$MD/${x%/*}/$ans.ko
		# under the name modules.dep knows, compressed as Debian's (xz, CRC32, 1 MiB)
		case $x in *.xz) xz -z --check=crc32 --lzma2=dict=1MiB "$f" || return 1 ;; esac
		# a minute newer: the initramfs keeps whole seconds only
		touch -d "@$(($(stat -c %Y "$R/cases/$c/$MD/modules.dep.bin") + 60))" "$R/cases/$c/$MD/$x"
	else
		finish $c
	fi
}

# the guest's /init: one "run" line per case and mode; results as "KQ|..." lines.
guest_init() {
	cat <<'EOF'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t securityfs none /sys/kernel/security 2>/dev/null
echo 1 >/proc/sys/kernel/printk
say() { echo "KQ|$*"; }
mods() { cut -d' ' -f1 /proc/modules | sort; }
base=$(mods)
say "info|$(uname -r)|lockdown=$(cat /sys/kernel/security/lockdown 2>/dev/null | tr ' ' ,)|sig_enforce=$(cat /sys/module/module/parameters/sig_enforce 2>/dev/null)|baseline=$(echo $base)"
cleanup() {
	for i in 1 2 3 4 5 6 7 8; do
		extra=$(mods | grep -vxF "$base")
		[ -z "$extra" ] && return
		for m in $extra; do rmmod "$m" 2>/dev/null; done
	done
	say "stuck|$(mods | grep -vxF "$base" | tr '\n' ' ')"
}
run() {
	c=$1 mode=$2; shift 2
	dmesg -c >/dev/null
	before=$(mods)
	"$@" >/tmp/out 2>&1; rc=$?
	new=$(mods | grep -vxF "$before" | tr '\n' ' ')
	out=$(tr '\n' '~' </tmp/out)
	dm=$(dmesg -c | sed 's/^\[[ 0-9.]*\] //' | grep -E 'namespace|Unknown symbol|err -|module' | tr '\n' '~')
	say "run|$c|$mode|$rc|$new|$out|$dm"
	cleanup
}
# case NAME CMD...: ours; after a refusal of ours, the control run without our check shows
# what the kernel says (otherwise our own run reached the kernel already).
case_() {
	c=$1; shift
	# where modprobe's verdict comes from: depmod's record, or the module file
	case $1 in */modprobe) say "src|$c|$("$@" -n -v 2>/dev/null | grep '^namespaces ' | tail -n 1 | sed 's/.*(//; s/)$//')" ;; esac
	run "$c" ours "$@"
	case $out in *"could not insert '"*"': it "*) ;; *) return ;; esac
	cmd=$1; shift
	run "$c" control "$cmd" --no-ns-check "$@"
}
EOF
	local name eras tool target e61 elat
	while IFS='|' read -r name eras tool target e61 elat; do
		wanted "$name" "$eras" || continue
		if [ "$tool" = insmod ]; then
			f=$(cd "$R/cases/$name" && find . -name 'cmac.ko*' | head -1)
			echo "case_ $name /bin/insmod /cases/$name/${f#./}"
		else
			case $name in
			policy-*) echo "case_ $name /bin/modprobe -d /cases/$name --policy-root /cases/$name $target" ;;
			*) echo "case_ $name /bin/modprobe -d /cases/$name $target" ;;
			esac
		fi
	done <<<"$cases"
	echo 'say done'
	echo 'poweroff -f'
}

# build_initrd ERA OUT: the whole initramfs of one kernel.
build_initrd() {
	local lib
	R=$G/root
	rm -rf "$R" && mkdir -p "$R"/{bin,proc,sys,dev,tmp,cases,pool,"$MD"/build} || return 1
	cp "$bb" "$R/bin/busybox"
	for a in sh mount cat cut sort grep sed tr dmesg rmmod poweroff uname echo find head; do
		ln -s busybox "$R/bin/$a"
	done
	cp "$B/tools/kmodns" "$R/bin/kmodns"
	ln -s kmodns "$R/bin/modprobe"; ln -s kmodns "$R/bin/insmod"
	# the libraries it links, and those libkmodns opens on first use (dlopen: the sonames are
	# strings in the binary) with theirs
	for lib in $(ldd "$B/tools/kmodns" | grep -o '/[^ ]*') $(
		for so in $(strings -a "$B/tools/kmodns" | grep -xE 'lib[a-z0-9_]+\.so\.[0-9]+' | sort -u); do
			p=$(ldconfig -p | awk -v s="$so" '$1 == s && /x86-64/ { print $NF; exit }')
			[ -n "$p" ] && echo "$p" && ldd "$p" | grep -o '/[^ ]*'
		done | sort -u); do
		mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib" || return 1
	done
	cp "$C/Module.symvers" "$R/$MD/build/Module.symvers"
	echo "$cfg_line" >"$R/$MD/config"
	find "$M" -name '*.ko*' -printf '%P\n' >"$G/files"
	while IFS='|' read -r name eras _; do
		wanted "$name" "$eras" || continue
		setup "$name" >"$G/setup.log" 2>&1 || { cat "$G/setup.log"; echo "setup of $name failed"; return 1; }
	done <<<"$cases"
	guest_init >"$R/init" && chmod +x "$R/init"
	(cd "$R" && find . | "$bb" cpio -o -H newc 2>/dev/null) | gzip -1 >"$2.tmp" && mv "$2.tmp" "$2"
}

# ---- judging one kernel's serial log -------------------------------------------------------
# kernel_verdict RC NEW OUT TARGET: loads, EINVAL, EPERM or other(...)
kernel_verdict() {
	case " $2 " in *" $4 "*) echo loads; return ;; esac
	case $3 in
	*"Invalid argument"* | *"Invalid parameters"*) echo EINVAL ;; # kmod's insmod says the latter
	*"Operation not permitted"*) echo EPERM ;;
	*) echo "other(rc=$1)" ;;
	esac
}
judge() {
	local era=$1 serial=$2 log=$2.kq name eras tool target e61 elat exp o c ours kern why info src want what
	# the report lines, without carriage returns and the firmware's terminal escapes; a line may
	# start behind the firmware's last, unended one ("Booting from ROM..KQ|info|..."), so a
	# record is taken from its "KQ|" on
	tr -d '\r' <"$serial" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' | grep -ao 'KQ|.*' >"$log"
	info=$(grep -a '^KQ|info|' "$log")
	if [ -z "$info" ] || ! grep -aq '^KQ|done' "$log"; then
		what="no KQ|done line"; [ -n "$info" ] || what="no KQ|info line"
		fail "qemu-$era-boot: no complete report on the serial console ($what; its first and last lines below)"
		{ head -n 5 "$serial"; echo ...; tail -n 25 "$serial"; } | cat -v | cut -c1-300 | sed 's/^/  | /'
		return
	fi
	case $info in
	*"lockdown="*"[none]"* | *"lockdown=|"*) ;;
	*) fail "qemu-$era-boot: lockdown is on ($info)"; return ;;
	esac
	check "qemu-$era-boot" [ -n "$info" ]
	echo "  guest: ${info#KQ|info|}"
	while IFS='|' read -r name eras tool target e61 elat; do
		wanted "$name" "$eras" || continue
		exp=$e61; [ "$era" = 6.1 ] || exp=$elat
		o=$(grep -a "^KQ|run|$name|ours|" "$log")
		c=$(grep -a "^KQ|run|$name|control|" "$log")
		[ -n "$c" ] || c=$o # no refusal of ours: our own run went to the kernel
		if [ -z "$o" ]; then fail "qemu-$era-$name: no result"; continue; fi
		IFS='|' read -r _ _ _ _ orc onew oout odm <<<"$o"
		IFS='|' read -r _ _ _ _ crc cnew cout cdm <<<"$c"
		if [[ $oout == *"could not insert '"*"': it "* ]]; then ours=refused
		elif [[ $oout == *"the kernel loads it anyway"* ]]; then ours=warned
		else ours=allowed; fi
		kern=$(kernel_verdict "$crc" "$cnew" "$cout" "$target")
		src=$(sed -n "s/^KQ|src|$name|//p" "$log") why=
		# modprobe judges from depmod's record unless the module file is newer
		if [ "$tool" = modprobe ]; then
			want="depmod's record"; [ "$name" = stale-record ] && want="module file"
			[ "$src" = "$want" ] || why="; judged from '$src', not from the $want"
		fi
		[ "$ours/$kern" = "$exp" ] || why="expected $exp, got $ours/$kern"
		# the rule: refused by us <=> refused by the kernel (the lying config aside)
		if [ "$ours" = refused ] && [ "$kern" = loads ]; then
			case $name in
			policy-*) [[ $oout == *"refused to it by policy /cases/$name/etc/kmodns.d/50-usb.conf:1 "* ]] ||
				why="$why; the refusal does not name the policy line" ;;
			*) why="$why; we refuse what the kernel loads" ;;
			esac
		fi
		if [ "$ours" = allowed ] && [ "$kern" != loads ]; then why="$why; we allow what the kernel refuses"; fi
		# a refusal of ours loads nothing; an allowed load ends as the kernel's does
		[ "$ours" != refused ] || [ -z "${onew// /}" ] || why="$why; loaded after our refusal: $onew"
		[ "$ours" = refused ] || [ "$(kernel_verdict "$orc" "$onew" "$oout" "$target")" = "$kern" ] ||
			why="$why; our load differs from the control's ($onew)"
		case $kern in
		EINVAL | EPERM) [[ $cdm == *namespace* ]] || why="$why; no namespace line in dmesg: $cdm" ;;
		esac
		printf '  %-26s %-6s ours=%-8s kernel=%-7s %-16s %s\n' "$name" "$era" "$ours" "$kern" "${src:-module file}" \
			"$(echo "$cdm" | tr '~' '\n' | grep -m1 namespace | cut -c1-110)"
		[ "$ours" = refused ] && echo "    ours: ${oout%%~*}"
		if [ -z "$why" ]; then pass "qemu-$era-$name"; else
			fail "qemu-$era-$name: ${why#; } [ours: rc=$orc new=$onew out=$oout] [control: rc=$crc new=$cnew out=$cout dmesg=$cdm]"
		fi
	done <<<"$cases"
	grep -a '^KQ|stuck' "$log" | sed 's/^/  /'
}

# ---- per kernel: build (or reuse) the initramfs, boot, judge --------------------------------
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kmodns-qemu
key=$(cat "$B/tools/kmodns" "$B/tools/depmod" "$B/tools/modinfo" "$B/testsuite/mutate" "$bb" "$0" \
	"$S"/testsuite/qemu-src/* | sha256sum | cut -c1-16)
pids=()
for era in $qemu_eras; do
	C=$corpus/$era
	if [ ! -f "$C/ok" ] || [ ! -f "$C/kver" ]; then missing "qemu-$era" "no corpus in $C (fetch-debian-kernels)"; continue; fi
	kver=$(cat "$C/kver") MD=lib/modules/$(cat "$C/kver") M=$C/root/lib/modules/$(cat "$C/kver")
	vmlinuz=$C/root/boot/vmlinuz-$kver
	[ -f "$vmlinuz" ] || { missing "qemu-$era" "no $vmlinuz"; continue; }
	cfg_line=$(grep -E '^(# )?CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS[= ]' "$C/root/boot/config-$kver" ||
		echo "# CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS is not set")
	G=$T/$era; mkdir -p "$G"
	if [ "$era" = 6.1 ] && [ ! -d "/usr/src/linux-headers-$kver" ]; then
		missing "qemu-$era-src" "no /usr/src/linux-headers-$kver to build testsuite/qemu-src (apt-get install linux-headers-$kver)"
	fi
	initrd=$cache/$era-$kver-$key.cpio.gz
	if [ ! -s "$initrd" ]; then
		mkdir -p "$cache" && rm -f "$cache/$era-$kver-"*.cpio.gz
		t0=$SECONDS
		if ! build_initrd "$era" "$initrd" >"$G/build.log" 2>&1; then
			fail "qemu-$era-initramfs: $(tail -n 5 "$G/build.log" | tr '\n' ' ')"; continue
		fi
		echo "  $era: initramfs built in $((SECONDS - t0)) s ($initrd)"
	else
		echo "  $era: initramfs from the cache ($initrd)"
	fi
	(t0=$SECONDS; nice timeout 240 qemu-system-x86_64 -m 512 -nographic -no-reboot -nic none -kernel "$vmlinuz" \
		-initrd "$initrd" -append "console=ttyS0 panic=-1 quiet loglevel=1" </dev/null \
		>"$G/serial.log" 2>&1; echo "  $era: qemu ran $((SECONDS - t0)) s") &
	pids+=($!)
	echo "$era" >>"$T/booted"
done
wait "${pids[@]}" 2>/dev/null
[ -f "$T/booted" ] || exit 0
for era in $(cat "$T/booted"); do
	C=$corpus/$era kver=$(cat "$corpus/$era/kver")
	judge "$era" "$T/$era/serial.log"
done
