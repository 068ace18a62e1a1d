#!/usr/bin/env bash
# sprof-diff on real traces: the example program (built by the e2e_build
# fixture) and its rebuilt variant (another build-id, addresses may move)
# are each profiled; then
#  - `sprof-diff -b T1 S1 -a T2 S2` joins them by Ruby names: the example's
#    Ruby methods appear with samples on both sides;
#  - its --folded output is identical to diffing the two sides' sprof-fold
#    outputs (one loader, one naming, whatever the input form);
#  - the sample totals equal sprof-fold's;
#  - a trace against the other build's symmap is refused (build-id) unless
#    --force; a trace without its symmap is refused; nothing is written.
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_BUILD:?}"
ex=$SPROF_BUILD/tests/e2e/work
work=$SPROF_BUILD/tests/diff/work
fail() { echo "diff_traces: FAIL: $*" >&2; exit 1; }
[ -x "$ex/app-rt" ] && [ -s "$ex/app-rt.symmap" ] && [ -s "$ex/variant/app-rt.symmap" ] \
  || fail "the example is not built (the e2e_build test sets it up)"
rm -rf "$work"; mkdir -p "$work"

# In sanitizer builds the example is built with ASan; its own runtime leaks a
# thread struct now and then, which is not what this test is about.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
SPROF_OUT="$work/before.bin" SPROF_HZ=500 SPROF_EXAMPLE_SPLIT="$work/split1.txt" "$ex/app-rt" 0.6
SPROF_OUT="$work/after.bin" SPROF_HZ=500 SPROF_EXAMPLE_SPLIT="$work/split2.txt" "$ex/variant/app-rt" 0.6
unset ASAN_OPTIONS # the sprof tools themselves run with leak checks

diff_tool=$SPROF_BIN/sprof-diff
"$diff_tool" -b "$work/before.bin" "$ex/app-rt.symmap" -a "$work/after.bin" "$ex/variant/app-rt.symmap" \
  >"$work/table.txt" 2>"$work/table.err" || { cat "$work/table.err" >&2; fail "diff of two traces failed"; }
cat "$work/table.txt"
"$diff_tool" --json -b "$work/before.bin" "$ex/app-rt.symmap" -a "$work/after.bin" "$ex/variant/app-rt.symmap" \
  >"$work/table.json"
"$diff_tool" --folded -b "$work/before.bin" "$ex/app-rt.symmap" -a "$work/after.bin" "$ex/variant/app-rt.symmap" \
  >"$work/traces.diff"

# sample counts: what sprof-diff compares (sprof-fold defaults to CPU time)
"$SPROF_BIN/sprof-fold" --weight=samples "$work/before.bin" "$ex/app-rt.symmap" -o "$work/before.folded"
"$SPROF_BIN/sprof-fold" --weight=samples "$work/after.bin" "$ex/variant/app-rt.symmap" -o "$work/after.folded"
"$diff_tool" --folded "$work/before.folded" "$work/after.folded" >"$work/folded.diff"
cmp -s "$work/traces.diff" "$work/folded.diff" \
  || { diff "$work/traces.diff" "$work/folded.diff" | head -20 >&2; fail "--folded differs between trace and folded inputs"; }

python3 - "$work" <<'EOF'
import json, sys
work = sys.argv[1]
j = json.load(open(work + "/table.json"))
tot = lambda p: sum(int(l.rsplit(" ", 1)[1]) for l in open(p) if l.strip())
nb, na = tot(work + "/before.folded"), tot(work + "/after.folded")
assert j["before"]["samples"] == nb and j["after"]["samples"] == na, (j["before"], j["after"], nb, na)
assert nb > 50 and na > 50, "too few samples: %d %d" % (nb, na)
rows = {r["name"]: r for r in j["rows"]}
for m in ("Simulation#step", "Indexer#tokenize"):
    assert m in rows, "%s missing from the table: %s" % (m, sorted(rows)[:20])
    assert rows[m]["total"]["before"] > 0 and rows[m]["total"]["after"] > 0, rows[m]
# the two folded columns add up to the two totals
b = a = 0
for line in open(work + "/traces.diff"):
    _, x, y = line.rsplit(" ", 2)
    b += int(x); a += int(y)
assert (b, a) == (nb, na), ((b, a), (nb, na))
print("diff_traces: %d vs %d samples, %d rows; Simulation#step total %.1f%% -> %.1f%%" % (
    nb, na, len(rows), rows["Simulation#step"]["total"]["before_pct"], rows["Simulation#step"]["total"]["after_pct"]))
EOF

# refusals: wrong build's symmap, no symmap; one line, non-zero, no output
rc=0
"$diff_tool" -b "$work/before.bin" "$ex/variant/app-rt.symmap" -a "$work/after.folded" --svg "$work/no.svg" \
  >"$work/out1" 2>"$work/err1" || rc=$?
[ $rc -ne 0 ] || fail "a symmap from another build was accepted"
[ ! -s "$work/out1" ] && [ ! -e "$work/no.svg" ] || fail "refused, yet output was written"
[ "$(wc -l <"$work/err1")" -eq 1 ] || fail "expected one error line, got: $(cat "$work/err1")"
echo "refusal: $(cat "$work/err1")"
"$diff_tool" --force -b "$work/before.bin" "$ex/variant/app-rt.symmap" -a "$work/after.folded" >/dev/null 2>&1 \
  || fail "--force did not accept the other build's symmap"
rc=0
"$diff_tool" -b "$work/before.bin" -a "$work/after.folded" >"$work/out2" 2>"$work/err2" || rc=$?
[ $rc -ne 0 ] && [ ! -s "$work/out2" ] && [ "$(wc -l <"$work/err2")" -eq 1 ] \
  || fail "a trace without its symmap was not refused cleanly: $(cat "$work/err2")"
echo "refusal: $(cat "$work/err2")"
# a trace cut short is used, with a warning saying so (a partial profile
# must not pass as a whole one)
size=$(stat -c %s "$work/after.bin")
head -c $((size * 2 / 3)) "$work/after.bin" >"$work/cut.bin"
"$diff_tool" -b "$work/before.folded" -a "$work/cut.bin" "$ex/variant/app-rt.symmap" >"$work/out3" 2>"$work/err3" \
  || fail "a cut trace was refused: $(cat "$work/err3")"
grep -q "cut short" "$work/err3" || fail "a cut trace was used without a warning: $(cat "$work/err3")"
[ -s "$work/out3" ] || fail "no table for a cut trace"
echo "cut trace: $(cat "$work/err3")"
echo "diff_traces: ok"
