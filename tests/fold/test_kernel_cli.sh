#!/bin/sh
# Kernel-time samples (trace format 1.1) on the command line: the
# [syscall write] leaf and its _[k] class in sprof-fold, the kernel share in
# sprof-top, sprof-trace info/dump of the 1.1 figures (and of a 1.0 trace),
# and the accounting warnings: printed once per trace by every tool that
# reads traces when the figures say so, never for an accurate trace.
set -u
fail=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fail=1; }
d=$(mktemp -d /tmp/sprof-kernel-cli-XXXXXX)
trap 'rm -rf "$d"' EXIT
"$SPROF_BUILD/tests/fold/make_fixture" "$d" || { echo "make_fixture failed"; exit 1; }
bin=$SPROF_BIN

"$bin/sprof-fold" --weight=samples --classes "$d/kernel.trace" "$d/app.symmap" >"$d/out" 2>"$d/err" || bad "fold exits 0"
want='main_[n];Foo#bar_[u];Baz#qux_[u] 60
main_[n];Foo#bar_[u];Baz#qux_[u];[syscall write]_[k] 40'
[ "$(cat "$d/out")" = "$want" ] && ok "fold --classes: [syscall write]_[k]" || { bad "fold --classes"; cat "$d/out"; }
grep -q warning "$d/err" && { bad "accurate trace warned"; cat "$d/err"; } || ok "no warning for an accurate trace"

"$bin/sprof-top" "$d/kernel.trace" "$d/app.symmap" >"$d/out" 2>"$d/err" || bad "top exits 0"
grep -q 'By class:.*user 60.00%.*kernel 40.00%' "$d/out" && ok "top: kernel share" || { bad "top: kernel share"; cat "$d/out"; }

# every tool that reads traces warns, once per warning and trace
for tool in fold top callgraph flamegraph export diff; do
  case $tool in
    flamegraph) args="$d/lossy.trace $d/app.symmap -o $d/f.svg" ;;
    export) args="$d/lossy.trace $d/app.symmap --speedscope $d/s.json" ;;
    diff) args="-b $d/kernel.trace $d/app.symmap -a $d/lossy.trace $d/app.symmap" ;;
    *) args="$d/lossy.trace $d/app.symmap" ;;
  esac
  # shellcheck disable=SC2086
  "$bin/sprof-$tool" $args >/dev/null 2>"$d/err" || { bad "$tool exits 0"; cat "$d/err"; }
  n=$(grep -c "^sprof-$tool: warning: .*lossy.trace: " "$d/err")
  if [ "$n" -eq 3 ] &&
     grep -q "lossy.trace: the samples stand for 80.0% of the profiled threads' CPU (0.100 s of 0.125 s" "$d/err" &&
     grep -q "lossy.trace: 800.0 samples per CPU second were delivered of the 1000 asked" "$d/err" &&
     grep -q "lossy.trace: kernel time is not sampled: it is charged to the next user-mode sample (0.025 s system CPU, 20.0%" "$d/err" &&
     ! grep -q "kernel.trace" "$d/err"; then
    ok "$tool: three accounting warnings"
  else
    bad "$tool: accounting warnings ($n)"; cat "$d/err"
  fi
done

"$bin/sprof-trace" info "$d/kernel.trace" >"$d/out" 2>&1 || bad "info exits 0"
grep -q '^user / system:   0.060 s / 0.040 s' "$d/out" && grep -q '^kernel sampling: perf_event' "$d/out" &&
  grep -q '^weights cover:   100.0% of the threads' "$d/out" && grep -q '^kernel weight:   0.040 s in 40 kernel samples' "$d/out" &&
  grep -q "^sprof's own CPU: 0.005 s (5.0% of the profiled threads'" "$d/out" \
  && ok "info: 1.1 and 1.2 figures" || { bad "info: 1.1 and 1.2 figures"; cat "$d/out"; }
"$bin/sprof-trace" info "$d/old.trace" >"$d/out" 2>&1 || bad "info old exits 0"
grep -q '^user / system:   not recorded' "$d/out" && grep -q '^kernel sampling: none' "$d/out" &&
  grep -q "^sprof's own CPU: not recorded" "$d/out" \
  && ok "info: 1.0 trace" || { bad "info: 1.0 trace"; cat "$d/out"; }
"$bin/sprof-trace" dump "$d/kernel.trace" >"$d/out" 2>&1 || bad "dump exits 0"
grep -q 'flags=kernel,syscall syscall_nr=1(write) ' "$d/out" && grep -q 'user_ns=60000000 system_ns=40000000 .*kernel_sampling=perf_event' "$d/out" \
  && ok "dump: flags and STATS" || { bad "dump: flags and STATS"; grep -m2 'syscall\|STATS' "$d/out"; }
"$bin/sprof-fold" "$d/old.trace" "$d/app.symmap" >/dev/null 2>"$d/err" && ! grep -q warning "$d/err" \
  && ok "1.0 trace folds without warnings" || { bad "1.0 trace"; cat "$d/err"; }
exit $fail
