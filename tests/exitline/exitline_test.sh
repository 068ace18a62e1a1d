#!/bin/sh
# The runtime's one line on stderr at exit, and how `sprof-trace info` names
# the same problems (docs/runtime.md, "The exit line").
# Usage: exitline_test.sh CASE FORM
#   CASE: good | quiet | empty | diskfull | fsize | taken | taken_tick | blocked | reuse2 | rawexit
#         | go_taken (preload only: exit_prog_go, marked as a Go executable)
#   FORM: preload (exit_prog + LD_PRELOAD=libsprof.so) | static (exit_prog_static)
# Exit 77 (skipped) for diskfull when not root (it mounts a 64 KiB tmpfs).
# Env from ctest: SPROF_BIN, SPROF_LIB.
set -u
CASE=$1 FORM=$2
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-exitline-XXXXXX")
DIR=$(cd "$DIR" && pwd -P) # the exit line names the file by its real full name
MNT=
cleanup() { [ -n "$MNT" ] && umount "$MNT" 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT
cd "$DIR" || exit 2

fail() { echo "FAIL: $CASE/$FORM: $*" >&2; sed 's/^/  stderr: /' err >&2 2>/dev/null; exit 1; }

# run ENV... -- ARGS: exit_prog with the profiler, stdout in out, stderr in err
run() {
    env_args=
    while [ "$1" != -- ]; do env_args="$env_args $1"; shift; done
    shift
    prog=$BIN/exit_prog
    [ "$CASE" = go_taken ] && prog=$BIN/exit_prog_go
    if [ "$FORM" = preload ]; then
        env $env_args LD_PRELOAD="$LIB/libsprof.so" "$prog" "$@" > out 2> err
    else
        env $env_args "$BIN/exit_prog_static" "$@" > out 2> err
    fi
}

# the program's own output is untouched and stderr holds exactly one line,
# from sprof, naming the trace by its full name
one_line() {
    [ "$(cat out)" = ok ] || fail "stdout changed: $(cat out)"
    [ "$(wc -l < err)" -eq 1 ] || fail "expected one line on stderr, got $(wc -l < err)"
    grep -q "^sprof: $DIR/$1: [0-9]* samples, [0-9.]* Hz of 1000 asked ([a-z_]*), [0-9.]* \(bytes\|KiB\|MiB\)" err ||
        fail "exit line does not say where, samples, rate, mechanism, size: $(cat err)"
    echo "exit line: $(cat err)"
}

# named LINE_RE INFO_RE ENV... -- ARGS: a run into t.bin whose problem both
# the exit line and sprof-trace info name
named() {
    line_re=$1 info_re=$2
    shift 2
    run SPROF_OUT=t.bin "$@" || fail "program failed"
    one_line t.bin
    grep -q "$line_re" err || fail "the exit line does not say '$line_re'"
    info_has t.bin "$info_re"
}

info_has() {
    "$BIN/sprof-trace" info "$1" > info.txt 2>&1 || fail "sprof-trace info failed: $(cat info.txt)"
    grep -q "$2" info.txt || { cat info.txt >&2; fail "sprof-trace info does not say '$2'"; }
}

case $CASE in
good)
    run SPROF_OUT=t.bin -- spin 0.3 || fail "program failed"
    one_line t.bin
    grep -q "WRITE\|SIGNAL\|NO SAMPLES\|dropped" err && fail "a good run reports a problem"
    info_has t.bin '^ended: *exit (clean)'
    info_has t.bin '^problems: *none recorded'
    ;;
quiet)
    run SPROF_OUT=t.bin SPROF_QUIET=1 -- spin 0.2 || fail "program failed"
    [ -s err ] && fail "SPROF_QUIET=1 but stderr is not empty"
    info_has t.bin '^ended: *exit (clean)'
    ;;
empty)
    # 100 Hz: a 10 ms period, far above what starting a process costs
    run SPROF_OUT=t.bin SPROF_HZ=100 -- empty || fail "program failed"
    [ "$(cat out)" = ok ] || fail "stdout changed: $(cat out)"
    [ "$(wc -l < err)" -eq 1 ] || fail "expected one line on stderr"
    grep -q "^sprof: $DIR/t.bin: 0 samples, 0.0 Hz of 100 asked" err || fail "exit line: $(cat err)"
    grep -q ": 0 samples, .*NO SAMPLES: the program ran [0-9.]* ms of CPU, less than one sampling period" err ||
        fail "the empty run is not named"
    info_has t.bin 'NO SAMPLES: the program ran .* less than one sampling period'
    ;;
