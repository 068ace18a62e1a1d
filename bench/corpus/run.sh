#!/usr/bin/env bash
# bench/corpus/run.sh — the observer effect on real Spinel programs: sprof
# beside `perf record -g` on every program of ../shared/spinel-corpus.
#
#   bench/corpus/run.sh [--runs N] [--hz "1000 10000"] [--build DIR] [--keep DIR] [PROGRAM...]
#
# Each round runs every program bare, under sprof (LD_PRELOAD) with the
# default mechanism and with the fallback (SPROF_TIMER=cpuclock), and under
# `perf record -g -e cpu-clock` at each rate, the order rotated per round so
# drift on a shared machine hits all alike.
# Prints, per program and rate (medians over the rounds, CPU from wait4):
#   program x   CPU of the program's own threads / bare. sprof: process CPU
#               minus its own threads' (STATS own_cpu_ns); perf: the child
#               alone (measured inside perf record)
#   total x     everything the user pays / bare: sprof's whole process;
#               perf record's process plus the child
#   own us/s    sprof's own threads per sample (us) and perf's process per
#               sample, for the same samples
#   delivered % sprof's samples per CPU second of the profiled threads (user
#               + system), as a share of the asked rate (sprof-trace info);
#               "+N" after it: the cpuclock pacer's forgiven draws (lost
#               signals) as a share of the asked samples
# and the largest move of any function's self share between the lowest and
# the highest rate (pp, pooled over the rounds; functions >= 1 % only), for
# sprof (its folded leaf frames) and for perf (perf report's self column,
# kernel symbols summed into one [kernel] as sprof shows them):
# how much sampling faster perturbs what the profile says, with the
# standard error of that move from the rounds' spread ("within noise" when
# a move over 1 pp is within 2 SE: the program's own variance, not the rate).
# With perf, it then separates the host's part: each program under the
# highest rate's interrupts alone (a perf task-clock event recording no
# stack: program CPU x bare), and sprof at the lowest rate with bare
# interrupts making up the highest rate: if its shares move as sprof's at
# the highest rate do, the program itself runs differently when interrupted
# that often (a PVM guest here: json_parse x2.1 under 10 kHz of bare
# interrupts), which no sampler at that rate can avoid.
# Needs perf (root or perf_event_paranoid <= 1) for the perf columns; they
# say "skipped" otherwise. Env: SPROF_BUILD (default <repo>/build).
set -uo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${SPROF_BUILD:-$src/build}
corpus=$src/../shared/spinel-corpus
runs=5 rates="1000 10000" keep= progs=()
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift ;;
    --hz) rates=$2; shift ;;
    --build) build=$2; shift ;;
    --keep) keep=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bench/corpus/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) progs+=("$1") ;;
    esac
    shift
done
case $runs in ''|*[!0-9]*|0) echo "bench/corpus/run.sh: --runs needs a positive number" >&2; exit 2 ;; esac
[ -d "$corpus/programs" ] || { echo "bench/corpus/run.sh: $corpus not found (the corpus sits beside the checkout)" >&2; exit 1; }
[ -x "$build/bin/sprof-fold" ] && [ -f "$build/lib/libsprof.so" ] ||
    { echo "bench/corpus/run.sh: no sprof build in $build (set SPROF_BUILD)" >&2; exit 1; }
if [ -n "$keep" ]; then work=$keep; mkdir -p "$work"; else
    work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-corpus-XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
log() { echo "bench/corpus: $*" >&2; }
bin=$build/bin lib=$build/lib

