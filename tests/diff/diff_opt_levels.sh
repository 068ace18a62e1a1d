#!/usr/bin/env bash
# sprof-diff keyed by Ruby identity (issue 19, must-have 5): the example
# built at -O1 and at -O2 (C names, clones and inlining differ) is profiled
# once each; the diff must join each Ruby method of the example into one
# row with samples on both sides, and each side's total share of it must be
# within 4 pp of the CPU split the example measured itself in that run
# (SPROF_EXAMPLE_SPLIT: per-method thread CPU). The C really differs: the
# real (not inlined) C functions sampled differ between the builds (at -O2
# sp_String_new, sp_str_alloc, ... are inlined), while every Ruby row
# (<main>, block in Pipeline#run, the methods) is one row with samples on
# both sides and no user row is a C name.
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_BUILD:?}" "${SPROF_LIB:?}"
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$SPROF_BUILD/tests/diff/optlevels
fail() { echo "diff_opt_levels: FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
for o in O1 O2; do
  "$src/examples/build.sh" "$work/app-$o" --bin "$SPROF_BIN" -- "-$o" >"$work/build-$o.log" 2>&1 ||
    { cat "$work/build-$o.log" >&2; fail "building the example at -$o"; }
  SPROF_QUIET=1 SPROF_OUT="$work/$o.bin" SPROF_HZ=2000 SPROF_EXAMPLE_SPLIT="$work/split-$o.txt" \
    LD_PRELOAD="$SPROF_LIB/libsprof.so" "$work/app-$o" 0.8 >/dev/null || fail "running the -$o build"
done
unset ASAN_OPTIONS
# the two builds really differ in their C
cmp -s "$work/app-O1" "$work/app-O2" && fail "the -O1 and -O2 binaries are identical"
for o in O1 O2; do # the real C functions on the stacks (inlined frames dropped)
  "$SPROF_BIN/sprof-fold" --no-inline --c-names --weight=samples "$work/$o.bin" "$work/app-$o.symmap" 2>/dev/null |
    sed 's/ [0-9]*$//' | tr ';' '\n' | grep '^sp_' | sort -u >"$work/cfuncs-$o.txt"
done
cmp -s "$work/cfuncs-O1.txt" "$work/cfuncs-O2.txt" &&
  fail "the two builds have the same real C functions on their stacks (no inlining difference to test)"
echo "C functions only in one build: $(comm -3 "$work/cfuncs-O1.txt" "$work/cfuncs-O2.txt" | tr -d '\t' | tr '\n' ' ')"
"$SPROF_BIN/sprof-diff" --json -b "$work/O1.bin" "$work/app-O1.symmap" -a "$work/O2.bin" "$work/app-O2.symmap" \
  >"$work/diff.json" 2>"$work/diff.err" || { cat "$work/diff.err" >&2; fail "sprof-diff"; }
python3 - "$work" <<'PY'
import json, re, sys
work = sys.argv[1]
d = json.load(open(f"{work}/diff.json"))
rows = d["rows"]
def split(path):
    out = {}
    for line in open(path):
        f = line.split()
        if f and f[0] == "method":
            out[" ".join(f[1:-2])] = float(f[-1])
    return out
truth = {"before": split(f"{work}/split-O1.txt"), "after": split(f"{work}/split-O2.txt")}
bad = []
for method in truth["before"]:
    matches = [r for r in rows if r["method"] == method]
    if len(matches) != 1:
        bad.append(f"{method}: {len(matches)} rows (want 1)")
        continue
    r = matches[0]
    for side in ("before", "after"):
        share = r["total"][side + "_pct"]
        want = truth[side][method]
        print(f"{method:24s} {side:6s} profile {share:6.2f}%  measured {want:6.2f}%")
        if abs(share - want) > 4:
            bad.append(f"{method} {side}: {share:.2f}% against {want:.2f}% measured")
for name in ("<main>", "block in Pipeline#run", "Pipeline#run"):
    r = [r for r in rows if r["name"] == name]
    if len(r) != 1 or not (r[0]["total"]["before"] > 0 and r[0]["total"]["after"] > 0):
        bad.append(f"{name}: not one row with samples on both sides ({r})")
cnames = [r["name"] for r in rows  # a C name: Spinel's sp_ prefix or a clone suffix
          if r["class"] == "user" and re.search(r"^sp_|\.(isra|constprop|part|cold|lto_priv)", r["name"])]
if cnames:
    bad.append(f"user rows named by C: {cnames}")
if bad:
    sys.exit("diff_opt_levels: FAIL: " + "; ".join(bad))
print("diff_opt_levels: PASS")
PY
