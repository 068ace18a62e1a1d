#!/bin/sh
# sprof-fold on `perf script` text without a symmap: names as perf prints
# them, tidied as FlameGraph's stackcollapse-perf.pl does. Inputs in data/,
# expected outputs in expected/ (written by hand from the inputs, see
# docs/perf-script.md for the rules). Lines are compared as sorted sets.
set -u
fail=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fail=1; }
here=$(cd "$(dirname "$0")" && pwd)
data=$here/data
exp=$here/expected
fold="$SPROF_BIN/sprof-fold"
d=$(mktemp -d /tmp/sprof-perfscript-XXXXXX)
trap 'rm -rf "$d"' EXIT

# same_lines NAME EXPECTED_FILE COMMAND...: stdout of COMMAND equals EXPECTED as a set
same_lines() {
  name=$1 want=$2
  shift 2
  if "$@" >"$d/out" 2>"$d/err"; then
    LC_ALL=C sort "$d/out" >"$d/out.s"
    LC_ALL=C sort "$want" >"$d/want.s"
    if cmp -s "$d/out.s" "$d/want.s"; then ok "$name"; else
      bad "$name"; diff "$d/want.s" "$d/out.s" | head -20; fi
  else
    bad "$name (exit $?)"; cat "$d/err"
  fi
}

# --- parity with stackcollapse-perf.pl / inferno (docs/perf-script.md) ---
# frame lines without indentation, cycles:u and cycles as one event (the
# tracepoint sched:sched_switch is another), [vmlinux-*] and a vmlinux path
# as kernel, perf's (inlined) frames kept, JIT map frames, a last sample
# with no blank line after it
same_lines "parity: default" "$exp/parity.default.folded" "$fold" "$data/parity.txt"
grep -q "parity.txt: note: kept only 'cycles' samples (the first event type); skipped 1 samples of other events" "$d/err" \
  && ok "cycles:u and cycles are one event" || { bad "event modifiers"; cat "$d/err"; }
grep -q 'warning' "$d/err" && { bad "parity: unindented frames warned"; cat "$d/err"; } || ok "unindented frames taken"
same_lines "parity: --jit --kernel" "$exp/parity.jit-kernel.folded" "$fold" --jit --kernel "$data/parity.txt"

# --- call chains (perf record -g) ---
same_lines "callchains: default (kernel frames dropped)" "$exp/callchains.default.folded" \
  "$fold" "$data/callchains.txt"
grep -q "callchains.txt: note: kept only 'cpu-clock' samples (the first event type); skipped 1 samples of other events" "$d/err" \
  && ok "other event types skipped with a note" || { bad "event note"; cat "$d/err"; }
grep -q 'warning' "$d/err" && { bad "no warnings on a clean input"; cat "$d/err"; } || ok "no warnings on a clean input"
same_lines "callchains: --kernel" "$exp/callchains.kernel.folded" \
  "$fold" --kernel "$data/callchains.txt"
same_lines "callchains: --kernel=plain --pid" "$exp/callchains.kernel-plain-pid.folded" \
  "$fold" --kernel=plain --pid "$data/callchains.txt"
same_lines "callchains: --threads --weight=cpu (periods)" "$exp/callchains.threads-cpu.folded" \
  "$fold" --threads --weight=cpu "$data/callchains.txt"
same_lines "callchains: --addrs" "$exp/callchains.addrs.folded" \
  "$fold" --addrs "$data/callchains.txt"
same_lines "callchains: --tid 1001" "$exp/callchains.tid1001.folded" \
  "$fold" --tid 1001 "$data/callchains.txt"
"$fold" --no-inline "$data/callchains.txt" 2>/dev/null | grep -qx 'app;\[libc.so.6\];start_thread;worker 1' \
  && ok "callchains: --no-inline drops perf's (inlined) frames" || bad "callchains: --no-inline"
same_lines "callchains: --perf-script FILE" "$exp/callchains.default.folded" \
  "$fold" --perf-script "$data/callchains.txt"

# --- old perf: no time, frames indented with spaces, JIT names with quotes ---
same_lines "old format (comm pid event:, space-indented frames)" "$exp/oldformat.default.folded" \
  "$fold" "$data/oldformat.txt"