diskfull)
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: diskfull needs root (mount -t tmpfs)"; exit 77; }
    mkdir fs && mount -t tmpfs -o size=64k sprof-exitline fs 2>/dev/null || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
    MNT=$DIR/fs
    # the file system fills up during the run: 4 KiB are left, which the
    # trace's start (~1.5 KiB) and ~150 samples (format 2.0: ~12-16 bytes
    # each) fill; 0.6 s at 1 kHz writes ~9 KiB
    dd if=/dev/zero of=fs/fill bs=4k count=15 2>/dev/null
    run SPROF_OUT=fs/t.bin -- spin 0.6 || fail "program failed"
    one_line fs/t.bin
    grep -q "WRITE FAILED: disk full (ENOSPC), the trace ends after" err || fail "disk full not named"
    info_has fs/t.bin 'WRITE FAILED: disk full (ENOSPC)'
    "$BIN/sprof-trace" dump fs/t.bin | tail -1 | grep -q ' END$' || fail "no END after the cut"
    # already full when the run starts: the empty file is named too
    rm -f fs/t.bin
    dd if=/dev/zero of=fs/fill bs=4k 2>/dev/null
    run SPROF_OUT=fs/z.bin -- spin 0.1 || fail "program failed on a full file system"
    one_line fs/z.bin
    grep -q "WRITE FAILED: disk full (ENOSPC), nothing recorded: the file is empty" err || fail "full file system not named"
    "$BIN/sprof-trace" info fs/z.bin > info.txt 2>&1 && fail "an empty file read as a trace"
    grep -q "empty (0 bytes): the runtime could not write" info.txt || fail "info on the empty file: $(cat info.txt)"
    ;;
fsize)
    # RLIMIT_FSIZE: the runtime stops at the limit (no SIGXFSZ for the
    # program: "program failed" would say it was killed)
    ulimit -f 8 # 4 KiB: the trace's start and ~150 samples; 0.6 s at 1 kHz writes ~9 KiB
    named "WRITE FAILED: file size limit reached (EFBIG" 'WRITE FAILED: file size limit reached (EFBIG' -- spin 0.6
    ;;
taken)
    # the cpuclock fallback's signal taken over (as a Go runtime does)
    named "SIGNAL TAKEN: the program installed its own handler for sprof's signal" 'SIGNAL TAKEN' \
        SPROF_TIMER=cpuclock -- take 0.4
    ;;
taken_tick)
    # the default mechanism with the tick kernel sampler: only its signal is
    # taken (kernel-time samples stop); where perf_event is refused, cpuclock's
    kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
    [ "$kv" -ge 5011 ] || { echo "SKIP: no tick kernel sampler before Linux 5.11"; exit 77; }
    named "SIGNAL TAKEN: the program installed its own handler for sprof's signal [0-9]*, \(kernel-time samples\|sampling\) stopped there" \
        'SIGNAL TAKEN' SPROF_KERNEL=tick -- take 0.4
    ;;
blocked)
    named "SIGNAL BLOCKED: the program blocked sprof's signal" 'SIGNAL BLOCKED' SPROF_TIMER=cpuclock -- block 0.4
    ;;
reuse2)
    # the program closed stderr and its own file took descriptor 2: the
    # exit line must not go into that file
    run SPROF_OUT=t.bin -- reuse2 0.2 || fail "program failed"
    [ "$(cat own.txt)" = mine ] || fail "the program's own file changed: $(cat own.txt)"
    info_has t.bin '^ended: *exit (clean)'
    ;;
rawexit)
    # exit_group straight from the program: no sprof code runs, so no exit
    # line; the reader tells this ending from a clean one and names it
    run SPROF_OUT=t.bin -- rawexit 0.3 || fail "program failed"
    [ "$(cat out)" = ok ] || fail "stdout changed"
    info_has t.bin 'no END record: the process ended without running sprof.s exit code: .*raw exit_group'
    info_has t.bin '^ended: *without END'
    ;;
go_taken)
    # a Go runtime takes every signal and leaves through exit_group: no exit
    # line can come, so the runtime says so at start and names the stolen
    # signal when it notices; STATS in the trace records it too
    run SPROF_OUT=t.bin SPROF_TIMER=cpuclock -- take 0.4 || fail "program failed"
    [ "$(cat out)" = ok ] || fail "stdout changed"
    [ "$(wc -l < err)" -eq 2 ] || fail "expected the start line and the problem line"
    grep -q "^sprof: profiling into t.bin (cpuclock); a Go program ends without running sprof's exit code" err ||
        fail "no start line for a Go program"
    grep -q "^sprof: t.bin: SIGNAL TAKEN: the program installed its own handler for sprof's signal" err ||
        fail "stolen signal not named at once"
    info_has t.bin 'SIGNAL TAKEN'
    info_has t.bin 'no END record: .*raw exit_group'
    ;;
*) echo "unknown case $CASE" >&2; exit 2 ;;
esac
echo "PASS: $CASE/$FORM"
