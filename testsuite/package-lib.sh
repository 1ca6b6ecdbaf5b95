# Shared by t-package and t-package-trixie (source it after lib.sh): the packages built from
# these sources, cached; Debian systems made by debootstrap, cached; a chroot's view of kmod.
cache=${XDG_CACHE_HOME:-$HOME/.cache}
took() { echo "$(($(date +%s) - $1))s"; }

# package_sources: the git checkout's files (tracked and new, not ignored), else every file but builds
package_sources() {
	if git -C "$S" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$S" ls-files -co --exclude-standard
	else
		(cd "$S" && find . \( -name 'build*' -o -name .git \) -prune -o -type f -print | sed 's|^\./||')
	fi | LC_ALL=C sort -u | (cd "$S" && while read -r f; do [ -f "$f" ] && echo "$f"; done)
}

# package_copy_sources DIR: the sources into DIR/kmodns, as dpkg-buildpackage wants them
package_copy_sources() {
	mkdir -p "$1/kmodns" && (cd "$S" && package_sources | tar -cf - -T -) | tar -xf - -C "$1/kmodns"
}

# package_dir: where the packages of these sources are kept, by a hash of them
package_dir() {
	echo "$cache/kmodns-package/$(cd "$S" && package_sources | tr '\n' '\0' | xargs -0 sha256sum | sha256sum | cut -c1-16)"
}

