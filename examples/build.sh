#!/usr/bin/env bash
# Build the example program the way a profiled Spinel build does it
# (`spinel app.rb --profile --cc=sprof-cc`): -O2 -g -fno-omit-frame-pointer,
# PIE, unstripped, compiled and linked through sprof-cc, which writes
# OUT.symmap beside the binary. Spinel writes its name map beside the binary
# too (OUT.symbols.json); here it is copied from examples/app.symbols.json.
#
# usage: examples/build.sh OUT [--stub] [--bin DIR] [--lib DIR] [-- EXTRA_CC_ARGS...]
#   OUT      the binary to write (OUT.symmap and OUT.symbols.json go beside it)
#   --stub   link the runtime stub in (build/lib/libsprof_rt.a, what
#            `spinel --profile` links); without it the binary is plain and
#            is profiled with LD_PRELOAD=libsprof.so
#   --bin    where sprof-cc/sprof-symmap are (default: build/bin of this checkout)
#   --lib    where libsprof_rt.a is (default: build/lib)
#   EXTRA_CC_ARGS  passed to the compiler last (e.g. -DSP_GC_THRESHOLD=600000u)
# Env: SPROF_REAL_CC (the compiler sprof-cc runs, default cc).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=$root/build/bin
lib=$root/build/lib
stub=0
out=
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --stub) stub=1 ;;
    --bin) bin=$2; shift ;;
    --lib) lib=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "examples/build.sh: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "examples/build.sh: one OUT only" >&2; exit 2; }; out=$1 ;;
  esac
  shift
done
[ -n "$out" ] || { sed -n '2,18p' "$0" >&2; exit 2; }
[ -x "$bin/sprof-cc" ] || { echo "examples/build.sh: $bin/sprof-cc not found (build sprof first)" >&2; exit 1; }

mkdir -p "$(dirname "$out")"
cp "$here/app.symbols.json" "$out.symbols.json"
rm -f "$out.symmap"

link=()
if [ "$stub" = 1 ]; then
  [ -f "$lib/libsprof_rt.a" ] || { echo "examples/build.sh: $lib/libsprof_rt.a not found" >&2; exit 1; }
  # the plain link line, as `spinel app.rb --link libsprof_rt.a` writes it
  # (libsprof_rt.a pulls the stub in by itself; docs/runtime.md)
  link=("$lib/libsprof_rt.a")
fi

"$bin/sprof-cc" -std=gnu11 -O2 -g -fno-omit-frame-pointer -fPIE -pie -Wall -Wextra \
  -I"$here" -o "$out" "$here/app.c" "${link[@]}" -ldl -pthread "${extra[@]}"

# sprof-cc only warns when the symmap cannot be written (it never fails a
# build); the example needs one, so say exactly what went wrong.
if [ ! -s "$out.symmap" ]; then
  echo "examples/build.sh: sprof-cc wrote no $out.symmap; running sprof-symmap directly" >&2
  "$bin/sprof-symmap" "$out" -o "$out.symmap"
fi
echo "built $out and $out.symmap"
