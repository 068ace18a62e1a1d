#!/bin/sh
# Usage: stacks_test.sh MODE MECHANISM (see bigframe_main.c for the modes).
# Env from ctest: SPROF_BIN, SPROF_LIB. Asserts that >= 99 % of the
# samples are complete (measured 99.8-100 % on a quiet machine, 99.4 % once
# in a CI run beside four other builds; the runtime before the large-frame
# work read 3-8 %) and that the hot stack is the real one. Where perf_event
# cannot copy the words (a 64 KiB frame, an alternate signal stack) its
# first samples say frames are missing, never inventing a call, until the
# thread's handler walks its live stack (perf_assist.c).
set -u
MODE=$1 MECH=$2
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-stacks-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2
fail() { echo "FAIL: $*" >&2; exit 1; }

prog=bigframe; args="$MODE 0.6"
case $MODE in
signal_*) prog=sigframe; args="${MODE#signal_} 0.6" ;;
threads_clone) prog=acc_shortthreads; args=quick ;;
tailmain) prog=tailmain; args=0.6 ;;
frame64k_noassist) args="frame64k 0.6" ;;
deep400_cap) args="deep400 0.6" ;;
nofp_deep) prog=nofp_deep; args=0.6 ;;
lazybind) prog=lazybind; args="0.6 $LIB/liblazybind_caller.so" ;;
esac
"$BIN/sprof-symmap" "$BIN/$prog" -o bf.symmap --quiet || fail "sprof-symmap"
# perf_event copies SPROF_PERF_STACK bytes of stack per sample (default 4 KiB)
# and grows the copy of a thread whose samples it knows are cut (up to
# 56 KiB): the 400-deep recursion, beyond the kernel's 127-frame chain,
# needs that, and so does a 4 KiB buffer plus qsort's frames (a chain
# rebuilt from a copy that ends below where the thread's outermost record
# can be is cut; before, only SPROF_PERF_STACK=16384 made this test pass).
# A frameless function with a 32 KiB frame (rbp used for data: no frame
# record near sp) gets the larger copy too; a 64 KiB one is beyond any copy
# (a record is at most 64 KiB): there the handler walks the live stack.
extra=
[ "$MODE" = deep400 ] && extra=SPROF_MAX_DEPTH=512
[ "$MODE" = frame64k_noassist ] && extra=SPROF_PERF_ASSIST=0
# shellcheck disable=SC2086
env $extra SPROF_OUT=t.bin SPROF_HZ=2000 SPROF_TIMER=$MECH LD_PRELOAD="$LIB/libsprof.so" "$BIN/$prog" $args ||
    fail "$prog $args failed"
"$BIN/sprof-trace" info t.bin > info.txt || fail "sprof-trace info"
mech=$(sed -n 's/^mechanism: *//p' info.txt)
grep '^per sample' info.txt
# Shares are of samples, not CPU weight: these checks are of stack shapes,
# and on a loaded machine a few late landings of the cpuclock pacer carry
# ms of weight each (frame64k's leaf stack read 83.6 % by weight once in a
# fresh-clone CI run beside a chromium test, 92-97 % otherwise under two
# busy loops); where the weight lands is tests/accuracy's to judge.
"$BIN/sprof-fold" --weight=samples t.bin bf.symmap > folded 2> err || { cat err; fail "sprof-fold"; }
cat err
# the "N% complete" figure of a sprof-fold message file
complete_of() { grep -o '[0-9.]*% complete' "$1" | tr -d '% complete'; }
complete=$(complete_of err)
# the share of the weight on stacks containing $1
share() { awk -v s="$1" '{ c = $NF; t += c; if (index($0, s)) w += c } END { printf "%.1f\n", t ? 100 * w / t : 0 }' folded; }
# A sanitized build (SPROF_TEST_SANITIZED=1, tests/CMakeLists.txt) starts
# and adapts later: perf_event's stack copy grows only once the writer has
# seen cut samples, and under ASan on a PVM guest 96.5-98.8 % of these runs
# were complete (2026-11-27): 2 pp less asked of perf_event there; and 3
# where its first passes are cut by design (frame64k: 94.8-98.4 % in 18
# ASan runs on 2026-11-28, 99.6-99.8 % of the samples after the first
# 30 ms, where the difference lies).
slack=0
[ "${SPROF_TEST_SANITIZED:-0}" = 1 ] && [ "$mech" = perf_event ] && slack=2
complete_at_least() {
    want=$(awk -v w="$1" -v s="$slack" 'BEGIN { print w - s }')
    awk -v c="$complete" -v w="$want" 'BEGIN { exit !(c >= w) }' || fail "$MODE/$mech: $complete% complete (want >= $want)"
}
ok_complete() { complete_at_least 99.0; }
# perf_event's samples before the writer's passes turned the handler's walks
# on (2-3 passes, the first after 2 ms) are cut: ~1 % of a 0.6 s run at 2 kHz,
# more when the writer's first passes come late on a loaded machine (frame64k
# 97.0 % once in a full ctest run on 2026-11-28, and 1 of 16 runs beside a
# busy loop; 97.8-99.5 % otherwise, the same before and after that day's
# runtime change). So: the whole run at least 96 %, and from 100 ms on, once
# the passes have adapted, the same 99 % as any other stack.
ok_complete_after_passes() {
    if [ "$mech" = perf_event ]; then
        [ "$slack" = 2 ] && slack=3
        complete_at_least 96.0
        "$BIN/sprof-fold" --from 0.1 t.bin bf.symmap > /dev/null 2> err_late || { cat err_late; fail "sprof-fold --from 0.1"; }
        complete=$(complete_of err_late)
        echo "from 100 ms on: $complete% complete"
        complete_at_least 99.0
    else complete_at_least 99.0; fi
}

