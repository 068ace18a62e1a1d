#!/usr/bin/env python3
"""sprof-flamegraph: the numbers and structure of the SVG (no browser).

Builds folded files with known counts, renders them and checks: widths are
proportional to counts, siblings are in name order and adjacent, every
frame's tooltip carries its count and share, hostile names are escaped
(the file parses as XML), cost-class colours, --inverted, --minwidth
(px and %), --width, --title, -o (atomic), and clean refusals."""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

BIN = os.environ.get("SPROF_BIN", "build/bin")
TOOL = os.path.join(BIN, "sprof-flamegraph")
NS = "{http://www.w3.org/2000/svg}"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, **kw):
    return subprocess.run([TOOL] + args, capture_output=True, timeout=60, **kw)


def frames(svg_bytes):
    root = ET.fromstring(svg_bytes)
    out = {}
    for g in root.iter(NS + "g"):
        if g.get("class", "").split()[:1] != ["f"]:
            continue
        rect = g.find(NS + "rect")
        out.setdefault(g.get("data-n"), []).append({
            "x": float(rect.get("x")), "w": float(rect.get("width")), "y": float(rect.get("y")),
            "fill": rect.get("fill"), "v": int(g.get("data-v")), "d": int(g.get("data-d")),
            "title": g.find(NS + "title").text, "label": g.find(NS + "text").text or "",
        })
    return root, out


def rgb(fill):
    return tuple(int(c) for c in re.match(r"rgb\((\d+),(\d+),(\d+)\)", fill).groups())


