#!/usr/bin/env bash
# The signal handler walks a fiber's frame records and stops at the fiber's
# outermost one, whose link is its creator's stale rbp (makecontext keeps
# what getcontext saved): before, that link read as a broken chain, the
# handler scanned and probed a 64 KiB window on every fiber sample, and
# the step it landed in ran measurably slower (acc_fibers: 755 of 764
# fiber samples unwalked). Env: SPROF_BIN, SPROF_LIB (as ctest sets them).
set -u
bin=${SPROF_BIN:?} lib=${SPROF_LIB:?}
work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-fiberwalk-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
SPROF_OUT="$work/t.bin" SPROF_HZ=4000 SPROF_TIMER=cpuclock LD_PRELOAD="$lib/libsprof.so" \
    "$bin/acc_fibers" quick >"$work/out" 2>"$work/err" || { cat "$work/err"; echo "FAIL: acc_fibers failed"; exit 1; }
"$bin/sprof-trace" dump "$work/t.bin" >"$work/dump" || { echo "FAIL: sprof-trace dump failed"; exit 1; }
read -r unwalked total < <(awk '/^[0-9]+ SAMPLE/ && / flags=[^ ]*off_stack/ {
    for (i = 1; i <= NF; i++) if ($i ~ /^frames=/) { n++; if ($i == "frames=0:") z++ } }
    END { print z + 0, n + 0 }' "$work/dump")
echo "fiber samples: $total, unwalked (no frame record found): $unwalked"
[ "$total" -ge 100 ] || { echo "FAIL: only $total samples on the fibers' stacks"; exit 1; }
[ $((unwalked * 20)) -le "$total" ] || { echo "FAIL: more than 5 % of the fiber samples unwalked"; exit 1; }
echo PASS