case $MODE in
qsort4k)
    # its 4 KiB buffer plus qsort's frames need more than the first copy:
    # cut until the writer's first pass has seen it (the first 0-9 ms;
    # 98.9 % complete over the whole run once in a loaded full ctest,
    # 2026-11-29), as the deep and frame cases
    ok_complete_after_passes
    s=$(share "main;busy_main;qsort")
    awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "main;busy_main;qsort carries $s% (want >= 90)" ;;
snprintf)
    ok_complete
    s=$(share "main;format_numbers;snprintf;")
    awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "main;format_numbers;snprintf carries $s% (want >= 90)" ;;
frame64k)
    # 64 KiB is beyond any perf_event stack copy (a record is at most 64
    # KiB): once the largest copy is still cut, the thread's overflows also
    # signal it and its handler walks the live stack (perf_assist.c); the
    # samples before that (the writer's first passes, ~1 %) say they are cut
    invented=$(share "main;bigframe_frameless")
    [ "$invented" = 0.0 ] || fail "a call main -> bigframe_frameless was invented ($invented%)"
    ok_complete_after_passes
    s=$(share "main;run_frame64k;bigframe_frameless;bigframe_leaf")
    awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "main;run_frame64k;bigframe_frameless;bigframe_leaf carries $s%" ;;
frame64k_noassist)
    # no copy holds the frame and the handler may not walk it: every stack
    # says frames are missing, and none invents the call main -> the leaf
    invented=$(share "main;bigframe_frameless")
    [ "$invented" = 0.0 ] || fail "a call main -> bigframe_frameless was invented ($invented%)"
    if [ "$mech" = perf_event ]; then
        s=$(share "[frames not recorded];bigframe_frameless;bigframe_leaf")
        awk -v s="$s" -v c="$complete" 'BEGIN { exit !(s >= 90 && c < 10) }' ||
            fail "perf_event: the cut stack is not marked ($s% marked, $complete% complete)"
    fi ;;
frame64k_blocked)
    # the program blocks every signal while the 64 KiB frame is live: the
    # handler's walks come after each call, at another sp and pc, and must
    # not be taken for the samples' stacks (no invented call, cut stacks
    # marked, the unmatched samples counted)
    invented=$(share "main;bigframe_frameless")
    [ "$invented" = 0.0 ] || fail "a call main -> bigframe_frameless was invented ($invented%)"
    joined=$(share "main;run_frame64k_blocked;bigframe_frameless;")
    [ "$joined" = 0.0 ] || fail "a walk taken after the signal was unblocked was joined ($joined%)"
    if [ "$mech" = perf_event ]; then
        s=$(share "[frames not recorded];bigframe_frameless;bigframe_leaf")
        awk -v s="$s" 'BEGIN { exit !(s >= 80) }' || fail "perf_event: the cut stacks are not marked ($s% marked)"
        grep '^live walks' info.txt || fail "sprof-trace info does not say the thread was walked"
        grep -q 'samples from the handler.s walk, [1-9][0-9]* not matched' info.txt || fail "no sample counted as not matched"
    fi ;;
frame32k)
    # perf_event's first 4 KiB copies cannot hold the 32 KiB frame until
    # the writer grows them: 98.7-99.6 % (2026-11-28, before and after the
    # rbx work alike), 97.0-99.1 % under ASan
    ok_complete_after_passes
    s=$(share "main;run_frame32k;bigframe_frameless32k;bigframe_leaf")
    awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "main;run_frame32k;bigframe_frameless32k;bigframe_leaf carries $s%" ;;