with tempfile.TemporaryDirectory() as tmp:
    folded = os.path.join(tmp, "p.folded")
    hostile = '<b>&"quote\'_x'
    with open(folded, "w") as f:
        f.write("main_[n];Object#run_[u];Foo#bar_[u];sp_gc_alloc_[g] 300\n")
        f.write("main_[n];Object#run_[u];Foo#bar_[u] 200\n")
        f.write("main_[n];Object#run_[u];Baz#qux_[u];sp_String_concat_[r] 400\n")
        f.write("main_[n];Object#run_[u];%s_[u] 99\n" % hostile)
        f.write("main_[n];Object#run_[u];Tiny#t_[u] 1\n")
    r = run([folded, "--title", "Title <&>"])
    check(r.returncode == 0, "renders: %r" % r.stderr)
    root, fr = frames(r.stdout)
    plotw = float(root.find(".//%sg[@id='frames']" % NS).get("data-plotw"))
    total = 1000
    check(int(root.find(".//%sg[@id='frames']" % NS).get("data-total")) == total, "data-total is 1000")
    # widths proportional to counts (to the 0.01 px the file is written with)
    expect = {"all": 1000, "main": 1000, "Object#run": 1000, "Foo#bar": 500, "sp_gc_alloc": 300,
              "Baz#qux": 400, "sp_String_concat": 400, hostile: 99, "Tiny#t": 1}
    for name, count in expect.items():
        check(name in fr, "frame %r drawn" % name)
        if name not in fr:
            continue
        f = fr[name][0]
        check(abs(f["w"] - plotw * count / total) < 0.011, "%s width %.2f = %d/%d of %.2f" % (name, f["w"], count, total, plotw))
        check(f["v"] == count, "%s data-v %d" % (name, count))
        pct = "%.2f%%" % (100.0 * count / total)
        check(("(%s samples, %s)" % (format(count, ","), pct)) in f["title"], "%s tooltip %r has count and %s" % (name, f["title"], pct))
    # siblings in name order, adjacent: <b>... < Baz#qux < Foo#bar < Tiny#t
    order = [hostile, "Baz#qux", "Foo#bar", "Tiny#t"]
    xs = [fr[n][0]["x"] for n in order]
    check(xs == sorted(xs), "siblings in name order: %r" % xs)
    for a, b in zip(order, order[1:]):
        check(abs(fr[a][0]["x"] + fr[a][0]["w"] - fr[b][0]["x"]) < 0.02, "%s adjacent to %s" % (a, b))
    # leaf on top (larger depth = smaller y) in the default orientation
    check(fr["sp_gc_alloc"][0]["y"] < fr["Foo#bar"][0]["y"] < fr["all"][0]["y"], "root at the bottom")
    # cost classes: gc red, runtime grey, user blue, native yellow
    r_, g_, b_ = rgb(fr["sp_gc_alloc"][0]["fill"]); check(r_ > 200 and g_ < 140 and b_ < 110, "gc is red")
    r_, g_, b_ = rgb(fr["sp_String_concat"][0]["fill"]); check(abs(r_ - g_) < 10 and abs(b_ - r_) < 15, "runtime is grey")
    r_, g_, b_ = rgb(fr["Foo#bar"][0]["fill"]); check(b_ > 200 and r_ < 140, "user is blue")
    r_, g_, b_ = rgb(fr["main"][0]["fill"]); check(r_ > 200 and g_ > 170 and b_ < 110, "native is yellow")
    # deterministic colours
    r2 = run([folded, "--title", "Title <&>"])
    check(r2.stdout == r.stdout, "same input, same bytes")
    # escaping: raw markup never appears, title escaped
    check(b"<b>&" not in r.stdout, "hostile name escaped")
    check(root.find(NS + "text[@id='title']").text == "Title <&>", "title escaped and round-trips")
    # labels: truncated with '..', empty below 3 characters
    check(fr["Tiny#t"][0]["label"] == "", "1-sample frame has no label")
    check(fr["Foo#bar"][0]["label"] == "Foo#bar", "wide frame has its whole name")
    # legend names the four classes
    legend = " ".join(t.text for t in root.find(".//%sg[@id='legend']" % NS).iter(NS + "text"))
    for word in ("Ruby", "runtime", "GC", "native"):
        check(word in legend, "legend mentions %s" % word)

    # --width
    r = run([folded, "--width", "600"])
    root, fr = frames(r.stdout)
    check(root.get("width") == "600", "--width 600")
    check(abs(fr["Foo#bar"][0]["w"] - 580 * 0.5) < 0.011, "--width scales frames")
    # --inverted: root on top
    r = run([folded, "--inverted"])
    root, fr = frames(r.stdout)
    check(fr["all"][0]["y"] < fr["Foo#bar"][0]["y"] < fr["sp_gc_alloc"][0]["y"], "--inverted puts the root on top")
    # --minwidth in px: Tiny#t is 1.18 px wide
    r = run([folded, "--minwidth", "2"])
    _, fr = frames(r.stdout)
    check("Tiny#t" not in fr and "Foo#bar" in fr, "--minwidth 2 hides a 1.18 px frame")
    r = run([folded, "--minwidth", "0"])
    _, fr = frames(r.stdout)
    check("Tiny#t" in fr, "--minwidth 0 keeps it")
    # --minwidth in %: 10% hides the 9.9% frame and the 0.1% one
    r = run([folded, "--minwidth", "10%"])
    _, fr = frames(r.stdout)
    check(hostile not in fr and "Tiny#t" not in fr and "Baz#qux" in fr, "--minwidth 10% hides frames under 10%")
    # -o writes atomically, nothing on stdout
    out = os.path.join(tmp, "out.svg")
    r = run([folded, "-o", out])
    check(r.returncode == 0 and r.stdout == b"" and os.path.getsize(out) > 1000, "-o writes the file")
    check(not [n for n in os.listdir(tmp) if ".tmp" in n], "no temp file left")

    # refusals: one line, non-zero, no output
    empty = os.path.join(tmp, "empty.folded")
    open(empty, "w").close()
    garbage = os.path.join(tmp, "garbage.folded")
    with open(garbage, "wb") as f:
        f.write(b"\x00\x01binary junk\nno count here\n")
    for args, what in (([empty], "empty"), ([garbage], "garbage"), ([os.path.join(tmp, "missing")], "missing"),
                       ([folded, "--minwidth", "x"], "bad --minwidth"), ([folded, "--width", "5"], "bad --width")):
        out2 = os.path.join(tmp, "refused.svg")
        r = run(args + ["-o", out2])
        lines = r.stderr.decode(errors="replace").strip().splitlines()
        check(r.returncode != 0, "%s refused (rc %d)" % (what, r.returncode))
        check(len(lines) >= 1 and r.stdout == b"" and not os.path.exists(out2), "%s: no output, message %r" % (what, lines))
        if what in ("empty", "garbage", "missing"):
            check(len(lines) == 1, "%s: one error line, got %r" % (what, lines))

    # a profile that loads but has no samples: an empty graph, exit 0, a warning
    zero = os.path.join(tmp, "zero.folded")
    with open(zero, "w") as f:
        f.write("main;Foo#bar 0\n")
    r = run([zero])
    check(r.returncode == 0 and b"no samples" in r.stdout and b"no samples" in r.stderr,
          "all-zero counts: empty graph with a warning (rc %d, %r)" % (r.returncode, r.stderr))
    if r.returncode == 0:
        root, fr = frames(r.stdout)
        check(fr == {}, "all-zero counts: no frames drawn")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("flamegraph svg: all checks passed")
