#!/usr/bin/env bash
# bench/diff/aa.sh — how often sprof-diff calls a change where there is
# none (A/A) and how often it finds a real one.
#
#   bench/diff/aa.sh [--pairs N] [--runs K] [--hz HZ] [--trials T] [--rounds R] [--build DIR] [--keep DIR] [PROGRAM...]
#
# A/A: for each corpus program (default gcbench; ../shared/spinel-corpus,
# built with its build.sh into a temp dir), N pairs (default 5) of K runs a
# side (default 3) of the same binary with the same input at HZ (default
# 10000), profiled with LD_PRELOAD=libsprof.so. Each pair is diffed
#   replicates:  sprof-diff -b r1 r2 r3 SYMMAP -a r4 r5 r6 SYMMAP
#   one run:     sprof-diff r1 vs r4 (default floor), and with --floor 0
#                (the pooled z-test alone: what sprof-diff did before replicates)
# and the pairs with any significant row (self or total) are counted.
# Real change: T trials (default 10) of bench/diff/knob.c built with
# -DSLOWER_PCT=0 vs -DSLOWER_PCT=3 (parse_rows 3 % slower), K runs a side of
# R rounds each (default 130, ~0.5 s): trials where parse_rows' total share
# is marked significant and up, where its total CPU seconds per run are
# (the --weight=cpu test), and where either is. The same runs give A/A
# pairs for free: trial i-1's runs against trial i's of the same binary
# (before against before, after against after), for every even i.
# Env: SPROF_BUILD (default <repo>/build).
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SPROF_BUILD:-$src/build}
corpus=$src/../shared/spinel-corpus
pairs=5 runs=3 hz=10000 trials=10 rounds=130 keep= progs=()
while [ $# -gt 0 ]; do
    case $1 in
    --pairs) pairs=$2; shift ;;
    --runs) runs=$2; shift ;;
    --hz) hz=$2; shift ;;
    --trials) trials=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --build) build=$2; shift ;;
    --keep) keep=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/diff/aa.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) progs+=("$1") ;;
    esac
    shift
done
[ ${#progs[@]} = 0 ] && progs=(gcbench)
[ -x "$build/bin/sprof-diff" ] && [ -f "$build/lib/libsprof.so" ] ||
    { echo "bench/diff/aa.sh: no sprof build in $build (set SPROF_BUILD)" >&2; exit 1; }
if [ -n "$keep" ]; then work=$keep; mkdir -p "$work"; else
    work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-aa-XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
bin=$build/bin lib=$build/lib
log() { echo "bench/diff: $*" >&2; }

# profile EXE OUT ARGS...: one run at $hz.
profile() {
    local exe=$1 out=$2
    shift 2
    rm -f "$out" # the runtime never overwrites a file: it would write beside it
    SPROF_OUT="$out" SPROF_HZ="$hz" LD_PRELOAD="$lib/libsprof.so" "$exe" "$@" >/dev/null 2>"$work/err" ||
        { log "$exe failed: $(tail -1 "$work/err")"; exit 1; }
}
# flagged JSON_FILE [METHOD [share|cpu|either]]: 1 if any row (or METHOD's
# total share, CPU seconds, or either, up) is significant.
flagged() {
    python3 - "$@" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
if len(sys.argv) > 2:
    how = sys.argv[3] if len(sys.argv) > 3 else "share"
    def share(r): return r["total"]["significant"] and r["total"]["change_pp"] > 0
    def cpu(r): return "total_cpu" in r and r["total_cpu"]["significant"] and r["total_cpu"]["change_s"] > 0
    test = {"share": share, "cpu": cpu, "either": lambda r: share(r) or cpu(r)}[how]
    hit = any(r["name"] == sys.argv[2] and test(r) for r in doc["rows"])
else:
    hit = any(r[m]["significant"] for r in doc["rows"] for m in ("self", "total"))
print(1 if hit else 0)
PY
}
# flagged_cpu JSON_FILE: 1 if any row's CPU seconds (self or total) are marked
flagged_cpu() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(1 if any(r[m]["significant"] for r in d["rows"] for m in ("self_cpu","total_cpu") if m in r) else 0)' "$1"
}
# marked JSON_FILE: the marked rows, "name measure change" (shares and CPU), for the log
marked() {
    python3 -c 'import json,sys; print("; ".join("%s %s %+.3g" % (r["name"], m, r[m].get("change_pp", r[m].get("change_pct"))) for r in json.load(open(sys.argv[1]))["rows"] for m in ("self","total","self_cpu","total_cpu") if m in r and r[m]["significant"]))' "$1"
}
# largest |change| (pp) of any row, self or total
maxpp() {
    python3 -c 'import json,sys; print("%.2f" % max([abs(r[m]["change_pp"]) for r in json.load(open(sys.argv[1]))["rows"] for m in ("self","total")] + [0]))' "$1"
}
samples() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["before"]["samples"])' "$1"; }

if [ "$pairs" -gt 0 ]; then
    bash "$corpus/build.sh" "$work/corpus" >"$work/build.log" 2>&1 || { tail "$work/build.log" >&2; exit 1; }