# package_build DIR WORK: the packages of these sources, built on this Debian 12 into DIR (from
# package_dir) unless there already; prints how. Non-zero, the build log's end printed, on failure.
package_build() {
	local t
	if [ -f "$1/ok" ]; then touch "$1"; echo "cached, key $(basename "$1")"; return 0; fi
	t=$(date +%s)
	# builds of other sources go when unused for two days (another tree's test may be using one)
	find "$cache/kmodns-package" -mindepth 1 -maxdepth 1 -mtime +1 -exec rm -rf {} + 2>/dev/null
	rm -rf "$1" "$1.new" "$2/src" && mkdir -p "$1.new" && package_copy_sources "$2/src" || return 1
	if (cd "$2/src/kmodns" && nice dpkg-buildpackage -b -us -uc -j"$(nproc)") >"$2/build.log" 2>&1; then
		mv "$2"/src/*.deb "$2"/src/*.changes "$1.new/" && touch "$1.new/ok" && mv "$1.new" "$1" &&
			echo "dpkg-buildpackage -b, $(took "$t")"
	else
		tail -30 "$2/build.log"; return 1
	fi
}

# debootstrapped SUITE INCLUDES WORK: prints the tarball of a minbase SUITE with INCLUDES (made
# once, cached in $cache/kmodns-debootstrap); the debootstrap log's end when that failed.
debootstrapped() {
	local tarball dir=$3/dbs
	tarball=$cache/kmodns-debootstrap/$1-minbase-$(echo "$2" | sha256sum | cut -c1-8).tar.zst
	if [ ! -f "$tarball" ]; then
		mkdir -p "$dir" "$(dirname "$tarball")"
		if ! nice debootstrap --variant=minbase --include="$2" "$1" "$dir" \
			"${KMODNS_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$3/dbs.log" 2>&1; then
			tail -5 "$3/dbs.log" >&2; rm -rf "$dir"; return 1
		fi
		# kmod's package stays (t-package reinstalls it), the other downloads go
		find "$dir/var/cache/apt/archives" -name '*.deb' ! -name 'kmod_*' -delete
		tar -C "$dir" --zstd -cf "$tarball.new" . && mv "$tarball.new" "$tarball" || return 1
		rm -rf "$dir"
	fi
	echo "$tarball"
}

# in_root CMD...: CMD in the chroot R, with a clean environment
in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"; }

# unpack_root TARBALL: R becomes a system from TARBALL, /proc mounted, no service starting
unpack_root() {
	mkdir "$R" && tar -C "$R" --zstd -xf "$1" && mount -t proc proc "$R/proc" &&
		printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod 755 "$R/usr/sbin/policy-rc.d"
}

# kmod_state: every path kmod's package owns in R (type, mode, bytes or link target) and the diversions
kmod_state() {
	in_root sh -c 'dpkg-query -L kmod | grep "^/" | while read -r p; do
		if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
		elif [ -d "$p" ]; then echo "$p dir $(stat -c %a "$p")"
		elif [ -f "$p" ]; then echo "$p file $(stat -c "%a %U" "$p") $(sha256sum <"$p" | cut -c1-64)"
		else echo "$p absent"; fi
	done; dpkg-divert --list | sort'
}

# package_ready NAME: these tests run once, on the plain build, as root, with the tools and the
# Build-Depends installed; else one line says why not (a SKIP, or a FAIL in CI) and it is non-zero
package_ready() {
	local need= p err
	case $B in
	*build-sanitizers) skip "$1: runs once, on the plain build (this is the sanitizer build)"; return 1 ;;
	esac
	if [ -n "$W" ]; then skip "$1: runs once, on the plain build (KMODNS_TEST_WRAPPER is set)"; return 1; fi
	[ "$(id -u)" -eq 0 ] || { missing "$1" "needs root (debootstrap, chroot)"; return 1; }
	for p in dpkg-buildpackage dpkg-checkbuilddeps dh lintian debootstrap chroot zstd xz sha256sum; do
		command -v $p >/dev/null || need="$need $p"
	done
	[ -z "$need" ] || { missing "$1" "not installed:$need (.ci/install-deps)"; return 1; }
	err=$(cd "$S" && dpkg-checkbuilddeps 2>&1) || { missing "$1" "$err (.ci/install-deps)"; return 1; }
}

# package_workdir: T, a work directory removed at exit (kept with KMODNS_KEEP=1), and R, the
# chroot's place in it, whose /proc is unmounted at exit
package_workdir() {
	T=$(tmpdir) R=$T/root
	trap 'package_cleanup' EXIT
}
package_cleanup() {
	! mountpoint -q "$R/proc" || umount "$R/proc"
	if [ -n "${KMODNS_KEEP:-}" ]; then echo "  kept: $T"; else rm -rf "$T"; fi
}

# package_start NAME LABEL: how every package test begins: SKIP unless it can run here, a work
# directory, the packages built from these sources in D ("NAME: LABEL" passes or fails); false
# when the test cannot go on.
package_start() {
	local how
	package_ready "$1" || return 1
	package_workdir
	t0=$(date +%s)
	D=$(package_dir)
	if how=$(package_build "$D" "$T"); then
		pass "$1: $2 ($how)"
	else
		echo "$how"; fail "$1: $2 failed"; return 1
	fi
}

# check_diverted NAME TOOLS: after kmodns is installed in R, kmod's TOOLS (its paths) and six man
# pages are diverted to kmodns (13 diversions), kmod's man pages moved aside; ours answer, and
# kmod's tools still run from /usr/lib/kmodns/kmod (kmod 30's lsmod has no --version: --help)
check_diverted() {
	local bad= f m ours
	for f in $2 /usr/share/man/man8/{modprobe,insmod,rmmod,lsmod,modinfo,depmod}.8.gz; do
		[ "$(in_root dpkg-divert --listpackage "$f")" = kmodns ] || bad="$bad $f"
	done
	[ "$(in_root dpkg-divert --list | grep -c 'by kmodns$')" -eq 13 ] || bad="$bad (not 13 diversions)"
	for m in modprobe insmod rmmod lsmod modinfo depmod; do
		[ -f "$R/usr/share/man/man8/$m.kmod.8.gz" ] || bad="$bad $m.kmod.8.gz"
	done
	for m in modprobe insmod rmmod modinfo depmod; do
		in_root "$m" --version 2>&1 | grep -q '^kmodns version' || bad="$bad $m"
	done
	ours=$(in_root sh -c 'readlink -f "$(command -v kmodns)"')
	for f in $2; do
		case $f in
		*/lsmod)
			[ "$(in_root readlink -f "$f")" = "$ours" ] || bad="$bad $f"
			# "Usage: /sbin/lsmod" (kmod 30), "Usage:" and "<tab>lsmod [options]" (kmod 34)
			in_root "/usr/lib/kmodns/kmod$f" --help 2>&1 | head -2 | tr -d '\n' | grep -q '^Usage:.*lsmod' ||
				bad="$bad kmod$f" ;;
		*) in_root "/usr/lib/kmodns/kmod$f" --version 2>&1 | grep -q '^kmod version' || bad="$bad kmod$f" ;;
		esac
	done
	if [ -z "$bad" ]; then
		pass "$1: kmod's $(wc -w <<<"$2") tool paths and 6 man pages diverted to kmodns, moved aside; modprobe insmod rmmod lsmod modinfo depmod are kmodns; kmod's still run from /usr/lib/kmodns/kmod"
	else
		fail "$1: not diverted as expected:$bad"
	fi
}

# check_purged NAME: dpkg --purge kmodns libkmodns0 in R leaves every path of kmod's as in
# $T/state.before (kmod_state) and nothing of kmodns's
check_purged() {
	local p left=
	if ! in_root dpkg --purge kmodns libkmodns0 >"$T/purge.log" 2>&1; then
		tail -10 "$T/purge.log"; fail "$1: dpkg --purge kmodns failed"; return
	fi
	kmod_state >"$T/state.after"
	if cmp -s "$T/state.before" "$T/state.after"; then
		pass "$1: dpkg --purge kmodns: every path of kmod's ($(grep -vc dir "$T/state.before") files and links) byte- and link-identical, no diversion left"
	else
		diff "$T/state.before" "$T/state.after" | head -10
		fail "$1: dpkg --purge kmodns left kmod changed"
	fi
	for p in /usr/lib/kmodns /etc/kmodns.d /usr/lib/kmodns.d /etc/kernel/postinst.d/kmodns /usr/sbin/kmodns; do
		[ -e "$R$p" ] && left="$left $p"
	done
	if [ -z "$left" ]; then pass "$1: nothing of kmodns left after the purge"
	else fail "$1: left after the purge:$left"; fi
}
