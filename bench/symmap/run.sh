#!/bin/sh
# Symmap benchmark (figures, not pass/fail). Generates a Spinel-shaped C
# program with >= 50,000 functions (with #line and inlined helpers), builds
# it -O2 -g, then prints: symmap generation time, symmap vs binary size,
# lookup ns/PC over ~1M random PCs after mmap, and addr2line -f -i on the
# same 10,000 addresses in the same run.
#   bench/symmap/run.sh [NFUNCS]
# env: SPROF_BUILD (reuse a build dir), BENCH_WORK (work dir), REUSE_PROGRAM=1
#      (keep the already compiled program in BENCH_WORK), NFILES, NPCS, NADDR
set -eu
NFUNCS=${1:-50000}
NFILES=${NFILES:-10}
NPCS=${NPCS:-1000000}
NADDR=${NADDR:-10000}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${BENCH_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/sprof-symmap-bench.XXXXXX")}
mkdir -p "$WORK"
BUILD=${SPROF_BUILD:-$WORK/build}
CC=${CC:-gcc}
now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc; }

if [ ! -x "$BUILD/bin/sprof-symmap" ] || [ ! -f "$BUILD/lib/libsprof_symmap.a" ]; then
    echo "building sprof-symmap in $BUILD ..."
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > /dev/null
    cmake --build "$BUILD" -j2 --target sprof-symmap sprof_symmap > /dev/null
fi
"$CC" -O2 -o "$WORK/lookup_bench" "$SRC/bench/symmap/lookup_bench.c" -I"$SRC/symmap/include" \
    "$BUILD/lib/libsprof_symmap.a"

if [ "${REUSE_PROGRAM:-0}" = 1 ] && [ -x "$WORK/prog/bench" ]; then
    echo "reusing $WORK/prog/bench"
else
    echo "generating $NFUNCS functions in $NFILES files ..."
    python3 "$SRC/bench/symmap/gen_program.py" "$WORK/prog" "$NFUNCS" "$NFILES"
    echo "compiling (-O2 -g -fno-omit-frame-pointer, 2 jobs) ..."
    t0=$(now)
    (cd "$WORK/prog" && ls part*.c main.c | xargs -P 2 -n 1 "$CC" -O2 -g -fno-omit-frame-pointer -c)
    (cd "$WORK/prog" && "$CC" -o bench part*.o main.o)
    t1=$(now)
    echo "  compile+link: $(elapsed "$t0" "$t1") s"
fi
echo "machine load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs (timings are noisy when loaded)"
BIN="$WORK/prog/bench"
nsyms=$(nm "$BIN" | grep -c ' T sp_')
echo "  binary: $nsyms sp_* function symbols"

t0=$(now)
/usr/bin/time -f '%U %S %M' -o "$WORK/gen.time" "$BUILD/bin/sprof-symmap" "$BIN" -o "$WORK/bench.symmap"
t1=$(now)
gen="$(elapsed "$t0" "$t1") (wall), $(awk '{ print $1 + $2 " s CPU, peak RSS " int($3 / 1024) " MiB" }' "$WORK/gen.time")"
bsize=$(stat -c %s "$BIN")
msize=$(stat -c %s "$WORK/bench.symmap")
echo
echo "symmap generation: $gen"
echo "binary size: $bsize bytes; symmap size: $msize bytes ($(echo "scale=1; 100 * $msize / $bsize" | bc) % of the binary)"
"$BUILD/bin/sprof-symmap" --dump "$WORK/bench.symmap" > "$WORK/dump"
echo "symmap contents: $(grep '^functions:' "$WORK/dump"), $(grep '^lines:' "$WORK/dump") rows, $(grep '^cfi:' "$WORK/dump") rows"

"$WORK/lookup_bench" "$WORK/bench.symmap" "$NPCS" "$WORK/addrs" "$NADDR" | tee "$WORK/lookup.txt"
ns=$(sed -n 's/^lookup, [0-9]* random PCs: \([0-9.]*\) ns\/PC CPU.*/\1/p' "$WORK/lookup.txt")

# addr2line on the same addresses; CPU time (user+sys) like the lookup figure.
t0=$(now)
/usr/bin/time -f '%U %S' -o "$WORK/a2l.time" addr2line -f -i -e "$BIN" < "$WORK/addrs" > "$WORK/a2l.out"
t1=$(now)
a2l_cpu=$(awk '{ print $1 + $2 }' "$WORK/a2l.time")
a2l_ns=$(echo "scale=1; $a2l_cpu * 1000000000 / $NADDR" | bc)
echo "addr2line -f -i: $NADDR addresses: $a2l_cpu s CPU ($(elapsed "$t0" "$t1") s wall) = $a2l_ns ns/address CPU (includes its DWARF load)"
echo "ratio addr2line / symmap lookup (CPU time per address): $(echo "scale=0; $a2l_ns / $ns" | bc)x"
addr2line -f -i -a -e "$BIN" < "$WORK/addrs" > "$WORK/a2l.addr.out"
"$BUILD/bin/sprof-symmap" --lookup "$WORK/bench.symmap" $(cat "$WORK/addrs") > "$WORK/lookup.out"
python3 "$SRC/bench/symmap/compare_addr2line.py" "$WORK/a2l.addr.out" "$WORK/lookup.out"
echo "(work dir: $WORK)"
