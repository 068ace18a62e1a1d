#!/usr/bin/env bash
# sprof-diff --weight=cpu (issue 19, must-have 4): a program made 20 %
# slower as a whole keeps every method's share, so the share table marks
# nothing; the CPU columns must show each method ~20 % slower, significant
# with 3 runs a side, and the gate in % or s must trip while the one in pp
# does not. One run a side: CPU changes are never marked. 5 runs a side:
# with 3, a loaded machine's run-to-run CPU noise (5-10 %) left q near 0.05.
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_BUILD:?}" "${SPROF_LIB:?}"
work=$SPROF_BUILD/tests/diff/cpuseconds
prog=$SPROF_BUILD/tests/diff/fixed_work
fail() { echo "diff_cpu_seconds: FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
"$SPROF_BIN/sprof-symmap" "$prog" -o "$work/fw.symmap" --quiet || fail "sprof-symmap"
# the sides' runs alternate, so that a machine whose speed drifts (a noisy
# neighbour on the host) moves both alike: run all of one side first and a
# drift between the two blocks moved A's and B's shares by 0.4 pp apart, which
# five runs a side then call significant (a fresh-clone CI run, 2026-11-26)
for r in 1 2 3 4 5; do
  for side in b a; do
    scale=1.0; [ $side = a ] && scale=1.2
    SPROF_QUIET=1 SPROF_OUT="$work/$side$r.bin" SPROF_HZ=4000 LD_PRELOAD="$SPROF_LIB/libsprof.so" \
      "$prog" $scale 500 || fail "run $side$r"
  done
done
d() { "$SPROF_BIN/sprof-diff" -b "$work"/b[1-5].bin "$work/fw.symmap" -a "$work"/a[1-5].bin "$work/fw.symmap" "$@"; }
d --weight=cpu --total >"$work/cpu.txt" || fail "sprof-diff --weight=cpu"
cat "$work/cpu.txt"
# shares at alpha 0.001: at the default 0.05 the share test marks a null
# change about once in 20 diffs by design (a fresh-clone CI run, 2026-11-27:
# A#work +0.33 pp, q < 0.05, its CPU +20.8 % as asked). The CPU changes at
# the default 0.05: they have q ~1e-5 on a quiet machine, but on a loaded
# PVM guest, whose CPU clocks count the host's stalls, a CI run measured
# +5.7 % with q 0.005-0.007 and another +38-40 % (2026-11-27): each
# method's CPU change is judged against the program's own (its threads'
# clocks, summed by the trace), which both sides measure alike
d --json --alpha 0.001 >"$work/diff.json" || fail "sprof-diff --json --alpha 0.001"
d --json >"$work/diff_cpu.json" || fail "sprof-diff --json"
python3 - "$work/diff.json" "$work/diff_cpu.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = {r["method"]: r for r in d["rows"]}
cpu_rows = {r["method"]: r for r in json.load(open(sys.argv[2]))["rows"]}
bad = []
before, after = d["cpu_s_per_run"]
prog = 100 * (after / before - 1) if before else 0.0
print(f"program: CPU/run {before:.3f} -> {after:.3f} s ({prog:+.1f} %; asked +20 %)")
if not prog > 0:  # the program's own CPU (20 % asked; loaded machines moved it to +5.7 %, +40 %)
    bad.append(f"program CPU per run {d['cpu_s_per_run']}")
for m in ("A#work", "B#work"):  # sp_A_work, sp_B_work: names guessed from C (no Spinel map)
    r = rows.get(m)
    if r is None or m not in cpu_rows:
        bad.append(f"{m}: no row ({sorted(rows)[:8]})")
        continue
    if r["total"]["significant"]:
        bad.append(f"{m}: its share changed significantly ({r['total']['change_pp']} pp) though only the speed did")
    c = cpu_rows[m]["total_cpu"]
    print(f"{m}: CPU/run {c['before_s']:.3f} -> {c['after_s']:.3f} s ({c['change_pct']:+.1f} %), q {c['q']}")
    if abs(c["change_pct"] - prog) > 10:
        bad.append(f"{m}: CPU change {c['change_pct']:+.1f} % (want the program's {prog:+.1f} % +-10 pp)")
    if not c["significant"]:
        bad.append(f"{m}: the CPU change is not marked significant (q {c['q']})")
if bad:
    sys.exit("diff_cpu_seconds: FAIL: " + "; ".join(bad))
PY
# the gate: CPU limits trip, the share limit does not. The limits are half
# of what the machine gave: +20 % asked came out +8.7 % in a CI run
# (2026-11-28), under a fixed +10 % limit, and +5.7 % to +40 % in others
read -r lim_pct lim_s < <(python3 - "$work/diff.json" <<'PY'
import json, sys
before, after = json.load(open(sys.argv[1]))["cpu_s_per_run"]
# B#work, the smaller method, is ~40 % of the program: half its change
print(f"{50 * (after / before - 1):.2f} {0.2 * (after - before):.4f}")
PY
)
set +e
d --fail-if-any "+$lim_pct%" >/dev/null 2>"$work/gate1.err"; rc1=$?
d --fail-if-any "+${lim_s}s" >/dev/null 2>"$work/gate2.err"; rc2=$?
d --fail-if-any +2 >/dev/null 2>"$work/gate3.err"; rc3=$?
set -e
cat "$work/gate1.err" "$work/gate2.err" "$work/gate3.err"
[ $rc1 = 3 ] || fail "--fail-if-any +$lim_pct% exited $rc1 (want 3)"
[ $rc2 = 3 ] || fail "--fail-if-any +${lim_s}s exited $rc2 (want 3)"
[ $rc3 = 0 ] || fail "--fail-if-any +2 (pp) exited $rc3 (want 0: shares did not change)"
one=$("$SPROF_BIN/sprof-diff" --weight=cpu -b "$work/b1.bin" "$work/fw.symmap" -a "$work/a1.bin" "$work/fw.symmap")
echo "$one" | grep -q "run-to-run variance of CPU time is unknown" || fail "one run a side: no statement"
echo "$one" | grep -q '\*' && fail "one run a side: a CPU change was marked"
# folded input has no CPU weights
"$SPROF_BIN/sprof-fold" "$work/b1.bin" "$work/fw.symmap" -o "$work/b1.folded"
if "$SPROF_BIN/sprof-diff" --weight=cpu "$work/b1.folded" "$work/b1.folded" >/dev/null 2>"$work/folded.err"; then
  fail "--weight=cpu on folded files was accepted"
fi
grep -q "CPU seconds need cpu-mode traces" "$work/folded.err" || fail "folded refusal: $(cat "$work/folded.err")"
# the differential flame graph follows the replicate test: unchanged shares
# colour no frame as significant (at alpha 0.001, as the share table above:
# at 0.05 a null change is marked about once in 20 diffs by design, a full
# ctest run on 2026-11-28 coloured [kernel], 0.24 -> 0.61 %, q 0.014), and
# the subtitle names the test
d --svg "$work/diff.svg" --alpha 0.001 >/dev/null 2>&1 || fail "sprof-diff --svg"
grep -q "Welch&apos;s t-test on the per-run shares\|Welch's t-test on the per-run shares" "$work/diff.svg" ||
  fail "the --svg subtitle does not name the replicate test"
if grep -q ", significant<\|, significant)" "$work/diff.svg"; then
  grep -o "[^>]*, significant[^<]*" "$work/diff.svg" | head -3 >&2
  fail "--svg coloured a frame whose share did not change"
fi
# ... and a real change is coloured: B alone 30 % slower, 3 runs a side
for r in 1 2 3 4 5; do
  SPROF_QUIET=1 SPROF_OUT="$work/c$r.bin" SPROF_HZ=4000 LD_PRELOAD="$SPROF_LIB/libsprof.so" "$prog" 1.0 500 1.3 ||
    fail "run c$r"
done
"$SPROF_BIN/sprof-diff" -b "$work"/b[1-5].bin "$work/fw.symmap" -a "$work"/c[1-5].bin "$work/fw.symmap" --svg "$work/real.svg" >"$work/real.txt" 2>/dev/null ||
  fail "sprof-diff --svg (real change)"
grep -q "B#work (.*q = [0-9.e-]*, significant" "$work/real.svg" || grep -q "B#work.*, significant" "$work/real.svg" ||
  { grep -o "B#work[^<]*" "$work/real.svg" | head -2 >&2; fail "--svg: B#work 30 % slower is not significant"; }
d --folded >/dev/null 2>"$work/folded_note.err"
grep -q "runs summed per side" "$work/folded_note.err" || fail "--folded with replicates says nothing"
echo "diff_cpu_seconds: PASS"
