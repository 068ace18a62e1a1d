#!/usr/bin/env python3
"""Ground-truth accuracy of sprof profiles (tests/accuracy/README.md).

For each case program (acc_<case>) and each mechanism, runs it under the
preloaded runtime, folds the trace with both weights (samples, cpu), and
compares every `truth` line the program printed with the profile:

  share(method) = weight of in-scope stacks holding the method / weight of
                  in-scope stacks ("scope" lines name the functions that put a
                  stack in scope; "*" = every stack)
  share([syscall] | [page fault] | [kernel]) = the same for stacks whose leaf
                  is such a kernel frame ([kernel] = any of them)
  truth share   = truth ns / "truth total" ns
  error         = |share - truth share| in percentage points (pp); where the
                  program also prints "truth_low NAME NS" the truth is a range
                  and the error the share's distance from it
  rperf metric  = mean over the methods of |share - truth| / truth (cases that
                  print "score rperf"; rperf's benchmark/accuracy measure)
  lost          = cpuclock, samples rows: the % of the asked draws the pacer
                  forgave (`sprof-trace info`'s lost signals), missing from
                  the sample counts
  user leaves   = for a method the program says is nothing but system calls
                  ("kernel_only NAME"), the part of its samples whose leaf is
                  user code, not a kernel frame: kernel time the profile took
                  for the method's own code (samples rows only)

A row fails when its worst error exceeds --bound-pp + --noise-sigmas x the
binomial standard deviation of that share (sqrt(t(1-t)/n), n = in-scope
samples), or the rperf metric exceeds --rperf-bound + --rperf-noise x its
expectation for one draw at random per period (rperf_noise: from the
method's calls, where the program prints them; else binomial), or the user
leaves exceed --leaf-bound % + --noise-sigmas x their binomial standard
deviation at that bound, or the pacer lost more than --lost-bound % (5) of
the asked draws. Rows matching the expected-failure list (XFAIL below,
or $SPROF_ACCURACY_XFAIL: "case:mech:weight" for the whole row,
"case:mech:weight:rperf" for its rperf metric alone) report "expected failure"
with their figure and do not fail the run. The user-leaf check is not covered
by a row's entry: it is a bias no run's noise explains; only an entry ending
in ":leaf" expects it to fail.

  accuracy.py --bin-dir DIR CASE... [--quick] [--mech perf_event,perf_event_tick,cpuclock,perf]
              [--hz 4000] [--bound-pp 1.5] [--noise-sigmas 0] [--rperf-bound 0.6]
              [--rperf-noise 0] [--leaf-bound 2] [--work DIR] [--rows FILE] [--verbose]

Mechanism `perf` is the reference: `perf record -g -e cpu-clock` (kernel
samples included, needs root or perf_event_paranoid <= 1), folded by
sprof-fold --kernel from `perf script`. Env: SPROF_BIN, SPROF_LIB (as ctest
sets them).
"""
import argparse
import fnmatch
import math
import os
import shutil
import subprocess
import sys
import tempfile

CASES = ["io", "pagefault", "malloc", "stdio", "cheapcall", "fibers", "bursty",
         "shortthreads", "deep", "lockstep", "methods50", "clockwait", "cputimer"]
# per-case runtime settings: the deep case's 500-frame stacks need more than
# the default 256 recorded frames to reach main
CASE_ENV = {"deep": {"SPROF_MAX_DEPTH": "512"}}

