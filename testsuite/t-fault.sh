#!/bin/bash
# Fault injection (testsuite/fault.c, preloaded):
#  - allocation failure at every allocation site (a caller and its caller, under setarch -R) of
#    one module read (modinfo --namespaces, xz) and of one depmod run on the sample tree: exit 0
#    with the same output (or, for depmod, with a module named as left out, as kmod leaves out
#    an unreadable one), or exit 1 with a line saying why; never a crash, never an output file
#    that differs from a complete run's without a word, never a temporary file left. glibc's
#    own abort when it cannot allocate a library's thread-local data in dlopen is allowed;
#  - depmod killed (SIGKILL) at 200 random moments of runs on the real 6.1 tree, alternating
#    between two states of it: every file, cache and stamp included, is then entirely the old
#    or entirely the new one; the next run leaves the new set whole and no temporary file;
#  - read errors (EIO) and short reads on a module (each compression) and on modules.dep.bin:
#    one line naming the file, no crash.
# Allocation and kill cases need a build without sanitizers (ASan's allocator cannot be
# replaced; the kills test the renames, not memory): they skip on one. KMODNS_FAULT_KILLS=N
# changes the number of kills.
. "$(dirname "$0")/lib.sh"
T=$(tmpdir); trap 'rm -rf "$T"' EXIT
fault_so=$B/testsuite/kmodns-fault.so
[ -f "$fault_so" ] || { fail "no $fault_so (make check-programs)"; exit 1; }
"$B/testsuite/gen-fixtures" "$T/fx" >/dev/null || { fail "gen-fixtures failed"; exit 1; }
# the sanitizer runtimes a tool links go first in LD_PRELOAD, as ASan requires
sanitizer_libs=$(ldd "$B/tools/depmod" 2>/dev/null | awk '$1 ~ /^lib(asan|ubsan)\.so/ && $3 ~ /^\// { printf "%s ", $3 }')
preload="$sanitizer_libs$fault_so"
sanitized=false; [ -n "$sanitizer_libs" ] && sanitized=true
no_crash() { [ "$1" -le 1 ] && ! grep -qE 'Sanitizer|runtime error' "$2"; }
# glibc_tls_abort RC ERR: dlopen's "cannot allocate memory for thread-local data", glibc's abort
glibc_tls_abort() { [ "$1" -eq 127 ] && grep -qx 'cannot allocate memory for thread-local data: ABORT' "$2"; }

# ---- allocation failures --------------------------------------------------------------------
# alloc_sites CMD...: how many allocation sites CMD has (it runs once, nothing failing).
alloc_sites() {
	setarch -R env LD_PRELOAD="$preload" KMODNS_FAULT_ALLOC_SITE=1000000000 \
		KMODNS_FAULT_ALLOC_COUNT="$T/count" "$@" >/dev/null 2>&1
	awk '{ print $2 }' "$T/count"
}

if $sanitized; then
	skip "alloc-module: the tools link ASan, whose allocator wins"
	skip "alloc-depmod: the tools link ASan, whose allocator wins"
