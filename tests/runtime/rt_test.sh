#!/bin/sh
# Runtime-stub tests. Usage: rt_test.sh FORM TEST
#   FORM: preload (rt_prog + LD_PRELOAD=libsprof.so) or static (rt_prog_static,
#         linked with -Wl,--whole-archive libsprof_rt.a)
# Env from ctest: SPROF_BIN, SPROF_LIB.
set -u
FORM=$1
TEST=$2
BIN=${SPROF_BIN:?}
LIB=${SPROF_LIB:?}
CHECK="$BIN/rt_trace_check"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-rt-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2

if [ "$FORM" = preload ]; then
    PROG="$BIN/rt_prog"
    PRELOAD="$LIB/libsprof.so"
else
    PROG="$BIN/rt_prog_static"
    PRELOAD=
fi

# run ENV... -- ARGS: runs the program with the profiler env, output in $DIR/out
run() {
    env_args=
    while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
    shift
    if [ -n "$PRELOAD" ]; then
        env $env_args LD_PRELOAD="$PRELOAD" "$PROG" "$@" > "$DIR/out"
    else
        env $env_args "$PROG" "$@" > "$DIR/out"
    fi
}

die() { echo "FAIL: $*" >&2; cat "$DIR/out" >&2 2>/dev/null; exit 1; }

mech_of() { "$BIN/sprof-trace" info "$1" | sed -n 's/^mechanism: *//p'; }

case "$TEST" in
rate_1k|rate_5k)
    hz=1000; [ "$TEST" = rate_5k ] && hz=5000
    run SPROF_OUT=t.bin SPROF_HZ=$hz -- spin 0.6 1 cpu || die "program failed"
    "$BIN/sprof-trace" info t.bin | tee info.txt
    # format 1.2: the writer's own CPU is recorded, and small beside the program's
    own=$(sed -n "s/^sprof's own CPU: [0-9.]* s (\([0-9.]*\)% .*/\1/p" info.txt)
    [ -n "$own" ] && awk -v o="$own" 'BEGIN { exit !(o > 0 && o < 25) }' || die "own CPU not recorded or implausible: '$own'"
    tol=10
    # the signal fallback (hosts that forbid perf_event) paces from user space: looser
    [ "$(mech_of t.bin)" = perf_event ] || tol=30
    "$CHECK" rate t.bin "$DIR/out" $hz $tol || exit 1
    ;;
rate_cpuclock)
    run SPROF_OUT=t.bin SPROF_HZ=1000 SPROF_TIMER=cpuclock -- spin 0.6 1 cpu || die "program failed"
    "$BIN/sprof-trace" info t.bin
    "$CHECK" mech t.bin cpuclock_paced || exit 1
    "$CHECK" rate t.bin "$DIR/out" 1000 30 || exit 1
    # format 2.9: a busy loop's landings are draws, each but a thread's
    # first naming the previous one (readers split the CPU between them)
    "$BIN/sprof-trace" dump t.bin | awk '/ SAMPLE / { n++; if ($0 ~ /flags=[^ ]*draw,draw_prev/) d++ }
        END { printf "%d of %d samples are linked draws\n", d, n; exit !(n >= 100 && d >= 0.8 * n) }' ||
        die "the pacer's landings are not flagged as linked draws"
    ;;