# Known failures of the runtime today, "case:mechanism:weight" (fnmatch
# patterns). Overridden by $SPROF_ACCURACY_XFAIL (space separated; set it
# empty to expect everything to pass). Remove entries as the runtime learns:
# an expected failure that passes is reported as XPASS.
XFAIL = [
    # rperf's metric for 50 methods: 0.6-1.2 % at full length under
    # cpuclock (perf_event ~0.55 %), against 0.6. The floor is the design:
    # one draw at random within each period (stratified) leaves both ends
    # of a method's span independent, twice the count variance of a grid
    # whose ends move together; simulated with exact landings, this case
    # scores 0.77-0.80 % on average (2 % of runs <= 0.6) against a grid's
    # 0.52 %. A grid, or a slowly drifting one (0.42-0.59 % here, measured),
    # locks onto programs whose cycle is near the period: stdio read 2-6 pp
    # off with the drifting grid, 0.4-1.0 with random draws (README.md)
    # (On a PVM guest, Linux 6.18, it reads 3.4-3.8 % by samples: a few of
    # the pacer's wakes do not preempt and wait for the tick, docs/runtime.md;
    # on a Firecracker guest since the pacer's wake takes a draw the thread
    # is short of by less than the host's timer lateness, 2026-11-29:
    # 0.46-1.05 % by samples, 0.48-0.69 % by cpu, full length. With each
    # draw weighed by the trapezoid rule, format 2.9: simulated 0.68 % by
    # cpu against 0.78; the same traces folded both ways 0.60-0.89 against
    # 0.67-1.07; the table's 3 rounds 0.75-1.05, the pacer's late wakes.)
    "methods50:cpuclock:*:rperf",
    # the same floor on rperf's busy-wait case (acc_clockwait), whose calls
    # are as long in periods as rperf's at 1 kHz: random draws 0.69 %
    # simulated, a grid 0.47 %; measured 0.76-1.14 % (perf_event 0.53-0.86);
    # 2026-11-29 (the pacer's tolerance): 0.76-1.00 by samples, 0.47-0.58 by cpu;
    # with the trapezoid rule (format 2.9) 0.48-0.53 by cpu, 0.66-0.71 by samples
    "clockwait:cpuclock:*:rperf",
    # the tick kernel sampler (perf_event at paranoid 2): kernel time comes
    # in samples of one tick (4 ms here), ~75 of them in a quick run of the
    # page-fault case, so its kernel share is noisy by ~6 pp (1 sigma), far
    # beyond the binomial allowance for the ~1,200 user samples
    "pagefault:perf_event_tick:*",
    # likewise wherever kernel time is a large share: a quick run has ~75
    # ticks in all, so an 8 % share is +-3 pp (1 sigma) before any bias;
    # bench/accuracy/run.sh (1.5 s runs, 3 rounds) is where these are judged.
    # io at full length, 4 kHz: the writer/reader split of ~130 kernel
    # ticks, 1.5-3.9 pp (its [syscall] line 0.8-1.2 since the deferred
    # ticks at system-call returns are labelled; 10.7-13.6 before); its
    # user-leaf check is not excepted
    "io:perf_event_tick:*", "malloc:perf_event_tick:*", "cheapcall:perf_event_tick:*",
    # and rperf's busy-wait case, ~90 % kernel time: each method's kernel
    # time comes in whole ticks, so its short methods (24-100 periods) are
    # off by a tick's worth: rperf's metric ~16 % at full length
    "clockwait:perf_event_tick:*",
    # a loop in step with the period (acc_lockstep, at 1 kHz): the cpuclock
    # pacer's cpu weight there: a landing weighs the CPU
    # since the previous one, one draw at random per period, so in a loop
    # in step with the period a landing's weight depends on where in the
    # loop it lands (late in a period: more); sp_Deep_run 5-9 pp above its
    # truth by cpu weight at 1 kHz, 0.5 by samples, 0.2 at 4 kHz
    "lockstep:cpuclock:cpu",
    # on a PVM guest (Linux 6.18, 2026-11-27) the vCPU stalls for ms in the
    # pager's munmap and faults: the pacer's wake then comes late, is not a
    # draw (a late wake is taken as one that did not stop the thread), and
    # the stall's CPU goes to the next landing, in the method after:
    # sp_Layout_compute 2.2-8.8 pp high by cpu weight at full length (12
    # runs), perf_event 0.14. Taking late wakes as draws fixed this case
    # (0.2-0.5) and put cheapcall's [syscall] 2-5 pp high, malloc and
    # shortthreads 1-2 pp off (tried twice, docs/runtime.md)
    "pagefault:cpuclock:cpu",
    # there too, the main thread loses draws while it starts and joins its
    # short threads (wakes kicked by their registrations, a pacer starved
    # past 20 ms forgives the debt), while the short threads' exit tails
    # count exactly: sp_Short_thread 2.2-11 pp high by sample count at full
    # length (8 runs; 0.17-0.58 on the previous host), by cpu weight 0.5-0.9
    "shortthreads:cpuclock:samples",
]

LEAF_CLASSES = {"[syscall]": ("syscall",), "[page fault]": ("page fault",),
                "[kernel]": ("syscall", "page fault", "kernel")}
PERF_FAULT_FRAMES = ("asm_exc_page_fault", "exc_page_fault", "handle_mm_fault", "do_user_addr_fault")
PERF_SYSCALL_FRAMES = ("entry_SYSCALL_64", "do_syscall_64", "entry_SYSCALL_64_after_hwframe")


