#!/bin/sh
# bench_scripts_smoke: bench/accuracy/run.sh and bench/corpus/run.sh end to
# end on their smallest form (one round, one case / one program), so that a
# change to what the programs need (a library to link, a column to parse)
# breaks a test rather than the next full run. Figures are not checked.
set -u
: "${SPROF_SRC:?run through ctest}" "${SPROF_BUILD:?run through ctest}"
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-scripts-XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "bench_scripts_smoke: $*"; echo "--- stdout"; cat "$out/o"; echo "--- stderr"; tail -20 "$out/e"; exit 1; }

# the accuracy suite: the page-fault case (links libm) and rperf's busy-wait
SPROF_BUILD=$SPROF_BUILD bash "$SPROF_SRC/bench/accuracy/run.sh" --quick --runs 1 pagefault clockwait \
    >"$out/o" 2>"$out/e" || fail "bench/accuracy/run.sh exited $?"
for c in pagefault clockwait; do
    for w in samples cpu; do
        line=$(grep -E "^$c +$w " "$out/o") || fail "no accuracy row $c $w"
        # each sprof mechanism's cell holds a figure and a verdict
        n=$(echo "$line" | grep -Eo '[0-9.]+ \([0-9.]+-[0-9.]+\)[^A-Z]*(PASS|MISS)' | wc -l)
        [ "$n" -ge 3 ] || fail "accuracy row $c $w has $n figures (want >= 3: the three sprof mechanisms)"
    done
done

# the corpus table, when the corpus sits beside the checkout
if [ -f "$SPROF_SRC/../shared/spinel-corpus/build.sh" ]; then
    SPROF_BUILD=$SPROF_BUILD bash "$SPROF_SRC/bench/corpus/run.sh" --runs 1 --hz "1000 2000" wordfreq \
        >"$out/o" 2>"$out/e" || fail "bench/corpus/run.sh exited $?"
    for hz in 1000 2000; do
        line=$(grep -E "^wordfreq +$hz " "$out/o") || fail "no corpus row at $hz Hz"
        # program x bare for sprof and cpuclock, and both delivered rates
        echo "$line" | awk '{ exit !($3 ~ /^[0-9.]+$/ && $4 ~ /^[0-9.]+$/ && $(NF - 1) ~ /^[0-9.]+/ && $NF ~ /^[0-9.]+/) }' ||
            fail "corpus row at $hz Hz lacks figures: $line"
    done
    grep -Eq '^ +cpuclock +[0-9.]+ pp' "$out/o" || fail "no cpuclock line in the corpus rate-move table"
    # with perf: the program under bare interrupts, and sprof with them added
    if ! grep -q 'perf columns skipped' "$out/o"; then
        grep -Eq '^wordfreq +x bare +interrupts alone [0-9.]+, sprof [0-9.]+' "$out/o" ||
            fail "no interrupts-alone figure in the corpus table"
        grep -Eq '^ +added interrupts +[0-9.]+ pp' "$out/o" || fail "no added-interrupts move in the corpus table"
    fi
else
    echo "bench_scripts_smoke: no ../shared/spinel-corpus: corpus table not checked"
fi
echo "bench_scripts_smoke: both tables printed"
