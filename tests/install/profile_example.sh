#!/bin/bash
# profile_example.sh BIN LIB PKGCONFIG_DIR WORK: build the example with BIN's
# sprof-cc, profile it twice (libsprof.so preloaded from LIB; libsprof_rt.a
# linked in through pkg-config --libs sprof), fold and draw with BIN's tools,
# and check Ruby names come out. Uses only its arguments and WORK (the
# example's sources are copied there first): run it with the build and
# source trees hidden.
set -euo pipefail
bin=$1 lib=$2 pc=$3 w=$4
cd "$w"
fail() { echo "FAIL: $*"; exit 1; }
export SPROF_EXAMPLE_SECONDS=0.5 SPROF_REAL_CC=cc
cflags=(-std=gnu11 -O2 -fPIE -pie -I. -ldl -pthread)

# 1. preloaded libsprof.so
"$bin/sprof-cc" "${cflags[@]}" app.c -o app 2> cc.err || fail "sprof-cc: $(cat cc.err)"
[ -s app.symmap ] || fail "sprof-cc wrote no app.symmap: $(cat cc.err)"
SPROF_OUT=app.trace LD_PRELOAD=$lib/libsprof.so ./app > /dev/null 2> run.err || fail "app: $(cat run.err)"
[ -s app.trace ] || fail "no trace with LD_PRELOAD=$lib/libsprof.so: $(cat run.err)"
"$bin/sprof-trace" info app.trace > info.txt || fail "sprof-trace info"
"$bin/sprof-fold" app.trace app.symmap -o app.folded 2> fold.err || fail "sprof-fold: $(cat fold.err)"
grep -q 'Simulation#step' app.folded || fail "no Ruby name Simulation#step in the folded stacks"

# 2. libsprof_rt.a linked in, found by pkg-config (relocatable: from the prefix)
libs=$(PKG_CONFIG_PATH=$pc pkg-config --libs sprof) || fail "pkg-config --libs sprof"
case $libs in *"$lib"*) ;; *) fail "pkg-config --libs sprof names no $lib: $libs" ;; esac
cp app.symbols.json app_rt.symbols.json
# shellcheck disable=SC2086
"$bin/sprof-cc" "${cflags[@]}" app.c -o app_rt $libs 2> cc.err || fail "link with $libs: $(cat cc.err)"
SPROF_OUT=app_rt.trace ./app_rt > /dev/null 2> run.err || fail "app_rt: $(cat run.err)"
[ -s app_rt.trace ] || fail "the linked-in runtime wrote no trace: $(cat run.err)"
"$bin/sprof-flamegraph" app_rt.trace app_rt.symmap -o app_rt.svg 2> fg.err || fail "sprof-flamegraph: $(cat fg.err)"
grep -q 'Simulation#step' app_rt.svg || fail "no Ruby name in the flame graph"
"$bin/sprof-top" -n 3 app_rt.trace app_rt.symmap > top.txt 2> /dev/null || fail "sprof-top"
# 3. sprof-record from the prefix: it finds ../lib/libsprof.so itself
if [ -x "$bin/sprof-record" ]; then
    "$bin/sprof-record" -q -o rec.svg -- ./app > /dev/null 2> rec.err || fail "sprof-record: $(cat rec.err)"
    grep -q 'Simulation#step' rec.svg || fail "sprof-record: no Ruby name in rec.svg"
fi
echo "profiled from the prefix: $(grep -c . app.folded) folded stacks; top: $(sed -n 2p top.txt)"
