#!/bin/sh
# Time and threads in the exports (issue 18): the example (two threads) is
# profiled once; its speedscope export must hold one profile per thread,
# named "NAME TID", whose weights sum to that thread's CPU in the trace (as
# sprof-fold --threads counts it) and whose samples run in time order; its
# pprof export must label every sample with thread, tid and time, read back
# by `go tool pprof -tags` / `-tagfocus` (skipped without go).
set -u
fail=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fail=1; }
ex=$SPROF_BUILD/tests/e2e/work
d=$(mktemp -d /tmp/sprof-timeline-XXXXXX)
trap 'rm -rf "$d"' EXIT
[ -x "$ex/app-rt" ] || { echo "FAIL: the example is not built (the e2e_build test sets it up)"; exit 1; }
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} SPROF_QUIET=1 SPROF_OUT="$d/t.bin" SPROF_HZ=1000 \
  "$ex/app-rt" 0.6 >/dev/null 2>&1 || { echo "FAIL: the example failed"; exit 1; }
"$SPROF_BIN/sprof-export" "$d/t.bin" "$ex/app-rt.symmap" --speedscope "$d/t.speedscope.json" --pprof "$d/t.pb.gz" \
  2>"$d/err" || { cat "$d/err"; echo "FAIL: sprof-export"; exit 1; }
"$SPROF_BIN/sprof-fold" --threads --weight=cpu "$d/t.bin" "$ex/app-rt.symmap" -o "$d/threads.folded" 2>/dev/null ||
  bad "sprof-fold --threads"
python3 - "$d" <<'PY' && ok "speedscope: one time-ordered profile per thread, weights = each thread's CPU" || fail=1
import json, re, sys
d = sys.argv[1]
doc = json.load(open(f"{d}/t.speedscope.json"))
profs = doc["profiles"]
per_thread = {}
for line in open(f"{d}/threads.folded"):
    stack, n = line.rsplit(" ", 1)
    m = re.match(r"\[thread (?:(.*) )?(\d+)\]", stack.split(";")[0])
    per_thread[m.group(2)] = per_thread.get(m.group(2), 0) + int(n)
bad = []
if len(profs) < 2:
    bad.append(f"{len(profs)} profiles (the example has two threads)")
for p in profs:
    m = re.fullmatch(r"(\S.*) (\d+)", p["name"])
    if not m:
        bad.append(f"profile name {p['name']!r} is not 'NAME TID'")
        continue
    tid = m.group(2)
    total = sum(p["weights"])
    want = per_thread.get(tid)
    if p["unit"] != "nanoseconds" or p["endValue"] - p["startValue"] != total:
        bad.append(f"{p['name']}: unit {p['unit']}, {p['startValue']}..{p['endValue']} for weights {total}")
    if want is None or abs(total - want) > 0.001 * want + 1:
        bad.append(f"{p['name']}: weights {total} ns, sprof-fold --threads says {want}")
    if len(p["samples"]) != len(p["weights"]) or not p["samples"]:
        bad.append(f"{p['name']}: {len(p['samples'])} samples, {len(p['weights'])} weights")
    nframes = len(doc["shared"]["frames"])
    if any(i >= nframes for s in p["samples"] for i in s):
        bad.append(f"{p['name']}: a frame index out of range")
starts = [p["startValue"] for p in profs]
if not 0 <= doc["activeProfileIndex"] < len(profs):
    bad.append("activeProfileIndex out of range")
if bad:
    print("FAIL: " + "; ".join(bad))
    sys.exit(1)
print("threads:", ", ".join(f"{p['name']} {sum(p['weights']) / 1e6:.1f} ms from {p['startValue'] / 1e6:.1f} ms" for p in profs))
PY
if command -v go >/dev/null 2>&1; then
  if timeout 120 go tool pprof -tags "$d/t.pb.gz" >"$d/tags" 2>&1; then
    grep -q '^ *thread: ' "$d/tags" && grep -q '^ *tid: ' "$d/tags" && grep -q '^ *time: ' "$d/tags" &&
      ok "go tool pprof -tags lists thread, tid and time" || { bad "pprof tags"; head -20 "$d/tags"; }
    name=$(awk '/^ *thread: /{f=1; next} f && NF {print $NF; exit}' "$d/tags")
    timeout 120 go tool pprof -top -tagfocus "thread=$name" "$d/t.pb.gz" >"$d/top" 2>&1 &&
      grep -q "tagfocus=thread=$name" "$d/top" && ok "go tool pprof -tagfocus thread=$name" ||
      { bad "pprof -tagfocus"; head -20 "$d/top"; }
  else
    bad "go tool pprof -tags failed"; head -5 "$d/tags"
  fi
else
  echo "skip go tool pprof checks: go is not installed (golang-go)"
fi
# wall mode: the second thread's waits are off-CPU samples, a class of the
# timeline page and of pprof's class label
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} SPROF_MODE=wall SPROF_QUIET=1 SPROF_OUT="$d/w.bin" SPROF_HZ=1000 \
  "$ex/app-rt" 0.5 >/dev/null 2>&1 || bad "the example in wall mode"
"$SPROF_BIN/sprof-export" "$d/w.bin" "$ex/app-rt.symmap" --timeline "$d/w.html" 2>/dev/null || bad "export --timeline (wall)"
python3 - "$d/w.html" <<'PY' && ok "timeline page: off-CPU samples in wall mode" || fail=1
import html, json, re, sys
d = json.loads(html.unescape(re.search(r'<script type="application/json" id="data">(.*?)</script>',
                                       open(sys.argv[1]).read(), re.S).group(1)))
off = d["classes"].index("off-CPU")
counts = {t["name"] + " " + str(t["tid"]): t["c"].count(off) for t in d["threads"]}
print("off-CPU samples per thread:", counts)
sys.exit(0 if sum(counts.values()) > 0 else 1)
PY
exit $fail
