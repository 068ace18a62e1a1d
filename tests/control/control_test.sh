#!/bin/sh
# Recording control tests. Usage: control_test.sh CASE FORM MECH
#   CASE: toggle | taken_at_start | taken_later | window | stay_paused | badenv | rotate_time | rotate_size
#   FORM: preload (ctl_prog + LD_PRELOAD=libsprof.so), static (ctl_prog_static)
#         or tsan (ctl_prog_tsan: runtime and program built with
#         -fsanitize=thread, linked; tests/tsan, -DSPROF_TSAN=ON)
#   MECH: perf_event | cpuclock (SPROF_TIMER); perf_event refused here: skip (77)
# Env from ctest: SPROF_BIN, SPROF_LIB. Phases are wall-clock times with
# 0.3 s or more between a control event and the next phase, so that the
# writer's pass (at most 100 ms apart) sees it in time on a loaded machine.
set -u
CASE=$1
FORM=$2
MECH=$3
BIN=${SPROF_BIN:?}
LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-ctl-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2

TSAN=
if [ "$FORM" = preload ]; then
    PROG="$BIN/ctl_prog"
    PRELOAD="$LIB/libsprof.so"
elif [ "$FORM" = tsan ]; then
    PROG="$BIN/ctl_prog_tsan"
    PRELOAD=
    TSAN="TSAN_OPTIONS=${TSAN_OPTIONS:-die_after_fork=0:second_deadlock_stack=1}"
else
    PROG="$BIN/ctl_prog_static"
    PRELOAD=
fi

die() { echo "FAIL: $*" >&2; for f in out err info.txt fold.txt; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done; exit 1; }

# run ENV... -- STEPS: the program under the profiler, stdout in out, stderr in err
run() {
    env_args="SPROF_OUT=t.bin SPROF_TIMER=$MECH $TSAN"
    while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
    shift
    if [ -n "$PRELOAD" ]; then
        env $env_args LD_PRELOAD="$PRELOAD" "$PROG" "$@" > out 2> err
    else
        env $env_args "$PROG" "$@" > out 2> err
    fi
    rc=$?
    if grep -q ThreadSanitizer err; then echo "FAIL: ThreadSanitizer report" >&2; cat err >&2; exit 1; fi
    return $rc
}

# samples with FUNCTION on the stack, from sprof-fold (native names from the
# ELF; under TSan the leaf is often its instrumentation)
leaf_count() {
    awk -v f="$1" '{ n = split($1, fr, ";"); for (i = 1; i <= n; i++) if (fr[i] == f) { c += $NF; break } }
                   END { print c + 0 }' fold.txt
}

# the trace FILE (t.bin) is valid and readable, ended as ENDED (exit);
# fold.txt and info.txt filled
read_trace() {
    f=${1:-t.bin}
    "$BIN/sprof-trace" info "$f" > info.txt 2>&1 || die "sprof-trace info $f failed"
    "$BIN/sprof-fold" "$f" > fold.txt 2>> info.txt || die "sprof-fold $f failed"
    grep -q "^ended: *${2:-exit} (clean" info.txt || die "$f not ended as ${2:-exit}"
    got=$(sed -n 's/^mechanism: *//p' info.txt)
    want=$MECH
    [ "$MECH" = cpuclock ] && want=cpuclock_paced
    if [ "$got" != "$want" ]; then
        echo "SKIP: $MECH not available here (got $got)"
        exit 77
    fi
}

# weights cover PCT% of the recorded CPU: paused CPU is not counted as unsampled
coverage_ok() {
    # under TSan the program's signals are deferred to its own system-call
    # returns, where the cpuclock pacer carries their CPU on (tests/tsan):
    # placement is not what those cells check
    [ "$FORM" = tsan ] && return 0
    pct=$(sed -n 's/^weights cover: *\([0-9.]*\)%.*/\1/p' info.txt)
    [ -n "$pct" ] && awk -v p="$pct" 'BEGIN { exit !(p >= 70 && p <= 130) }' ||
        die "weights cover '$pct'% of the recorded CPU (paused CPU counted?)"
}

paused_seen() {
    grep -q "^paused: *[0-9.]* s of CPU" info.txt || die "no paused CPU in STATS"
}

# A ran WHEN_A, C ran WHEN_C, both unrecorded; B recorded; paused CPU
# in STATS and out of the coverage figure
only_b_recorded() {
    read_trace
    a=$(leaf_count method_a) b=$(leaf_count method_b) c=$(leaf_count method_c)
    echo "method_a $a method_b $b method_c $c"
    [ "$a" -eq 0 ] || die "method_a ran $1 but has $a samples"
    [ "$c" -eq 0 ] || die "method_c ran $2 but has $c samples"
    [ "$b" -ge 20 ] || die "method_b has only $b samples"
    paused_seen
    coverage_ok
}

case "$CASE" in
toggle)
    # A while paused, B after the toggle on, C after the toggle off
    run SPROF_START=paused -- a@0.4 k b@1.2 k s@1.8 c@2.2 || die "program failed"
    only_b_recorded "while paused" "after the toggle off"
    ;;
taken_at_start)
    # SIGUSR2 ignored when the program starts: the program's, never taken
    trap '' USR2
    run SPROF_TOGGLE_SIGNAL=SIGUSR2 -- h k H a@0.4 || die "program failed (its own handler did not run)"
    trap - USR2
    read_trace
    grep -q "handled 1" out || die "the program's handler did not run once"
    grep -q "sprof does not take it" err || die "sprof did not say it left the signal alone"
    a=$(leaf_count method_a)
    [ "$a" -ge 20 ] || die "recording should be on: method_a has $a samples"
    ;;
