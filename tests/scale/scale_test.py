#!/usr/bin/env python3
"""The offline readers stay linear in their input (issue 16, must-have 5).

Usage: scale_test.py threads | stacks N   (env from ctest: SPROF_BIN, SPROF_BUILD)

  threads   sprof-trace info on 20,000 and 80,000 threads (one sample each),
            and sprof-fold on 20,000 and 80,000 mappings: the 80k run must
            take < 3 s and, once it takes long enough to time, < 10x the
            20k run (linear: 4x; the quadratic thread search info had took
            8.4 s and 15x on the 2-core dev VM); sprof-fold --threads on the
            80k threads (a root frame each) within the memory rule below
  stacks N  every view on a trace of N distinct stacks (tests/scale/gen_scale,
            160 bytes a sample): peak RSS <= 2 x the trace size + 24 MiB
            (process, symmap and output buffers); sprof-diff loads both
            sides of the same trace: 2 x both traces' size + 24 MiB
Each tool's peak RSS is its own (os.wait4), wall time is printed.
"""
import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ["SPROF_BIN"]
SCALE = os.path.join(os.environ["SPROF_BUILD"], "tests", "scale")
GEN = os.path.join(SCALE, "gen_scale")
PROG = os.path.join(SCALE, "scale_workload")
FIXED = 24 << 20
failures = []


def tool(name):
    return os.path.join(BIN, name)


def measure(argv):
    """(exit status, wall seconds, peak RSS bytes, stderr) of one run."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status  # reaped here: keep Popen from waiting again
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_maxrss * 1024, err


def must(argv):
    r = subprocess.run(argv, stderr=subprocess.PIPE)
    if r.returncode != 0:
        print("setup failed: %s: %s" % (" ".join(argv), r.stderr.decode()), file=sys.stderr)
        sys.exit(2)


def linear(d, symmap, what, label, argv_of):
    """label's best-of-3 time on 20k and 80k `what` (threads, mappings)."""
    times = {}
    for n in (20000, 80000):
        trace = os.path.join(d, "%s%d.trace" % (what, n))
        must([GEN, PROG, symmap, trace, what, str(n)])
        best = None
        for _ in range(3):
            rc, wall, rss, err = measure(argv_of(trace))
            if rc != 0:
                failures.append("%s on %d %s: exit %d: %s" % (label, n, what, rc, err.decode().strip()))
                return
            best = wall if best is None else min(best, wall)
        times[n] = best
        print("%s, %6d %s: %.3f s (best of 3)" % (label, n, what, best))
    if times[80000] > 3.0:
        failures.append("%s on 80k %s took %.2f s (> 3 s)" % (label, what, times[80000]))
    if times[80000] > 0.5 and times[80000] > 10 * max(times[20000], 0.01):
        failures.append("%s: 80k %s %.2f s vs 20k %.2f s: not linear" % (label, what, times[80000], times[20000]))


def case_threads(d, symmap):
    linear(d, symmap, "threads", "sprof-trace info", lambda t: [tool("sprof-trace"), "info", t])
    linear(d, symmap, "mappings", "sprof-fold", lambda t: [tool("sprof-fold"), t, symmap, "-o", os.devnull])
    # a root frame per thread: 80k distinct frames and stacks, same memory rule
    trace = os.path.join(d, "threads80000.trace")
    size = os.path.getsize(trace)
    rc, wall, rss, err = measure([tool("sprof-fold"), "--threads", trace, symmap, "-o", os.devnull])
    print("sprof-fold --threads, 80000 threads: %.2f s, %.1f MiB, %.2f x the trace" % (wall, rss / 2**20, rss / size))
    if rc != 0 or rss > 2 * size + FIXED:
        failures.append("sprof-fold --threads on 80k threads: exit %d, peak RSS %.1f MiB (bound 2 x %.1f + %d MiB)"
                        % (rc, rss / 2**20, size / 2**20, FIXED >> 20))


def case_stacks(d, symmap, n):
    trace = os.path.join(d, "s.trace")
    must([GEN, PROG, symmap, trace, "stacks", str(n)])
    size = os.path.getsize(trace)
    out = os.path.join(d, "out")
    views = [
        ("sprof-trace info", [tool("sprof-trace"), "info", trace], 1),
        ("sprof-fold", [tool("sprof-fold"), trace, symmap, "-o", out], 1),
        ("sprof-fold --threads", [tool("sprof-fold"), "--threads", trace, symmap, "-o", out], 1),
        ("sprof-top", [tool("sprof-top"), trace, symmap], 1),
        ("sprof-top --lines", [tool("sprof-top"), "--lines", trace, symmap], 1),
        ("sprof-flamegraph", [tool("sprof-flamegraph"), trace, symmap, "-o", out], 1),
        ("sprof-callgraph", [tool("sprof-callgraph"), trace, symmap, "-o", out], 1),
        ("sprof-export --pprof", [tool("sprof-export"), trace, symmap, "--pprof", out], 1),
        ("sprof-export --speedscope", [tool("sprof-export"), trace, symmap, "--speedscope", out], 1),
        ("sprof-diff", [tool("sprof-diff"), "-b", trace, symmap, "-a", trace, symmap], 2),
    ]
    print("%d distinct stacks: trace %.1f MiB; bound 2 x input + %d MiB" % (n, size / 2**20, FIXED >> 20))
    for label, argv, inputs in views:
        rc, wall, rss, err = measure(argv)
        bound = 2 * inputs * size + FIXED
        print("%-26s %6.2f s %8.1f MiB  %.2f x input  %s" % (label, wall, rss / 2**20, rss / (inputs * size),
                                                            "ok" if rss <= bound else "OVER"))
        if rc != 0:
            failures.append("%s: exit %d: %s" % (label, rc, err.decode().strip()[-500:]))
        elif rss > bound:
            failures.append("%s: peak RSS %.1f MiB > %.1f MiB (2 x %.1f MiB input + %d MiB)"
                            % (label, rss / 2**20, bound / 2**20, inputs * size / 2**20, FIXED >> 20))


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("threads", "stacks"):
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sprof-scale-") as d:
        symmap = os.path.join(d, "w.symmap")
        must([tool("sprof-symmap"), PROG, "-o", symmap, "--quiet"])
        if sys.argv[1] == "threads":
            case_threads(d, symmap)
        else:
            case_stacks(d, symmap, int(sys.argv[2]))
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