bash "$corpus/build.sh" "$work/corpus" >"$work/build.log" 2>&1 || { tail "$work/build.log" >&2; exit 1; }
cc -O2 "$src/bench/overhead/measure.c" -o "$work/measure" || exit 1
measure=$work/measure
[ ${#progs[@]} = 0 ] && mapfile -t progs < <(awk '!/^#/ && NF { print $1 }' "$corpus/programs/args.txt")
for p in "${progs[@]}"; do
    "$bin/sprof-symmap" "$work/corpus/$p" -o "$work/corpus/$p.symmap" --quiet || { log "sprof-symmap failed on $p"; exit 1; }
done
perf_skip=
if ! command -v perf >/dev/null; then perf_skip="perf not installed"
elif ! perf record -q -e cpu-clock -g -F 1000 -o "$work/probe.data" -- true >/dev/null 2>&1; then
    perf_skip="perf record refused (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
fi

args_of() { awk -v n="$1" '$1 == n { $1 = ""; print }' "$corpus/programs/args.txt"; }
cfgs=(bare:0)
for hz in $rates; do cfgs+=("sprof:$hz" "cpuclock:$hz" "perf:$hz"); done
set -- $rates
lo=$1 hi=${!#}
# the host's part of the observer effect: the program under the highest
# rate's interrupts alone (a perf task-clock event that records no stack),
# and sprof at the lowest rate with bare interrupts making up the rest
[ "$lo" != "$hi" ] && [ -z "$perf_skip" ] && cfgs+=("irq:$hi" "sprofirq:$lo")
mkdir -p "$work/raw" "$work/shares"

# self shares, one "function share" per line, from a folded file / a perf.data
sprof_shares() {
    awk '{ c = $NF; $NF = ""; sub(/ +$/, ""); n = split($0, f, ";"); w[f[n]] += c; t += c }
         END { for (k in w) if (t > 0) printf "%s\t%.4f\n", k, 100 * w[k] / t }' "$1"
}
perf_shares() {
    perf report -i "$1" --no-children -g none --stdio --sort sym 2>/dev/null |
        awk '/^ *[0-9.]+%/ { s = $1; sub(/%/, "", s); k = ($2 == "[k]"); $1 = ""; $2 = ""; sub(/^ +/, "")
                             w[k ? "[kernel]" : $0] += s }
             END { for (f in w) printf "%s\t%.4f\n", f, w[f] }'
}

# the self shares of the trace just written ($work/t.bin), for shift_of
keep_shares() { # PROG CFG HZ ROUND
    "$bin/sprof-fold" --weight=samples "$work/t.bin" "$work/corpus/$1.symmap" 2>/dev/null >"$work/f.folded" &&
        sprof_shares "$work/f.folded" >"$work/shares/$1.$2.$3.$4"
}

# one run: appends "round total_ns program_ns samples own_ns delivered_pct lost_pct"
# to raw/PROG.CFG.HZ
run_one() { # PROG CFG HZ ROUND
    local p=$1 cfg=$2 hz=$3 r=$4 a
    a=$(args_of "$p")
    local exe=$work/corpus/$p t=$work/t.bin
    # shellcheck disable=SC2086
    case $cfg in
    bare)
        "$measure" "$work/m" -- "$exe" $a >/dev/null 2>&1 || { log "$p bare failed"; return; }
        read -r _ tot _ <"$work/m"
        echo "$r $tot $tot 0 0" >>"$work/raw/$p.bare.0" ;;
    sprof | cpuclock)
        rm -f "$t"
        local timer=
        [ "$cfg" = cpuclock ] && timer=cpuclock
        "$measure" "$work/m" -- env SPROF_OUT="$t" SPROF_HZ="$hz" ${timer:+SPROF_TIMER=$timer} \
            LD_PRELOAD="$lib/libsprof.so" "$exe" $a >/dev/null 2>"$work/err" ||
            { log "$p $cfg@$hz failed: $(tail -1 "$work/err")"; return; }
        read -r _ tot _ <"$work/m"
        local own n info dl
        own=$("$bin/sprof-trace" dump "$t" 2>/dev/null | sed -n 's/.* own_cpu_ns=\([0-9]*\).*/\1/p' | tail -1)
        info=$("$bin/sprof-trace" info "$t" 2>/dev/null)
        n=$(echo "$info" | awk '/^samples:/ { print $2 }')
        # delivered % of asked, and the pacer's forgiven draws as % of the
        # asked samples (sprof-trace info prints that share under cpuclock)
        dl=$(echo "$info" | awk '/^delivered rate:/ { s = $0; sub(/.*\(/, "", s); sub(/%.*/, "", s); d = s }
                                 /^lost signals:.*% of the asked/ { l = $0; sub(/.*\(/, "", l); sub(/%.*/, "", l) }
                                 END { printf "%s %.1f", (d == "" ? "-" : d), l + 0 }')
        echo "$r $tot $((tot - ${own:-0})) ${n:-0} ${own:-0} $dl" >>"$work/raw/$p.$cfg.$hz"
        keep_shares "$p" "$cfg" "$hz" "$r" ;;
    irq)
        "$measure" "$work/m" -- perf record -q -e task-clock -c $((1000000000 / hz)) -o "$work/p.data" -- \
            "$measure" "$work/mi" -- "$exe" $a >/dev/null 2>"$work/err" || { log "$p irq@$hz failed: $(tail -1 "$work/err")"; return; }
        read -r _ tot _ <"$work/m"
        read -r _ inner _ <"$work/mi"
        echo "$r $tot $inner 0 0" >>"$work/raw/$p.irq.$hz" ;;
    sprofirq)
        rm -f "$t"
        "$measure" "$work/m" -- perf record -q -e task-clock -c $((1000000000 / (hi - hz))) -o "$work/p.data" -- \
            env SPROF_OUT="$t" SPROF_HZ="$hz" LD_PRELOAD="$lib/libsprof.so" "$exe" $a >/dev/null 2>"$work/err" ||
            { log "$p sprofirq@$hz failed: $(tail -1 "$work/err")"; return; }
        keep_shares "$p" sprofirq "$hz" "$r" ;;
    perf)
        [ -n "$perf_skip" ] && return
        "$measure" "$work/m" -- perf record -q -e cpu-clock -g -F "$hz" -o "$work/p.data" -- \
            "$measure" "$work/mi" -- "$exe" $a >/dev/null 2>"$work/err" || { log "$p perf@$hz failed: $(tail -1 "$work/err")"; return; }
        read -r _ tot _ <"$work/m"
        read -r _ inner _ <"$work/mi"
        local n
        n=$(perf script -i "$work/p.data" -F tid 2>/dev/null | wc -l)
        echo "$r $tot $inner $n $((tot - inner))" >>"$work/raw/$p.perf.$hz"
        perf_shares "$work/p.data" >"$work/shares/$p.perf.$hz.$r" ;;
    esac
}

