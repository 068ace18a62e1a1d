#!/bin/sh
# Fibers end to end: ucontext fibers on mmap'd stacks (entry
# sp_fiber_trampoline, base __start_context) do the CPU work under the real
# runtime; sprof-fold must root every fiber sample at [Fiber] directly
# above the fiber body, with no stale chain back into main, and count them
# complete: under perf_event the stale chain's records are on the thread's
# stack, beyond the fiber stack's copy (STACK_CUT), and 96 % of the samples
# were said to be incomplete for that.
# Usage: test_fibers.sh [TIMER]
set -u
TIMER=${1:-}
PROG="$SPROF_BUILD/tests/fold/fold_fibers"
d=$(mktemp -d /tmp/sprof-fold-fib-XXXXXX)
trap 'rm -rf "$d"' EXIT
env SPROF_OUT="$d/t.trace" ${TIMER:+SPROF_TIMER=$TIMER} LD_PRELOAD="$SPROF_LIB/libsprof.so" "$PROG" 1.5 >/dev/null \
  || { echo "FAIL: program failed"; exit 1; }
"$SPROF_BIN/sprof-symmap" "$PROG" -o "$d/p.symmap" --quiet || { echo "FAIL: sprof-symmap"; exit 1; }
"$SPROF_BIN/sprof-fold" "$d/t.trace" "$d/p.symmap" -o "$d/out.folded" 2>"$d/stats" || { cat "$d/stats"; echo "FAIL: sprof-fold"; exit 1; }
cat "$d/stats"
awk '
  { count = $NF; total += count; line = $0; sub(/ [0-9]+$/, "", line)
    # a kernel-time sample (trace format 1.1) has its synthetic leaf on top
    if (line ~ /fiber_work/) { work += count; if (line !~ /^\[Fiber\];fiber_body;fiber_work(;\[(syscall|syscall [a-z0-9_]+|page fault|kernel)\])?$/) { bad++; print "  misrooted: " line " " count } }
    if (line ~ /\[Fiber\]/ && line ~ /(^|;)main(;|$)/) { bad++; print "  stale chain into main: " line }
    if (line ~ /^\[Fiber\]/) fiber += count }
  END {
    printf "%d samples, %d in fiber_work, %d rooted at [Fiber]\n", total, work, fiber
    if (bad || total == 0 || fiber < 0.9 * total) exit 1
  }' "$d/out.folded" || { echo "FAIL: fiber samples not rooted at [Fiber]"; exit 1; }
c=$(sed -n 's/.* \([0-9.]*\)% complete$/\1/p' "$d/stats")
awk -v c="${c:-0}" 'BEGIN { exit !(c >= 99) }' || { echo "FAIL: ${c:-?}% complete (want >= 99)"; exit 1; }
echo ok
