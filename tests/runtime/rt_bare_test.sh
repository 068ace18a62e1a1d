#!/bin/sh
# rt_bare (linked with the plain libsprof_rt.a path) writes a trace with samples.
set -u
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-bare-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
SPROF_OUT="$DIR/t.bin" "$SPROF_BIN/rt_bare" > /dev/null || { echo "FAIL: rt_bare failed"; exit 1; }
[ -f "$DIR/t.bin" ] || { echo "FAIL: no trace: the stub was not linked in"; exit 1; }
info=$("$SPROF_BIN/sprof-trace" info "$DIR/t.bin") || { echo "FAIL: unreadable trace"; exit 1; }
echo "$info"
samples=$(echo "$info" | sed -n 's/^samples: *\([0-9]*\).*/\1/p')
[ "${samples:-0}" -ge 100 ] || { echo "FAIL: only ${samples:-0} samples in 0.3 s of CPU"; exit 1; }
echo "ok: bare link profiles ($samples samples)"