t0=$(date +%s)
n=${#cfgs[@]}
for ((r = 0; r < runs; r++)); do
    for p in "${progs[@]}"; do
        for ((i = 0; i < n; i++)); do
            c=${cfgs[$(( (i + r) % n ))]}
            run_one "$p" "${c%%:*}" "${c##*:}" "$r"
        done
    done
    log "round $((r + 1))/$runs done ($(( $(date +%s) - t0 )) s)"
done

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'; }
# ratio column C (2 total, 3 program) of CFG.HZ to bare, per round, median
ratio() { # PROG CFG HZ COL
    local f=$work/raw/$1.$2.$3
    [ -f "$f" ] || { echo "-"; return; }
    awk -v c="$4" 'FNR == NR { b[$1] = $3; next } ($1 in b) && b[$1] > 0 { printf "%.3f\n", $c / b[$1] }' \
        "$work/raw/$1.bare.0" "$f" | median
}
own_us() { # PROG CFG HZ: own CPU per sample, us
    local f=$work/raw/$1.$2.$3
    [ -f "$f" ] || { echo "-"; return; }
    awk '$4 > 0 { printf "%.2f\n", $5 / $4 / 1000 }' "$f" | median
}
delivered() { # PROG CFG HZ: median delivered %, "+lost %" when the pacer forgave draws
    local f=$work/raw/$1.$2.$3
    [ -f "$f" ] || { echo "-"; return; }
    local d l
    d=$(awk '$6 != "-" && $6 != "" { print $6 }' "$f" | median)
    l=$(awk '{ print ($7 == "" ? 0 : $7) }' "$f" | median)
    awk -v d="$d" -v l="$l" 'BEGIN { if (l + 0 > 0) printf "%s+%s\n", d, l; else print d }'
}
# largest |share(lo) - share(hi)| over functions with >= 1 % at either rate,
# shares averaged over the rounds, with the noise of that difference: the
# standard error from the rounds' spread (sqrt(var_lo/n_lo + var_hi/n_hi)).
# A program's own run-to-run variance (template's system time moves 46-60 %
# between runs) moves shares at any rate; a move within 2 SE is that noise.
shift_of() { # PROG TOOL LO HI [TOOL_AT_HI]
    local lo=("$work/shares/$1.$2.$3".*) hi=("$work/shares/$1.${5:-$2}.$4".*)
    [ -f "${lo[0]}" ] && [ -f "${hi[0]}" ] || { echo "-"; return; }
    { for f in "${lo[@]}"; do sed 's/^/L\t/' "$f"; done; for f in "${hi[@]}"; do sed 's/^/H\t/' "$f"; done; } |
        awk -F'\t' -v nl=${#lo[@]} -v nh=${#hi[@]} '
            { if ($1 == "L") { l[$2] += $3; l2[$2] += $3 * $3 } else { h[$2] += $3; h2[$2] += $3 * $3 }; k[$2] = 1 }
            function var(s, s2, n) { return n > 1 ? (s2 - s * s / n) / (n - 1) : 0 }
            END { best = -1; for (f in k) { ml = l[f] / nl; mh = h[f] / nh; if (ml < 1 && mh < 1) continue
                      d = ml - mh; if (d < 0) d = -d; if (d > best) { best = d; bf = f } }
                  if (best < 0) { print "-"; exit }
                  v = var(l[bf], l2[bf], nl) / nl + var(h[bf], h2[bf], nh) / nh; se = v > 0 ? sqrt(v) : 0
                  verdict = best <= 1 ? "" : best <= 2 * se ? ", within noise" : ", beyond noise"
                  printf "%.2f pp +- %.2f (%s: %.2f -> %.2f %%%s)\n", best, se, bf, l[bf] / nl, h[bf] / nh, verdict }'
}

echo
echo "== observer effect on ../shared/spinel-corpus ($runs rounds; medians; CPU from wait4)"
[ -n "$perf_skip" ] && echo "   perf columns skipped: $perf_skip"
printf "%-11s %6s  %-27s %-27s %-27s %s\n" program hz "program threads x bare" "total x bare" "own CPU us/sample" \
    "delivered % of asked"
printf "%-11s %6s  %-27s %-27s %-27s %s\n" "" "" "sprof  cpuclock  perf -g" "sprof  cpuclock  perf -g" \
    "sprof  cpuclock  perf -g" "sprof  cpuclock"
for p in "${progs[@]}"; do
    for hz in $rates; do
        printf "%-11s %6s  %-6s %-9s %-10s %-6s %-9s %-10s %-6s %-9s %-10s %-6s %s\n" "$p" "$hz" \
            "$(ratio "$p" sprof "$hz" 3)" "$(ratio "$p" cpuclock "$hz" 3)" "$(ratio "$p" perf "$hz" 3)" \
            "$(ratio "$p" sprof "$hz" 2)" "$(ratio "$p" cpuclock "$hz" 2)" "$(ratio "$p" perf "$hz" 2)" \
            "$(own_us "$p" sprof "$hz")" "$(own_us "$p" cpuclock "$hz")" "$(own_us "$p" perf "$hz")" \
            "$(delivered "$p" sprof "$hz")" "$(delivered "$p" cpuclock "$hz")"
    done
done
if [ "$lo" != "$hi" ]; then
    echo
    echo "== largest self-share move between $lo Hz and $hi Hz (functions >= 1 %; shares averaged over rounds; +- the standard error from their spread)"
    for p in "${progs[@]}"; do
        printf "%-11s sprof     %s\n" "$p" "$(shift_of "$p" sprof "$lo" "$hi")"
        printf "%-11s cpuclock  %s\n" "" "$(shift_of "$p" cpuclock "$lo" "$hi")"
        printf "%-11s perf      %s\n" "" "$(shift_of "$p" perf "$lo" "$hi")"
    done
    if [ -z "$perf_skip" ]; then
        echo
        echo "== the host's part: interrupts alone (a perf task-clock event at $hi Hz that records no stack)"
        echo "   program x bare: under those interrupts alone, under sprof at $hi Hz; share moves: sprof at $lo Hz"
        echo "   against sprof at $lo Hz with $((hi - lo)) Hz of bare interrupts added (the program's own response to"
        echo "   the interrupt rate), and that against sprof at $hi Hz (what sampling faster changes besides)"
        for p in "${progs[@]}"; do
            printf "%-11s x bare  interrupts alone %s, sprof %s\n" "$p" "$(ratio "$p" irq "$hi" 3)" "$(ratio "$p" sprof "$hi" 3)"
            printf "%-11s added interrupts  %s\n" "" "$(shift_of "$p" sprof "$lo" "$lo" sprofirq)"
            printf "%-11s then $hi Hz      %s\n" "" "$(shift_of "$p" sprofirq "$lo" "$hi" sprof)"
        done
    fi
fi