else
	# one module read: the xz fixture (decompression, libelf, every table)
	mod=$T/fx/v6.12-xz.ko.xz
	"$B/tools/modinfo" --namespaces "$mod" >"$T/mod.ref"
	total=$(alloc_sites "$B/tools/modinfo" --namespaces "$mod") bad=0 failed=0 t0=$SECONDS
	for n in $(seq 1 "$total"); do
		setarch -R env LD_PRELOAD="$preload" KMODNS_FAULT_ALLOC_SITE=$n \
			"$B/tools/modinfo" --namespaces "$mod" >"$T/out" 2>"$T/err"; rc=$?
		# libkmod's kmod_new says a line of its own before ours
		if glibc_tls_abort $rc "$T/err"; then
			:
		elif ! no_crash $rc "$T/err"; then
			bad=$((bad + 1)); echo "site $n: exit $rc: $(head -c 200 "$T/err")"
		elif [ $rc -eq 0 ] && ! cmp -s "$T/out" "$T/mod.ref"; then
			bad=$((bad + 1)); echo "site $n: exit 0 with other output"
		elif [ $rc -eq 1 ] && { [ "$(wc -l <"$T/err")" -gt 2 ] || ! tail -1 "$T/err" | grep -q '^modinfo: ERROR: '; }; then
			bad=$((bad + 1)); echo "site $n: exit 1 without a line saying why: $(head -c 200 "$T/err" | tr '\n' '|')"
		fi
		[ $rc -eq 1 ] && failed=$((failed + 1))
	done
	if [ "$total" -gt 20 ] && [ $bad -eq 0 ]; then
		pass "alloc-module ($total sites, $failed failed cleanly, the rest unaffected; $((SECONDS - t0)) s)"
	else
		fail "alloc-module: $bad of ${total:-0} sites"
	fi

	# one depmod run on the sample tree (with empty builtin files: a silent run that stamps)
	tree=$T/alloc-tree dir=$T/alloc-tree/lib/modules/6.12.0-sample
	mkdir -p "$dir"
	cp -r "$T/fx/sample/lib/modules/6.12.0-sample/." "$dir/"
	: >"$dir/modules.builtin"; : >"$dir/modules.builtin.modinfo"
	depmod_cmd=("$B/tools/depmod" -b "$tree" -E "$T/fx/sample/Module.symvers" 6.12.0-sample)
	clean_outputs() {
		find "$dir" -maxdepth 1 \( -name 'modules.*' -o -name '.modules.*' \) ! -name modules.order \
			! -name modules.builtin ! -name modules.builtin.modinfo -delete
	}
	clean_outputs
	"${depmod_cmd[@]}" || fail "alloc-depmod: the reference run failed"
	mkdir "$T/dm.ref"; cp "$dir"/modules.* "$T/dm.ref/"
	outputs=$(cd "$T/dm.ref" && ls modules.* | grep -vxE 'modules\.(order|builtin|builtin\.modinfo|kmodns\.stamp)')
	clean_outputs
	total=$(alloc_sites "${depmod_cmd[@]}") bad=0 failed=0 t0=$SECONDS
	for n in $(seq 1 "$total"); do
		clean_outputs
		setarch -R env LD_PRELOAD="$preload" KMODNS_FAULT_ALLOC_SITE=$n "${depmod_cmd[@]}" >/dev/null 2>"$T/err"; rc=$?
		why=
		if glibc_tls_abort $rc "$T/err"; then
			:
		elif ! no_crash $rc "$T/err"; then
			why="exit $rc: $(head -c 200 "$T/err")"
		elif [ $rc -eq 1 ] && [ ! -s "$T/err" ]; then
			why="exit 1 without a word"
		elif ls -A "$dir" | grep -q '^\.'; then
			why="temporary file left: $(ls -A "$dir" | grep '^\.' | head -3 | tr '\n' ' ')"
		else
			for f in $outputs; do
				if [ -e "$dir/$f" ] && ! cmp -s "$dir/$f" "$T/dm.ref/$f" &&
					! grep -q "^depmod: ERROR: $dir/kernel/.*\.ko: " "$T/err"; then
					why="$why $f differs"
				fi
				if [ $rc -eq 0 ] && [ ! -e "$dir/$f" ]; then why="$why $f missing after exit 0"; fi
			done
		fi
		[ $rc -eq 1 ] && failed=$((failed + 1))
		if [ -n "$why" ]; then bad=$((bad + 1)); echo "site $n:$why"; fi
	done
	if [ "$total" -gt 100 ] && [ $bad -eq 0 ]; then
		pass "alloc-depmod ($total sites, $failed failed cleanly, the rest unaffected; $((SECONDS - t0)) s)"
	else
		fail "alloc-depmod: $bad of ${total:-0} sites"
	fi
fi

