#!/bin/sh
# A profiled program behind a wrapper (docs/runtime.md, "Wrappers and process
# trees"): SPROF_OUT and LD_PRELOAD are inherited by the wrapper, which starts
# profiling first; the trace must still be the program's, one file, and the
# program's stderr must hold nothing but sprof's one exit line (nothing at
# all with SPROF_QUIET=1).
# Usage: wrapper_test.sh CASE
#   CASE: sh_c (sh -c ./app) | bash_fork (bash -c './app; true': forks, waits)
#         | timeout (timeout 5 ./app) | env (env X=1 ./app) | make (a Makefile running ./app)
#         | helper (a profiled program, bash busy for ~0.3 s, then running ./app as a
#           helper: the trace stays the program's, the helper runs unprofiled, silently)
#         | shim (a version manager's shim: a shell that runs tiny helpers, each in a
#           $(...) of its own, then execs ./app: pyenv's python3 left the name to
#           its first helper, and python ran unprofiled)
#         | timeout_short (timeout 5 ./app running 30 ms: a short program behind a
#           wrapper keeps the name, it is no helper)
#         | shim_nested (a helper that takes a few samples, its output read by a
#           subshell of the shim, not the shim itself: pyenv's abs_dirname runs
#           readlink in $(...) inside ( ... ) inside $(...); python ran unprofiled
#           with 30 "exists; not overwriting" lines)
# Env from ctest: SPROF_BIN, SPROF_LIB.
set -u
CASE=$1
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-wrap-XXXXXX")
DIR=$(cd "$DIR" && pwd -P) # the exit line names the file by its real full name
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2
cp "$BIN/exit_prog" ./app || exit 2
printf 'all:\n\t./app spin 0.3\n' > Makefile

fail() { echo "FAIL: $CASE: $*" >&2; sed 's/^/  stderr: /' err >&2 2>/dev/null; ls -la >&2; exit 1; }

# the wrapper command line, run with the profiler; stdout in out, stderr in err
wrapped() {
    case $CASE in
    sh_c) set -- sh -c './app spin 0.3' ;;
    bash_fork) set -- bash -c './app spin 0.3; true' ;;
    timeout) set -- timeout 5 ./app spin 0.3 ;;
    env) set -- env X=1 ./app spin 0.3 ;;
    make) set -- make -s ;;
    helper) set -- bash -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; ./app spin 0.1; true' ;;
    shim) set -- bash -c 'a=$(readlink -f ./app); b=$(uname); c=$(id -u); exec ./app spin 0.3' ;;
    timeout_short) set -- timeout 5 ./app spin 0.03 ;;
    shim_nested) set -- bash -c 'd=$( ( p="$(./app spin 0.02 || true)"; echo "$p" ) ); exec ./app spin 0.3' ;;
    *) echo "unknown case $CASE" >&2; exit 2 ;;
    esac
    env "$@" > out 2> err
}

for quiet in 0 1; do
    rm -f w.bin*
    export SPROF_OUT=w.bin SPROF_QUIET=$quiet LD_PRELOAD="$LIB/libsprof.so"
    wrapped || fail "command failed"
    unset LD_PRELOAD SPROF_OUT SPROF_QUIET
    [ "$(cat out)" = ok ] || fail "stdout changed: $(cat out)"
    [ "$(ls w.bin* | tr '\n' ' ')" = "w.bin " ] || fail "expected one trace, w.bin"
    "$BIN/sprof-trace" info w.bin > info.txt || fail "sprof-trace info failed"
    want=/app
    [ "$CASE" = helper ] && want=bash
    grep -q "^executable: .*$want (pid" info.txt || fail "w.bin is not the program's: $(grep executable info.txt)"
    grep -q "^ended: *exit (clean)" info.txt || fail "w.bin did not end cleanly"
    n=$(sed -n 's/^samples: *\([0-9]*\).*/\1/p' info.txt)
    least=100
    [ "$CASE" = timeout_short ] && least=10
    [ "${n:-0}" -ge $least ] || fail "only ${n:-0} samples (want $least)"
    if [ $quiet = 1 ]; then
        [ -s err ] && fail "SPROF_QUIET=1 but stderr is not empty"
    else
        [ "$(wc -l < err)" -eq 1 ] || fail "expected exactly sprof's exit line on stderr"
        grep -q "^sprof: $DIR/w.bin: $n samples, " err || fail "the exit line is not the program's trace: $(cat err)"
    fi
done
echo "PASS: $CASE: $(cat info.txt | sed -n 's/^samples: *//p') samples in w.bin"