fi
printf '%-10s %5s %5s %9s %14s %14s %16s %18s %s\n' program pairs runs samples/run "replicates" "reps (CPU s)" "one run (floor)" "one run (no floor)" "largest A/A move, one run (pp)"
for p in "${progs[@]}"; do
    [ "$pairs" -gt 0 ] || break
    exe=$work/corpus/$p
    "$bin/sprof-symmap" "$exe" -o "$exe.symmap" --quiet || { log "sprof-symmap failed on $p"; exit 1; }
    args=$(awk -v n="$p" '$1 == n { $1 = ""; print }' "$corpus/programs/args.txt")
    rep=0 repcpu=0 one=0 raw=0 n=0 moves=
    for ((i = 1; i <= pairs; i++)); do
        b=() a=()
        for ((k = 1; k <= runs; k++)); do
            # shellcheck disable=SC2086
            profile "$exe" "$work/b$k.bin" $args
            # shellcheck disable=SC2086
            profile "$exe" "$work/a$k.bin" $args
            b+=("$work/b$k.bin") a+=("$work/a$k.bin")
        done
        "$bin/sprof-diff" --json -b "${b[@]}" "$exe.symmap" -a "${a[@]}" "$exe.symmap" >"$work/rep.json" \
            2>"$work/diff.err" || { log "sprof-diff failed: $(tail -1 "$work/diff.err")"; exit 1; }
        "$bin/sprof-diff" --json -b "${b[0]}" "$exe.symmap" -a "${a[0]}" "$exe.symmap" >"$work/one.json" 2>/dev/null
        "$bin/sprof-diff" --json --floor 0 -b "${b[0]}" "$exe.symmap" -a "${a[0]}" "$exe.symmap" >"$work/raw.json" 2>/dev/null
        rep=$((rep + $(flagged "$work/rep.json"))) one=$((one + $(flagged "$work/one.json")))
        repcpu=$((repcpu + $(flagged_cpu "$work/rep.json")))
        raw=$((raw + $(flagged "$work/raw.json")))
        n=$(( $(samples "$work/one.json") ))
        moves="$moves $(maxpp "$work/one.json")"
        log "$p pair $i: replicates $rep (CPU seconds $repcpu), one run $one, no floor $raw (flagged so far)"
        m=$(marked "$work/rep.json")
        [ -z "$m" ] || log "$p pair $i: marked with replicates: $m"
    done
    printf '%-10s %5d %5d %9d %11d/%-2d %11d/%-2d %13d/%-2d %15d/%-2d %s\n' "$p" "$pairs" "$runs" "$n" "$rep" "$pairs" "$repcpu" "$pairs" "$one" "$pairs" "$raw" "$pairs" "$moves"
done

if [ "$trials" -gt 0 ]; then
    cc -O1 -g -fno-omit-frame-pointer -DSLOWER_PCT=0 "$here/knob.c" -o "$work/knob0" &&
        cc -O1 -g -fno-omit-frame-pointer -DSLOWER_PCT=3 "$here/knob.c" -o "$work/knob3" || exit 1
    "$bin/sprof-symmap" "$work/knob0" -o "$work/knob0.symmap" --quiet &&
        "$bin/sprof-symmap" "$work/knob3" -o "$work/knob3.symmap" --quiet || exit 1
    hits=0 cpu_hits=0 any_hits=0 aa_pairs=0 aa_hits=0
    for ((i = 1; i <= trials; i++)); do
        b=() a=()
        for ((k = 1; k <= runs; k++)); do
            profile "$work/knob0" "$work/t${i}b$k.bin" "$rounds"
            profile "$work/knob3" "$work/t${i}a$k.bin" "$rounds"
            b+=("$work/t${i}b$k.bin") a+=("$work/t${i}a$k.bin")
        done
        "$bin/sprof-diff" --json -b "${b[@]}" "$work/knob0.symmap" -a "${a[@]}" "$work/knob3.symmap" \
            >"$work/knob.json" 2>"$work/diff.err" || { log "sprof-diff failed: $(tail -1 "$work/diff.err")"; exit 1; }
        hits=$((hits + $(flagged "$work/knob.json" parse_rows share)))
        cpu_hits=$((cpu_hits + $(flagged "$work/knob.json" parse_rows cpu)))
        any_hits=$((any_hits + $(flagged "$work/knob.json" parse_rows either)))
        log "knob trial $i: parse_rows $(python3 -c 'import json,sys; t=[r for r in json.load(open(sys.argv[1]))["rows"] if r["name"]=="parse_rows"][0]["total"]; print("%+.2f pp q %.3g" % (t["change_pp"], t["q"]))' "$work/knob.json"); flagged by its share in $hits, by its CPU seconds in $cpu_hits, by either in $any_hits"
        if ((i % 2 == 0)); then # A/A: the previous trial's runs against this one's, per binary
            for s in b a; do
                v=0 sm=$work/knob0.symmap
                [ $s = a ] && v=3 sm=$work/knob3.symmap
                "$bin/sprof-diff" --json -b "$work"/t$((i - 1))$s?.bin "$sm" -a "$work"/t$i$s?.bin "$sm" \
                    >"$work/knob_aa.json" 2>/dev/null || { log "sprof-diff failed (knob$v A/A)"; exit 1; }
                aa_pairs=$((aa_pairs + 1)) aa_hits=$((aa_hits + $(flagged "$work/knob_aa.json")))
                m=$(marked "$work/knob_aa.json")
                [ -z "$m" ] || log "knob$v A/A, trial $((i - 1)) vs $i: marked: $m"
            done
            log "knob A/A (trial $((i - 1)) vs $i, knob0 and knob3): any row flagged in $aa_hits of $aa_pairs pairs"
            rm -f "$work"/t$((i - 1))[ab]?.bin
        fi
    done
    echo "real change: parse_rows 3 % slower (knob.c), $runs runs a side of $rounds rounds at $hz Hz, $(samples "$work/knob.json") samples a side: flagged by its total share in $hits, by its total CPU seconds in $cpu_hits, by either in $any_hits of $trials trials"
    echo "A/A from the same runs (trial i-1 vs trial i of one binary, $runs runs a side): any row flagged in $aa_hits of $aa_pairs pairs"
fi