# ---- read errors and short reads -------------------------------------------------------------
for mode in eio short; do
	for f in v6.12.ko v6.12-xz.ko.xz v6.12-zst.ko.zst v6.12-gz.ko.gz; do
		env LD_PRELOAD="$preload" KMODNS_FAULT_PATH="$f" KMODNS_FAULT_READ=$mode \
			"$B/tools/modinfo" --namespaces "$T/fx/$f" >"$T/out" 2>"$T/err"; rc=$?
		if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF "$T/fx/$f" "$T/err" && [ ! -s "$T/out" ]; then
			pass "read-$mode-$f"
		else
			fail "read-$mode-$f: exit $rc: $(head -c 300 "$T/err" | tr '\n' '|')"
		fi
	done
done
# modules.dep.bin under modprobe: libkmod reads it on its own; our record lookup names the file
# (EIO) or the damage it finds (short), and the module is judged from its file instead
idx_tree=$T/fx/sample
"$B/tools/depmod" -b "$idx_tree" -E "$T/fx/sample/Module.symvers" 6.12.0-sample 2>/dev/null
for mode in eio short; do
	env LD_PRELOAD="$preload" KMODNS_FAULT_PATH=modules.dep.bin KMODNS_FAULT_READ=$mode \
		"$B/tools/modprobe" -d "$idx_tree" -S 6.12.0-sample -n sample_user >"$T/out" 2>"$T/err"; rc=$?
	if no_crash $rc "$T/err" && head -1 "$T/err" | grep -qF "$idx_tree/lib/modules/6.12.0-sample/modules.dep.bin: "; then
		pass "read-$mode-modules.dep.bin"
	else
		fail "read-$mode-modules.dep.bin: exit $rc: $(head -c 300 "$T/err" | tr '\n' '|')"
	fi
done

# ---- SIGKILL at random moments ---------------------------------------------------------------
kills=${KMODNS_FAULT_KILLS:-200}
era=$corpus/6.1
if $sanitized; then
	skip "kill-depmod: run on the build without sanitizers"
elif [ ! -f "$era/ok" ]; then
	missing "kill-depmod" "no real 6.1 tree in $corpus"
