#!/bin/sh
# sprof-record end to end (docs/user-guide.md, "sprof-record").
# Usage: record_test.sh CASE
#   formats      -o .svg/.folded/.pb.gz/.speedscope.json/.bin each written, named
#                through the symmap sprof-record made from the program's DWARF
#   exit_status  the command's status is sprof-record's: exit 3; 128+N when
#                signal N ends it; a profile is still written
#   wrapped      `sh -c './app ...; true'` (the shell forks and waits): the
#                profile is the program's, not the shell's
#   duration     --duration stops a long program (and the program behind a
#                shell wrapper, not only the shell) and still gives a profile
#   linked       a program with libsprof_rt.a linked in gets no second, preloaded runtime
#   usage        no command: 2; unknown command: 127; bad -o name: 2; --help: 0
#   corpus       a ../shared/spinel-corpus program: Ruby method names
# Env from ctest: SPROF_BIN, SPROF_SRC.
set -u
CASE=$1
BIN=${SPROF_BIN:?} SRC=${SPROF_SRC:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-record-test.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2
cp "$BIN/exit_prog" ./app || exit 2
REC="$BIN/sprof-record"

fail() { echo "FAIL: $CASE: $*" >&2; sed 's/^/  stderr: /' err >&2 2>/dev/null; exit 1; }
# the profile's stacks must be the program's: main;burn...
has_burn() { grep -q '^main;burn' "$1" || fail "$1 has no main;burn stack: $(head -3 "$1")"; }

case $CASE in
formats)
    for out in p.svg p.folded p.pb.gz p.speedscope.json p.bin; do
        "$REC" -o "$out" -- ./app spin 0.3 > out 2> err || fail "-o $out: exit $?"
        [ "$(cat out)" = ok ] || fail "-o $out: the program's stdout changed"
        [ -s "$out" ] || fail "-o $out: nothing written"
        grep -q "^sprof-record: wrote $out (" err || fail "-o $out: no 'wrote' line"
        grep -q '^sprof: .*: [0-9]* samples, ' err || fail "-o $out: no exit line from the runtime"
        grep -q ' burn  *.*exit_prog.c:' err || fail "-o $out: top methods lack burn with its source line"
    done
    grep -q '<svg' p.svg && grep -q 'burn' p.svg || fail "p.svg is not a flame graph of the program"
    has_burn p.folded
    gzip -t p.pb.gz || fail "p.pb.gz is not gzip"
    grep -q 'speedscope.app/file-format-schema' p.speedscope.json || fail "not speedscope JSON"
    [ -s p.bin.symmap ] || fail "the symmap made for p.bin was not kept beside it"
    "$BIN/sprof-fold" p.bin p.bin.symmap > again.folded 2> err || fail "sprof-fold of the kept trace"
    has_burn again.folded
    "$REC" -q -o q.folded -- ./app spin 0.1 > out 2> err || fail "-q: exit $?"
    [ -s err ] && fail "-q: stderr not empty"
    has_burn q.folded
    ;;
exit_status)
    "$REC" -q -o e.folded -- sh -c './app spin 0.2 > /dev/null; exit 3' 2> err
    rc=$?
    [ $rc = 3 ] || fail "exit 3 came back as $rc"
    # the shell's own CPU: far below hz/10 samples, so the trace is the program's
    has_burn e.folded
    "$REC" -q -o k.folded -- ./app spin 30 > /dev/null 2> err &
    pid=$!
    sleep 1
    kill -TERM $pid # forwarded to the command
    wait $pid
    rc=$?
    [ $rc = 143 ] || fail "killed by SIGTERM came back as $rc, want 143"
    has_burn k.folded
    ;;
