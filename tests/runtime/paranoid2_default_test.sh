#!/bin/sh
# The default where perf_event may not sample kernel mode
# (perf_event_paranoid 2, an unprivileged user; docs/runtime.md, "Which
# mechanism"): the cpuclock pacer, which samples kernel time at the asked
# rate, not perf_event + the tick (one kernel sample per tick: acc_io got
# 66 % of the asked rate). SPROF_KERNEL=tick still asks for perf_event +
# the tick. Run as root, the program under `nobody` (setpriv); skipped where
# that is not possible or perf_event_paranoid is not 2.
set -eu
BIN=${SPROF_BIN:?run through ctest}
LIB=${SPROF_LIB:?run through ctest}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to run the program as nobody"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: no setpriv"; exit 77; }
[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)" = 2 ] || { echo "SKIP: perf_event_paranoid is not 2"; exit 77; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-paranoid2.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
chmod 777 "$DIR"
as_nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups env SPROF_HZ=1000 SPROF_QUIET=1 \
        LD_PRELOAD="$LIB/libsprof.so" "$@" > /dev/null
}
field() { echo "$1" | sed -n "s/^$2: *//p"; }

as_nobody SPROF_OUT="$DIR/auto.bin" "$BIN/acc_io" quick
info=$("$BIN/sprof-trace" info "$DIR/auto.bin")
echo "$info" | grep -E '^(mechanism|delivered rate|kernel sampling):'
field "$info" mechanism | grep -q '^cpuclock' || { echo "FAIL: the default at paranoid 2 is not cpuclock"; exit 1; }
field "$info" 'kernel sampling' | grep -q '^pacer' || { echo "FAIL: kernel time not drawn by the pacer"; exit 1; }
r=$(echo "$info" | sed -n 's/^delivered rate:.*(\([0-9.]*\)% of asked.*/\1/p')
awk -v r="${r:-0}" 'BEGIN { exit !(r >= 95) }' || { echo "FAIL: ${r:-?}% of the asked rate (want >= 95)"; exit 1; }

as_nobody SPROF_KERNEL=tick SPROF_OUT="$DIR/tick.bin" "$BIN/acc_io" quick
info=$("$BIN/sprof-trace" info "$DIR/tick.bin")
echo "$info" | grep -E '^(mechanism|kernel sampling):'
field "$info" mechanism | grep -q '^perf_event' || { echo "FAIL: SPROF_KERNEL=tick did not keep perf_event"; exit 1; }
field "$info" 'kernel sampling' | grep -q '^tick' || { echo "FAIL: SPROF_KERNEL=tick: kernel sampling is not the tick"; exit 1; }
echo ok
