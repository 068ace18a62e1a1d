#!/usr/bin/env bash
# bench/threads/run.sh — what starting a thread costs the new thread.
#
#   bench/threads/run.sh [--runs N] [--threads N] [--build DIR]
#
# thread_start.c starts threads one after another; each reads its own CPU
# clock at the end of a ~7 us routine. Prints, per configuration, the median
# over the rounds of that CPU per thread (us) and its ratio to a bare run,
# then the whole process's CPU per thread while its main thread works
# beside each new one (sprof's own threads included; perf's own process
# is not):
# sprof's mechanisms (LD_PRELOAD) beside `perf record -g` (its inherited
# events: the peer's price for the same thread), rounds rotated.
# Env: SPROF_BUILD (default <repo>/build).
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SPROF_BUILD:-$src/build}
runs=5 threads=2000
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift ;;
    --threads) threads=$2; shift ;;
    --build) build=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/threads/run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
case $runs$threads in *[!0-9]*) echo "bench/threads/run.sh: --runs and --threads take numbers" >&2; exit 2 ;; esac
lib=$build/lib/libsprof.so
[ -f "$lib" ] || { echo "bench/threads/run.sh: no $lib (set SPROF_BUILD or --build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-threads-XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -pthread "$here/thread_start.c" -o "$work/thread_start" || exit 1
perf_ok=1
perf record -q -g -e cpu-clock -o "$work/probe.data" -- true >/dev/null 2>&1 || perf_ok=0

cfgs=(bare sprof_perf_event sprof_perf_event_tick sprof_cpuclock perf_record_g)
one() { # CFG -> us per thread
    local p="$work/thread_start" t="$work/t.bin"
    rm -f "$t"
    case $1 in
    bare) "$p" "$threads" ;;
    sprof_perf_event) env SPROF_OUT="$t" LD_PRELOAD="$lib" "$p" "$threads" ;;
    sprof_perf_event_tick) env SPROF_KERNEL=tick SPROF_OUT="$t" LD_PRELOAD="$lib" "$p" "$threads" ;;
    sprof_cpuclock) env SPROF_TIMER=cpuclock SPROF_OUT="$t" LD_PRELOAD="$lib" "$p" "$threads" ;;
    perf_record_g) [ $perf_ok = 1 ] && perf record -q -g -e cpu-clock -o "$work/p.data" -- "$p" "$threads" 2>/dev/null ;;
    esac
}
for r in $(seq "$runs"); do
    n=${#cfgs[@]}
    for k in $(seq 0 $((n - 1))); do
        c=${cfgs[$(( (k + r) % n ))]}
        v=$(one "$c") && [ -n "$v" ] && echo "$c $v" >>"$work/raw"
    done
done
awk -v runs="$runs" -v threads="$threads" '
    { v[$1] = v[$1] " " $2; p[$1] = p[$1] " " $3; n[$1]++ }
    function median(s,   a, k, i, j, t) { k = split(s, a, " "); for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((k + 1) / 2)] }
    END {
        printf "thread start: the new thread'"'"'s CPU to the end of a ~7 us routine, %d threads, median of %d\n", threads, runs
        printf "%-24s %10s %8s %14s %8s\n", "configuration", "us/thread", "x bare", "process us/thr", "x bare"
        b = median(v["bare"]); bp = median(p["bare"])
        split("bare sprof_perf_event sprof_perf_event_tick sprof_cpuclock perf_record_g", order, " ")
        for (i = 1; i <= 5; i++) { c = order[i]
            if (!n[c]) { printf "%-24s %10s\n", c, "skipped"; continue }
            m = median(v[c]); mp = median(p[c])
            printf "%-24s %10.1f %8.2f %14.1f %8.2f\n", c, m, (b > 0 ? m / b : 0), mp, (bp > 0 ? mp / bp : 0) }
    }' "$work/raw"
