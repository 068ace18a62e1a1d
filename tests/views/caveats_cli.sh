#!/bin/bash
# "Say so" in every view: on a trace where 30 of 100 samples have stacks
# that do not reach main (tests/fold/make_fixture.c: incomplete.trace),
# every tool must carry the figure and the warning (sprof/caveats.h):
# stderr, sprof-top text and JSON, the call graph legend, the flame graph
# and diff SVG subtitles, sprof-diff's table and JSON, pprof comments and the
# speedscope profile name. And a complete trace must carry none of it.
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_BUILD:?}"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SPROF_BUILD/tests/fold/make_fixture" .
B=$SPROF_BIN
SENT='30 of 100 samples (30.0%) have an incomplete stack'
SHORT='warning: 30.0% of samples have incomplete stacks'

has() { grep -qF -- "$2" "$1" || { echo "--- $1:"; cat "$1"; fail "$1 lacks: $2"; }; }
hasnot() { if grep -qiF -- "$2" "$1"; then cat "$1"; fail "$1 has: $2"; fi; }

"$B/sprof-fold" incomplete.trace app.symmap >fold.out 2>fold.err
has fold.err "sprof-fold: warning: $SENT"

"$B/sprof-top" incomplete.trace app.symmap >top.out 2>top.err
has top.err "sprof-top: warning: $SENT"
has top.out "Warning: $SENT"
"$B/sprof-top" --json incomplete.trace app.symmap >top.json 2>/dev/null

"$B/sprof-callgraph" incomplete.trace app.symmap >cg.dot 2>cg.err
has cg.err "sprof-callgraph: warning: $SENT"
has cg.dot "Warning: 30.0% of samples have incomplete stacks"

"$B/sprof-flamegraph" incomplete.trace app.symmap >fg.svg 2>fg.err
has fg.err "sprof-flamegraph: warning: $SENT"
grep -F 'id="subtitle"' fg.svg | grep -qF "$SHORT" || fail "flame graph subtitle lacks the warning"
"$B/sprof-flamegraph" --subtitle "my run" incomplete.trace app.symmap >fg2.svg 2>/dev/null
grep -F 'id="subtitle"' fg2.svg | grep -qF "my run" || fail "user subtitle lost"
grep -F 'id="subtitle"' fg2.svg | grep -qF "$SHORT" || fail "warning lost after a user subtitle"

"$B/sprof-export" incomplete.trace app.symmap --pprof p.pb.gz --speedscope s.json 2>ex.err
has ex.err "sprof-export: warning: $SENT"

"$B/sprof-diff" --svg d.svg -b app.trace app.symmap -a incomplete.trace app.symmap >diff.out 2>diff.err || true
has diff.err "sprof-diff: warning: after side: $SENT"
hasnot diff.err "before side: 30"
has diff.out "Warning: after side: $SENT"
grep -F 'id="subtitle"' d.svg | grep -qF "after $SHORT" || fail "diff SVG subtitle lacks the warning"
"$B/sprof-diff" --json -b app.trace app.symmap -a incomplete.trace app.symmap >diff.json 2>/dev/null || true

python3 - <<'PY'
import gzip, json
SENT = "30 of 100 samples (30.0%) have an incomplete stack"
t = json.load(open("top.json"))
assert t["incomplete_samples"] == 30 and t["approx_name_samples"] == 0, t
assert len(t["warnings"]) == 1 and t["warnings"][0].startswith(SENT), t["warnings"]
d = json.load(open("diff.json"))
assert d["incomplete_samples"] == [0, 30], d["incomplete_samples"]
assert any(w.startswith("after side: " + SENT) for w in d["warnings"]), d["warnings"]
s = json.load(open("s.json"))
# the file's name carries it (from a trace the profiles are the threads, "NAME TID")
assert "warning: 30.0% of samples have incomplete stacks" in s["name"], s["name"]
raw = gzip.decompress(open("p.pb.gz", "rb").read())
assert b"sprof: samples whose stack does not reach main: 30" in raw
assert b"sprof: warning: " + SENT.encode() in raw
print("json/pprof/speedscope ok")
PY

# a complete trace: no caveat anywhere
"$B/sprof-top" app.trace app.symmap >top2.out 2>top2.err
hasnot top2.out "warning"
hasnot top2.err "incomplete"
"$B/sprof-flamegraph" app.trace app.symmap >fg3.svg 2>/dev/null
hasnot fg3.svg "incomplete stacks"
"$B/sprof-export" app.trace app.symmap --speedscope s2.json 2>/dev/null
hasnot s2.json "warning"
echo "PASS: every view says 30% of the stacks are incomplete, and a complete trace says nothing"