rate_posix_timer|rate_itimer)
    m=${TEST#rate_}
    run SPROF_OUT=t.bin SPROF_HZ=100 SPROF_TIMER=$m -- spin 0.6 1 cpu || die "program failed"
    "$CHECK" mech t.bin $m || exit 1
    # tick-driven timers: 100 Hz is below the 250 Hz tick, so they can deliver
    # it; on a loaded machine expirations merge (one pending signal) and the
    # tick lands in other tasks: this only checks that they run and sample
    "$CHECK" rate t.bin "$DIR/out" 100 70 || exit 1
    ;;
threads4|threads4_cpuclock)
    extra=; [ "$TEST" = threads4_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin $extra -- spin 2 4 || die "program failed"
    # weights (what the profile shows) within 5 points; raw counts within 5
    # points for perf_event, 10 for the user-space-paced fallback
    ctol=5; [ "$(mech_of t.bin)" = perf_event ] || ctol=10
    "$CHECK" shares t.bin "$DIR/out" 5 $ctol || exit 1
    "$BIN/sprof-trace" dump t.bin | grep -q 'THREAD .* name=worker-3' || die "thread names not recorded"
    ;;
fibers|fibers_cpuclock)
    extra=; [ "$TEST" = fibers_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin SPROF_HZ=10000 $extra -- fibers 3 || die "fiber program crashed or failed"
    cat "$DIR/out"
    "$CHECK" valid t.bin 20 end || exit 1
    ;;
deep|deep_cpuclock)
    extra=; [ "$TEST" = deep_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin $extra -- deep 1.5 || die "program failed"
    "$CHECK" depth t.bin 51 80 || exit 1
    ;;
frameless|frameless_cpuclock)
    extra=; [ "$TEST" = frameless_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin $extra -- frameless 1.5 || die "program failed"
    "$CHECK" cand t.bin "$DIR/out" leaf 90 || exit 1
    ;;
memcmp|memcmp_cpuclock)
    extra=; [ "$TEST" = memcmp_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin $extra -- memcmp 1.5 || die "program failed"
    "$CHECK" cand t.bin "$DIR/out" libc 90 || exit 1
    ;;
longcall_cpuclock)
    # system calls of milliseconds (mmap populating 32 MiB, its munmap) after
    # 2 ms of compute: the pacer's signal waits in them for their return.
    # Their CPU must be in the trace (before: 11.7 % of the run's CPU in any
    # sample, the rest carried and never charged) and as those calls
    # (before: 1.9 % against a truth of 86 %; 76-78 % while the part of a
    # call before the pacer's send went with the user time; 83-85 % since,
    # loaded by two busy loops 82.7-84.1), and the draws due in them are no
    # debt forgiven.
    run SPROF_OUT=t.bin SPROF_HZ=1000 SPROF_TIMER=cpuclock -- longcall 1 || die "program failed"
    "$BIN/sprof-trace" info t.bin > info.txt 2>/dev/null || die "trace does not read back"
    cat info.txt
    "$CHECK" mech t.bin cpuclock_paced || exit 1
    cover=$(sed -n 's/^weights cover: *\([0-9.]*\)%.*/\1/p' info.txt)
    awk -v c="$cover" 'BEGIN { exit !(c >= 95) }' || die "the samples cover ${cover:-?} % of the CPU (>= 95 wanted)"
    "$BIN/sprof-symmap" "$PROG" -o p.symmap --quiet 2> /dev/null || die "sprof-symmap failed"
    "$BIN/sprof-fold" --weight=cpu t.bin p.symmap > folded 2> /dev/null || die "sprof-fold failed"
    truth=$(awk '$1 == "longcall" { printf "%.2f", 100 * $2 / $3 }' "$DIR/out")
    got=$(awk '{ c = $NF; a += c; if ($0 ~ /\[syscall m(un)?map\]/) k += c } END { if (a) printf "%.2f", 100 * k / a }' folded)
    echo "calls: $got % of the CPU weight, truth $truth %"
    awk -v g="$got" -v t="$truth" 'BEGIN { d = g - t; exit !(g != "" && t != "" && d > -6 && d < 5) }' ||
        die "the calls read ${got:-?} % of the CPU, truth ${truth:-?} %"
    lost=$(sed -n 's/^lost signals: *\([0-9]*\).*/\1/p' info.txt)
    [ "${lost:-0}" -le 10 ] || die "$lost draws forgiven"
    ;;
