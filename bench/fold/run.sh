#!/bin/sh
# Fold throughput, printed figures (not a test).
#   bench/fold/run.sh [BUILD_DIR] [NSAMPLES] [PERF_SECONDS]
# 1. builds the workload (bench/fold/workload.c: 32 functions, ~25 deep, a
#    few hundred call paths) and its symmap with sprof-symmap;
# 2. writes a synthetic sprof trace of NSAMPLES (default 1M) ~27-frame
#    samples over the workload's real call paths (gen_trace.c);
# 3. times sprof-fold on it (best of 3: wall and CPU) -> samples/s;
# 4. in the same run, records the workload with `perf record -g` and times
#    `perf report --stdio`, `perf script`, and `perf script |
#    stackcollapse-perf.pl` (when on PATH) -> samples/s, and the ratios.
# The machine is shared: CPU time (user+sys) is the steadier figure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
n=${2:-1000000}
perf_seconds=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-bench-fold-XXXXXX")
trap 'rm -rf "$work"' EXIT

cc=${CC:-cc}
$cc -O2 -g -fno-omit-frame-pointer "$here/workload.c" -o "$work/workload"
"$build/bin/sprof-symmap" "$work/workload" -o "$work/workload.symmap" --quiet
$cc -O2 -std=gnu11 -I"$src/tests/fold" -I"$src/symmap/include" -I"$src/runtime-stub/include" \
    "$here/gen_trace.c" "$src/tests/fold/trace_builder.c" "$src/tests/fold/symmap_text.c" "$build/lib/libsprof_symmap.a" -o "$work/gen_trace"
"$work/gen_trace" "$work/workload" "$work/workload.symmap" "$work/t.trace" "$n" 3000
bytes=$(stat -c %s "$work/t.trace")

# best of 3 of a command: prints "WALL CPU" seconds (CPU = user+sys of the
# command and its children; python3's getrusage, no /usr/bin/time needed)
best3() {
    python3 - "$work/stderr" "$@" <<'PY'
import resource, subprocess, sys, time
err, cmd = sys.argv[1], sys.argv[2:]
best_wall = best_cpu = None
for _ in range(3):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(err, "w") as e:
        rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=e).returncode
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        sys.stderr.write(open(err).read())
        sys.exit(1)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    best_wall = wall if best_wall is None else min(best_wall, wall)
    best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
print("%.3f %.3f" % (best_wall, best_cpu))
PY
}
rate() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.0f", $1 / $2; else print "inf" }'; }

echo "== sprof-fold: $n synthetic samples ($((bytes / n)) bytes/sample, $(awk "BEGIN{printf \"%.0f\", $bytes/1048576}") MiB trace)"
read -r fw fc <<EOT
$(best3 "$build/bin/sprof-fold" "$work/t.trace" "$work/workload.symmap" -o "$work/t.folded")
EOT
tail -1 "$work/stderr"
fold_wall=$(rate "$n" "$fw"); fold_cpu=$(rate "$n" "$fc")
printf 'sprof-fold            wall %6.3f s  cpu %6.3f s  %10s samples/s wall  %10s samples/s cpu\n' "$fw" "$fc" "$fold_wall" "$fold_cpu"

echo "== perf on the same workload: perf record -g -F 20000, ${perf_seconds}s of CPU"
if ! perf record -g -F 20000 -o "$work/perf.data" "$work/workload" "$perf_seconds" >/dev/null 2>"$work/perf.err"; then
    echo "perf record failed (perf_event_paranoid?): $(tail -1 "$work/perf.err")"
    exit 0
fi
pn=$(perf report -i "$work/perf.data" --stdio -n --no-children --sort comm -g none 2>/dev/null | awk '$1 ~ /%$/ && $3 == "workload" {print $2; exit}')
echo "perf.data: $pn samples"
read -r rw rc <<EOT
$(best3 perf report -i "$work/perf.data" --stdio)
EOT
report_wall=$(rate "$pn" "$rw"); report_cpu=$(rate "$pn" "$rc")
printf 'perf report --stdio   wall %6.3f s  cpu %6.3f s  %10s samples/s wall  %10s samples/s cpu\n' "$rw" "$rc" "$report_wall" "$report_cpu"
read -r sw sc <<EOT
$(best3 perf script -i "$work/perf.data")
EOT
script_wall=$(rate "$pn" "$sw"); script_cpu=$(rate "$pn" "$sc")
printf 'perf script           wall %6.3f s  cpu %6.3f s  %10s samples/s wall  %10s samples/s cpu\n' "$sw" "$sc" "$script_wall" "$script_cpu"
collapse_wall=
if command -v stackcollapse-perf.pl >/dev/null 2>&1; then
    read -r cw cc2 <<EOT
$(best3 sh -c "perf script -i '$work/perf.data' 2>/dev/null | stackcollapse-perf.pl")
EOT
    collapse_wall=$(rate "$pn" "$cw")
    printf 'perf script | stackcollapse-perf.pl  wall %6.3f s  %10s samples/s wall\n' "$cw" "$collapse_wall"
else
    echo "stackcollapse-perf.pl: not on PATH -- perf script | stackcollapse-perf.pl not measured (put FlameGraph's scripts on PATH)"
fi

echo "== ratios (sprof-fold samples/s / other samples/s)"
ratio() { echo "$1 $2" | awk '{ if ($2 > 0) printf "%.1fx", $1 / $2; else print "-" }'; }
echo "vs perf report --stdio: $(ratio "$fold_wall" "$report_wall") wall, $(ratio "$fold_cpu" "$report_cpu") cpu"
echo "vs perf script:         $(ratio "$fold_wall" "$script_wall") wall, $(ratio "$fold_cpu" "$script_cpu") cpu"
[ -n "$collapse_wall" ] && echo "vs perf script | stackcollapse-perf.pl: $(ratio "$fold_wall" "$collapse_wall") wall"
echo "target: >= 5000000 samples/s"
