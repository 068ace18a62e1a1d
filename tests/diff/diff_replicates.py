#!/usr/bin/env python3
"""sprof-diff with replicate runs, on synthetic folded profiles whose truth
is known (fixed seeds, so the figures are the same on every machine).

Each run draws its samples from a method mix whose weights move a little
from run to run (run-to-run noise: multiplied by 1 + N(0, JITTER)), then
multinomially (sampling noise). Checked:
- A/A: 20 pairs, 3 runs a side, same mix: the number of pairs with any
  significant row is within the nominal false-discovery rate (<= 2 of 20:
  BH at 0.05 with every hypothesis null allows 5 % of pairs in expectation);
  the one-run z-test without a floor (the test before replicates) is
  printed beside it for comparison;
- one run a side: nothing under --floor is marked, the footer says that
  run-to-run variance is unknown;
- a real change: one method made 3 % slower (its weight x 1.03): flagged
  (total share, significant and up) in >= 9 of 10 trials with 5 runs a side
  (3 runs: printed, ~half: these draws are independent, so their shares
  vary binomially; sprof's timer samples are systematic and vary less,
  and on real runs 3 a side find it 9 times in 10: bench/diff/aa.sh);
- the JSON names the runs and the test."""
import json
import os
import random
import subprocess
import sys
import tempfile

BIN = os.environ.get("SPROF_BIN", "build/bin")
TOOL = os.path.join(BIN, "sprof-diff")
JITTER = 0.003     # run-to-run sd of each method's weight (relative)
NOISY = 0.03       # a noisier program: the pooled z-test alone calls this a change
SAMPLES = 100000   # per run: 10 s at 10 kHz
MIX = {"Sim#step": 40, "Idx#tokenize": 25, "Chk.fnv": 15, "Gc#mark": 10, "Io#read": 6, "Log#write": 4}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def write_run(path, mix, rng, jitter):
    names = list(mix)
    weights = [mix[k] * (1 + rng.gauss(0, jitter)) for k in names]
    counts = {}
    for name in rng.choices(names, weights, k=SAMPLES):
        counts[name] = counts.get(name, 0) + 1
    with open(path, "w") as f:
        for name, n in sorted(counts.items()):
            f.write("main;%s %d\n" % (name, n))


def runs(d, tag, mix, rng, k=3, jitter=JITTER):
    paths = [os.path.join(d, "%s%d.folded" % (tag, i)) for i in range(k)]
    for p in paths:
        write_run(p, mix, rng, jitter)
    return paths


def diff_json(before, after, extra=()):
    r = subprocess.run([TOOL, "--json", *extra, "-b", *before, "-a", *after], capture_output=True, timeout=60)
    if r.returncode != 0:
        failures.append("sprof-diff failed: %s" % r.stderr.decode(errors="replace"))
        return {"rows": [], "before": {}, "test": ""}
    return json.loads(r.stdout)


def flagged(doc):
    return [(r["name"], m) for r in doc["rows"] for m in ("self", "total") if r[m]["significant"]]


with tempfile.TemporaryDirectory() as d:
    for jitter in (JITTER, NOISY):
        aa_rep = aa_one = 0
        for seed in range(20):
            rng = random.Random(seed)
            b, a = runs(d, "b", MIX, rng, 3, jitter), runs(d, "a", MIX, rng, 3, jitter)
            doc = diff_json(b, a)
            aa_rep += bool(flagged(doc))
            aa_one += bool(flagged(diff_json(b[:1], a[:1], ["--floor", "0"])))
            if seed == 0:
                check(doc["before"].get("runs") == 3 and "Welch" in doc["test"], "JSON names runs and the test")
        print("A/A, 20 pairs, run-to-run sd %.1f %%: any significant row in %d with 3 runs a side (Welch), %d with "
              "one run a side and no floor (the pooled z-test alone)" % (100 * jitter, aa_rep, aa_one))
        check(aa_rep <= 2, "A/A with replicates flags at most 2 of 20 pairs (got %d)" % aa_rep)

    slow = dict(MIX, **{"Sim#step": MIX["Sim#step"] * 1.03})
    hits = {}
    for k in (3, 5):
        hits[k] = 0
        for seed in range(100, 110):
            rng = random.Random(seed)
            doc = diff_json(runs(d, "b", MIX, rng, k), runs(d, "s", slow, rng, k))
            rows = {r["name"]: r for r in doc["rows"]}
            t = rows.get("Sim#step", {}).get("total", {})
            hits[k] += bool(t.get("significant") and t.get("change_pp", 0) > 0)
        print("real change (Sim#step 3 %% slower), 10 trials, %d runs a side: flagged in %d" % (k, hits[k]))
    check(hits[5] >= 9, "a 3 %% slower method is flagged in >= 9 of 10 trials with 5 runs (got %d)" % hits[5])

    # One run a side: the floor.
    rng = random.Random(7)
    b1, a1 = runs(d, "b", MIX, rng, 1), runs(d, "s", dict(MIX, **{"Sim#step": 80}), rng, 1)
    doc = diff_json(b1, a1)
    under = [n for n, m in flagged(doc)
             if abs({r["name"]: r for r in doc["rows"]}[n][m]["change_pp"]) < doc["floor_pp"]]
    check(not under, "one run a side: nothing under the floor is marked (%r)" % under)
    check(("Sim#step", "total") in flagged(doc), "one run a side: a change beyond the floor is marked")
    r = subprocess.run([TOOL, *b1, *a1], capture_output=True, timeout=60)
    check(b"run-to-run variance is unknown" in r.stdout, "one run a side: the footer says variance is unknown")

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