malloc|malloc_cpuclock)
    extra=; [ "$TEST" = malloc_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin $extra -- malloc 1.5 || die "program failed"
    "$CHECK" cand t.bin "$DIR/out" libc 70 || exit 1
    ;;
fork)
    run 'SPROF_OUT=t.%p.bin' -- fork 1 || die "program failed"
    child=$(sed -n 's/^child //p' "$DIR/out")
    parent=$(ls t.*.bin | sed 's/^t\.\([0-9]*\)\.bin$/\1/' | grep -v "^$child\$")
    [ -f "t.$child.bin" ] || die "no child trace t.$child.bin"
    [ -n "$parent" ] && [ -f "t.$parent.bin" ] || die "no parent trace"
    "$CHECK" valid "t.$parent.bin" 20 end "$parent" || exit 1
    "$CHECK" valid "t.$child.bin" 20 end "$child" || exit 1
    [ "$(ls | wc -l)" -eq 3 ] || die "unexpected files: $(ls)"
    # without %p the child must not write at all (it runs unprofiled)
    rm -f t.*.bin
    run SPROF_OUT=one.bin -- fork 1 || die "program failed"
    "$CHECK" valid one.bin 20 end || exit 1
    child=$(sed -n 's/^child //p' "$DIR/out")
    "$BIN/sprof-trace" dump one.bin | grep -q "SAMPLE tid=$child " && die "child samples in the parent's file"
    [ "$(ls | grep -v '^out$' | wc -l)" -eq 1 ] || die "unexpected files: $(ls)"
    ;;
fork_exec)
    # the child exec()s at once: no file for the pre-exec child, a clean trace
    # (with END) for the image it runs, under the same %p name
    run 'SPROF_OUT=t.%p.bin' -- fork_exec 1 2> err || die "program failed"
    child=$(sed -n 's/^child //p' "$DIR/out")
    [ -f "t.$child.bin" ] || die "no trace for the exec()ed child"
    "$CHECK" valid "t.$child.bin" 20 end "$child" || exit 1
    "$BIN/sprof-trace" info "t.$child.bin" | grep -q "executable: .*rt_prog" || die "child trace is not the new image's"
    [ "$(ls t.*.bin | wc -l)" -eq 2 ] || die "unexpected files: $(ls)"
    grep -q "exists" err && die "exec()ed image found its file taken: $(cat err)"
    ;;
exec)
    # exec without fork: the previous image's file is kept as .pre-exec
    run 'SPROF_OUT=t.%p.bin' -- exec 0.5 2> err || die "program failed"
    f=$(ls t.*.bin)
    [ -f "$f.pre-exec" ] || die "no .pre-exec file: $(ls)"
    "$CHECK" valid "$f" 10 end || exit 1
    "$CHECK" valid "$f.pre-exec" 10 any || exit 1
    grep -q "before exec; kept as" err || die "no note about the kept file: $(cat err)"
    # an exec chain of three images: each earlier trace is kept under its own
    # name, none replaced (.pre-exec, then .pre-exec.2)
    rm -f t.*
    run 'SPROF_OUT=t.%p.bin' -- exec 0.3 2 2> err || die "program failed"
    f=$(ls t.*.bin)
    [ -f "$f.pre-exec" ] && [ -f "$f.pre-exec.2" ] || die "exec chain: earlier traces not all kept: $(ls)"
    "$CHECK" valid "$f" 5 end || exit 1
    "$CHECK" valid "$f.pre-exec" 5 any || exit 1
    "$CHECK" valid "$f.pre-exec.2" 5 any || exit 1
    [ "$(grep -c 'before exec; kept as' err)" -eq 2 ] || die "exec chain: expected two notes: $(cat err)"
    ;;
underscore_exit)
    # _exit skips destructors: the runtime's _exit wrapper still ends the
    # trace with END; the vfork child's own _exit halfway must not end the
    # parent's profile (the second half is sampled too: rate within 30 %)
    run SPROF_OUT=t.bin SPROF_HZ=1000 -- underscore_exit 1 || die "program failed"
    "$CHECK" valid t.bin 100 end || exit 1
    "$CHECK" rate t.bin "$DIR/out" 1000 30 || exit 1
    ;;
