#!/bin/sh
# Two programs of one run side by side, one SPROF_OUT: one of them writes
# the trace; the other says which process holds the name and that a %p in
# SPROF_OUT gives each its own file, not "set SPROF_OVERWRITE=1" (which
# would replace the other's trace); one that starts after the holder ended
# names it and both remedies. Env from ctest: SPROF_BIN, SPROF_LIB.
set -u
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-pipe-XXXXXX")
DIR=$(cd "$DIR" && pwd -P)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2
cp "$BIN/exit_prog" ./app || exit 2
fail() { echo "FAIL: pipeline: $*" >&2; sed 's/^/  stderr: /' err >&2 2>/dev/null; ls -la >&2; exit 1; }

SPROF_OUT=w.bin LD_PRELOAD="$LIB/libsprof.so" bash -c './app spin 0.3 & ./app spin 0.3; wait; ./app spin 0.05' \
    >out 2>err || fail "the pipeline failed"
[ "$(ls w.bin* | tr '\n' ' ')" = "w.bin " ] || fail "expected one trace, w.bin"
holder=$("$BIN/sprof-trace" info w.bin | sed -n 's/^executable: .*\/app (pid \([0-9]*\)).*/\1/p')
[ -n "$holder" ] || fail "w.bin is not an app's trace"
grep -q "^sprof: w.bin is being written by pid $holder (app); this process (app) runs unprofiled (a %p in SPROF_OUT gives each process its own file)$" err ||
    fail "the other app does not name the trace's holder"
grep 'being written' err | grep -q 'SPROF_OVERWRITE' && fail "advises SPROF_OVERWRITE, which would replace the other program's trace"
grep -q "^sprof: w.bin exists (the trace of pid $holder, ended); not overwriting it; running unprofiled (set SPROF_OVERWRITE=1 to replace it, or put %p in SPROF_OUT for a file per process)$" err ||
    fail "the app after them does not name the ended trace's holder"
[ "$(wc -l <err)" -eq 3 ] || fail "expected the holder's exit line and one line from each of the others"
echo "PASS: pipeline: pid $holder holds w.bin, the other says so"
