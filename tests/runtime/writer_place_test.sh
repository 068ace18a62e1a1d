#!/bin/sh
# Where the writer runs (docs/runtime.md, "Where sprof's threads run"): on
# the CPU of the thread it drains most, under perf_event and the cpuclock
# fallback; wherever the scheduler puts it with SPROF_WRITER=remote; never
# beside a thread under a real-time policy (that part needs chrt and the
# right to use SCHED_FIFO, else it is left out). The program's thread is
# pinned to one CPU (the last one it may use) so that where it runs is
# known; the writer's allowed CPUs are read from /proc while it runs.
# Needs 2 CPUs.
set -eu
BIN=${SPROF_BIN:?run through ctest}
LIB=${SPROF_LIB:?run through ctest}
command -v taskset >/dev/null 2>&1 || { echo "SKIP: no taskset"; exit 77; }
cpus=$(taskset -c -p $$ | sed 's/.*: //')
last=$(echo "$cpus" | tr ',' '\n' | sed 's/.*-//' | tail -1)
[ "$(nproc)" -ge 2 ] || { echo "SKIP: one CPU"; exit 77; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-writer-place.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

# writer_cpus TIMER WRITER [WRAPPER...]: the writer's Cpus_allowed_list
# in a 2.5 s spin whose thread is pinned to $last 0.3 s in (the writer,
# started before, keeps the affinity it was started with)
writer_cpus() {
    timer=$1 writer=$2
    shift 2
    rm -f "$DIR/t.bin"
    "$@" env SPROF_TIMER=$timer SPROF_WRITER=$writer SPROF_HZ=1000 SPROF_QUIET=1 \
        SPROF_OUT="$DIR/t.bin" LD_PRELOAD="$LIB/libsprof.so" "$BIN/rt_prog" spin 2.5 >/dev/null &
    pid=$!
    sleep 0.3
    taskset -p -c "$last" $pid >/dev/null
    sleep 1
    got=
    for t in /proc/$pid/task/*; do
        [ "$(cat "$t/comm" 2>/dev/null)" = sprof-writer ] && got=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")
    done
    wait $pid
    echo "${got:-none}"
}

fail=0
for timer in perf_event cpuclock; do
    w=$(writer_cpus $timer local)
    echo "$timer local: program on CPU $last, writer allowed on $w"
    [ "$w" = "$last" ] || { echo "FAIL: $timer: the writer is not on the program's CPU"; fail=1; }
    w=$(writer_cpus $timer remote)
    echo "$timer remote: writer allowed on $w"
    [ "$w" != "$last" ] || { echo "FAIL: $timer: SPROF_WRITER=remote pinned the writer"; fail=1; }
done
if command -v chrt >/dev/null 2>&1 && chrt -f 1 true 2>/dev/null; then
    w=$(writer_cpus perf_event local chrt -f 1)
    echo "SCHED_FIFO program: writer allowed on $w"
    [ "$w" != "$last" ] || { echo "FAIL: the writer was pinned beside a real-time thread"; fail=1; }
else
    echo "(SCHED_FIFO not allowed here: the real-time case is left out)"
fi
[ $fail = 0 ] && echo ok
exit $fail
