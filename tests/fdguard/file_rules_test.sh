#!/bin/sh
# SPROF_OVERWRITE replaces only a regular file the user owns (issue 16,
# must-have 4): with SPROF_OVERWRITE=1, SPROF_OUT naming a FIFO, a socket, a
# directory, a device node (mknod: root only) or another user's file (chown:
# root only) leaves it as it was, says what is wrong on stderr, and the
# program runs unprofiled with its own exit status. A directory is named as
# such, without the "set SPROF_OVERWRITE=1" advice. The user's own regular
# file is replaced (the control).
# Usage: file_rules_test.sh FORM (preload | static). Env: SPROF_BIN, SPROF_LIB.
set -u
FORM=$1
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-rules-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2
PROG=$BIN/fd_prog PRELOAD=
if [ "$FORM" = preload ]; then PRELOAD=$LIB/libsprof.so; else PROG=$BIN/fd_prog_static; fi

fail() { echo "FAIL: $*" >&2; sed 's/^/  stderr: /' err >&2; exit 1; }

# profile NAME [extra env]: the program with SPROF_OVERWRITE=1 SPROF_OUT=NAME
profile() {
    name=$1
    shift
    # SPROF_QUIET: no exit line (tests/exitline checks it); refusals still print
    env ${PRELOAD:+LD_PRELOAD="$PRELOAD"} SPROF_QUIET=1 "$@" SPROF_OUT="$name" "$PROG" plain > out 2> err
    [ $? = 0 ] || fail "$name: exit status not the program's own"
}

# refused NAME TYPE MESSAGE: NAME is still of TYPE (stat %F) and stderr says MESSAGE
refused() {
    profile "$1" SPROF_OVERWRITE=1
    [ "$(stat -c %F "$1")" = "$2" ] || fail "$1: was $2, now $(stat -c %F "$1")"
    grep -q "$3" err || fail "$1: no message '$3'"
    grep -q 'running unprofiled' err || fail "$1: the message does not say the program runs unprofiled"
    echo "refused $2: $(cat err)"
}

mkfifo fifo
refused fifo fifo "is a FIFO"
"$PROG" mksock sock || fail "cannot create a socket"
refused sock socket "is a socket"
mkdir dir
refused dir directory "is a directory"
grep -q 'set SPROF_OVERWRITE' err && fail "dir: still advises SPROF_OVERWRITE"
profile dir
grep -q 'set SPROF_OVERWRITE' err && fail "dir (no SPROF_OVERWRITE): advises SPROF_OVERWRITE"
grep -q 'is a directory' err || fail "dir (no SPROF_OVERWRITE): does not say it is a directory"
[ -z "$(ls dir)" ] || fail "dir: something was written into it"

if [ "$(id -u)" = 0 ]; then
    mknod null c 1 3 || fail "mknod failed as root"
    refused null "character special file" "is a character device"
    echo keep > other
    chown nobody other || fail "chown nobody failed as root"
    refused other "regular file" "belongs to another user"
    [ "$(cat other)" = keep ] && [ "$(stat -c %U other)" = nobody ] || fail "other: content or owner changed"
else
    echo "SKIP: device node and another user's file need root (mknod, chown)"
fi

# the control: the user's own regular file is replaced by a trace
echo keep > mine
profile mine SPROF_OVERWRITE=1
[ -s err ] && fail "mine: unexpected message"
"$BIN/sprof-trace" info mine > /dev/null || fail "mine: not replaced by a readable trace"
echo "replaced the user's own file: ok"