taken_later)
    # the program installs its own handler after sprof's: its handler runs,
    # sprof steps back (says so), and the signal toggles nothing
    run SPROF_TOGGLE_SIGNAL=USR2 -- a@0.4 h k H b@0.8 || die "program failed (its own handler did not run)"
    read_trace
    grep -q "handled 1" out || die "the program's handler did not run once"
    grep -q "sprof no longer toggles" err || die "sprof did not say it stepped back"
    a=$(leaf_count method_a) b=$(leaf_count method_b)
    [ "$a" -ge 20 ] && [ "$b" -ge 20 ] || die "recording should stay on: method_a $a, method_b $b"
    ;;
window)
    # record from 0.5 s for 0.8 s: only B (0.8..1.3 s) falls in the window
    run SPROF_DELAY=0.5 SPROF_DURATION=0.8 -- a@0.3 s@0.8 b@1.3 s@2.0 c@2.4 || die "program failed"
    only_b_recorded "before SPROF_DELAY" "after SPROF_DURATION"
    ;;
stay_paused)
    # never toggled on: a valid trace without samples, and both the exit
    # line and sprof-trace info say why
    run SPROF_START=paused -- a@0.3 || die "program failed"
    read_trace
    grep -q "NO SAMPLES: recording was paused" err || die "the exit line does not say recording was paused"
    grep -q "NO SAMPLES: recording was paused" info.txt || die "sprof-trace info does not say recording was paused"
    grep -q "^samples: *0 " info.txt || die "samples recorded while paused"
    paused_seen
    ;;
badenv)
    # unusable values: one warning each, and the program is profiled as usual
    run SPROF_TOGGLE_SIGNAL=SIGKILL SPROF_DELAY=soon SPROF_START=later -- a@0.4 || die "program failed"
    read_trace
    grep -q "SPROF_TOGGLE_SIGNAL=SIGKILL is not a signal sprof can use" err || die "no warning for SIGKILL"
    grep -q "SPROF_DELAY=soon is not a number of seconds" err || die "no warning for SPROF_DELAY"
    grep -q "SPROF_START=later unknown" err || die "no warning for SPROF_START"
    a=$(leaf_count method_a)
    [ "$a" -ge 20 ] || die "method_a has only $a samples"
    ;;
rotate_time)
    # a file every 0.3 s for ~2 s, the newest 3 kept; a second thread lives
    # across the rotations: every file is a trace of its own (INFO,
    # MAPPINGs, both THREAD starts, samples, STATS, END)
    run SPROF_ROTATE=0.3 SPROF_ROTATE_KEEP=3 -- t a@2.0 || die "program failed"
    [ ! -e t.bin ] || die "t.bin written besides the numbered files"
    files=$(ls t.bin.* | sort -t. -k3 -n)
    n=$(echo "$files" | wc -l)
    last=$(echo "$files" | tail -1)
    echo "kept: $files"
    [ "$n" -eq 3 ] || die "$n files kept, want 3"
    seq=${last##*.}
    [ "$seq" -ge 5 ] || die "only $seq files written in 2 s at one per 0.3 s"
    for f in $files; do
        end=rotated
        [ "$f" = "$last" ] && end=exit
        read_trace "$f" $end
        grep -q "^threads: *2" info.txt || die "$f: both threads not announced"
        grep -q "^mappings: *[1-9]" info.txt || die "$f: no mappings"
        # the last file may hold only the moments before exit
        [ "$f" = "$last" ] && continue
        a=$(leaf_count method_a) tt=$(leaf_count method_t)
        echo "$f: method_a $a, method_t $tt"
        # both threads sampled in every file (few on a loaded machine: 0.3 s each)
        [ "$a" -ge 1 ] && [ "$tt" -ge 1 ] && [ $((a + tt)) -ge 10 ] || die "$f: method_a $a, method_t $tt samples"
        coverage_ok
    done
    ;;
rotate_size)
    # a file each ~4 KiB: every file but the last reached the size, none
    # is far beyond it (one writer pass of samples at most). 4 KiB, not 8:
    # a loaded CI machine gave the program 0.6 s of CPU in its 1.2 s, whose
    # 618 samples packed into 8,664 bytes, and it exited before the
    # writer's next pass rotated
    run SPROF_ROTATE_SIZE=4k SPROF_ROTATE_KEEP=0 -- a@1.2 || die "program failed"
    files=$(ls t.bin.* | sort -t. -k3 -n)
    n=$(echo "$files" | wc -l)
    [ "$n" -ge 2 ] || die "only $n file for ~1 s at 1 kHz with 4 KiB files"
    last=$(echo "$files" | tail -1)
    for f in $files; do
        size=$(wc -c < "$f")
        [ "$size" -le 131072 ] || die "$f is $size bytes with SPROF_ROTATE_SIZE=4k"
        end=rotated
        [ "$f" = "$last" ] && end=exit
        [ "$f" = "$last" ] || [ "$size" -ge 4096 ] || die "$f rotated at $size bytes, before 4 KiB"
        read_trace "$f" $end
    done
    ;;
*) die "unknown case $CASE" ;;
esac
echo "ok: $CASE $FORM $MECH"
