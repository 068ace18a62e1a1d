#!/bin/sh
# Kernel time drawn at the asked rate by the cpuclock fallback (issue 14),
# on the five real Spinel programs: the pacer signals from the thread's own
# CPU, so system time (up to ~65 % of template's) is sampled like user time.
# Run alone (RUN_SERIAL): beside two other tests on a 2-core machine the
# pacer is starved and lands remotely for most draws, and the trace then
# says "kernel sampling: tick" (template in a CI run beside bench and
# timeline tests, 2026-11-28: 67.5 % delivered + 33.7 % forgiven, tick; its
# second run 93.8 % + 7.5 %, tick) -- true, but not what this measures.
#   >= 99 % delivered on a quiet machine (100.0-104.3 % at 1 kHz on a PVM
#   guest, 2026-11-27); 90 % here for a machine whose vCPUs stall now and
#   then: a pacer starved for more than 20 ms forgives the debt. Forgiven
#   draws are recorded as lost signals: they count towards the rate, which
#   must still be >= 50 % delivered. One more run is allowed, and both are
#   printed. A sanitized build's pacer is slower (wordfreq 83.3 % in an
#   ASan stage): 75 % there.
set -eu
: "${SPROF_BIN:?run through ctest}" "${SPROF_SRC:?run through ctest}" "${SPROF_LIB:?run through ctest}"
CORPUS="$SPROF_SRC/../shared/spinel-corpus"
d=${1:?usage: test_corpus_pacer.sh BUILT_CORPUS_DIR}
[ -f "$CORPUS/build.sh" ] || { echo "SKIP: no Spinel corpus at $CORPUS (it sits beside the checkout in CI)"; exit 77; }
[ -d "$d" ] || { echo "FAIL: no built corpus in $d (the corpus_build fixture)"; exit 1; }
least=90
[ "${SPROF_TEST_SANITIZED:-0}" = 1 ] && least=75
fails=0
progs=$(awk '!/^#/ && NF { print $1 }' "$CORPUS/programs/args.txt")
for p in $progs; do
    args=$(awk -v p="$p" '$1 == p { $1 = ""; print }' "$CORPUS/programs/args.txt")
    # smaller inputs where the program takes one (as corpus_names)
    case "$p" in ao_render) args=64 ;; wordfreq) args=5000000 ;; esac
    verdict=
    for try in 1 2; do
        # shellcheck disable=SC2086
        (cd "$d" && SPROF_OUT="$d/$p.pacer.bin" SPROF_OVERWRITE=1 SPROF_HZ=4000 SPROF_TIMER=cpuclock \
            LD_PRELOAD="$SPROF_LIB/libsprof.so" "./$p" $args > /dev/null 2> "$d/$p.pacer.err") ||
            { echo "FAIL: $p did not run under the cpuclock fallback"; cat "$d/$p.pacer.err"; fails=$((fails + 1)); continue 2; }
        info=$("$SPROF_BIN/sprof-trace" info "$d/$p.pacer.bin")
        r=$(echo "$info" | sed -n 's/^delivered rate:.*(\([0-9.]*\)% of asked.*/\1/p')
        # the forgiven share, as sprof-trace info prints it (none: 0)
        f=$(echo "$info" | sed -n 's/^lost signals: *[0-9]* (\([0-9.]*\)% of the asked samples.*/\1/p')
        f=${f:-0.0}
        line="$p cpuclock: ${r:-?}% of the asked rate + $f% forgiven, $(echo "$info" | grep '^kernel sampling' | cut -c1-60)"
        if echo "$info" | grep -q '^kernel sampling: pacer' &&
            awk -v r="${r:-0}" -v f="$f" -v l="$least" 'BEGIN { exit !(r >= 50 && r + f >= l) }'; then
            verdict="ok   $line${verdict:+ (second run; first: $verdict)}"
            break
        fi
        [ "$try" = 1 ] && verdict=$line || verdict="FAIL: $line (want pacer sampling, >= 50 delivered, >= $least in all; first run: $verdict)"
    done
    echo "$verdict"
    case $verdict in FAIL:*) fails=$((fails + 1)) ;; esac
done
[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
