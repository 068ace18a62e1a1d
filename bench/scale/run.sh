#!/bin/sh
# Reader scaling, printed figures (not a test): wall seconds and max RSS of
# every offline view on synthetic traces (tests/scale/gen_scale.c).
#   bench/scale/run.sh [BUILD_DIR] [STACKS] [THREADS...]
# 1. symmap of the fold bench's workload (built by ctest as
#    tests/scale/scale_workload);
# 2. sprof-trace info on traces of THREADS threads (default 10k 20k 40k 80k):
#    the time must grow linearly;
#    and sprof-fold on traces with as many mappings;
# 3. every view on a trace of STACKS distinct stacks (default 1,000,000,
#    160 bytes a sample): wall seconds, max RSS, and RSS / trace size
#    (target <= 2.0, issue 16). sprof-diff compares the trace with itself:
#    its ratio is over both inputs.
# Needs GNU time (/usr/bin/time -v, package `time`).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
stacks=${2:-1000000}
[ $# -ge 2 ] && shift 2 || shift $#
threads=${*:-10000 20000 40000 80000}
bin=$build/bin
gen=$build/tests/scale/gen_scale
prog=$build/tests/scale/scale_workload
work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-bench-scale-XXXXXX")
trap 'rm -rf "$work"' EXIT
"$bin/sprof-symmap" "$prog" -o "$work/w.symmap" --quiet

# measure LABEL CMD...: "LABEL  wall s  max RSS MiB  RSS/trace"
measure() {
    label=$1
    shift
    if ! /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err"; then
        printf '%-28s failed: %s\n' "$label" "$(tail -1 "$work/err")"
        return
    fi
    read -r wall kb <"$work/time"
    awk -v l="$label" -v w="$wall" -v kb="$kb" -v size="$size" \
        'BEGIN { printf "%-28s %7.2f s %8.1f MiB  %5.2f x trace\n", l, w, kb / 1024, kb * 1024 / size }'
}

echo "== sprof-trace info by thread count (one sample per thread)"
for n in $threads; do
    "$gen" "$prog" "$work/w.symmap" "$work/t.trace" threads "$n"
    size=$(stat -c %s "$work/t.trace")
    measure "info, $n threads" "$bin/sprof-trace" info "$work/t.trace"
done
rm -f "$work/t.trace"

echo "== sprof-fold by mapping count (1,000 samples)"
for n in $threads; do
    "$gen" "$prog" "$work/w.symmap" "$work/t.trace" mappings "$n"
    size=$(stat -c %s "$work/t.trace")
    measure "fold, $n mappings" "$bin/sprof-fold" "$work/t.trace" "$work/w.symmap" -o "$work/out"
done
rm -f "$work/t.trace"

"$gen" "$prog" "$work/w.symmap" "$work/s.trace" stacks "$stacks"
size=$(stat -c %s "$work/s.trace")
echo "== $stacks distinct stacks, trace $(awk -v s="$size" 'BEGIN{printf "%.1f", s / 1048576}') MiB"
t=$work/s.trace
s=$work/w.symmap
measure "sprof-trace info" "$bin/sprof-trace" info "$t"
measure "sprof-fold" "$bin/sprof-fold" "$t" "$s" -o "$work/out"
measure "sprof-fold --threads" "$bin/sprof-fold" --threads "$t" "$s" -o "$work/out"
measure "sprof-top" "$bin/sprof-top" "$t" "$s"
measure "sprof-flamegraph" "$bin/sprof-flamegraph" "$t" "$s" -o "$work/out"
measure "sprof-callgraph" "$bin/sprof-callgraph" "$t" "$s" -o "$work/out"
measure "sprof-export --pprof" "$bin/sprof-export" "$t" "$s" --pprof "$work/out"
measure "sprof-export --speedscope" "$bin/sprof-export" "$t" "$s" --speedscope "$work/out"
size=$((size * 2)) # both sides: RSS over the two inputs
measure "sprof-diff (x both)" "$bin/sprof-diff" -b "$t" "$s" -a "$t" "$s"
