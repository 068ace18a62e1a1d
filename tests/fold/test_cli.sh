#!/bin/sh
# sprof-fold on the command line: symmap found by content, stats line,
# -o written atomically, build-id refusal (exit 1, one line) and --force,
# bad options, malformed folded input.
set -u
fail=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fail=1; }
d=$(mktemp -d /tmp/sprof-fold-cli-XXXXXX)
trap 'rm -rf "$d"' EXIT
"$SPROF_BUILD/tests/fold/make_fixture" "$d" || { echo "make_fixture failed"; exit 1; }
# The counts below are samples (sprof-fold defaults to CPU time, docs/views.md).
fold_s() { "$SPROF_BIN/sprof-fold" --weight=samples "$@"; }

# symmap given last, after the trace (recognised by its magic)
fold_s "$d/app.trace" "$d/app.symmap" >"$d/out" 2>"$d/err" || bad "fold exits 0"
want='main;Foo#bar;Baz#qux 60
main;Foo#bar;Baz#qux;Foo#leaf 40'
[ "$(cat "$d/out")" = "$want" ] && ok "folded output" || { bad "folded output"; cat "$d/out"; }
grep -q '^sprof-fold: 100 samples, 2 distinct stacks, 0 dropped, 0 truncated, 0 unresolved PCs, 100.0% complete$' "$d/err" \
  && ok "stats line" || { bad "stats line"; cat "$d/err"; }

# symmap first, --symmap form, two traces summed, -o
fold_s --symmap "$d/app.symmap" "$d/app.trace" "$d/app.trace" -o "$d/two.folded" 2>"$d/err" || bad "-o exits 0"
grep -q '^main;Foo#bar;Baz#qux 120$' "$d/two.folded" && ok "two traces summed into -o file" || bad "two traces"
ls "$d" | grep -q '\.tmp' && bad "temp file left behind" || ok "no temp file left"

# options
fold_s --threads --lines --classes "$d/app.trace" "$d/app.symmap" 2>/dev/null | grep -q '^\[thread 8\];main_\[n\];Foo#bar:12_\[u\];Baz#qux:3_\[u\];Foo#leaf:0*_\[u\] 40$\|^\[thread 8\];main_\[n\];Foo#bar:12_\[u\];Baz#qux:3_\[u\];Foo#leaf_\[u\] 40$' \
  && ok "--threads --lines --classes" || { bad "--threads --lines --classes"; fold_s --threads --lines --classes "$d/app.trace" "$d/app.symmap"; }
fold_s --tid 8 --c-names --weight=cpu "$d/app.trace" "$d/app.symmap" 2>/dev/null | grep -q '^main;sp_Foo_bar;sp_Baz_qux;sp_Foo_leaf 40000000$' \
  && ok "--tid --c-names --weight=cpu" || bad "--tid --c-names --weight=cpu"
fold_s --from 0.02 --to 0.03 "$d/app.trace" "$d/app.symmap" 2>/dev/null | grep -q '^main;Foo#bar;Baz#qux 10$' \
  && ok "--from/--to" || bad "--from/--to"

# another build: refused unless --force, nothing written
echo keep >"$d/x.folded"
if fold_s "$d/other.trace" "$d/app.symmap" -o "$d/x.folded" 2>"$d/err"; then bad "mismatch refused"; else ok "mismatch refused"; fi
[ "$(wc -l <"$d/err")" -eq 1 ] && grep -q 'other.trace (build-id 0a0b0c0d) and .*app.symmap (build-id 01020304) come from different builds; use --force to fold anyway' "$d/err" \
  && ok "mismatch message" || { bad "mismatch message"; cat "$d/err"; }
[ "$(cat "$d/x.folded")" = keep ] && ok "output untouched on error" || bad "output untouched on error"
fold_s --force "$d/other.trace" "$d/app.symmap" 2>/dev/null | grep -q '^main;Foo#bar;Baz#qux 60$' && ok "--force" || bad "--force"

# errors: one line, exit 1
for args in "--weight=bogus $d/app.trace" "--from x $d/app.trace" "--tid a $d/app.trace" "$d/missing.trace"; do
  # shellcheck disable=SC2086
  if fold_s $args >/dev/null 2>"$d/err"; then bad "error exit: $args"; else
    [ "$(wc -l <"$d/err")" -eq 1 ] && ok "one-line error: $args" || { bad "one-line error: $args"; cat "$d/err"; }
  fi
done
printf 'a;b 1.5\n' >"$d/frac.folded"
if fold_s "$d/frac.folded" >"$d/out" 2>"$d/err"; then
  grep -q 'frac.folded: note: 1 fractional count: kept in folded output' "$d/err" && grep -qx 'a;b 1.5' "$d/out" &&
    ok "fractional folded input kept, with a note" || { bad "fractional folded input"; cat "$d/err" "$d/out"; }
else
  bad "fractional folded input refused"; cat "$d/err"
fi
printf 'a;b 3\nno count here\n' >"$d/nocount.folded"
if fold_s "$d/nocount.folded" >"$d/out" 2>"$d/err"; then
  grep -q 'nocount.folded: warning: 1 line without a count skipped (the first: line 2)' "$d/err" &&
    grep -qx 'a;b 3' "$d/out" && ok "a line without a count skipped, with a warning" ||
    { bad "line without a count"; cat "$d/err" "$d/out"; }
else
  bad "a line without a count refused the file"; cat "$d/err"
fi
exit $fail
