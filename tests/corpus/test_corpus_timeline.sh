#!/bin/sh
# Time and threads on real Spinel output (issue 18): gcbench from
# ../shared/spinel-corpus (built with its build.sh) in sprof's timeline page
# and speedscope's app in headless Chromium (tests/output/
# timeline_browser_test.py and speedscope_browser_test.py: the
# selection's flame graph against sprof-fold --from/--to, the collector's
# spans confirmed by sprof-fold), and its pprof export read by
# `go tool pprof -tags` (thread, tid, time, class). Skips without the corpus
# or chromium.
set -u
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(cd "$here/../../.." 2>/dev/null && pwd)/shared/spinel-corpus
[ -x "$corpus/build.sh" ] || { echo "SKIP: ../shared/spinel-corpus is not beside the checkout"; exit 77; }
command -v chromium >/dev/null 2>&1 || { echo "SKIP: no chromium"; exit 77; }
d=$(mktemp -d /tmp/sprof-corpus-tl-XXXXXX)
trap 'rm -rf "$d"' EXIT
bash "$corpus/build.sh" "$d/c" >"$d/build.log" 2>&1 || { tail "$d/build.log"; echo "FAIL: corpus build"; exit 1; }
"$SPROF_BIN/sprof-symmap" "$d/c/gcbench" -o "$d/c/gcbench.symmap" --quiet 2>/dev/null || { echo "FAIL: sprof-symmap"; exit 1; }
python3 "$here/../output/timeline_browser_test.py" "$d/c/gcbench" "$d/c/gcbench.symmap" timeline-gcbench || exit 1
# speedscope's own app on gcbench's export (exit 77: no npm package, offline)
python3 "$here/../output/speedscope_browser_test.py" "$d/c/gcbench" "$d/c/gcbench.symmap" speedscope-gcbench
rc=$?; [ $rc = 0 ] || [ $rc = 77 ] || exit 1
if command -v go >/dev/null 2>&1; then
  SPROF_QUIET=1 SPROF_OUT="$d/g.bin" SPROF_HZ=1000 LD_PRELOAD="$SPROF_LIB/libsprof.so" "$d/c/gcbench" >/dev/null || exit 1
  "$SPROF_BIN/sprof-export" "$d/g.bin" "$d/c/gcbench.symmap" --pprof "$d/g.pb.gz" 2>/dev/null || { echo "FAIL: export"; exit 1; }
  timeout 120 go tool pprof -tags "$d/g.pb.gz" >"$d/tags" 2>&1
  for k in thread tid time class; do
    grep -q "^ *$k: " "$d/tags" || { echo "FAIL: go tool pprof -tags lacks $k"; head -20 "$d/tags"; exit 1; }
  done
  grep -q "gcbench" "$d/tags" && grep -A6 '^ *class: ' "$d/tags" | grep -q ': gc$' ||
    { echo "FAIL: pprof tags: thread gcbench / class gc"; head -30 "$d/tags"; exit 1; }
  echo "ok   go tool pprof -tags on gcbench: thread, tid, time, class (gc among them)"
fi
echo PASS
