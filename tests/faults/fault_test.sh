#!/bin/sh
# One cell of the runtime fault matrix. Usage: fault_test.sh CASE FORM MECH
#   CASE: a fault_prog behaviour (see fault_prog.c)
#   FORM: preload (fault_prog + LD_PRELOAD=libsprof.so) | static (fault_prog_static,
#         linked with -Wl,--whole-archive libsprof_rt.a) | tsan (fault_prog_tsan, both
#         built with -fsanitize=thread: tests/tsan, -DSPROF_TSAN=ON)
#   MECH: perf_event | cpuclock (SPROF_TIMER); where perf_event_open is refused
#         the runtime falls back to cpuclock and the line says so
# Passes when the program's exit status is its own (0; 139 for segv), it ends
# before the watchdog, and every trace it left reads back with
# `sprof-trace info`. Prints one line:
#   FAULT CASE FORM MECH ran=MECHANISM exit=N traces=N samples=N dropped=N truncated=N delivered=P%
# (delivered: of SPROF_HZ x CPU seconds, per trace; informative, not checked here:
# the rate tests in tests/runtime check it on quiet workloads)
# Env from ctest: SPROF_BIN, SPROF_LIB. FAULT_SECS (default 1) sets the run length.
set -u
CASE=$1 FORM=$2 MECH=$3
BIN=${SPROF_BIN:?} LIB=${SPROF_LIB:?}
SECS=${FAULT_SECS:-1}
WATCHDOG=${FAULT_WATCHDOG:-45}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/sprof-fault-XXXXXX")
trap 'rm -rf "$DIR"' EXIT
cd "$DIR" || exit 2
ulimit -c 0 # the segv case must not leave a core behind

# LD_PRELOAD goes on the program only, not on `timeout` (which forks it)
if [ "$FORM" = preload ]; then
    PROG=$BIN/fault_prog
    set -- env LD_PRELOAD="$LIB/libsprof.so"
elif [ "$FORM" = tsan ]; then
    # tests/tsan: runtime + program built with -fsanitize=thread (linked form).
    # die_after_fork=0: with SPROF_OUT=...%p a forked child starts its own
    # writer thread, which TSan refuses by default in the child of a threaded
    # process (a lock held by another parent thread would stay locked); the
    # runtime's atfork handlers take its own locks around fork, which is what
    # makes that safe. handle_segv=0: the segv case must die of its signal
    # through the runtime's fatal handler, not TSan's report.
    PROG=$BIN/fault_prog_tsan
    set -- env TSAN_OPTIONS="${TSAN_OPTIONS:-die_after_fork=0:handle_segv=0:second_deadlock_stack=1}"
else
    PROG=$BIN/fault_prog_static
    set -- env
fi
fail() {
    echo "FAIL: $CASE/$FORM/$MECH: $*" >&2
    sed 's/^/  stderr: /' err >&2 2>/dev/null
    sed 's/^/  info: /' info >&2 2>/dev/null # the last trace's, when one was read
    exit 1
}

want=0
extra=
case "$CASE" in
segv) want=139 ;; # 128 + SIGSEGV: the program's own death, default action kept
dlopen) extra=$LIB/libfault_dl.so ;;
esac

# %p: fork's child and fork+exec's new image each get their own file
timeout -k 5 "$WATCHDOG" "$@" SPROF_OUT="t.%p.bin" SPROF_HZ=10000 SPROF_TIMER="$MECH" \
    "$PROG" "$CASE" "$SECS" $extra > out 2> err
rc=$?
cat out
[ $rc -eq 124 ] || [ $rc -eq 137 ] && fail "watchdog: still running after ${WATCHDOG}s (deadlock?)"
[ $rc -eq $want ] || fail "exit status $rc, the program's own is $want"

