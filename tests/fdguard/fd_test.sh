#!/bin/sh
# The program's descriptors and files are untouchable (issue 16, must-have 1).
# Usage: fd_test.sh CASE FORM MECH
#   CASE: closefrom | closeloop | dup2 | takeover (dup2 and F_DUPFD onto the
#         runtime's own numbers) (libc calls: interposed, recording goes
#         on) | rawclose | rawdup (raw system calls, as Go makes them: the
#         identity check stops recording with one warning) | bash (`exec 3>f`)
#   FORM: preload (fd_prog + LD_PRELOAD=libsprof.so) | static (fd_prog_static)
#   MECH: perf_event | cpuclock (SPROF_TIMER)
# Runs the program bare, then profiled, and compares: its own file and stdout
# byte-identical, the same exit status; the trace reads back with samples
# and an END (libc cases) or the one warning was printed (raw cases).
# Env from ctest: SPROF_BIN, SPROF_LIB.
set -u
CASE=$1 FORM=$2 MECH=$3
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-fd-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
mkdir "$DIR/bare" "$DIR/prof"

PROG=$BIN/fd_prog PRELOAD=
[ "$FORM" = preload ] && PRELOAD=$LIB/libsprof.so
[ "$FORM" = static ] && PROG=$BIN/fd_prog_static
# bash: a shell redirecting its own fd 3, writing known lines through it
BASH_SCRIPT='exec 3>own.txt; i=0; while [ $i -lt 20000 ]; do echo "line $i" >&3; i=$((i+1)); done; echo done'

fail() {
    echo "FAIL: $CASE/$FORM/$MECH: $*" >&2
    sed 's/^/  stderr: /' "$DIR/prof/err" >&2 2>/dev/null
    exit 1
}

# run WHERE [profiler env...]: the program in $DIR/WHERE, status in $DIR/WHERE/rc
run() {
    where=$1
    shift
    (
        cd "$DIR/$where" || exit 2
        if [ "$CASE" = bash ]; then
            env "$@" bash -c "$BASH_SCRIPT"
        else
            env "$@" "$PROG" "$CASE"
        fi > out 2> err
        echo $? > rc
    )
}

# the bare run (the static form carries the runtime, which is off without SPROF_OUT)
run bare
[ "$(cat "$DIR/bare/rc")" = 0 ] || { cat "$DIR/bare/err" >&2; echo "FAIL: the bare run failed" >&2; exit 1; }

set -- SPROF_OUT="$DIR/t.bin" SPROF_TIMER="$MECH"
[ -n "$PRELOAD" ] && set -- "$@" LD_PRELOAD="$PRELOAD"
run prof "$@"

for f in own.txt out; do
    cmp -s "$DIR/bare/$f" "$DIR/prof/$f" ||
        fail "$f differs from the bare run ($(wc -c < "$DIR/bare/$f") bytes bare, $(wc -c < "$DIR/prof/$f") profiled)"
done
[ "$(cat "$DIR/prof/rc")" = "$(cat "$DIR/bare/rc")" ] ||
    fail "exit status $(cat "$DIR/prof/rc"), bare $(cat "$DIR/bare/rc")"

"$BIN/sprof-trace" info "$DIR/t.bin" > "$DIR/info" 2>&1
samples=$(sed -n 's/^samples: *\([0-9]*\).*/\1/p' "$DIR/info")
warned=$(grep -c 'recording stopped' "$DIR/prof/err")
case "$CASE" in
rawclose|rawdup)
    [ "$warned" = 1 ] || fail "expected exactly one 'recording stopped' warning, got $warned"
    ;;
*)
    [ "$warned" = 0 ] || fail "recording stopped although every call went through libc"
    grep -q 'no END record' "$DIR/info" && fail "the trace has no END record"
    [ "${samples:-0}" -gt 0 ] || { cat "$DIR/info" >&2; fail "the trace has no samples"; }
    ;;
esac
echo "FDGUARD $CASE $FORM $MECH own.txt=$(wc -c < "$DIR/prof/own.txt")B identical exit=$(cat "$DIR/prof/rc") samples=${samples:-none} warnings=$warned"