deep400_cap)
    # the default depth cap (256) cuts the recorded chain: the records
    # above it are followed and kept as candidates, from which the offline
    # unwinder reaches main (before: every sample in the recursion stopped
    # at the cap, 0 % of them complete)
    grep -q '^truncated: *[1-9]' info.txt || fail "no sample reached the depth cap: $(grep '^truncated' info.txt)"
    ok_complete_after_passes
    s=$(share "main;run_deep400;deep_descend;")
    awk -v s="$s" 'BEGIN { exit !(s >= 95) }' || fail "main;run_deep400;deep_descend carries $s% (want >= 95)" ;;
deep400)
    # perf_event: the kernel's chain stops at 127 frames and the stack copy
    # grows once the writer has seen cut samples: the first ones are cut
    # (95.5 % complete in an ASan CI run, 2026-11-28; 98.1-99.3 % alone,
    # 100 % from 100 ms on)
    ok_complete_after_passes
    s=$(share "main;run_deep400;deep_descend;")
    awk -v s="$s" 'BEGIN { exit !(s >= 95) }' || fail "main;run_deep400;deep_descend carries $s% (want >= 95)" ;;
signal_normal)
    # through the signal frame to the interrupted code, on the same stack
    ok_complete
    s=$(share "main;raise_loop;raise;")
    h=$(share ";__restore_rt;on_signal")
    awk -v s="$s" -v h="$h" 'BEGIN { exit !(s >= 90 && h >= 85) }' || fail "interrupted frames: $s% under main;raise_loop;raise, $h% in the handler" ;;
signal_alt)
    # the handler's frames are on the alternate stack, the interrupted ones
    # on the thread's. The signal mechanisms read both (the interrupted
    # stack is recorded as a second segment from the rt_sigframe's rsp);
    # perf_event's copy holds only the alternate stack: its first samples
    # recover the interrupted pc from the signal frame and say the frames
    # above it are missing, then the thread's overflows also signal it and
    # its handler walks both stacks live (perf_assist.c). Never a call
    # main -> __restore_rt that did not happen.
    invented=$(share "main;__restore_rt")
    [ "$invented" = 0.0 ] || fail "main -> __restore_rt invented ($invented%)"
    h=$(share ";__restore_rt;on_signal")
    awk -v h="$h" 'BEGIN { exit !(h >= 85) }' || fail "handler stacks $h%"
    awk '/__restore_rt;on_signal/ { if ($0 ~ /^__restore_rt;/) bad = 1 } END { exit bad }' folded ||
        fail "the interrupted pc above __restore_rt is missing"
    ok_complete_after_passes
    s=$(share "main;raise_loop;raise;")
    awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "interrupted frames: $s% under main;raise_loop;raise" ;;
signal_barrier)
    # a handler on an alternate stack that interrupted frame-pointer code
    # (a garbage collector's write barrier): the interrupted function's
    # record is where the signal frame's rbp points, so its callers are
    # known with both mechanisms (perf_event: the kernel walked on from
    # there, also from a frameless handler whose rbp is still the
    # interrupted code's). Before: 14 % complete under perf_event.
    ok_complete
    invented=$(share "main;__restore_rt")
    [ "$invented" = 0.0 ] || fail "main -> __restore_rt invented ($invented%)"
    # judged among the handler's stacks: how much of the run the handler
    # takes depends on the host (mprotect and the faults cost more on a
    # loaded PVM guest: the path's share fell to 79-83 %, 81.2 % in a CI run,
    # every one of the handler's stacks still whole)
    path="main;run_barrier;barrier_loop;store_pages;__restore_rt;barrier_on_fault"
    h=$(awk -v p="^$path[; ]" '{ c = $NF; t += c; if ($0 ~ p) w += c } END { printf "%.1f\n", t ? 100 * w / t : 0 }' folded)
    a=$(share "barrier_on_fault")
    awk -v a="$a" 'BEGIN { exit !(a >= 50) }' || fail "the handler carries $a% of the weight (want >= 50)"
    awk -v h="$h" -v a="$a" 'BEGIN { exit !(h >= 0.97 * a) }' ||
        { grep barrier_on_fault folded | grep -v "^$path[; ]" | sort -t' ' -k2 -rn | head -5 >&2
          fail "$path carries $h% of the handler's $a% (want >= 97 % of it)"; } ;;
