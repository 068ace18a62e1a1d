#!/bin/sh
# Recording control tests. Usage: control_test.sh CASE FORM MECH
#   CASE: toggle | taken_at_start | taken_later | window | badenv
#   FORM: preload (ctl_prog + LD_PRELOAD=libsprof.so) or static (ctl_prog_static)
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

if [ "$FORM" = preload ]; then
    PROG="$BIN/ctl_prog"
    PRELOAD="$LIB/libsprof.so"
else
    PROG="$BIN/ctl_prog_static"
    PRELOAD=
fi

die() { echo "FAIL: $*" >&2; for f in out err info.txt fold.txt; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done; exit 1; }

# run ENV... -- STEPS: the program under the profiler, stdout in out, stderr in err
run() {
    env_args="SPROF_OUT=t.bin SPROF_TIMER=$MECH"
    while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
    shift
    if [ -n "$PRELOAD" ]; then
        env $env_args LD_PRELOAD="$PRELOAD" "$PROG" "$@" > out 2> err
    else
        env $env_args "$PROG" "$@" > out 2> err
    fi
}

# samples whose leaf is FUNCTION, from sprof-fold (native names from the ELF)
leaf_count() {
    awk -v f="$1" '{ n = split($1, fr, ";"); if (fr[n] == f) c += $NF } END { print c + 0 }' fold.txt
}

# the trace is valid and readable; fold.txt and info.txt filled
read_trace() {
    "$BIN/sprof-trace" info t.bin > info.txt 2>&1 || die "sprof-trace info failed"
    "$BIN/sprof-fold" t.bin > fold.txt 2>> info.txt || die "sprof-fold failed"
    grep -q "^ended: *exit (clean)" info.txt || die "trace not ended cleanly"
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
    pct=$(sed -n 's/^weights cover: *\([0-9.]*\)%.*/\1/p' info.txt)
    [ -n "$pct" ] && awk -v p="$pct" 'BEGIN { exit !(p >= 70 && p <= 130) }' ||
        die "weights cover '$pct'% of the recorded CPU (paused CPU counted?)"
}

paused_seen() {
    grep -q "^paused: *[0-9.]* s of CPU" info.txt || die "no paused CPU in STATS"
}

case "$CASE" in
toggle)
    # A while paused, B after the toggle on, C after the toggle off
    run SPROF_START=paused -- a@0.4 k b@1.0 k s@1.4 c@1.8 || die "program failed"
    read_trace
    a=$(leaf_count method_a) b=$(leaf_count method_b) c=$(leaf_count method_c)
    echo "method_a $a method_b $b method_c $c"
    [ "$a" -eq 0 ] || die "method_a ran while paused but has $a samples"
    [ "$c" -eq 0 ] || die "method_c ran after the toggle off but has $c samples"
    [ "$b" -ge 20 ] || die "method_b has only $b samples"
    paused_seen
    coverage_ok
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
    read_trace
    a=$(leaf_count method_a) b=$(leaf_count method_b) c=$(leaf_count method_c)
    echo "method_a $a method_b $b method_c $c"
    [ "$a" -eq 0 ] || die "method_a ran before SPROF_DELAY but has $a samples"
    [ "$c" -eq 0 ] || die "method_c ran after SPROF_DURATION but has $c samples"
    [ "$b" -ge 20 ] || die "method_b has only $b samples"
    paused_seen
    coverage_ok
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
*) die "unknown case $CASE" ;;
esac
echo "ok: $CASE $FORM $MECH"