wrapped)
    "$REC" -o w.folded -- sh -c './app spin 0.3; true' > out 2> err || fail "exit $?"
    has_burn w.folded
    # the shell's own code would show as its module (no symbols): none may;
    # the program's start and exit paths (_start;...;exit;_dl_fini) and
    # lazy binding (_dl_runtime_resolve...) are the program's own time
    grep -E '(^|;)(sh|dash|bash)\+0x' w.folded && fail "stacks of the shell in the program's profile"
    grep -q '^main;' w.folded || fail "no stack under main"
    [ "$(grep -c '^sprof: ' err)" = 1 ] || fail "expected one exit line (the program's)"
    ;;
duration)
    start=$(date +%s)
    "$REC" -q -o d.folded --duration 1 -- ./app spin 60 > /dev/null 2> err
    rc=$?
    [ $rc = 130 ] || fail "stopped by --duration (SIGINT): exit $rc, want 130"
    has_burn d.folded
    # behind a forking shell the program itself must stop, not only the shell
    "$REC" -q -o s.folded --duration 1 -- sh -c './app spin 60; true' > /dev/null 2> err
    has_burn s.folded
    took=$(($(date +%s) - start))
    [ $took -lt 30 ] || fail "--duration 1 twice took ${took}s"
    ls /proc/*/exe -l 2> /dev/null | grep -q "$DIR/app" && fail "the program still runs after --duration"
    ;;
linked)
    # the runtime linked in: sprof-record must not preload a second copy
    # (exit_prog_static: tests/exitline's program with the runtime linked in)
    cp "$BIN/exit_prog_static" ./linked || exit 2
    "$REC" -o l.folded -- ./linked spin 0.3 > out 2> err || fail "exit $?"
    has_burn l.folded
    grep -q 'pre-exec\|cut short' err && fail "two runtimes fought over the trace"
    [ "$(grep -c '^sprof: ' err)" = 1 ] || fail "expected one exit line"
    ;;
usage)
    "$REC" > out 2> err; rc=$?
    [ $rc = 2 ] || fail "no command: exit $rc, want 2"
    grep -q '^sprof-record: no command given' err || fail "no command: no message"
    "$REC" -- ./no-such-program > out 2> err; rc=$?
    [ $rc = 127 ] || fail "unknown command: exit $rc, want 127"
    grep -q '^sprof-record: ./no-such-program: No such file or directory' err || fail "unknown command: message"
    "$REC" -o x.png -- ./app empty > out 2> err; rc=$?
    [ $rc = 2 ] || fail "-o x.png: exit $rc, want 2"
    [ -s out ] && fail "-o x.png: the command ran"
    "$REC" --hz 0 -- ./app empty > out 2> err; rc=$?
    [ $rc = 2 ] || fail "--hz 0: exit $rc, want 2"
    "$REC" --mechanism fast -- ./app empty > out 2> err; rc=$?
    [ $rc = 2 ] || fail "--mechanism fast: exit $rc, want 2"
    "$REC" --help > out 2> err || fail "--help: exit $?"
    grep -q '^usage: sprof-record' out || fail "--help: usage not on stdout"
    ;;
corpus)
    CORPUS="$SRC/../shared/spinel-corpus"
    [ -f "$CORPUS/build.sh" ] || { echo "SKIP: no Spinel corpus at $CORPUS"; exit 77; }
    bash "$CORPUS/build.sh" "$DIR/c" > build.log 2>&1 || { cat build.log; fail "corpus build"; }
    cd "$DIR/c" || exit 2
    # no symmap beside the binary: sprof-record makes one (with json_parse.symbols.json)
    "$REC" -o jp.folded --duration 2 -- ./json_parse > /dev/null 2> "$DIR/err"
    cd "$DIR" || exit 2
    grep -q 'JSONParser#parse' c/jp.folded || fail "no Ruby method names: $(head -3 c/jp.folded)"
    grep -q '^sprof-record: wrote jp.folded' err || fail "no 'wrote' line"
    ;;
*) echo "unknown case $CASE" >&2; exit 2 ;;
esac
echo "PASS: $CASE"