traces=0 samples=0 dropped=0 truncated=0 ran= delivered=
for t in t.*.bin; do
    [ -f "$t" ] || continue
    "$BIN/sprof-trace" info "$t" > info 2> ierr || { cat ierr >&2; fail "$t does not read back"; }
    [ -s ierr ] && { cat ierr >&2; fail "$t: reader complained"; }
    traces=$((traces + 1))
    s=$(sed -n 's/^samples: *\([0-9]*\).*/\1/p' info)
    d=$(sed -n 's/^dropped: *\([0-9]*\).*/\1/p' info)
    u=$(sed -n 's/^truncated: *\([0-9]*\).*/\1/p' info)
    m=$(sed -n 's/^mechanism: *//p' info)
    p=$(sed -n 's/^delivered rate:.*(\([0-9.]*%\) of asked.*/\1/p' info)
    delivered="${delivered:+$delivered,}${p:-?}"
    samples=$((samples + s)) dropped=$((dropped + d)) truncated=$((truncated + u))
    case " $ran " in *" $m "*) ;; *) ran="${ran:+$ran,}$m" ;; esac
    grep -q '^truncated:' info || fail "$t: no truncation count"
    # Every exit path closes the file with END, except a fatal signal that
    # lands while the writer holds the file (docs/runtime.md: the handler
    # then leaves the file as it is, readable up to the cut).
    if grep -qi 'no END' info; then
        [ "$CASE" = segv ] || fail "$t: not closed cleanly (no END record)"
        echo "note: $t has no END (the SIGSEGV hit mid-write); read up to the cut"
    fi
done
line="FAULT $CASE $FORM $MECH ran=${ran:-none} exit=$rc traces=$traces samples=$samples dropped=$dropped truncated=$truncated delivered=${delivered:-none}"
echo "$line"
[ "$traces" -ge 1 ] || fail "no trace written"
grep -q 'ThreadSanitizer' err && fail "ThreadSanitizer report"
grep -v '^sprof: ' err | grep -q . && [ "$CASE" != segv ] && [ "$CASE" != fork_exec ] && fail "unexpected stderr"

# case-specific expectations
case "$CASE" in
fork)
    [ "$traces" -eq 2 ] || fail "expected the parent's and the child's traces, got $traces"
    # the child keeps the handler it inherits: it is the runtime's, not the program's
    grep -q 'already has a handler' err && fail "the forked child took the runtime's own handler for the program's"
    ;;
fork_exec)
    # the child execs at once: no file of its own before the exec, and the new
    # image (same pid, same %p name) writes a clean trace, no "exists" refusal
    [ "$traces" -eq 2 ] || fail "expected the parent's and the exec'd child's traces, got $traces"
    grep -q 'exists' err && fail "the exec'd image found its name taken"
    ;;
deep)
    # 10,000 frames against a depth cap of 256: nearly every sample is cut.
    # Not under TSan: there the program's signals wait for its next
    # interceptor (a run of 2-6 cpuclock samples had 1-4 at main's strcmp,
    # before the recursion), and the linked-in runtime's handler, itself
    # instrumented, is sampled as the program's (its walks of the deep
    # stack: ~1 % of the samples here). A CI run read 88 truncated of 299
    # perf_event samples, 4.3 % delivered (cause unseen; a failure now
    # prints the trace's info). Where samples land is TSan's doing there;
    # the cut must still be counted.
    if [ "$FORM" = tsan ]; then
        [ "$MECH" = cpuclock ] || [ "$truncated" -ge 1 ] || fail "deep stacks not counted as truncated ($truncated of $samples)"
    else
        [ "$truncated" -ge $((samples / 2)) ] || fail "deep stacks not counted as truncated ($truncated of $samples)"
    fi
    # ~3 KiB samples fill a ring 8x faster than the writer's first guess: it
    # must adapt its pass period (it dropped half of them when it did not;
    # a writer starved of CPU on a loaded machine drops some anyway: 10.7 %
    # once in a CI run beside four other builds)
    [ "$dropped" -le $((samples / 4)) ] || fail "deep stacks: $dropped dropped against $samples written"
    ;;
dlopen)
    "$BIN/sprof-symmap" "$PROG" -o prog.symmap --quiet 2> serr || { cat serr >&2; fail "sprof-symmap failed"; }
    "$BIN/sprof-fold" t.*.bin prog.symmap > folded 2> ferr || { cat ferr >&2; fail "sprof-fold failed"; }
    grep -q 'fault_dl_hot' folded || { head -5 folded >&2; fail "frames of the dlopen()ed library not named"; }
    ;;
sigprof)
    grep -q 'own SIGPROF handler hits' out || fail "the program's handler report is missing"
    ;;
esac
# Under TSan the program's signals are held by TSan until its next
# interceptor or system call and handed over there: the cpuclock pacer's
# landings look like system-call returns and its delivered rate swings from
# 1 % to 100 % between runs (measured at 10 kHz, before and after the
# keyed carry): there the runtime must work, not deliver.
min=10
[ "$FORM" = tsan ] && [ "$MECH" = cpuclock ] && min=1
[ "$samples" -ge $min ] || fail "too few samples ($samples)"
exit 0
