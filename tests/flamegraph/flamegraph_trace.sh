#!/usr/bin/env bash
# sprof-flamegraph on a real trace + symmap of the example program (built by
# the e2e_build fixture): the graph's total equals sprof-fold's for the same
# weight (samples and CPU ns), the example's Ruby methods are drawn in the
# user colour (blue) and its collector in the GC colour (red), every frame's
# children fit inside it, and the file is well-formed XML.
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_BUILD:?}"
ex=$SPROF_BUILD/tests/e2e/work
work=$SPROF_BUILD/tests/flamegraph/work
fail() { echo "flamegraph_trace: FAIL: $*" >&2; exit 1; }
[ -x "$ex/app-rt" ] && [ -s "$ex/app-rt.symmap" ] || fail "the example is not built (the e2e_build test sets it up)"
rm -rf "$work"; mkdir -p "$work"
# In sanitizer builds the example itself is built with ASan; its leaks are not under test here.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} SPROF_OUT="$work/trace.bin" SPROF_HZ=500 \
  SPROF_EXAMPLE_SPLIT="$work/split.txt" "$ex/app-rt" 0.5
for w in samples cpu; do
  "$SPROF_BIN/sprof-flamegraph" --weight=$w "$work/trace.bin" "$ex/app-rt.symmap" -o "$work/$w.svg" \
    --title "example ($w)"
  "$SPROF_BIN/sprof-fold" --weight=$w "$work/trace.bin" "$ex/app-rt.symmap" -o "$work/$w.folded" 2>/dev/null
done
python3 - "$work" <<'PY'
import re, sys
import xml.etree.ElementTree as ET
work = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"
for w in ("samples", "cpu"):
    root = ET.parse("%s/%s.svg" % (work, w)).getroot()
    frames = root.find(".//%sg[@id='frames']" % NS)
    total = int(frames.get("data-total"))
    folded = sum(int(l.rsplit(" ", 1)[1]) for l in open("%s/%s.folded" % (work, w)) if l.strip())
    assert total == folded and total > 0, (w, total, folded)
    fr = []
    for g in frames.iter(NS + "g"):
        if g.get("class") == "f":
            fill = tuple(int(c) for c in re.findall(r"\d+", g.find(NS + "rect").get("fill")))
            fr.append((g.get("data-n"), int(g.get("data-x")), int(g.get("data-v")), int(g.get("data-d")), fill))
    names = {f[0] for f in fr}
    for m in ("Simulation#step", "Indexer#tokenize", "Pipeline#run"):
        assert m in names, (w, m, sorted(names)[:30])
    for n, x, v, d, (r, g, b) in fr:
        if n in ("Simulation#step", "Indexer#tokenize"):
            assert b > 200 and r < 140, ("user frame not blue", n, (r, g, b))
        if n.startswith("sp_gc_"):
            assert r > 200 and g < 140, ("gc frame not red", n, (r, g, b))
    # children fit inside their parent: each frame lies within some frame one level down
    by_depth = {}
    for n, x, v, d, _ in fr:
        by_depth.setdefault(d, []).append((x, x + v))
    for n, x, v, d, _ in fr:
        if d > 0:
            assert any(a <= x and x + v <= b for a, b in by_depth[d - 1]), ("orphan frame", n, x, v, d)
    print("flamegraph_trace: %s: total %d = sprof-fold's, %d frames" % (w, total, len(fr)))
PY
echo "flamegraph_trace: ok"