threads_clone)
    # a thread that starts thousands of short threads: the kernel's time in
    # clone3 (perf_event with kernel mode sampled) is under pthread_create.
    # glibc ends clone3's CFI before its syscall: without a rule for that,
    # the unwind fell back to the frame-pointer chain (Main#run;clone3)
    ok_complete
    "$BIN/sprof-fold" --weight=samples --c-names t.bin bf.symmap > cnames 2>/dev/null || fail "sprof-fold --c-names"
    c=$(awk '/\[syscall clone3\]/ { c += $NF } END { print c + 0 }' cnames)
    bad=$(awk '/\[syscall clone3\]/ && !/;pthread_create;/ { print; exit }' cnames)
    [ -z "$bad" ] || fail "clone3 without pthread_create: $bad"
    if grep -q '^kernel sampling: perf_event' info.txt; then
        [ "$c" -gt 0 ] || fail "no sample in clone3 with kernel mode sampled"
    fi
    # the runtime's pthread_create wrapper (preloaded) is named as sprof's
    if grep -q ';pthread_create;' folded; then
        grep -q 'pthread_create \[sprof\];pthread_create' folded ||
            fail "sprof's pthread_create wrapper is not marked [sprof]: $(grep -m1 pthread_create folded)"
    fi
    echo "clone3 samples: $c, each under pthread_create" ;;
tailmain)
    # main jumped to run_program (no frame of main on any stack): rooted at
    # run_program, complete, since the step from it into libc's start code
    # is an exact CFI step. Before: 0 % complete, rooted at _start.
    ok_complete
    s=$(awk '{ c = $NF; t += c; if (index($0, "run_program;tail_loop;") == 1) w += c } END { printf "%.1f\n", t ? 100 * w / t : 0 }' folded)
    awk -v s="$s" 'BEGIN { exit !(s >= 95) }' || fail "stacks rooted at run_program;tail_loop carry $s% (want >= 95)"
    ! grep -q '__libc_start_call_main;run_program' folded || fail "libc's start frames kept above run_program" ;;
nofp_deep)
    # no frame pointer anywhere, ~12 KiB deep: the return addresses must be
    # recorded up to main's frame (before: the candidates stopped at the
    # pushed registers that scanning took for records, 2-8 KiB up).
    # perf_event's first 4 KiB copies are cut until the writer grows them:
    # 98.8-99.4 % of a run, 100 % after its first 20 ms
    ok_complete_after_passes
    s=$(share "main;nofp_run;nofp_descend;")
    awk -v s="$s" 'BEGIN { exit !(s >= 90) }' || fail "main;nofp_run;nofp_descend carries $s% (want >= 90)" ;;
lazybind)
    # about half the time binds symbols in ld.so's trampoline and
    # _dl_fixup, called from lazy_call_all (named or not: ld.so may have no
    # symbols). Before: every such sample lost its caller (the trampoline's
    # CFA is in rbx), ~50 % complete; and a perf_event run died of a fault
    # in sprof's writer, reading the code of a library unloaded since.
    # How much of a run binds, against dlopen and dlclose's mapping, is the
    # machine's (lazy_call_all 49 % here, 27.8 % in a loaded CI run): the
    # share only says the binding is there; where ld.so has symbols, the
    # stacks through its trampoline must start at lazy_call_all (99.5-100 %
    # after the first 100 ms). Before that, under load, perf_event's samples
    # lost it in 0.6-5.8 % of that weight (13-31 % with two busy loops
    # beside it), marked complete: the module is mapped anew each round,
    # and the return address into it, a word of the copy, is kept as a
    # candidate only once the runtime's table of code mappings has the
    # module. A sample in ld.so now has the maps read again (at most every
    # 10 ms, maps.c's sprof_maps_loader): 96-100 % kept in the first 100 ms
    # under the same load, 99.1-100 % over the run (93.7-100 before).
    ok_complete_after_passes
    s=$(share "main;lazy_call_all;")
    awk -v s="$s" 'BEGIN { exit !(s >= 10) }' || fail "main;lazy_call_all carries $s% (want >= 10)"
    # From 100 ms on: before, the writer may not yet have read the maps
    # for the first rounds (asked over the whole run of perf_event, a full
    # ctest -j2 run read 85 % once, where two busy loops beside it had read
    # 99.1-100 % in 12 runs)
    from=0.1
    "$BIN/sprof-fold" --weight=samples --from $from t.bin bf.symmap > folded_late 2> /dev/null || fail "sprof-fold --from $from"
    kept=$(awk '{ c = $NF; if (index($0, "_dl_runtime_resolve")) { r += c; if (index($0, "main;lazy_call_all;") == 1) k += c } }
                END { if (r) printf "%.1f\n", 100 * k / r }' folded_late)
    [ -z "$kept" ] || awk -v k="$kept" 'BEGIN { exit !(k >= 95) }' ||
        fail "from $from s on only $kept% of the trampoline's weight is under main;lazy_call_all (want >= 95)" ;;
esac
echo "PASS: $MODE/$mech ($complete% complete)"
