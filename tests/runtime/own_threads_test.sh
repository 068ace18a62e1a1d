#!/bin/sh
# sprof's writer and sampler threads leave the program in glibc's
# single-thread mode (runtime-stub/src/host/own_threads.c): a program
# without threads of its own reads __libc_single_threaded = 1 under every
# mechanism, and its malloc, mutexes, dlopen and fork work as bare; none of
# sprof's threads calls what that mode leaves unguarded (the guard library,
# preloaded after libsprof.so, reports such calls).
# Usage: own_threads_test.sh PROG GUARD_LIB (env: SPROF_BIN, SPROF_LIB)
set -u
prog=$1 guard=$2
d=$(mktemp -d /tmp/sprof-own-threads-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail=0
bare=$("$prog" 0.2) || { echo "FAIL bare run"; exit 1; }
echo "$bare" | grep -q 'single-threaded at end: 1' || { echo "FAIL bare: $bare"; exit 1; }
for mech in perf_event cpuclock wall; do
    mode=cpu timer=$mech
    [ $mech = wall ] && mode=wall timer=
    [ $mech = perf_event ] && timer=
    rm -f "$d"/t.*
    out=$(timeout -k 5 60 env SPROF_MODE=$mode SPROF_TIMER=$timer SPROF_HZ=2000 SPROF_OUT="$d/t.%p.bin" \
              LD_PRELOAD="$SPROF_LIB/libsprof.so $guard" "$prog" 0.6 2> "$d/err")
    rc=$?
    [ $rc -eq 0 ] || { echo "FAIL $mech: exit status $rc"; cat "$d/err"; fail=1; continue; }
    for want in 'single-threaded at start: 1' 'single-threaded at end: 1' 'dlopen: ok' 'child exit: 7'; do
        echo "$out" | grep -q "$want" || { echo "FAIL $mech: no '$want' in:"; echo "$out"; fail=1; }
    done
    if grep -q 'OWN-THREADS' "$d/err"; then
        echo "FAIL $mech:"; sort "$d/err" | uniq -c; fail=1
    fi
    n=0
    for t in "$d"/t.*.bin; do
        "$SPROF_BIN/sprof-trace" info "$t" > "$d/info" 2>&1 || { echo "FAIL $mech: $t unreadable"; cat "$d/info"; fail=1; }
        n=$((n + 1))
    done
    [ $n -eq 2 ] || { echo "FAIL $mech: $n traces (want the parent's and the child's)"; fail=1; }
    [ $fail -eq 0 ] && echo "ok   $mech: single-threaded mode kept, 2 traces, nothing unguarded on sprof's threads"
done
exit $fail
