#!/usr/bin/env python3
"""Check a folded profile of the example program against what it measured.

Inputs (all written by e2e.sh):
  --folded F     sprof-fold output (default naming)
  --classes F    sprof-fold --classes output of the same trace
  --split F      the program's own CPU split (SPROF_EXAMPLE_SPLIT file)
  --lines F      sprof-fold --lines output of the same trace
  --cpu F        sprof-fold --weight=cpu output of the same trace
  --symbols F    the example binary's defined function symbols, one per line
  --suffixes S   class suffix table, "u=user,g=gc,..." (how sprof-fold --classes
                 marks each cost class; docs/folded.md)

Assertions (issue 3, item 7):
  shares     each measured method's share of samples (stacks containing its
             frame) is within --tolerance percentage points of its measured
             share of the program's thread CPU time;
  cpu        the same shares from CPU-time weights (--weight=cpu), and the
             total weight within 5 % of the program's own thread CPU total;
  inline     Checksum.fnv, which has no symbol of its own, is a frame of its
             own directly under its caller Verifier#drain;
  classes    collector/allocator frames (sp_gc_*, sp_str_alloc) carry the gc
             class, the measured Ruby methods the user class;
  roots      >= --min-rooted % of samples reach main, [Fiber] or the thread's
             start routine, and so do the samples whose leaf is in glibc;
  lines      inlined frames carry the .rb line of their call site and the
             leaf its own line: Verifier#drain:76;Checksum.fnv:61|62 and
             Pipeline#run:102;Simulation#step:28-37;
  structure  below main / sp_thread_start comes a Ruby frame (a wrong unwind
             that skips frames but still ends at the root is caught here).
Prints one line per check; exits 1 if any failed.
"""
import argparse
import re
import sys

ROOT_FRAMES = {"<main>", "main", "[Fiber]", "sp_thread_start"}
GC_FRAME = re.compile(r"^(sp_gc_\w+|sp_str_alloc|sp_str_sweep)$")
RUBY_METHODS = ("Simulation#step", "Indexer#tokenize", "Checksum.fnv")


