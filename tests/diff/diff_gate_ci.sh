#!/usr/bin/env bash
# The CI gate of sprof-diff as a CI job would use it (docs/ci.md): three
# "before" runs kept as artifacts, three "after" runs, then
#   sprof-diff -b before/*.folded -a after/*.folded --fail-if-any +1
# - an unchanged program passes: exit 0, "gate: pass" on stderr;
# - Foo#hot grown from 30 % to 36 % trips it: exit 3, one verdict line
#   naming Foo#hot, the table still on stdout;
# - --fail-if 'Foo#hot:+10' (a limit above the change) passes, --fail-if
#   'Foo#hot:+2' trips; a method in neither profile is named in the verdict;
# - --json carries the gate; bad rules are usage errors (exit 2).
set -euo pipefail
: "${SPROF_BIN:?}"
tool=$SPROF_BIN/sprof-diff
work=$(mktemp -d "${TMPDIR:-/tmp}/sprof-gate-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "diff_gate_ci: FAIL: $*" >&2; exit 1; }

# run DIR I HOT: one run's folded profile, 10000 samples, with small
# run-to-run differences (I) and HOT samples of Foo#hot out of 10000.
run() {
    local dir=$1 i=$2 hot=$3 rest
    mkdir -p "$dir"
    rest=$((10000 - hot))
    printf 'main;Foo#hot %d\nmain;Bar#cold %d\nmain;Baz#io %d\n' \
        "$((hot + i * 7))" "$((rest * 6 / 10 - i * 5))" "$((rest - rest * 6 / 10 - i * 2))" >"$dir/run$i.folded"
}
for i in 1 2 3; do run "$work/before" "$i" 3000; run "$work/same" "$i" 3010; run "$work/slow" "$i" 3600; done

gate() { # expected-exit label args...
    local want=$1 label=$2 rc=0
    shift 2
    "$tool" "$@" >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" = "$want" ] || { cat "$work/err" >&2; fail "$label: exit $rc, expected $want"; }
}
gate 0 "unchanged" -b "$work"/before/*.folded -a "$work"/same/*.folded --fail-if-any +1
grep -q '^sprof-diff: gate: pass' "$work/err" || fail "no pass verdict"
grep -q 'Foo#hot' "$work/out" || fail "the table is still written"

gate 3 "regression" -b "$work"/before/*.folded -a "$work"/slow/*.folded --fail-if-any +1
[ "$(grep -c 'gate:' "$work/err")" = 1 ] || fail "one verdict line expected"
grep -q '^sprof-diff: gate: FAIL: .*Foo#hot total +6' "$work/err" || { cat "$work/err"; fail "verdict names Foo#hot"; }
grep -q 'Foo#hot' "$work/out" || fail "the table is still written when the gate trips"

gate 0 "limit above the change" -b "$work"/before/*.folded -a "$work"/slow/*.folded --fail-if 'Foo#hot:+10'
gate 3 "limit under the change" -b "$work"/before/*.folded -a "$work"/slow/*.folded --fail-if 'Foo#hot:+2' \
    --fail-if 'Gone#away:+1'
grep -q 'Gone#away not in either profile' "$work/err" || fail "a missing method is named"

gate 3 "json" --json -b "$work"/before/*.folded -a "$work"/slow/*.folded --fail-if-any +1
python3 - "$work/out" <<'PY' || fail "--json gate"
import json, sys
doc = json.load(open(sys.argv[1]))
g = doc["gate"]
assert g["tripped"] and g["exit"] == 3 and [f["name"] for f in g["failures"]] == ["Foo#hot"], g
assert doc["before"]["runs"] == 3 and doc["after"]["runs"] == 3
PY

# One run a side: variance unknown, so only a change beyond the floor (default 10 pp) may trip it.
gate 0 "one run, default floor" "$work/before/run1.folded" "$work/slow/run1.folded" --fail-if-any +1
gate 3 "one run, beyond floor" "$work/before/run1.folded" "$work/slow/run1.folded" --fail-if-any +1 --floor 5
gate 0 "one run, under floor" "$work/before/run1.folded" "$work/slow/run1.folded" --fail-if-any +1 --floor 7

gate 2 "bad rule" --fail-if 'Foo#hot' "$work/before/run1.folded" "$work/slow/run1.folded"
gate 2 "bad limit" --fail-if-any 5 "$work/before/run1.folded" "$work/slow/run1.folded"
echo "diff_gate_ci: ok"
