#!/bin/sh
# flamegraph.pl's frame annotations (_[k] _[j] _[i] _[w]) survive every sprof
# tool that reads and writes folded text (issue 21): sprof-fold on folded
# input (with and without --classes: never two suffixes) and sprof-diff
# --folded; sprof's own class suffixes (_[u] ...) are read back into the
# class. Also: fractional counts kept in folded output (rounded elsewhere,
# with a note), lines without a count skipped with a warning.
set -u
fail=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fail=1; }
d=$(mktemp -d /tmp/sprof-annot-XXXXXX)
trap 'rm -rf "$d"' EXIT
cat >"$d/in.folded" <<'F'
main;do_x_[k];irq_[k] 3
main;jitted_[j] 2
main;inl_[i];leaf 1
waker_[w];wakee 4
main;Foo#bar_[u] 5
F
"$SPROF_BIN/sprof-fold" "$d/in.folded" >"$d/plain" 2>/dev/null || bad "sprof-fold on folded input"
for want in 'main;do_x_[k];irq_[k] 3' 'main;jitted_[j] 2' 'main;inl_[i];leaf 1' 'waker_[w];wakee 4' 'main;Foo#bar 5'; do
  grep -qxF "$want" "$d/plain" && ok "sprof-fold keeps: $want" || { bad "sprof-fold: $want"; cat "$d/plain"; }
done
"$SPROF_BIN/sprof-fold" --classes "$d/in.folded" >"$d/classes" 2>/dev/null || bad "sprof-fold --classes"
grep -q '_\[.\]_\[.\]' "$d/classes" && { bad "--classes doubled a suffix"; cat "$d/classes"; } || ok "--classes: one suffix a frame"
grep -qxF 'main_[n];jitted_[j] 2' "$d/classes" && grep -qxF 'main_[n];Foo#bar_[u] 5' "$d/classes" &&
  ok "--classes keeps annotations and writes classes" || { bad "--classes output"; cat "$d/classes"; }
"$SPROF_BIN/sprof-diff" --folded "$d/in.folded" "$d/in.folded" >"$d/diff" 2>/dev/null || bad "sprof-diff --folded"
grep -qxF 'main;jitted_[j] 2 2' "$d/diff" && grep -qxF 'waker_[w];wakee 4 4' "$d/diff" &&
  grep -qxF 'main;do_x_[k];irq_[k] 3 3' "$d/diff" && ok "sprof-diff --folded keeps annotations" ||
  { bad "sprof-diff --folded"; cat "$d/diff"; }
# difffolded-style fractional counts and a line without a count
printf 'a;b 2.5\na;c 1.25\nnot a stack line\na;b_[j] 1\n' >"$d/frac.folded"
if "$SPROF_BIN/sprof-diff" --folded "$d/frac.folded" "$d/frac.folded" >"$d/fd" 2>"$d/fe"; then
  grep -qxF 'a;b 2.5 2.5' "$d/fd" && grep -qxF 'a;c 1.25 1.25' "$d/fd" && grep -qxF 'a;b_[j] 1 1' "$d/fd" &&
    ok "sprof-diff --folded keeps fractional counts" || { bad "sprof-diff fractions"; cat "$d/fd"; }
  "$SPROF_BIN/sprof-fold" "$d/frac.folded" 2>/dev/null | grep -qxF 'a;c 1.25' &&
    ok "sprof-fold keeps fractional counts" || bad "sprof-fold fractions"
  "$SPROF_BIN/sprof-top" "$d/frac.folded" >/dev/null 2>&1 && ok "other views take them (rounded)" || bad "sprof-top on fractions"
  grep -q 'frac.folded: note: 2 fractional counts: kept in folded output, rounded' "$d/fe" &&
    grep -q 'frac.folded: warning: 1 line without a count skipped (the first: line 3)' "$d/fe" &&
    ok "notes on stderr" || { bad "notes"; cat "$d/fe"; }
else
  bad "sprof-diff refused fractional counts"; cat "$d/fe"
fi
exit $fail