kill9)
    if [ -n "$PRELOAD" ]; then
        SPROF_OUT=t.bin LD_PRELOAD="$PRELOAD" "$PROG" spin 30 > out &
    else
        SPROF_OUT=t.bin "$PROG" spin 30 > out &
    fi
    pid=$!
    i=0
    while [ $i -lt 200 ]; do
        sz=$(stat -c %s t.bin 2>/dev/null || echo 0)
        [ "$sz" -gt 20000 ] && break
        sleep 0.05
        i=$((i + 1))
    done
    kill -9 $pid
    wait $pid 2>/dev/null
    "$CHECK" valid t.bin 10 truncated || exit 1
    "$BIN/sprof-trace" info t.bin >/dev/null || die "sprof-trace info failed on the cut file"
    ;;
disabled)
    run -- tasks || die "program failed"
    grep -q '^tasks 1$' out || die "threads were started: $(cat out)"
    [ "$(ls | grep -v '^out$' | wc -l)" -eq 0 ] || die "files were created: $(ls)"
    # SPINEL_PROFILE=0 is off too
    run SPINEL_PROFILE=0 -- tasks || die "program failed"
    grep -q '^tasks 1$' out || die "threads were started with SPINEL_PROFILE=0"
    # enabled: writer thread present, ./<exe>.trace written
    run SPINEL_PROFILE=1 -- tasks || die "program failed"
    exe=$(basename "$PROG")
    [ -f "$exe.trace" ] || die "SPINEL_PROFILE=1 did not write ./$exe.trace"
    "$CHECK" valid "$exe.trace" 0 end || exit 1
    ;;
exists)
    echo keep > t.bin
    run SPROF_OUT=t.bin -- spin 0.2 2> err || die "program failed"
    [ "$(cat t.bin)" = keep ] || die "existing file clobbered"
    grep -q "exists" err || die "no warning: $(cat err)"
    ln -s "$DIR/victim" link.bin
    run SPROF_OUT=link.bin SPROF_OVERWRITE=1 -- spin 0.2 2> err || die "program failed"
    [ ! -e victim ] || die "followed a symlink"
    [ ! -L link.bin ] || die "symlink still there"
    "$CHECK" valid link.bin 1 end || exit 1
    [ "$(stat -c %a link.bin)" = 600 ] || die "mode is not 0600"
    ;;
badfp|badfp_cpuclock)
    extra=; [ "$TEST" = badfp_cpuclock ] && extra=SPROF_TIMER=cpuclock
    run SPROF_OUT=t.bin SPROF_HZ=10000 $extra -- badfp 2 || die "program crashed with a corrupt frame chain"
    "$CHECK" valid t.bin 20 end || exit 1
    "$BIN/sprof-trace" info t.bin | grep samples
    ;;
dlopen)
    run SPROF_OUT=t.bin -- dlopen 1 || die "program failed"
    "$CHECK" valid t.bin 1 end || exit 1
    "$BIN/sprof-trace" dump t.bin | grep -q 'MAPPING .*libz\.so' || die "no MAPPING for the dlopen()ed libz"
    ;;
crash_segv|crash_abort)
    sig=${TEST#crash_}
    run SPROF_OUT=t.bin -- crash 0.5 $sig
    rc=$?
    want=139; [ $sig = abort ] && want=134
    [ $rc -eq $want ] || die "exit status $rc, expected $want (the default action of the signal)"
    "$CHECK" valid t.bin 5 end || exit 1
    ;;
sigprof)
    run SPROF_OUT=t.bin -- sigprof 1 || die "program lost its own SIGPROF handler"
    cat out
    "$CHECK" valid t.bin 20 end || exit 1
    ;;
