#!/usr/bin/env python3
"""sprof-diff on constructed profiles with known deltas.

- a real regression (Foo#hot 30 % -> 40 % of 20k samples) is flagged, with
  the exact shares and percentage points in the table and the JSON;
- a change within noise (30.0 % -> 30.5 %) carries no mark;
- same-distribution resamples (two independent multinomial draws of 20k
  samples from one distribution over 60 methods, fixed seeds) show no
  significant change after the Benjamini-Hochberg correction;
- --folded line by line, --normalize as difffolded.pl -n, --lines, --min,
  --total, --svg (colours, tooltips);
- empty, garbage and mismatched inputs are refused with one error line, a
  non-zero exit and no output at all."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BIN = os.environ.get("SPROF_BIN", "build/bin")
TOOL = os.path.join(BIN, "sprof-diff")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args):
    # These cases test the z-test of one run a side: a 1 pp floor instead of the
    # default 10 pp lets its -5 pp changes be marked (the floor: diff_replicates.py).
    if "--floor" not in args:
        args = ["--floor", "1"] + args
    r = subprocess.run([TOOL] + args, capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def write_folded(path, stacks):
    with open(path, "w") as f:
        for stack, n in stacks.items():
            if n:
                f.write("%s %d\n" % (stack, n))


def table_rows(text):
    """method -> (self_b, self_a, self_pp, self_sig, tot_b, tot_a, tot_pp, tot_sig)."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d.]+)\s+([\d.]+)\s+([+-][\d.]+) (.{4})   \s*([\d.]+)\s+([\d.]+)\s+([+-][\d.]+) (.{4})  \S+\s+(.+)$", line)
        if m:
            g = m.groups()
            rows[g[8]] = (float(g[0]), float(g[1]), float(g[2]), g[3].strip(), float(g[4]), float(g[5]),
                          float(g[6]), g[7].strip())
    return rows


def rows_json(out):
    return {r["name"]: r for r in json.loads(out)["rows"]}