def read_folded(path):
    """[(frames, count)]; refuses malformed lines."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            stack, sep, count = line.rpartition(" ")
            if not sep or not count.isdigit() or not stack:
                sys.exit(f"{path}:{n}: not a folded line: {line[:120]!r}")
            out.append((stack.split(";"), int(count)))
    if not out:
        sys.exit(f"{path}: empty profile")
    return out


def read_split(path):
    methods, total = {}, None
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[0] == "total_ns":
                total = int(p[1])
            elif len(p) == 4 and p[0] == "method":
                methods[p[1]] = float(p[3])
    if total is None or set(methods) != set(RUBY_METHODS):
        sys.exit(f"{path}: not the example's split report")
    return methods, total


def parse_suffixes(spec):
    table = {}
    for item in spec.split(","):
        suffix, _, cls = item.partition("=")
        table[suffix] = cls
    return table


def split_class(frame, suffixes):
    """('name', 'class') from a --classes frame like 'sp_gc_alloc_[k]'."""
    m = re.match(r"^(.*)_\[(\w+)\]$", frame)
    if not m or m.group(2) not in suffixes:
        return frame, None
    return m.group(1), suffixes[m.group(2)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--folded", required=True)
    ap.add_argument("--classes", required=True)
    ap.add_argument("--split", required=True)
    ap.add_argument("--lines", required=True)
    ap.add_argument("--cpu", required=True)
    ap.add_argument("--symbols", required=True)
    ap.add_argument("--suffixes", required=True)
    ap.add_argument("--tolerance", type=float, default=3.0)
    ap.add_argument("--min-rooted", type=float, default=99.0)
    ap.add_argument("--label", default="profile")
    a = ap.parse_args()

    folded = read_folded(a.folded)
    classes = read_folded(a.classes)
    measured, measured_total_ns = read_split(a.split)
    suffixes = parse_suffixes(a.suffixes)
    with open(a.symbols) as f:
        app_symbols = {l.strip() for l in f if l.strip()}

    failures = []

    def check(ok, what):
        print(f"{a.label}: {'ok  ' if ok else 'FAIL'} {what}")
        if not ok:
            failures.append(what)

    total = sum(c for _, c in folded)
    print(f"{a.label}: {total} samples, {len(folded)} distinct stacks")

    # shares
    for m in RUBY_METHODS:
        n = sum(c for fr, c in folded if m in fr)
        share = 100.0 * n / total
        diff = share - measured[m]
        check(abs(diff) <= a.tolerance,
              f"share {m}: profile {share:.2f}% vs measured {measured[m]:.2f}% "
              f"(diff {diff:+.2f} pp, tolerance {a.tolerance})")

    # cpu weights
    cpu = read_folded(a.cpu)
    cpu_total = sum(c for _, c in cpu)
    for m in RUBY_METHODS:
        share = 100.0 * sum(c for fr, c in cpu if m in fr) / cpu_total
        diff = share - measured[m]
        check(abs(diff) <= a.tolerance,
              f"cpu-weighted share {m}: profile {share:.2f}% vs measured {measured[m]:.2f}% (diff {diff:+.2f} pp)")
    rel = 100.0 * (cpu_total - measured_total_ns) / measured_total_ns
    check(abs(rel) <= 5.0, f"sampled CPU {cpu_total / 1e9:.3f} s vs measured {measured_total_ns / 1e9:.3f} s ({rel:+.2f} %)")

    # inline
    fnv = [(fr, c) for fr, c in folded if "Checksum.fnv" in fr]
    fnv_n = sum(c for _, c in fnv)
    under = sum(c for fr, c in fnv
                if fr.index("Checksum.fnv") > 0 and fr[fr.index("Checksum.fnv") - 1] == "Verifier#drain")
    check("sp_Checksum_cls_fnv" not in app_symbols,
          "Checksum.fnv has no symbol of its own (exists only inlined)")
    check(fnv_n > 0 and under == fnv_n,
          f"Checksum.fnv is its own frame under Verifier#drain in {under}/{fnv_n} samples")

    # classes
    gc_n, gc_bad, user_bad, unclassified = 0, set(), set(), 0
    for fr, c in classes:
        for frame in fr:
            name, cls = split_class(frame, suffixes)
            if cls is None and not name.startswith("["):  # synthetic frames have no class
                unclassified += c
            if GC_FRAME.match(name):
                if cls != "gc":
                    gc_bad.add(f"{name}={cls}")
            if name in RUBY_METHODS and cls != "user":
                user_bad.add(f"{name}={cls}")
        if any(GC_FRAME.match(split_class(x, suffixes)[0]) for x in fr):
            gc_n += c
    check(gc_n > 0 and not gc_bad,
          f"collector frames carry the gc class ({gc_n} samples with one"
          + (f"; wrong: {', '.join(sorted(gc_bad))}" if gc_bad else "") + ")")
    check(not user_bad, "Ruby method frames carry the user class"
          + (f" (wrong: {', '.join(sorted(user_bad))})" if user_bad else ""))
    check(unclassified == 0, f"every frame of --classes output has a class suffix ({unclassified} frames without)")

    # roots
    rooted = sum(c for fr, c in folded if ROOT_FRAMES.intersection(fr))
    pct = 100.0 * rooted / total
    check(pct >= a.min_rooted, f"{pct:.2f}% of samples reach main/[Fiber]/sp_thread_start (need {a.min_rooted}%)")
    libc_total = libc_rooted = 0
    libc_leaves = {}
    for fr, c in classes:
        leaf, cls = split_class(fr[-1], suffixes)
        if cls == "native" and leaf not in app_symbols and leaf not in ROOT_FRAMES:
            libc_total += c
            libc_leaves[leaf] = libc_leaves.get(leaf, 0) + c
            if ROOT_FRAMES.intersection(split_class(x, suffixes)[0] for x in fr):
                libc_rooted += c
    top = ", ".join(f"{k} {v}" for k, v in sorted(libc_leaves.items(), key=lambda kv: -kv[1])[:6])
    lpct = 100.0 * libc_rooted / libc_total if libc_total else 0.0
    check(libc_total > 0 and lpct >= a.min_rooted,
          f"{libc_rooted}/{libc_total} samples with a glibc leaf reach the root ({lpct:.2f}%; leaves: {top})")

    # .rb lines: call-site lines on the outer frames, the PC's line on the leaf
    lined = read_folded(a.lines)
    for method, caller, lo, hi in (("Checksum.fnv", "Verifier#drain:76", 61, 62),
                                   ("Simulation#step", "Pipeline#run:102", 28, 37)):
        n_all = n_ok = 0
        seen = {}
        for fr, c in lined:
            for i, f in enumerate(fr):
                name, _, line = f.rpartition(":")
                if name != method:
                    continue
                n_all += c
                ok = line.isdigit() and lo <= int(line) <= hi and i > 0 and fr[i - 1] == caller
                n_ok += c if ok else 0
                key = (fr[i - 1] if i else "") + ";" + f
                seen[key] = seen.get(key, 0) + c
                break
        pct = 100.0 * n_ok / n_all if n_all else 0.0
        common = ", ".join(f"{k} {v}" for k, v in sorted(seen.items(), key=lambda kv: -kv[1])[:3])
        check(n_all > 0 and pct >= a.min_rooted,
              f"--lines: {pct:.2f}% of {method} samples read {caller};{method}:{lo}-{hi} ({common})")

    # Rooted is not enough: a wrong unwind can skip frames and still end at
    # the root. Every piece of work in the example runs in Ruby code, so the
    # frame right below main / sp_thread_start is a Ruby (user) frame.
    below_ok = below_all = 0
    bad_below = {}
    for fr, c in classes:
        names = [split_class(x, suffixes) for x in fr]
        idx = next((i for i, (n, _) in enumerate(names) if n in ("<main>", "main", "sp_thread_start")), None)
        if idx is None:
            continue
        below_all += c
        if idx + 1 < len(names) and names[idx + 1][1] == "user":
            below_ok += c
        else:
            key = ";".join(n for n, _ in names[idx:idx + 3])
            bad_below[key] = bad_below.get(key, 0) + c
    bpct = 100.0 * below_ok / below_all if below_all else 0.0
    worst = ", ".join(f"{k} {v}" for k, v in sorted(bad_below.items(), key=lambda kv: -kv[1])[:4])
    check(bpct >= a.min_rooted,
          f"{bpct:.2f}% of rooted samples have a Ruby frame right below main/sp_thread_start"
          + (f" (not: {worst})" if worst else ""))

    if failures:
        print(f"{a.label}: {len(failures)} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