def die(msg):
    print("accuracy: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_truth(text):
    """({name: ns}, scope functions, rperf, {name: lowest ns}, kernel-only
    methods) from a program's output; rperf is None, or {method: calls} when
    it is to be scored (the calls a method made, where the program says:
    "calls NAME N")."""
    truth, scope, scored, low, calls, konly = {}, [], False, {}, {}, []
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 3 and w[0] == "truth":
            truth[" ".join(w[1:-1])] = int(w[-1])
        elif len(w) >= 3 and w[0] == "truth_low":
            low[" ".join(w[1:-1])] = int(w[-1])
        elif len(w) == 2 and w[0] == "scope":
            scope.append(w[1])
        elif len(w) == 2 and w[0] == "kernel_only":
            konly.append(w[1])
        elif w == ["score", "rperf"]:
            scored = True
        elif len(w) == 3 and w[0] == "calls" and w[2].isdigit():
            calls[w[1]] = int(w[2])
    if "total" not in truth or truth["total"] <= 0 or not scope:
        raise ValueError("no 'truth total' or no 'scope' line in the program's output")
    if any(n not in truth or low[n] > truth[n] for n in low):
        raise ValueError("a 'truth_low' line without its 'truth' line, or above it")
    return truth, scope, calls if scored else None, low, konly


def parse_folded(path):
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            cut = line.rfind(" ")
            if cut <= 0:
                continue
            try:
                w = float(line[cut + 1:])
            except ValueError:
                continue
            stacks.append((line[:cut].split(";"), w))
    return stacks


def leaf_class(frames):
    """'syscall', 'page fault', 'kernel' or None for a stack (root first)."""
    leaf = frames[-1]
    if leaf.startswith("[syscall"):
        return "syscall"
    if leaf.startswith("[page fault"):
        return "page fault"
    if leaf.startswith("[kernel"):
        return "kernel"
    if leaf.endswith("_[k]"):  # perf script folded with --kernel
        kframes = [f[:-4] for f in frames if f.endswith("_[k]")]
        if any(f in PERF_FAULT_FRAMES for f in kframes):
            return "page fault"
        if any(f in PERF_SYSCALL_FRAMES for f in kframes):
            return "syscall"
        return "kernel"
    return None


def shares(stacks, scope, names):
    """(weight in scope, weight overall, {name: share}) for truth names."""
    total = in_scope = 0.0
    got = dict.fromkeys(names, 0.0)
    for frames, w in stacks:
        total += w
        fs = set(frames)
        if "*" not in scope and not any(s in fs for s in scope):
            continue
        in_scope += w
        cls = leaf_class(frames)
        for n in names:
            if n in LEAF_CLASSES:
                if cls in LEAF_CLASSES[n]:
                    got[n] += w
            elif n in fs:
                got[n] += w
    return in_scope, total, {n: (got[n] / in_scope if in_scope else 0.0) for n in names}


def user_leaves(stacks, name):
    """(% of name's weight whose leaf is user code, name's weight): the
    weight is its sample count in a profile weighted by samples."""
    total = user = 0.0
    for frames, w in stacks:
        if name in frames:
            total += w
            if leaf_class(frames) is None:
                user += w
    return (100.0 * user / total if total else 0.0), total


def score(truth, scope, rperf, low, stacks, n_samples, args, konly=()):
    """dict with worst error, rperf metric and bounds for one folded profile.
    A name with a truth_low line has a range for its truth: the error is the
    distance from the range."""
    names = [n for n in truth if n != "total"]
    in_scope, total, got = shares(stacks, scope, names)
    tot = truth["total"]
    lines, worst, worst_name, over = [], 0.0, "", False
    for n in names:
        t = truth[n] / tot
        lo = low.get(n, truth[n]) / tot
        err = (lo - got[n] if got[n] < lo else max(got[n] - t, 0.0)) * 100
        sigma = math.sqrt(max(t * (1 - t), 0.0) / n_samples) * 100 if n_samples else 100.0
        bound = args.bound_pp + args.noise_sigmas * sigma
        lines.append((n, lo * 100, t * 100, got[n] * 100, err, bound))
        if err > worst:
            worst, worst_name = err, n
        over = over or err > bound
    res = {"worst": worst, "worst_name": worst_name, "lines": lines, "over": over,
           "in_scope": in_scope / total * 100 if total else 0.0, "rperf": None, "rperf_over": False}
    if rperf is not None:
        methods = [n for n in names if n not in LEAF_CLASSES and truth[n] > 0]
        rel = [abs(got[n] - truth[n] / tot) / (truth[n] / tot) for n in methods]
        res["rperf"] = 100 * sum(rel) / len(rel)
        noise = 100 * sum(rperf_noise(truth[n] / tot, rperf.get(n), n_samples) for n in methods) / len(methods)
        res["rperf_bound"] = args.rperf_bound + args.rperf_noise * noise
        res["rperf_over"] = res["rperf"] > res["rperf_bound"]
    res["leaf"], res["leaf_name"], res["leaf_over"] = None, "", False
    res["lost"], res["lost_over"] = None, False  # cpuclock samples rows: run_mech
    for name in konly:  # samples rows only: n is the method's sample count
        pct, n = user_leaves(stacks, name)
        p = args.leaf_bound / 100
        bound = args.leaf_bound + args.noise_sigmas * (math.sqrt(p * (1 - p) / n) * 100 if n else 100.0)
        if res["leaf"] is None or pct - bound > res["leaf"] - res["leaf_bound"]:
            res["leaf"], res["leaf_name"], res["leaf_bound"] = pct, name, bound
        res["leaf_over"] = res["leaf_over"] or pct > bound
    return res


def rperf_noise(t, calls, n_samples):
    """Expected |share - t| / t of a method with share t of n samples. Where
    the method's calls are known, only the periods its calls start and end
    in are uncertain (the periods in between hold one sample each): with a
    draw at random in each period each end is a Bernoulli draw, variance
    1/6 on average, so calls/3 samples squared in all; else binomial
    (t(1-t)n). 0.8 = E|Z| / sigma."""
    n = max(n_samples, 1)
    var = calls / 3.0 if calls else t * (1 - t) * n
    return 0.8 * math.sqrt(var) / (t * n)


def run(cmd, env=None, out=None, check=True):
    with open(out, "w") if out else open(os.devnull, "w") as f:
        p = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s exited with %d: %s" % (os.path.basename(cmd[0]), p.returncode, p.stderr.strip()[-400:]))
    return p


def host_stolen():
    """The machine's stolen and total CPU time so far, in ms (/proc/stat's
    "cpu" line; USER_HZ ticks), or None where it cannot be read: printed
    beside a failed row, since a hypervisor that takes the vCPUs away counts
    in both the truth's and the profile's CPU clocks, but unevenly."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        hz = os.sysconf("SC_CLK_TCK")
        return (v[7] * 1000 // hz if len(v) > 7 else 0, sum(v[:8]) * 1000 // hz)
    except (OSError, ValueError, IndexError):
        return None


def host_note(before, after):
    if not before or not after or after[1] <= before[1]:
        return ""
    load = ""
    try:
        with open("/proc/loadavg") as f:
            load = ", load average %s" % f.read().split()[0]
    except OSError:
        pass
    return "host during the run: %d ms stolen of %d ms of CPU time (all CPUs)%s" % (
        after[0] - before[0], after[1] - before[1], load)


def count_samples(folded):
    return int(sum(w for _, w in parse_folded(folded)))


def profile(case, mech, prog, symmap, work, args):
    """Runs one case under one mechanism; returns (truth text, {weight: folded path}, note,
    % of the asked samples lost (None for perf))."""
    d = os.path.join(work, case + "." + mech)
    os.makedirs(d, exist_ok=True)
    argv = [prog] + (["quick"] if args.quick else [])
    truth_txt = os.path.join(d, "truth.txt")
    env = dict(os.environ)
    env.pop("SPROF_ACCURACY_QUICK", None)
    env.update(CASE_ENV.get(case, {}))
    fold = [os.path.join(args.bin_dir, "sprof-fold"), "--c-names"]
    folded = {w: os.path.join(d, w + ".folded") for w in ("samples", "cpu")}
    note, lost = "", None
    if mech == "perf":
        data = os.path.join(d, "perf.data")
        run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", str(args.hz), "-o", data, "--"] + argv,
            env=env, out=truth_txt)
        script = os.path.join(d, "perf.txt")
        run(["perf", "script", "-i", data], out=script)
        for w in folded:
            run(fold + ["--kernel", "--weight=" + w, "--perf-script", script, symmap, "-o", folded[w]])
    else:
        trace = os.path.join(d, "trace.bin")
        if os.path.exists(trace):
            os.unlink(trace)
        env.update(SPROF_OUT=trace, SPROF_HZ=str(args.hz), LD_PRELOAD=os.path.join(args.lib_dir, "libsprof.so"))
        # perf_event_tick: perf_event with kernel time from the tick sampler,
        # what a user at perf_event_paranoid 2 gets (plain perf_event samples
        # kernel mode where allowed, e.g. as root)
        timer = "perf_event" if mech == "perf_event_tick" else mech
        env.pop("SPROF_KERNEL", None)
        if mech == "perf_event_tick":
            env["SPROF_KERNEL"] = "tick"
        if timer != "perf_event":
            env["SPROF_TIMER"] = timer
        else:
            env.pop("SPROF_TIMER", None)
        run(argv, env=env, out=truth_txt)
        info = run([os.path.join(args.bin_dir, "sprof-trace"), "info", trace], out=os.path.join(d, "info.txt"))
        with open(os.path.join(d, "info.txt")) as f:
            lines = f.readlines()
        used = [l.split(":", 1)[1].strip() for l in lines if l.startswith("mechanism:")]
        lost = lost_pct(lines)
        if used and not used[0].startswith(timer):
            note = "ran as %s" % used[0]
        for w in folded:
            run(fold + ["--weight=" + w, trace, symmap, "-o", folded[w]])
        del info
    with open(truth_txt) as f:
        return f.read(), folded, note, lost


def lost_pct(info_lines):
    """The % of the asked samples `sprof-trace info` counts as lost signals
    (under cpuclock: draws the pacer forgave), 0.0 when it names none."""
    for l in info_lines:
        if l.startswith("lost signals:") and "(" in l:
            try:
                return float(l.split("(", 1)[1].split("%", 1)[0])
            except ValueError:
                return None
    return 0.0


def row_status(key, res, patterns):
    """ok, FAIL, XFAIL or XPASS for one row: a "case:mech:weight" pattern
    expects the whole row to fail, a "case:mech:weight:rperf" one only its
    rperf metric (the worst error is still judged); the user-leaf check only
    by a pattern ending in ":leaf"."""
    def expected(k, leaf=False):
        return any(fnmatch.fnmatchcase(k, p) for p in patterns if p.endswith(":leaf") == leaf)
    xf_row = expected(key)
    xf_rperf = xf_row or (res["rperf"] is not None and expected(key + ":rperf"))
    xf_leaf = res["leaf"] is not None and expected(key + ":leaf", leaf=True)
    xf_lost = res["lost"] is not None and expected(key + ":lost")
    if ((res["over"] and not xf_row) or (res["rperf_over"] and not xf_rperf) or (res["leaf_over"] and not xf_leaf)
            or (res["lost_over"] and not (xf_row or xf_lost))):
        return "FAIL"
    if res["over"] or res["rperf_over"] or res["leaf_over"] or res["lost_over"]:
        return "XFAIL"
    return "XPASS" if xf_row or xf_rperf or xf_leaf or xf_lost else "ok"


def xfail_patterns():
    env = os.environ.get("SPROF_ACCURACY_XFAIL")
    return env.split() if env is not None else XFAIL


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases", nargs="*", default=CASES)
    ap.add_argument("--bin-dir", default=os.environ.get("SPROF_BIN"))
    ap.add_argument("--lib-dir", default=os.environ.get("SPROF_LIB"))
    ap.add_argument("--prog-dir", help="where acc_<case> are (default: --bin-dir)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mech", default="perf_event,perf_event_tick,cpuclock")
    ap.add_argument("--hz", type=int, default=4000)
    ap.add_argument("--bound-pp", type=float, default=1.5)
    ap.add_argument("--noise-sigmas", type=float, default=0.0)
    ap.add_argument("--rperf-bound", type=float, default=0.6)
    ap.add_argument("--rperf-noise", type=float, default=0.0)
    ap.add_argument("--leaf-bound", type=float, default=2.0,
                    help="%% of a kernel_only method's weight allowed in user leaves")
    ap.add_argument("--lost-bound", type=float, default=5.0,
                    help="%% of the asked draws the cpuclock pacer may forgive (lost signals)")
    ap.add_argument("--work")
    ap.add_argument("--rows", help="append one line per row: case mech weight worst_pp rperf_pct status")
    ap.add_argument("--confirm", type=int, default=0,
                    help="run a mechanism that failed again, up to N times: it fails only if every run does")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args()
    if not args.bin_dir or not args.lib_dir:
        die("need --bin-dir/--lib-dir or SPROF_BIN/SPROF_LIB")
    prog_dir = args.prog_dir or args.bin_dir
    for c in args.cases:
        if c not in CASES:
            die("unknown case %s (cases: %s)" % (c, " ".join(CASES)))
    work = args.work or tempfile.mkdtemp(prefix="sprof-acc-")
    os.makedirs(work, exist_ok=True)
    patterns = xfail_patterns()
    failed = 0
    for case in args.cases:
        prog = os.path.join(prog_dir, "acc_" + case)
        symmap = os.path.join(work, "acc_" + case + ".symmap")
        if not os.path.exists(symmap):
            run([os.path.join(args.bin_dir, "sprof-symmap"), prog, "-o", symmap, "--quiet"])
        for mech in args.mech.split(","):
            for attempt in range(args.confirm + 1):
                out, rows, nfail = run_mech(case, mech, prog, symmap, work, args, patterns)
                if not nfail or attempt == args.confirm:
                    break
                # a bound of a few sigmas is crossed by chance now and then
                # (one quick row in ~20 on a loaded 2-core host, at 6c7b8a5
                # as after it): a failure counts only if a new run repeats it
                for line in out:
                    print(line.replace("  FAIL", "  failed once: run again", 1) if "  FAIL" in line else line)
            for line in out:
                print(line)
            if args.rows:
                with open(args.rows, "a") as f:
                    f.writelines(rows)
            failed += nfail
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def run_mech(case, mech, prog, symmap, work, args, patterns):
    """One profiled run of case under mech, scored: (lines, rows, failures)."""
    out, rows, failed = [], [], 0
    before = host_stolen()
    try:
        text, folded, note, lost = profile(case, mech, prog, symmap, work, args)
        truth, scope, rperf, low, konly = parse_truth(text)
        n = count_samples(folded["samples"])
        after = host_stolen()
    except (RuntimeError, ValueError, OSError) as e:
        return ["accuracy: %-12s %-10s FAIL: %s" % (case, mech, e)], [], 1
    for weight in ("samples", "cpu"):
        # the user-leaf check on sample counts: a classification of landings;
        # by cpu weight one late landing of a few periods moves it by percents
        res = score(truth, scope, rperf, low, parse_folded(folded[weight]), n, args,
                    konly if weight == "samples" else ())
        key = "%s:%s:%s" % (case, mech, weight)
        # draws the cpuclock pacer forgave (it was kept off the CPU, or paid
        # its debts no faster than it ran up new ones) are missing from the
        # sample counts, unevenly between threads: bursty's three busy
        # threads on two CPUs lost 10-30 % of theirs until 2026-11-29
        res["lost"] = lost if mech == "cpuclock" and weight == "samples" else None
        res["lost_over"] = res["lost"] is not None and res["lost"] > args.lost_bound
        status = row_status(key, res, patterns)
        if status == "FAIL":
            failed += 1
        rp = "" if res["rperf"] is None else "  rperf %.2f%% (bound %.2f)" % (res["rperf"], res["rperf_bound"])
        if res["lost"] is not None and (res["lost"] > 0 or res["lost_over"] or args.verbose):
            rp += "  lost %.1f%% of the asked draws (bound %.1f)" % (res["lost"], args.lost_bound)
        if res["leaf"] is not None:
            rp += "  user leaves %.1f%% of %s (bound %.1f)" % (res["leaf"], res["leaf_name"], res["leaf_bound"])
        xpass = ("XPASS (within the quick run's noise allowance; the entry is judged at full length,"
                 " bench/accuracy/run.sh)" if args.quick else "XPASS (unexpected pass: drop it from XFAIL)")
        label = {"XFAIL": "expected failure", "XPASS": xpass}.get(status, status)
        out.append("accuracy: %-12s %-10s %-7s worst %6.2f pp (%s)%s  %d samples, %.1f%% in scope  %s%s"
                   % (case, mech, weight, res["worst"], res["worst_name"], rp, n, res["in_scope"], label,
                      "  [" + note + "]" if note else ""))
        if args.verbose or res["over"] or res["rperf_over"]:
            for name, lo, t, g, err, bound in res["lines"]:
                tr = "%6.2f%%" % t if lo == t else "%.2f-%.2f%%" % (lo, t)
                out.append("    %-20s truth %s  profile %6.2f%%  error %5.2f pp (bound %.2f)"
                           % (name, tr, g, err, bound))
        if status == "FAIL" and host_note(before, after):
            out.append("    " + host_note(before, after))
        rows.append("%s %s %s %.3f %s %s\n" % (case, mech, weight, res["worst"],
                    "-" if res["rperf"] is None else "%.3f" % res["rperf"], status))
    return out, rows, failed


if __name__ == "__main__":
    sys.exit(main())
