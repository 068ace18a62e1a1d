#!/usr/bin/env python3
"""speedscope's own app shows sprof's per-thread timelines (issue 18).

The example (two threads) is profiled and exported with sprof-export
--speedscope; the speedscope app from its npm package (cached in
$SPROF_BUILD/views-npm, as tests/views does) is served with the file over a
local HTTP server and opened in headless Chromium at
index.html#profileURL=...; from the page's DOM (not only the JSON) it checks:
the Time Order view is shown, the profile selector lists one profile per
thread with the name "NAME TID" and the duration of that thread's weights,
and the page title carries the file's name. A screenshot is kept in
$SPROF_BUILD/tests/output/speedscope.png. Skips (exit 77) without chromium
or without the npm package (offline).

usage: speedscope_browser_test.py [PROGRAM SYMMAP NAME [ARGS...]]
(default: the example; tests/corpus runs it on a corpus program, preloading
the sampler; NAME names the screenshot).
"""
import functools
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

SKIP = 77
BIN, BUILD = os.environ["SPROF_BIN"], os.environ["SPROF_BUILD"]
browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
if not browser:
    print("SKIP: no chromium in PATH (Debian package 'chromium')")
    sys.exit(SKIP)
cache = os.path.join(BUILD, "views-npm")
app = os.path.join(cache, "node_modules", "speedscope", "dist", "release")
if not os.path.exists(os.path.join(app, "index.html")):
    if not shutil.which("npm"):
        print("SKIP: npm not installed: the speedscope app is not available")
        sys.exit(SKIP)
    p = subprocess.run(["npm", "install", "--prefix", cache, "--no-audit", "--no-fund", "speedscope", "ajv@8"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0 or not os.path.exists(os.path.join(app, "index.html")):
        print("SKIP: npm install speedscope failed (offline?)\n" + p.stderr[-500:])
        sys.exit(SKIP)

ex = os.path.join(BUILD, "tests", "e2e", "work")
out_dir = os.path.join(BUILD, "tests", "output")
os.makedirs(out_dir, exist_ok=True)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    web = os.path.join(tmp, "web")
    shutil.copytree(app, web)
    trace = os.path.join(tmp, "t.bin")
    env = dict(os.environ, SPROF_OUT=trace, SPROF_HZ="1000", SPROF_QUIET="1",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "detect_leaks=0"))
    if len(sys.argv) > 3:
        prog, symmap, shot_name, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
        env["LD_PRELOAD"] = os.path.join(os.environ["SPROF_LIB"], "libsprof.so")
    else:
        prog, symmap, shot_name, args = os.path.join(ex, "app-rt"), os.path.join(ex, "app-rt.symmap"), "speedscope", ["0.6"]
    subprocess.run([prog] + args, env=env, check=True, stdout=subprocess.DEVNULL)
    ss = os.path.join(web, "profile.speedscope.json")
    subprocess.run([os.path.join(BIN, "sprof-export"), trace, symmap, "--speedscope", ss],
                   check=True, stderr=subprocess.DEVNULL)
    doc = json.load(open(ss))
    want = {p["name"]: sum(p["weights"]) / 1e6 for p in doc["profiles"]}

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=web)
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % server.server_address[1]
    url = "%s/index.html#profileURL=%s/profile.speedscope.json" % (base, base)

    def chromium(*extra):
        prof = tempfile.mkdtemp(dir=tmp)
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--virtual-time-budget=10000", "--window-size=1400,800", "--user-data-dir=" + prof] + list(extra) + [url]
        return subprocess.run(cmd, capture_output=True, timeout=120, cwd=tmp)

    r = chromium("--dump-dom")
    dom = r.stdout.decode("utf-8", "replace")
    shot = os.path.join(out_dir, shot_name + ".png")
    chromium("--screenshot=" + shot)
    server.shutdown()

check("Time Order" in dom, "speedscope shows the Time Order view")
title = re.search(r"<title>(.*?)</title>", dom, re.S)
check(title is not None and html.unescape(title.group(1)).startswith(doc["name"].split(" (")[0]),
      "page title is the file's name: %r" % (title.group(1) if title else None))
# the profile selector: <tr title="NAME TID"> ... <td>DURATION</td>
rows = dict(re.findall(r'<tr title="([^"]+)"[^>]*>.*?<td[^>]*>([\d.]+(?:ms|s|µs))</td>', dom, re.S))
rows = {html.unescape(k): v for k, v in rows.items()}
if len(want) == 1:
    # one profile: speedscope shows no selector (no durations), only its name in the toolbar
    only = next(iter(want))
    check(html.escape(only) in dom or only in dom, "the one thread's profile %r is shown" % only)
    rows = {only: "%.2fms" % want[only]}
check(len(want) >= (2 if len(sys.argv) <= 3 else 1) and set(rows) == set(want), "one profile per thread listed: %r (want %r)" % (sorted(rows), sorted(want)))
for name, ms in want.items():
    got = rows.get(name)
    val = None
    if got:
        val = float(got[:-2]) if got.endswith("ms") else float(got[:-2]) / 1000 if got.endswith("µs") else float(got[:-1]) * 1000
    check(val is not None and abs(val - ms) <= max(0.02, 0.001 * ms), "%s: duration %s on the page, %.2f ms in the file" % (name, got, ms))
    check(re.fullmatch(r"\S.* \d+", name) is not None, "profile name %r is 'NAME TID'" % name)
check(os.path.exists(shot) and os.path.getsize(shot) > 1000, "screenshot kept: " + shot)
if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("PASS")