with tempfile.TemporaryDirectory() as tmp:
    P = lambda name: os.path.join(tmp, name)
    base = "main;Object#run;"

    # --- a real regression: Foo#hot 30% -> 40% of 20,000 samples ---
    before = {base + "Foo#hot": 6000, base + "Bar#a": 7000, base + "Bar#b;sp_gc_alloc": 7000}
    after = {base + "Foo#hot": 8000, base + "Bar#a": 6000, base + "Bar#b;sp_gc_alloc": 6000}
    write_folded(P("before.folded"), before)
    write_folded(P("after.folded"), after)
    rc, out, err = run([P("before.folded"), P("after.folded")])
    check(rc == 0 and err == "", "table runs: rc %d %r" % (rc, err))
    rows = table_rows(out)
    check(rows.get("Foo#hot", ())[:4] == (30.0, 40.0, 10.0, "***"), "Foo#hot self 30.00 -> 40.00 +10.00 ***: %r" % (rows.get("Foo#hot"),))
    check(rows.get("Foo#hot", ())[4:] == (30.0, 40.0, 10.0, "***"), "Foo#hot total: %r" % (rows.get("Foo#hot"),))
    check(rows.get("Bar#b", ())[:4] == (0.0, 0.0, 0.0, ""), "Bar#b self 0 -> 0, untested: %r" % (rows.get("Bar#b"),))
    check(rows.get("Bar#b", ())[4:] == (35.0, 30.0, -5.0, "***"), "Bar#b total 35 -> 30 -5.00 ***: %r" % (rows.get("Bar#b"),))
    check(rows.get("main", ())[4:] == (100.0, 100.0, 0.0, ""), "main total 100 -> 100, no mark: %r" % (rows.get("main"),))
    first = [l for l in out.splitlines() if re.match(r"\s*[\d.]+\s", l)][0]
    check(first.endswith("Foo#hot"), "largest significant self change first: %r" % first)
    check("two-proportion z-test" in out and "Benjamini-Hochberg" in out, "footer states the test")
    check("before: %s (1 run, 20000 samples)" % P("before.folded") in out, "header names the before side")

    rc, out, err = run([P("before.folded"), P("after.folded"), "--json"])
    j = rows_json(out)
    hot = j["Foo#hot"]["self"]
    check(hot["before"] == 6000 and hot["after"] == 8000 and abs(hot["change_pp"] - 10) < 1e-9, "json Foo#hot counts: %r" % hot)
    check(hot["significant"] and hot["q"] < 1e-6 and hot["z"] > 10, "json Foo#hot significant: %r" % hot)
    # z by hand: pooled p = 0.35, se = sqrt(.35*.65*(2/20000))
    zhand = 0.10 / (0.35 * 0.65 * 2 / 20000) ** 0.5
    check(abs(hot["z"] - zhand) < 1e-3 * zhand, "z = %.3f, expected %.3f" % (hot["z"], zhand))
    check(j["Bar#b"]["self"]["p"] is None and j["Bar#b"]["self"]["significant"] is False, "untested self is null")
    # main and Object#run are on every stack: their total shares (100 %) are not tested (independent filtering)
    check(json.loads(out)["tests"] == 7, "family: 7 tests (3 self + 4 total... counted: %r)" % json.loads(out)["tests"])
    check(j["main"]["total"]["p"] is None and j["Object#run"]["total"]["p"] is None, "100 % totals are not tested")

    # --total sort, --min
    rc, out, err = run([P("before.folded"), P("after.folded"), "--total"])
    first = [l for l in out.splitlines() if re.match(r"\s*[\d.]+\s", l)][0]
    check(first.endswith("Foo#hot"), "--total: largest total change first: %r" % first)
    rc, out, err = run([P("before.folded"), P("after.folded"), "--min", "6"])
    rows = table_rows(out)
    check(set(rows) == {"Foo#hot"}, "--min 6 hides changes under 6 pp: %r" % sorted(rows))

    # --- a change within noise: 30.0% -> 30.5% of 20,000 ---
    write_folded(P("n_before.folded"), {base + "Foo#hot": 6000, base + "Bar#a": 14000})
    write_folded(P("n_after.folded"), {base + "Foo#hot": 6100, base + "Bar#a": 13900})
    rc, out, err = run([P("n_before.folded"), P("n_after.folded")])
    rows = table_rows(out)
    check(rows.get("Foo#hot", ())[:4] == (30.0, 30.5, 0.5, ""), "0.5 pp within noise, no mark: %r" % (rows.get("Foo#hot"),))

    # --- same distribution, two independent draws: nothing significant ---
    rnd = random.Random(20261121)
    stacks = []
    for i in range(60):
        parent = "Group%d#run" % (i % 6)
        leaf = "Work%d#step" % i
        stacks.append(base + parent + ";" + leaf)
        if i % 4 == 0:
            stacks.append(base + parent + ";" + leaf + ";sp_gc_alloc")
    weights = [rnd.uniform(0.2, 5.0) for _ in stacks]
    for seed in (1, 2, 3):
        sides = []
        for k in range(2):
            draw = random.Random(seed * 1000 + k).choices(range(len(stacks)), weights=weights, k=20000)
            counts = {}
            for s in draw:
                counts[stacks[s]] = counts.get(stacks[s], 0) + 1
            write_folded(P("r%d_%d.folded" % (seed, k)), counts)
        rc, out, err = run([P("r%d_0.folded" % seed), P("r%d_1.folded" % seed), "--json"])
        j = json.loads(out)
        sig = [r["name"] for r in j["rows"] if r["self"]["significant"] or r["total"]["significant"]]
        check(rc == 0 and not sig, "resample %d: no significant change (got %r)" % (seed, sig))
        check(j["tests"] > 100, "resample %d: family of %d tests" % (seed, j["tests"]))
        raw = [r["name"] for r in j["rows"] if (r["self"]["p"] or 1) < 0.05 or (r["total"]["p"] or 1) < 0.05]
        print("resample %d: %d tests, %d uncorrected p < 0.05, 0 after BH" % (seed, j["tests"], len(raw)))

    # --- --folded, line by line; --normalize ---
    write_folded(P("f_before.folded"), {"a;b;c": 3, "a;b": 5, "a;d": 7, "x": 5})
    write_folded(P("f_after.folded"), {"a;b;c": 4, "a;d": 2, "a;e": 4})
    rc, out, err = run([P("f_before.folded"), P("f_after.folded"), "--folded"])
    check(out.splitlines() == ["a;b 5 0", "a;b;c 3 4", "a;d 7 2", "a;e 0 4", "x 5 0"], "--folded lines: %r" % out.splitlines())
    rc, out, err = run([P("f_before.folded"), P("f_after.folded"), "--folded", "--normalize"])
    # before total 20, after total 10: counts halved, truncated (difffolded.pl -n)
    check(out.splitlines() == ["a;b 2 0", "a;b;c 1 4", "a;d 3 2", "a;e 0 4", "x 2 0"], "--normalize lines: %r" % out.splitlines())
    rc, out, err = run([P("f_before.folded"), P("f_before.folded"), "--folded", "--normalize"])
    check(out.splitlines() == ["a;b 5 5", "a;b;c 3 3", "a;d 7 7", "x 5 5"], "--normalize with equal totals is identity")

    # --- --lines on folded files written with lines (Foo#bar:12) ---
    write_folded(P("l_before.folded"), {"main;Foo#bar:12": 500, "main;Foo#bar:13": 500})
    write_folded(P("l_after.folded"), {"main;Foo#bar:12": 900, "main;Foo#bar:13": 100})
    rc, out, err = run([P("l_before.folded"), P("l_after.folded"), "--lines", "--json"])
    j = rows_json(out) if rc == 0 else {}
    check(set(j) == {"Foo#bar:12", "Foo#bar:13"}, "--lines rows: %r %r" % (sorted(j), err))
    if "Foo#bar:12" in j:
        check(j["Foo#bar:12"]["method"] == "Foo#bar" and j["Foo#bar:12"]["self"]["change_pp"] == 40, "line 12 +40 pp")
        check(j["Foo#bar:12"]["self"]["significant"], "line 12 significant")

    # --- differential flame graph ---
    rc, out, err = run([P("before.folded"), P("after.folded"), "--svg", P("d.svg")])
    check(rc == 0 and os.path.exists(P("d.svg")), "--svg written")
    if os.path.exists(P("d.svg")):
        root = ET.parse(P("d.svg")).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        seen = {}
        for g in root.iter(ns + "g"):
            if g.get("class") == "f":
                fill = tuple(int(c) for c in re.findall(r"\d+", g.find(ns + "rect").get("fill")))
                seen[g.get("data-n")] = (fill, g.find(ns + "title").text, int(g.get("data-v")), int(g.get("data-b")))
        hot = seen.get("Foo#hot")
        check(hot and hot[0][0] == 255 and hot[0][1] < 100, "grown Foo#hot is strong red: %r" % (hot,))
        check(hot and hot[2] == 8000 and hot[3] == 6000, "widths from after, before kept: %r" % (hot,))
        check(hot and "before: 6,000 (30.00%)" in hot[1] and "after: 8,000 (40.00%)" in hot[1]
              and "+10.00 pp" in hot[1] and "significant" in hot[1], "tooltip: %r" % (hot and hot[1]))
        bar = seen.get("Bar#a")
        check(bar and bar[0][2] == 255 and bar[0][0] < 200, "shrunk Bar#a is blue: %r" % (bar,))
        main = seen.get("main")
        check(main and main[0] == (250, 250, 250), "unchanged main is neutral: %r" % (main,))
        check(main and "not tested" not in main[1] and "within noise" in main[1], "main within noise: %r" % (main and main[1]))

    # --- refusals: one error line, non-zero, no output, no --svg file ---
    open(P("empty.folded"), "w").close()
    with open(P("garbage.folded"), "wb") as f:
        f.write(b"\x7fELF\x02\x01\x01 not a profile\n\x00\x00\xff\n")
    with open(P("fake.trace"), "wb") as f:
        f.write(b"SPROFTRC" + b"\x00" * 64)
    with open(P("fake.symmap"), "wb") as f:
        f.write(b"SPROFSYM" + b"\x00" * 64)
    cases = [
        ([P("empty.folded"), P("after.folded")], "empty before", "empty.folded"),
        ([P("after.folded"), P("empty.folded")], "empty after", "empty.folded"),
        ([P("garbage.folded"), P("after.folded")], "garbage", "garbage.folded"),
        (["-b", P("fake.trace"), "-a", P("after.folded")], "trace without symmap", "symmap"),
        (["-b", P("before.folded"), "-a", P("fake.symmap")], "symmap without trace", "fake.symmap"),
        ([P("missing.folded"), P("after.folded")], "missing file", "missing.folded"),
        (["-b", P("fake.trace"), P("fake.symmap"), "-a", P("after.folded")], "corrupt trace", "fake"),
    ]
    for args, what, needle in cases:
        for extra in ([], ["--json"], ["--folded"]):
            svg = P("refused.svg")
            rc, out, err = run(args + extra + ["--svg", svg])
            lines = err.strip().splitlines()
            check(rc != 0, "%s %s: non-zero exit" % (what, extra))
            check(out == "", "%s %s: no stdout, got %r" % (what, extra, out[:80]))
            check(len(lines) == 1 and needle in lines[0], "%s %s: one error line naming %s: %r" % (what, extra, needle, lines))
            check(not os.path.exists(svg), "%s: no --svg file" % what)
    for args, what in (([P("after.folded")], "one side"), ([P("a"), P("b"), P("c")], "three files"),
                       ([P("before.folded"), P("after.folded"), "--min", "x"], "bad --min"),
                       ([P("before.folded"), P("after.folded"), "--normalize"], "--normalize without --folded")):
        rc, out, err = run(args)
        check(rc != 0 and out == "" and err, "%s refused" % what)
    leftovers = [n for n in os.listdir(tmp) if ".tmp" in n]
    check(not leftovers, "no temp files left: %r" % leftovers)

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("sprof-diff: all checks passed")
