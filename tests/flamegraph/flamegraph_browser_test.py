#!/usr/bin/env python3
"""sprof-flamegraph in a real browser (headless Chromium).

1. Screenshot of a flame graph with a search pre-run from the URL
   (?s=REGEX): the PNG is decoded here (zlib, no imaging library) and must
   not be blank (many colours), must show the user-code blue and the
   search-highlight magenta.
2. --dump-dom after the embedded script ran with ?z=N&s=REGEX&i=1: the
   matched frames' fills changed to the highlight colour, the "Matched:"
   figure is right (nested matches counted once), the zoom hid the frames
   outside the zoomed one, stretched it to the full width and faded its
   ancestors.
3. The same for a differential graph from sprof-diff --svg, and a bad
   regex is reported, not thrown.
Exit 77 (skip) only when no Chromium is installed."""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

BIN = os.environ.get("SPROF_BIN", "build/bin")
SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
if not browser:
    print("SKIP: no chromium in PATH (Debian package 'chromium'); browser test not run")
    sys.exit(SKIP)


def chromium(tmp, url, *extra):
    profile = tempfile.mkdtemp(dir=tmp)
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + profile] + list(extra) + [url]
    return subprocess.run(cmd, capture_output=True, timeout=90, cwd=tmp)


def decode_png(path):
    """RGB(A) 8-bit PNG -> (width, height, list of rows of (r,g,b))."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG layout"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def frames_in_dom(dom):
    """[(attrs of <g class=f ...>, rect attrs)] from the serialized DOM."""
    out = []
    for m in re.finditer(r'<g class="(f[^"]*)"([^>]*)>.*?<rect([^>]*)/?>', dom, re.S):
        g = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(2)))
        g["class"] = m.group(1).split()
        out.append((g, dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(3)))))
    return out


with tempfile.TemporaryDirectory() as tmp:
    folded = os.path.join(tmp, "p.folded")
    with open(folded, "w") as f:
        f.write("main_[n];Object#run_[u];Foo#bar_[u];sp_gc_alloc_[g] 300\n")
        f.write("main_[n];Object#run_[u];Foo#bar_[u] 200\n")
        f.write("main_[n];Object#run_[u];Baz#qux_[u];sp_String_concat_[r] 400\n")
        f.write("main_[n];Object#run_[u];Baz#qux_[u];Foo#bar_[u] 100\n")
    svg = os.path.join(tmp, "p.svg")
    r = subprocess.run([os.path.join(BIN, "sprof-flamegraph"), folded, "-o", svg], capture_output=True, timeout=60)
    check(r.returncode == 0, "sprof-flamegraph ran: %r" % r.stderr)

    # 1. screenshot with a search pre-run
    png = os.path.join(tmp, "shot.png")
    r = chromium(tmp, "file://%s?s=%s" % (svg, "String"), "--screenshot=" + png, "--window-size=1200,260",
                 "--hide-scrollbars")
    check(os.path.exists(png), "screenshot written (rc %d, %s)" % (r.returncode, r.stderr[-300:]))
    if os.path.exists(png):
        w, h, rows = decode_png(png)
        colours = {}
        for row in rows:
            for px in row:
                colours[px] = colours.get(px, 0) + 1
        check(len(colours) > 50, "screenshot is not blank: %d distinct colours" % len(colours))
        top = max(colours.values()) / float(w * h)
        check(top < 0.9, "no single colour covers the image (top %.2f)" % top)
        magenta = sum(n for (r_, g_, b_), n in colours.items() if r_ > 200 and g_ < 40 and b_ > 200)
        blue = sum(n for (r_, g_, b_), n in colours.items() if b_ > 200 and r_ < 150 and g_ < 210)
        check(magenta > 1000, "search highlight visible: %d magenta pixels" % magenta)
        check(blue > 1000, "user frames (blue) visible: %d pixels" % blue)

    # 2. zoom + case-insensitive search, then read the DOM the script left
    order = re.findall(r'<g class="f"[^>]* data-n="([^"]*)"', open(svg).read())
    zi = order.index("Baz#qux") if "Baz#qux" in order else 0
    r = chromium(tmp, "file://%s?z=%d&s=%s&i=1" % (svg, zi, "FOO"), "--dump-dom")
    dom = r.stdout.decode(errors="replace")
    fr = frames_in_dom(dom)
    check(len(fr) >= 8, "DOM has the frames (%d)" % len(fr))
    by = {}
    for g, rect in fr:
        by.setdefault(g["data-n"], []).append((g, rect))
    plotw = float(re.search(r'data-plotw="([\d.]+)"', dom).group(1))
    for g, rect in fr:
        name, cls = g["data-n"], g["class"]
        if name in ("all", "main", "Object#run"):
            check("parent" in cls and "hide" not in cls, "%s is a faded ancestor: %r" % (name, cls))
            check(abs(float(rect["width"]) - plotw) < 0.02, "%s spans the width" % name)
        elif name == "Baz#qux":
            check(abs(float(rect["width"]) - plotw) < 0.02 and abs(float(rect["x"]) - 10) < 0.02,
                  "zoomed frame fills the width: x %s w %s" % (rect["x"], rect["width"]))
        elif name == "sp_String_concat":
            check(abs(float(rect["width"]) - plotw * 0.8) < 0.02, "child rescaled to 4/5: %s" % rect["width"])
        elif name == "Foo#bar" and g["data-d"] == "4":
            check("hide" not in cls and abs(float(rect["width"]) - plotw * 0.2) < 0.02, "child Foo#bar rescaled to 1/5")
        elif name in ("Foo#bar", "sp_gc_alloc"):
            check("hide" in cls, "%s outside the zoom is hidden" % name)
    # search matched both Foo#bar frames (case-insensitive), fills changed
    for g, rect in by.get("Foo#bar", []):
        check("match" in g["class"] and rect.get("fill") == "rgb(230,0,230)" and "data-fill" in rect,
              "Foo#bar highlighted: %r %r" % (g["class"], rect.get("fill")))
    for g, rect in by.get("Baz#qux", []):
        check(rect.get("fill") != "rgb(230,0,230)", "Baz#qux not highlighted")
    m = re.search(r'<text id="matched"[^>]*>([^<]*)</text>', dom)
    check(m and m.group(1) == "Matched: 60.00%", "Matched figure: %r (Foo#bar 500 + 100 of 1000)" % (m and m.group(1)))
    check(re.search(r'<text id="unzoom" class=""', dom) is not None, "Reset Zoom shown after zoom")

    # nested matches counted once: Foo#bar (600) contains sp_gc_alloc (300)
    r = chromium(tmp, "file://%s#s=%s" % (svg, "Foo%7Csp_gc"), "--dump-dom")
    m = re.search(r'<text id="matched"[^>]*>([^<]*)</text>', r.stdout.decode(errors="replace"))
    check(m and m.group(1) == "Matched: 60.00%", "nested matches counted once: %r" % (m and m.group(1)))

    # 3. differential graph: search works there too; a bad regex is reported
    before = os.path.join(tmp, "before.folded")
    with open(before, "w") as f:
        f.write("main_[n];Object#run_[u];Foo#bar_[u] 900\n")
        f.write("main_[n];Object#run_[u];Baz#qux_[u] 100\n")
    dsvg = os.path.join(tmp, "d.svg")
    r = subprocess.run([os.path.join(BIN, "sprof-diff"), before, folded, "--svg", dsvg], capture_output=True, timeout=60)
    check(r.returncode == 0 and os.path.exists(dsvg), "sprof-diff --svg ran: %r" % r.stderr)
    if os.path.exists(dsvg):
        r = chromium(tmp, "file://%s?s=%s" % (dsvg, "concat"), "--dump-dom")
        dom = r.stdout.decode(errors="replace")
        m = re.search(r'<text id="matched"[^>]*>([^<]*)</text>', dom)
        check(m and m.group(1) == "Matched: 40.00%", "differential graph search: %r" % (m and m.group(1)))
        r = chromium(tmp, "file://%s?s=%s" % (dsvg, "%28"), "--dump-dom")
        m = re.search(r'<text id="matched"[^>]*>([^<]*)</text>', r.stdout.decode(errors="replace"))
        check(m and m.group(1).startswith("Bad regex"), "bad regex reported: %r" % (m and m.group(1)))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("flamegraph browser: all checks passed")