# --- one line per sample (perf record without -g) ---
same_lines "no call chains: default" "$exp/nochains.default.folded" "$fold" "$data/nochains.txt"
same_lines "no call chains: --weight=cpu" "$exp/nochains.cpu.folded" "$fold" --weight=cpu "$data/nochains.txt"
same_lines "no call chains: --pid" "$exp/nochains.pid.folded" "$fold" --pid "$data/nochains.txt"
same_lines "no call chains: --kernel" "$exp/nochains.kernel.folded" "$fold" --kernel "$data/nochains.txt"
same_lines "no call chains: stdin (--perf-script -)" "$exp/nochains.default.folded" \
  sh -c '"$1" --perf-script - <"$2"' sh "$fold" "$data/nochains.txt"

# --- merge: perf script + folded + perf script from stdin, summed ---
printf 'app;__libc_start_call_main;main;compute 3\nother;x 4\n' >"$d/extra.folded"
"$fold" "$data/callchains.txt" "$d/extra.folded" --perf-script - <"$data/nochains.txt" >"$d/merged" 2>"$d/err" \
  || { bad "merge exits 0"; cat "$d/err"; }
grep -qx 'app;__libc_start_call_main;main;compute 5' "$d/merged" && grep -qx 'other;x 4' "$d/merged" \
  && grep -qx 'app;compute 2' "$d/merged" && grep -qx 'sh 1' "$d/merged" \
  && ok "perf script + folded + stdin summed" || { bad "merge"; cat "$d/merged"; }

# --- malformed lines: warnings with line numbers; --strict: error, no output ---
{
  printf 'app 1000/1000 [000] 100.0: 1 cpu-clock: \n'          # 1
  printf '\t    55d0c0a01234 compute+0x14 (/opt/app/bin/app)\n'  # 2
  printf 'this line is garbage\n'                              # 3
  printf '\t    55d0c0a01300 main+0x40 (/opt/app/bin/app)\n'     # 4
  printf '\n'                                                  # 5
  printf '\t    55d0c0a01300 main+0x40 (/opt/app/bin/app)\n'     # 6: outside a sample
  printf 'app 1000/1000 [000] 100.1: 1 cpu-clock: \n'          # 7
  head -c 70000 /dev/zero | tr '\0' x; printf '\n'             # 8: too long
  printf '\t    55d0c0a01234 compute+0x14 (/opt/app/bin/app)\n'  # 9
} >"$d/malformed.txt"
same_lines "malformed: good samples kept" "$exp/malformed.default.folded" "$fold" "$d/malformed.txt"
for n in 3 6 8; do
  grep -q "^$d/malformed.txt:$n: warning: " "$d/err" && ok "warning names line $n" \
    || { bad "warning for line $n"; cat "$d/err"; }
done
[ "$(grep -c 'warning' "$d/err")" = 3 ] && ok "exactly 3 warnings" || { bad "3 warnings"; cat "$d/err"; }
if "$fold" --strict "$d/malformed.txt" >"$d/out" 2>"$d/err"; then bad "--strict fails"; else
  ok "--strict fails"
  [ ! -s "$d/out" ] && ok "--strict: no output" || bad "--strict: no output"
  [ "$(wc -l <"$d/err")" = 1 ] && grep -q "^sprof-fold: $d/malformed.txt:3: " "$d/err" \
    && ok "--strict: one error line naming file:3" || { bad "--strict message"; cat "$d/err"; }
fi

# --- hostile inputs never crash ---
head -c 20000 /dev/urandom >"$d/random.bin"
{ printf 'app 1 [000] 1.0: 1 cpu-clock:\n'; head -c 20000 /dev/urandom; } >"$d/random.txt"
"$fold" --perf-script "$d/random.bin" >/dev/null 2>&1; rc=$?
[ $rc -le 1 ] && ok "random bytes: clean exit ($rc)" || bad "random bytes: exit $rc"
"$fold" "$d/random.txt" >/dev/null 2>&1; rc=$?
[ $rc -le 1 ] && ok "header + random bytes: clean exit ($rc)" || bad "header + random: exit $rc"
"$fold" --perf-script "$d/missing.txt" >/dev/null 2>"$d/err" && bad "missing file fails" \
  || { grep -q "missing.txt: No such file" "$d/err" && ok "missing file: one-line error" || { bad "missing file message"; cat "$d/err"; }; }

exit $fail