else
	kver=$(cat "$era/kver") root=$T/kill dir=$T/kill/lib/modules/$(cat "$era/kver")
	mkdir -p "$root/lib/modules"
	cp -rs "$era/root/lib/modules/$kver" "$root/lib/modules/$kver"
	# state B is state A without loop.ko (its alias, devname, symbols, dependencies go too)
	victim=kernel/drivers/block/loop.ko victim_target=$(readlink "$dir/$victim")
	set_state() { if [ "$1" = A ]; then ln -sfn "$victim_target" "$dir/$victim"; else rm -f "$dir/$victim"; fi; }
	depmod_kill_cmd=("$B/tools/depmod" -b "$root" -E "$era/Module.symvers" "$kver")
	# reference STATE: a complete run's files, and how long it took (ms)
	reference() {
		local start end
		set_state "$1"
		start=$(date +%s%N)
		"${depmod_kill_cmd[@]}" || return 1
		end=$(date +%s%N)
		rm -rf "$T/ref$1"; mkdir "$T/ref$1"
		cp "$dir"/modules.* "$T/ref$1/"
		echo $(((end - start) / 1000000))
	}
	msA=$(reference A) && msB=$(reference B) && msA=$(reference A)
	outputs=$(cd "$T/refA" && ls modules.* | grep -vxE 'modules\.(order|builtin|builtin\.modinfo|kmodns\.stamp)')
	ms=$((msA > msB ? msA : msB))
	# a run that rewrites all: an upper bound of when a kill can land in it
	declare -A count=([old]=0 [new]=0 [mixed]=0 [finished]=0)
	bad=0 state=A
	# stamp_whole FILE: its header's body size is the rest of the file (renamed in whole)
	stamp_whole() {
		local size body
		size=$(stat -c %s "$1")
		body=$(od -An -t u8 -j 16 -N 8 "$1" | tr -d ' ')
		[ "$size" -ge 32 ] && [ "$body" -eq $((size - 32)) ]
	}
	# a kill that left the old set is followed by another run towards the same new state (the
	# files are still the old ones); after any other, and every tenth, the next run completes
	# and the state turns
	settled=true completions=0 start_all=$SECONDS
	for i in $(seq 1 "$kills"); do
		if $settled; then old=$state; state=$([ $state = A ] && echo B || echo A); fi
		set_state $state
		had_stamp=false
		if [ -e "$dir/modules.kmodns.stamp" ]; then cp "$dir/modules.kmodns.stamp" "$T/stamp.old"; had_stamp=true; fi
		"${depmod_kill_cmd[@]}" >/dev/null 2>&1 &
		pid=$!
		# anywhere in a whole run, and a little after
		sleep "$(awk -v r=$RANDOM -v ms=$ms 'BEGIN { printf "%.3f", r / 32768 * ms * 1.2 / 1000 }')"
		kill -9 $pid 2>/dev/null
		{ wait $pid; } 2>/dev/null; rc=$?
		n_old=0 n_new=0 why=
		for f in $outputs; do
			if cmp -s "$dir/$f" "$T/ref$state/$f"; then
				cmp -s "$dir/$f" "$T/ref$old/$f" || n_new=$((n_new + 1))
			elif cmp -s "$dir/$f" "$T/ref$old/$f"; then
				n_old=$((n_old + 1))
			else
				why="$why $f is neither the old nor the new one"
			fi
		done
		# the stamp: the old one, none (removed before the renames), or a whole new one
		if [ -e "$dir/modules.kmodns.stamp" ]; then
			if $had_stamp && cmp -s "$dir/modules.kmodns.stamp" "$T/stamp.old"; then
				n_old=$((n_old + 1))
				[ $n_new -eq 0 ] || why="$why the old stamp stands beside new files"
			elif stamp_whole "$dir/modules.kmodns.stamp"; then
				n_new=$((n_new + 1))
				[ $n_old -eq 0 ] || why="$why a new stamp beside old files"
			else
				why="$why the stamp is partial"
			fi
		fi
		if [ $rc -ne 137 ]; then
			count[finished]=$((count[finished] + 1))
		elif [ $n_new -gt 0 ] && [ $n_old -gt 0 ]; then
			count[mixed]=$((count[mixed] + 1))
		elif [ $n_new -gt 0 ]; then
			count[new]=$((count[new] + 1))
		else
			count[old]=$((count[old] + 1))
		fi
		settled=false
		if [ $rc -eq 137 ] && [ $n_new -eq 0 ] && [ $((i % 10)) -ne 0 ] && [ -z "$why" ]; then
			continue
		fi
		settled=true completions=$((completions + 1))
		# the next run: the new set, whole, and nothing temporary left; its length sets the kill window
		start=$(date +%s%N)
		"${depmod_kill_cmd[@]}" >/dev/null 2>"$T/err" || why="$why the next run failed: $(head -c 200 "$T/err")"
		end=$(date +%s%N)
		# the kill window follows the recent runs: under load one slow run must not widen it for good
		ms=$(((ms + (end - start) / 1000000) / 2))
		for f in $outputs; do
			cmp -s "$dir/$f" "$T/ref$state/$f" || why="$why $f not rewritten by the next run"
		done
		[ -e "$dir/modules.kmodns.stamp" ] || why="$why no stamp after the next run"
		if ls -A "$dir" | grep -q '^\.'; then why="$why temporary files left: $(ls -A "$dir" | grep '^\.' | head -3 | tr '\n' ' ')"; fi
		if [ -n "$why" ]; then
			bad=$((bad + 1)); echo "kill $i (state $old -> $state, exit $rc):$why"
			[ $bad -lt 5 ] || break
		fi
	done
	echo "kills: ${count[old]} left the old set, ${count[new]} the new one, ${count[mixed]} a mixed one, ${count[finished]} came after the run ended; $completions next runs made the new set whole ($((SECONDS - start_all)) s)"
	if [ $bad -eq 0 ]; then pass "kill-depmod ($kills kills within runs of up to ${ms} ms)"; else fail "kill-depmod: $bad kills"; fi
fi
