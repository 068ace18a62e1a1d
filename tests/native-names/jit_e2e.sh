#!/bin/bash
# JIT code (tests/native-names/jit_prog.c: machine code copied into an
# anonymous executable mapping, as node or a JVM runs what it compiled),
# run under the preloaded runtime with both mechanisms, then folded:
#  - with the perf map the JIT wrote (/tmp/perf-<pid>.map) its functions
#    are named from it (jit_hot ~3/4 of the JIT time, jit_cold ~1/4);
#  - without one, all of it is one [anonymous code] frame and every view
#    says how much (before: a "method" per address, +0x40, +0x45, ...);
#  - a map written before the trace began (another process that had the
#    same pid) is not used, and that is said.
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_LIB:?}" "${SPROF_BUILD:?}"
W=$(mktemp -d)
maps=()
trap 'rm -rf "$W" "${maps[@]}"' EXIT
cd "$W"
fail() { echo "FAIL: $*" >&2; exit 1; }
prog=$SPROF_BUILD/tests/native-names/jit_prog
"$SPROF_BIN/sprof-symmap" "$prog" -o jit.symmap --quiet
share() { awk -v s="$1" '{ c = $NF; t += c; if (index($0, s)) w += c } END { printf "%.1f\n", t ? 100 * w / t : 0 }' "$2"; }

for mech in perf_event cpuclock; do
    rm -f m.bin
    map=$(SPROF_OUT=m.bin SPROF_TIMER=$mech LD_PRELOAD="$SPROF_LIB/libsprof.so" "$prog" map 0.5)
    maps+=("$map")
    "$SPROF_BIN/sprof-fold" m.bin jit.symmap >named 2>named.err || { cat named.err; fail "sprof-fold"; }
    hot=$(share ";run_jit;jit_hot" named) cold=$(share ";run_jit;jit_cold" named)
    echo "$mech: jit_hot $hot %, jit_cold $cold % (named from $map)"
    awk -v h="$hot" -v c="$cold" 'BEGIN { exit !(h >= 55 && h <= 85 && c >= 12 && c <= 35) }' ||
        fail "$mech: jit_hot $hot %, jit_cold $cold % (want ~72 and ~24)"
    ! grep -q 'anonymous code' named named.err || fail "$mech: [anonymous code] though the map names it"

    rm -f "$map" # the same trace without its map
    "$SPROF_BIN/sprof-fold" m.bin jit.symmap >anon 2>anon.err || fail "sprof-fold without the map"
    a=$(share ";run_jit;[anonymous code]" anon)
    awk -v a="$a" 'BEGIN { exit !(a >= 80) }' || fail "$mech: [anonymous code] carries $a %"
    # the JIT's frames (a stripped ld.so's start code, under a constructor
    # sampled before main, is honestly named by its address)
    ! grep -q ';run_jit;.*+0x' anon || fail "$mech: a JIT frame named by its address: $(grep -m1 ';run_jit;.*+0x' anon)"
    grep -q 'ran code in anonymous executable memory' anon.err || fail "$mech: no warning: $(cat anon.err)"
    "$SPROF_BIN/sprof-top" m.bin jit.symmap >top.txt 2>&1 || fail "sprof-top"
    grep -q '\[anonymous code\]' top.txt && grep -q 'anonymous executable memory' top.txt ||
        fail "$mech: sprof-top does not say it: $(head -5 top.txt)"
    "$SPROF_BIN/sprof-top" --json m.bin jit.symmap 2>/dev/null |
        python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(not d["anon_code_samples"] > 0)' ||
        fail "$mech: sprof-top --json has no anon_code_samples"

    # a map older than the trace: another process's
    printf '%x 10 stale_name\n' 4096 >"$map"
    touch -d '2001-01-01' "$map"
    "$SPROF_BIN/sprof-fold" m.bin jit.symmap >stale 2>stale.err || fail "sprof-fold with a stale map"
    grep -q 'is not used for its JIT code.s names: last written before the trace began' stale.err ||
        fail "$mech: the stale map is not reported: $(cat stale.err)"
    ! grep -q stale_name stale || fail "$mech: a stale map's name used"
    rm -f "$map"
done
echo PASS
