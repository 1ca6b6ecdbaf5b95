#!/bin/bash
# Our rmmod and lsmod against Debian's kmod 30 rmmod and lsmod, under the syscall trap: for each
# case both run on their own copy of the same root, set up alike (modules loaded by kmod's
# modprobe), with the same arguments. Must be the same: exit code, stdout, stderr (the tool's
# path and the copy's path aside), the trap's log of kernel calls and the modules left loaded.
# --version is the one exception: the same exit code and one "version" line.
# Cases: the fixture "chain" and "builtin" trees and the real Debian 6.1 tree.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
before=$(real_modules_state)
kmod_rmmod=$(kmod_tool rmmod) kmod_lsmod=$(kmod_tool lsmod) kmod_modprobe=$(kmod_tool modprobe)
if [ -z "$kmod_rmmod" ] || [ -z "$kmod_lsmod" ] || [ -z "$kmod_modprobe" ]; then
	missing "rmmod-lsmod" "Debian's kmod tools are not installed (apt-get install kmod)"; exit 0
fi
for t in rmmod lsmod; do
	[ -x "$B/tools/$t" ] || { fail "rmmod-lsmod: $B/tools/$t missing (make all)"; exit 1; }
done
[ -f "$trap_so" ] || { fail "rmmod-lsmod: $trap_so missing (make check-programs)"; exit 1; }
"$B/testsuite/gen-fixtures" --tree "$T/trees" >/dev/null || { fail "gen-fixtures --tree failed"; exit 1; }
unset KMODNS_TRAP_FAIL KMODNS_TRAP_UNAME_R KMODNS_TRAP_FORCE_UNLOAD KMODNS_TRAP_LOG

# The base roots, each made and depmod'ed once; a case copies one.
trap_new "$T/base-chain" "$T/trees/chain/lib/modules/1.0.0-chain" || { fail "trap-new chain"; exit 1; }
trap_new "$T/base-builtin" "$T/trees/builtin/lib/modules/1.0.0-builtin" || { fail "trap-new builtin"; exit 1; }

# Setups: what is loaded (and held) before the tool runs.
setup_none() { :; }
setup_chain() { trap_run "$1" "$kmod_modprobe" chain_e && trap_set_refcnt "$1" pipe5 1; }
setup_norefcnt() { setup_chain "$1" && rm "$1/sys/module/chain_e/refcnt"; }
setup_noinitstate() { setup_chain "$1" && mkdir "$1/sys/module/ghost"; }
setup_noproc() { rm "$1/proc/modules"; }
setup_corpus() { trap_run "$1" "$kmod_modprobe" -a btrfs snd-hda-intel nf_tables xfs kvm-amd; }

# same NAME BASE SETUP TOOL [ENV=VALUE...] -- ARGS...: @ROOT@ in ARGS is the copy's path.
same() {
	local name=$1 base=$2 setup=$3 tool=$4 who bin root rc a envs=() args=() why=
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	for who in kmod ours; do
		root=$T/$who
		# hard links: the trap replaces proc/modules by rename and the base has no sys/module entry
		rm -rf "$root" && cp -al "$base" "$root" && "$setup" "$root" >/dev/null 2>&1 ||
			{ fail "$name: setup $setup failed"; return; }
		if [ $who = kmod ]; then bin=$(eval echo "\$kmod_$tool"); else bin=$B/tools/$tool; fi
		args=()
		for a in "$@"; do args+=("${a//@ROOT@/$root}"); done
		: >"$T/$who.log"
		trap_cache "$bin"
		(
			for a in "${envs[@]}"; do export "${a?}"; done
			KMODNS_TRAP_LOG="$T/$who.log" trap_run "$root" $W "$bin" "${args[@]}"
		) >"$T/$who.out" 2>"$T/$who.err"
		echo $? >"$T/$who.rc"
		for f in out err log; do sed -i "s|$root|ROOT|g; s|$bin|TOOL|g" "$T/$who.$f"; done
		{ cat "$root/proc/modules" 2>&1; (cd "$root/sys/module" && find . | LC_ALL=C sort); } | sed "s|$root|ROOT|g" >"$T/$who.state"
	done
	if [ "$tool-$*" = "rmmod---version" ] || [ "$*" = "-V" ]; then
		cmp -s "$T/kmod.rc" "$T/ours.rc" || why="$why exit $(cat "$T/kmod.rc") vs $(cat "$T/ours.rc")"
		grep -q '^kmodns version ' "$T/ours.out" || why="$why no version line"
	else
		for f in rc out err log state; do
			cmp -s "$T/kmod.$f" "$T/ours.$f" || why="$why $f"
		done
	fi
	if [ -z "$why" ]; then pass "$name"; else
		fail "$name: differs in$why"
		for f in rc out err log; do
			cmp -s "$T/kmod.$f" "$T/ours.$f" || diff "$T/kmod.$f" "$T/ours.$f" | head -8 | sed "s/^/    $f /"
		done
	fi
}