noperf_rate|noperf_threads4|noperf_wall)
    # perf_event_open refused (seccomp, EACCES): the default must fall back
    pre=${PRELOAD:--}
    case $TEST in
    noperf_rate) SPROF_OUT=t.bin "$BIN/rt_noperf" "$pre" "$PROG" spin 0.6 1 cpu > out 2> err || die "program failed"
        "$CHECK" mech t.bin cpuclock_paced || exit 1
        "$CHECK" rate t.bin out 1000 30 || exit 1 ;;
    noperf_threads4) SPROF_OUT=t.bin "$BIN/rt_noperf" "$pre" "$PROG" spin 2 4 > out 2> err || die "program failed"
        "$CHECK" mech t.bin cpuclock_paced || exit 1
        "$CHECK" shares t.bin out 5 10 || exit 1 ;;
    noperf_wall) SPROF_OUT=t.bin SPROF_MODE=wall "$BIN/rt_noperf" "$pre" "$PROG" sleep 1 > out 2> err || die "program failed"
        "$CHECK" mech t.bin wall || exit 1
        "$CHECK" valid t.bin 100 end || exit 1 ;;
    esac
    [ -s err ] && { echo "stderr:"; cat err; }
    ;;
reader)
    # hostile and cut files: one line "<file>: <problem>", exit 1; a cut tail is not an error
    run SPROF_OUT=t.bin -- spin 0.3 || die "program failed"
    T="$BIN/sprof-trace"
    "$T" info t.bin > /dev/null || die "info failed on a good file"
    "$T" dump t.bin | tail -1 | grep -q ' END$' || die "dump does not end with END"
    printf 'NOTATRACE-------' > bad1.bin
    head -c 10 t.bin > bad2.bin
    # a record header claiming 12 bytes (not a multiple of 8) right after the file header
    { head -c 16 t.bin; printf '\001\000\000\000\014\000\000\000'; } > bad3.bin
    : > empty.bin
    for f in bad1.bin bad2.bin bad3.bin empty.bin missing.bin; do
        "$T" dump "$f" > o 2> e && die "$f accepted"
        [ "$(wc -l < e)" -eq 1 ] || die "$f: expected one error line, got: $(cat e)"
        grep -q "^sprof-trace: $f: " e || die "$f: error does not name the file: $(cat e)"
    done
    size=$(stat -c %s t.bin)
    for cut in 20 100 $((size / 2)) $((size - 5)); do
        head -c $cut t.bin > cut.bin
        "$T" dump cut.bin > o 2> e || die "cut at $cut rejected: $(cat e)"
        tail -1 o | grep -q truncated || die "cut at $cut not reported as truncated"
    done
    ;;
wall_signal)
    run SPROF_OUT=t.bin SPROF_MODE=wall SPROF_TIMER=cpuclock -- sleep 1.5 || die "program failed"
    "$CHECK" mech t.bin wall || exit 1
    cat out
    "$BIN/sprof-trace" dump t.bin | grep -q 'flags=offcpu' || die "no off-CPU samples"
    "$BIN/sprof-trace" dump t.bin | grep 'SAMPLE' | grep -vq 'offcpu' || die "no on-CPU samples"
    "$CHECK" valid t.bin 100 end || exit 1
    ;;
wall)
    run SPROF_OUT=t.bin SPROF_MODE=wall -- sleep 1.5 || die "program failed"
    "$BIN/sprof-trace" info t.bin
    m=$(mech_of t.bin)
    if [ "$m" = wall_perf ]; then
        grep -q '^eintr 0$' out || die "EINTR seen in wall_perf mode: $(cat out)"
    fi
    "$BIN/sprof-trace" dump t.bin | grep -q 'flags=offcpu' || die "no off-CPU samples"
    "$CHECK" valid t.bin 100 end || exit 1
    ;;
*)
    echo "unknown test $TEST" >&2
    exit 2
    ;;
esac
exit 0