C=$T/base-chain V=1.0.0-chain
same rmmod-loaded "$C" setup_chain rmmod -- chain_e
same rmmod-absent "$C" setup_chain rmmod -- nosuch
same rmmod-nothing-loaded "$C" setup_none rmmod -- chain_e
same rmmod-held "$C" setup_chain rmmod -- chain_d
same rmmod-refcnt "$C" setup_chain rmmod -- pipe5
same rmmod-f-held "$C" setup_chain rmmod -- -f chain_d
same rmmod-f-refcnt "$C" setup_chain rmmod -- --force pipe5
same rmmod-f-refcnt-force-unload "$C" setup_chain rmmod KMODNS_TRAP_FORCE_UNLOAD=1 -- -f pipe5
same rmmod-f-absent "$C" setup_chain rmmod -- -f nosuch
same rmmod-f-loaded "$C" setup_chain rmmod -- -f chain_e
same rmmod-several "$C" setup_chain rmmod -- chain_e nosuch chain_a chain_d pipe5 fan_hub
same rmmod-several-f "$C" setup_chain rmmod -- chain_e -f chain_a chain_d nosuch
same rmmod-path "$C" setup_chain rmmod -- "@ROOT@/lib/modules/$V/kernel/drivers/chain/chain_e.ko"
same rmmod-path-held "$C" setup_chain rmmod -- "@ROOT@/lib/modules/$V/kernel/lib/chain_d.ko"
same rmmod-path-not-module "$C" setup_chain rmmod -- "@ROOT@/proc/cmdline"
same rmmod-path-directory "$C" setup_chain rmmod -- "@ROOT@/sys/module/chain_e"
same rmmod-path-missing "$C" setup_chain rmmod -- /nonexistent/chain_e.ko
same rmmod-name-dash-suffix "$C" setup_chain rmmod -- chain-e.ko
same rmmod-verbose "$C" setup_chain rmmod -- -v chain_e nosuch
same rmmod-syslog "$C" setup_chain rmmod -- -s nosuch chain_e
same rmmod-no-refcnt "$C" setup_norefcnt rmmod -- chain_e
same rmmod-no-initstate "$C" setup_noinitstate rmmod -- ghost
same rmmod-no-name "$C" setup_chain rmmod --
same rmmod-only-options "$C" setup_chain rmmod -- -f -v
same rmmod-bad-option "$C" setup_chain rmmod -- -x chain_e
same rmmod-bad-long-option "$C" setup_chain rmmod -- --bogus chain_e
same rmmod-help "$C" setup_chain rmmod -- -h
same rmmod-help-long "$C" setup_chain rmmod -- --help chain_e
same rmmod-version "$C" setup_chain rmmod -- --version
same rmmod-V "$C" setup_chain rmmod -- -V
same rmmod-builtin "$T/base-builtin" setup_none rmmod -- "$(sed -n '1{s|.*/||;s|\.ko$||;p}' "$T/trees/builtin/lib/modules/1.0.0-builtin/modules.builtin")"

same lsmod-empty "$C" setup_none lsmod --
same lsmod-loaded "$C" setup_chain lsmod --
same lsmod-no-refcnt "$C" setup_norefcnt lsmod --
same lsmod-no-proc-modules "$C" setup_noproc lsmod --
same lsmod-argument "$C" setup_chain lsmod -- chain_e
same lsmod-help "$C" setup_chain lsmod -- -h
same lsmod-version "$C" setup_chain lsmod -- --version

# the real 6.1 tree: long names, big sizes, many holders
dir=$corpus/6.1
if [ ! -f "$dir/ok" ]; then
	missing "rmmod-lsmod-corpus-6.1" "no corpus at $dir (run ../shared/corpus/fetch-debian-kernels 6.1)"
else
	kver=$(cat "$dir/kver")
	if ! trap_new "$T/base-c61" "$dir/root/lib/modules/$kver"; then
		fail "rmmod-lsmod-corpus-6.1: depmod of the root failed"
	else
		same corpus-6.1-lsmod "$T/base-c61" setup_corpus lsmod --
		same corpus-6.1-rmmod-held "$T/base-c61" setup_corpus rmmod -- libcrc32c snd_pcm
		same corpus-6.1-rmmod-several "$T/base-c61" setup_corpus rmmod -- btrfs snd-hda-intel kvm_amd xfs nf_tables
		same corpus-6.1-rmmod-path "$T/base-c61" setup_corpus rmmod -- "@ROOT@/lib/modules/$kver/kernel/fs/xfs/xfs.ko"
	fi
fi

check "real-system-untouched" test "$(real_modules_state)" = "$before"
