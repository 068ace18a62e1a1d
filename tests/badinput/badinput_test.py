#!/usr/bin/env python3
"""Bad input for every sprof tool and for the runtime's SPROF_OUT.

Usage: badinput_test.py CASE   (env from ctest: SPROF_BIN, SPROF_LIB)

  prefixes_reader  every prefix length of a small real trace through the reader
            in-process (trace_replay) and sprof-trace info
  prefixes_tools   sprof-fold on every 3rd prefix, the other tools on a stride
  flips     bit-flipped and cut copies of a real symmap (sprof-symmap --dump,
            --lookup, sprof-fold with it)
  buildid   a trace with the symmap of a different build, for every tool
  files     empty files, directories, missing and unreadable files, in every
            input position of every tool
  messages  the mistakes a new user makes get a message that points at the
            fix (issue 16): a binary where the symmap belongs names the
            sprof-symmap command; a trace cut before its header or mappings
            is called cut, not "different builds"; --force with another
            build's symmap is marked in every view (stderr and the output)
  sprof_out SPROF_OUT at a symlink (dangling, to a file), an existing file, a
            directory, a missing directory: the program runs unprofiled with
            one warning and nothing on disk changes (both link forms)

The rules checked (docs/security.md):
  refusal  = non-zero exit (not a signal), exactly one stderr line and it
             names the file, no -o output and no temp file left behind;
  accepted = exit 0, the -o output exists; when the input was cut short the
             tool says so on stderr (a partial profile never passes as whole).
A crash (death by a signal, a sanitizer report) fails every case.
"""
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

BIN = os.environ["SPROF_BIN"]
LIB = os.environ["SPROF_LIB"]
PROG_STATIC = os.path.join(BIN, "fault_prog_static")  # tests/faults: `work SECS`
PROG_DYN = os.path.join(BIN, "fault_prog")
failures = []
checks = 0
# Sanitizer builds (tools ~3-5x slower) set BADINPUT_SPARSE=N from CMake: the
# tools then see every Nth of the prefixes they would see in a plain build;
# the in-process reader (trace_replay, sanitized too) still sees every prefix.
SPARSE = max(1, int(os.environ.get("BADINPUT_SPARSE", "1")))


def tool(name):
    return os.path.join(BIN, name)


def run(argv, env=None, timeout=60):
    e = dict(os.environ)
    for k in ("SPROF_OUT", "SPINEL_PROFILE", "LD_PRELOAD"):
        e.pop(k, None)
    if env:
        e.update(env)
    try:
        r = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return r.returncode, r.stdout, r.stderr


def fail(what):
    failures.append(what)
    print("FAIL: " + what, file=sys.stderr)


def err_lines(stderr):
    return [l for l in stderr.decode("utf-8", "replace").splitlines() if l.strip()]


def crashed(rc, stderr):
    return rc is None or rc < 0 or rc >= 128 or b"Sanitizer" in stderr or b"runtime error:" in stderr


def dir_listing(d):
    return sorted(os.listdir(d))


CUT_WORDS = ("cut short", "no end record", "truncated")


def check(label, argv, named, out=None, cut=False, workdir=None, may_accept=True):
    """Run a tool on a bad input; apply the refusal/acceptance rules.
    named: the path the error line must name. out: the -o path (or None).
    cut: the input is a cut trace (acceptance must say so). Returns the rc."""
    global checks
    checks += 1
    before = dir_listing(workdir) if workdir else None
    if out and os.path.exists(out):
        os.unlink(out)
    rc, so, se = run(argv)
    lines = err_lines(se)
    where = "%s: %s" % (label, " ".join(os.path.basename(a) if a.startswith("/") else a for a in argv))
    if crashed(rc, se):
        fail("%s: crashed or hung (rc=%s): %s" % (where, rc, " | ".join(lines[-5:])))
        return rc
    if rc != 0:
        if len(lines) != 1:
            fail("%s: refusal must be one stderr line, got %d: %s" % (where, len(lines), " | ".join(lines[:4])))
        elif named not in lines[0]:
            fail("%s: error line does not name %s: %s" % (where, named, lines[0]))
        if out and os.path.exists(out):
            fail("%s: refused but left %s behind" % (where, out))
    else:
        if not may_accept:
            fail("%s: accepted (exit 0) an input it must refuse; stderr: %s" % (where, " | ".join(lines)))
        if out and not os.path.exists(out):
            fail("%s: exit 0 but no output file %s" % (where, out))
        if cut and not any(w in l.lower() for l in lines for w in CUT_WORDS):
            fail("%s: accepted a cut trace without saying it was cut (stderr: %s)" % (where, " | ".join(lines)))
    if workdir:
        after = dir_listing(workdir)
        extra = set(after) - set(before) - ({os.path.basename(out)} if out and rc == 0 else set())
        if extra:
            fail("%s: left files behind: %s" % (where, sorted(extra)))
            for f in extra:
                p = os.path.join(workdir, f)
                if os.path.isfile(p):
                    os.unlink(p)
    return rc


def make_trace(d, name="t.bin", prog=PROG_STATIC, secs="0.15", hz="1000"):
    path = os.path.join(d, name)
    rc, so, se = run([prog, "work", secs], env={"SPROF_OUT": path, "SPROF_HZ": hz})
    if rc != 0 or not os.path.exists(path):
        print("setup: cannot record a trace (rc=%s): %s" % (rc, se.decode()), file=sys.stderr)
        sys.exit(2)
    return path


def make_symmap(d, prog=PROG_STATIC, name="p.symmap"):
    path = os.path.join(d, name)
    rc, so, se = run([tool("sprof-symmap"), prog, "-o", path, "--quiet"])
    if rc != 0:
        print("setup: sprof-symmap failed: %s" % se.decode(), file=sys.stderr)
        sys.exit(2)
    return path


def make_folded(d, trace, symmap):
    path = os.path.join(d, "good.folded")
    rc, so, se = run([tool("sprof-fold"), trace, symmap, "-o", path])
    if rc != 0:
        print("setup: sprof-fold failed: %s" % se.decode(), file=sys.stderr)
        sys.exit(2)
    return path


def trace_tool_runs(d, trace, symmap, folded, every_tool=True):
    """(label, argv, out) for every tool taking a trace + symmap."""
    o = os.path.join(d, "out")
    runs = [("fold", [tool("sprof-fold"), trace, symmap, "-o", o], o)]
    if every_tool:
        runs += [
            ("top", [tool("sprof-top"), trace, symmap, "-o", o], o),
            ("callgraph", [tool("sprof-callgraph"), trace, symmap, "-o", o], o),
            ("flamegraph", [tool("sprof-flamegraph"), trace, symmap, "-o", o], o),
            ("export", [tool("sprof-export"), trace, symmap, "--pprof", o], o),
            ("diff", [tool("sprof-diff"), "-b", folded, "-a", trace, symmap, "-o", o], o),
        ]
    return runs


def prefix_setup(d):
    trace = make_trace(d, secs="0.1", hz="300")
    symmap = make_symmap(d)
    folded = make_folded(d, trace, symmap)
    data = open(trace, "rb").read()
    work = os.path.join(d, "w")
    os.mkdir(work)
    return trace, symmap, folded, data, work


def case_prefixes_reader(d):
    """The reader library in-process on every prefix (trace_replay: the fuzz
    harness's replay driver, sanitized in sanitizer builds), then sprof-trace
    info on every prefix and sprof-trace dump on a stride."""
    trace, symmap, folded, data, work = prefix_setup(d)
    pdir = os.path.join(d, "prefixes")
    os.mkdir(pdir)
    for n in range(len(data)):
        with open(os.path.join(pdir, "%06d" % n), "wb") as f:
            f.write(data[:n])
    global checks
    checks += 1
    rc, so, se = run([tool("trace_replay"), pdir], timeout=120)
    if rc != 0 or crashed(rc, se):
        fail("trace reader (trace_replay) on every prefix: rc=%s %s" % (rc, se.decode()[-2000:]))
    print("trace: %d bytes; reader in-process on every prefix: %s" % (len(data), so.decode().strip()))
    cut = os.path.join(work, "cut.bin")
    for n in range(len(data)):
        if n % SPARSE:
            continue
        shutil.copy(os.path.join(pdir, "%06d" % n), cut)
        checks += 1
        rc, so, se = run([tool("sprof-trace"), "info", cut])
        if crashed(rc, se):
            fail("prefix %d: sprof-trace info crashed (rc=%s)" % (n, rc))
        elif rc != 0:
            l = err_lines(se)
            if len(l) != 1 or cut not in l[0]:
                fail("prefix %d: sprof-trace info: refusal not one line naming the file: %s" % (n, l))
        elif b"no END" not in so:
            fail("prefix %d: sprof-trace info does not say the trace is cut" % n)
        if n % 7 == 0:
            checks += 1
            rc, so, se = run([tool("sprof-trace"), "dump", cut])
            if crashed(rc, se):
                fail("prefix %d: sprof-trace dump crashed (rc=%s)" % (n, rc))
    rc, so, se = run([tool("sprof-trace"), "info", trace])
    if rc != 0 or b"no END" in so:
        fail("the complete trace reads as cut or is refused")


def case_prefixes_tools(d):
    """sprof-fold on every 3rd prefix (all of the first 128 and last 64);
    every other tool on every 23rd prefix and the last 64."""
    trace, symmap, folded, data, work = prefix_setup(d)
    cut = os.path.join(work, "cut.bin")
    print("trace: %d bytes; sprof-fold on every 3rd prefix and every one of the first 128 and "
          "last 64 bytes, every tool on every 23rd and the last 64" % len(data))
    accepted = refused = 0
    for n in range(len(data)):
        if (n % 3 and 128 <= n < len(data) - 64) or n % SPARSE:
            continue  # (the reader itself sees every prefix: prefixes_reader)
        with open(cut, "wb") as f:
            f.write(data[:n])
        full = n % 23 == 0 or n >= len(data) - 64
        for label, argv, out in trace_tool_runs(work, cut, symmap, folded, every_tool=full):
            rc = check("prefix %d %s" % (n, label), argv, cut, out=out, cut=True, workdir=work)
            if label == "fold":
                accepted += rc == 0
                refused += rc != 0
    print("sprof-fold on %d prefixes: %d folded (cut reported), %d refused with one line"
          % (len(data), accepted, refused))
    # the whole file is complete: nothing about a cut
    rc, so, se = run([tool("sprof-fold"), trace, symmap])
    if rc != 0 or any(w in se.decode().lower() for w in ("cut short", "no end record")):
        fail("the complete trace is reported as cut or refused: %s" % se.decode())


def flip_bits(data, rnd, nflips):
    b = bytearray(data)
    for _ in range(nflips):
        i = rnd.randrange(len(b))
        b[i] ^= 1 << rnd.randrange(8)
    return bytes(b)


def case_flips(d):
    trace = make_trace(d)
    symmap = make_symmap(d)
    data = open(symmap, "rb").read()
    rc, so, se = run([tool("sprof-symmap"), "--dump", symmap])
    addrs = []  # a few function start addresses to look up: "  0xLO-0xHI  name ..."
    for line in so.decode().splitlines():
        w = line.split()
        if line.startswith("  0x") and "-" in w[0] and len(addrs) < 12:
            addrs.append(w[0].split("-")[0])
    work = os.path.join(d, "w")
    os.mkdir(work)
    bad = os.path.join(work, "bad.symmap")
    rnd = random.Random(20261121)
    n_variants = int(os.environ.get("BADINPUT_FLIPS", "300"))
    safe = refused = 0
    # a flip in the header, the tables, the strings: random positions; plus cuts
    for v in range(n_variants):
        if v % 10 == 9:
            blob = data[: rnd.randrange(len(data))]
        elif v % 10 == 8:  # aim at the header and table directory
            b = bytearray(data)
            i = rnd.randrange(min(256, len(b)))
            b[i] ^= 1 << rnd.randrange(8)
            blob = bytes(b)
        else:
            blob = flip_bits(data, rnd, rnd.choice((1, 1, 2, 4, 8, 32)))
        with open(bad, "wb") as f:
            f.write(blob)
        rc = check("flip %d dump" % v, [tool("sprof-symmap"), "--dump", bad], bad, workdir=work)
        if rc == 0:
            safe += 1
            if addrs:
                check("flip %d lookup" % v, [tool("sprof-symmap"), "--lookup", bad] + addrs, bad, workdir=work)
        else:
            refused += 1
        o = os.path.join(work, "out")
        # --force: get past the build-id check so the flipped tables are used
        check("flip %d fold" % v, [tool("sprof-fold"), "--force", trace, bad, "-o", o], bad, out=o, workdir=work)
        if v % 5 == 0:
            check("flip %d top" % v, [tool("sprof-top"), "--force", "--lines", trace, bad, "-o", o], bad,
                  out=o, workdir=work)
    print("%d flipped/cut symmaps: %d read safely, %d refused with one line" % (n_variants, safe, refused))


def case_buildid(d):
    trace = make_trace(d)                              # fault_prog_static
    other = make_symmap(d, PROG_DYN, "other.symmap")   # a different binary
    mine = make_symmap(d)
    folded = make_folded(d, trace, mine)
    work = os.path.join(d, "w")
    os.mkdir(work)
    for label, argv, out in trace_tool_runs(work, trace, other, folded):
        check("build-id " + label, argv, other, out=out, workdir=work, may_accept=False)
        # --force folds anyway
        forced = argv[:1] + ["--force"] + argv[1:]
        rc, so, se = run(forced)
        if rc != 0:
            fail("build-id %s --force: refused: %s" % (label, se.decode().strip()))
        if out and os.path.exists(out):
            os.unlink(out)


def trace_offsets(trace):
    """(offset, record type) of every record, from sprof-trace dump."""
    rc, so, se = run([tool("sprof-trace"), "dump", trace])
    recs = []
    for line in so.decode().splitlines():
        w = line.split()
        if len(w) > 1 and w[0].isdigit():
            recs.append((int(w[0]), w[1]))
    return recs


def expect_refusal(label, argv, named, want, workdir):
    """check()'s refusal rules, and the one line holds every string in want."""
    rc = check(label, argv, named, workdir=workdir, may_accept=False)
    _, _, se = run(argv)
    line = " | ".join(err_lines(se))
    for w in want:
        if w not in line:
            fail("%s: the message lacks %r: %s" % (label, w, line))
    if "different builds" in line:
        fail("%s: called a build mismatch: %s" % (label, line))
    return rc


def case_messages(d):
    trace = make_trace(d)
    mine = make_symmap(d)
    other = make_symmap(d, PROG_DYN, "other.symmap")
    folded = make_folded(d, trace, mine)
    work = os.path.join(d, "w")
    os.mkdir(work)
    o = os.path.join(work, "out")
    # 1. the program binary where its symmap belongs, positional and --symmap
    fix = "sprof-symmap %s -o %s.symmap" % (PROG_STATIC, PROG_STATIC)
    for label, argv, _ in trace_tool_runs(work, trace, PROG_STATIC, folded):
        expect_refusal("binary as symmap: " + label, argv, PROG_STATIC, ("ELF binary", fix), work)
    for t in ("sprof-fold", "sprof-top", "sprof-callgraph", "sprof-flamegraph"):
        expect_refusal("binary as --symmap: " + t, [tool(t), trace, "--symmap", PROG_STATIC, "-o", o],
                       PROG_STATIC, ("ELF binary", "not a symmap", fix), work)
    expect_refusal("binary as --symmap: sprof-export",
                   [tool("sprof-export"), trace, "--symmap", PROG_STATIC, "--pprof", o],
                   PROG_STATIC, ("ELF binary", fix), work)
    # 2. a trace cut before its INFO record or its mappings: "cut short", for
    #    every tool, and sprof-trace info
    data = open(trace, "rb").read()
    recs = trace_offsets(trace)
    first_map = next(off for off, kind in recs if kind == "MAPPING")
    after_map = next(off for off, kind in recs if off > first_map)
    cut = os.path.join(work, "cut.bin")
    for n in sorted({1, 5, 8, 12, 16, 17, first_map - 1, first_map, first_map + 8, after_map - 1}):
        with open(cut, "wb") as f:
            f.write(data[:n])
        for label, argv, out in trace_tool_runs(work, cut, mine, folded):
            expect_refusal("cut at %d: %s" % (n, label), argv, cut, ("cut short",), work)
        if 16 <= n < first_map:  # (with its INFO record, info summarises the cut trace as cut)
            expect_refusal("cut at %d: sprof-trace info" % n, [tool("sprof-trace"), "info", cut], cut,
                           ("cut short",), work)
    # 3. --force with another build's symmap: stderr and the output say so
    marks = []
    def forced(label, argv, out, mark_in_output):
        rc, so, se = run(argv)
        global checks
        checks += 1
        err = se.decode("utf-8", "replace")
        if rc != 0:
            fail("--force %s: refused: %s" % (label, err.strip()))
            return
        if "--force against a symmap of another build" not in err:
            fail("--force %s: no warning on stderr: %s" % (label, err.strip()))
        if mark_in_output:
            body = open(out, "rb").read() if out else so
            if out and out.endswith(".pb.gz"):
                import gzip
                body = gzip.decompress(body)
            if mark_in_output.encode() not in body:
                fail("--force %s: the output lacks %r" % (label, mark_in_output))
        marks.append(label)
    forced("fold", [tool("sprof-fold"), "--force", trace, other, "-o", o], None, None)
    rc, so, se = run([tool("sprof-fold"), "--force", trace, other, "-o", o])
    stats = [l for l in err_lines(se) if " samples, " in l]
    if not stats or "FORCED" not in stats[-1]:
        fail("--force fold: the stats line does not say FORCED: %s" % stats)
    forced("top", [tool("sprof-top"), "--force", trace, other], None, "--force against a symmap")
    forced("top --json", [tool("sprof-top"), "--force", "--json", trace, other], None, "--force against")
    forced("flamegraph", [tool("sprof-flamegraph"), "--force", trace, other, "-o", o + ".svg"], o + ".svg", "FORCED")
    forced("callgraph", [tool("sprof-callgraph"), "--force", trace, other, "-o", o + ".dot"], o + ".dot", "FORCED")
    forced("pprof", [tool("sprof-export"), "--force", trace, other, "--pprof", o + ".pb.gz"], o + ".pb.gz",
           "--force against a symmap")
    forced("speedscope", [tool("sprof-export"), "--force", trace, other, "--speedscope", o + ".json"],
           o + ".json", "FORCED")
    forced("diff", [tool("sprof-diff"), "--force", "-b", folded, "-a", trace, other], None,
           "--force against a symmap")
    forced("diff --svg", [tool("sprof-diff"), "--force", "-b", folded, "-a", trace, other, "--svg", o + ".d.svg"],
           o + ".d.svg", "FORCED")
    print("binary-as-symmap, cut-before-header and --force marks checked in: %s" % ", ".join(marks))


def case_files(d):
    trace = make_trace(d)
    symmap = make_symmap(d)
    folded = make_folded(d, trace, symmap)
    work = os.path.join(d, "w")
    os.mkdir(work)
    empty = os.path.join(d, "empty")
    open(empty, "w").close()
    adir = os.path.join(d, "adir")
    os.mkdir(adir)
    missing = os.path.join(d, "missing")
    bads = [("empty", empty), ("directory", adir), ("missing", missing)]
    if os.geteuid() == 0:
        print("running as root: chmod 000 does not stop root reading, unreadable-file case skipped")
    else:
        unreadable = os.path.join(d, "unreadable")
        shutil.copy(trace, unreadable)
        os.chmod(unreadable, 0)
        bads.append(("unreadable", unreadable))
    o = os.path.join(work, "out")
    for kind, bad in bads:
        positions = []
        for t in ("sprof-fold", "sprof-top", "sprof-callgraph", "sprof-flamegraph"):
            positions.append((t + " trace", [tool(t), bad, symmap, "-o", o]))
            positions.append((t + " symmap", [tool(t), trace, "--symmap", bad, "-o", o]))
        positions += [
            ("sprof-export trace", [tool("sprof-export"), bad, symmap, "--pprof", o]),
            ("sprof-export speedscope", [tool("sprof-export"), bad, symmap, "--speedscope", o]),
            ("sprof-export symmap", [tool("sprof-export"), trace, "--symmap", bad, "--pprof", o]),
            ("sprof-diff before", [tool("sprof-diff"), bad, folded, "-o", o]),
            ("sprof-diff after", [tool("sprof-diff"), folded, bad, "-o", o]),
            ("sprof-trace info", [tool("sprof-trace"), "info", bad]),
            ("sprof-trace dump", [tool("sprof-trace"), "dump", bad]),
            ("sprof-symmap --dump", [tool("sprof-symmap"), "--dump", bad]),
            ("sprof-symmap --lookup", [tool("sprof-symmap"), "--lookup", bad, "0x1000"]),
            ("sprof-symmap binary", [tool("sprof-symmap"), bad, "-o", o]),
        ]
        for label, argv in positions:
            out = o if o in argv else None
            check("%s %s" % (kind, label), argv, bad, out=out, workdir=work, may_accept=False)
    # an -o into a directory that does not exist / is a directory: one line,
    # nothing left; refused before the inputs are read, so a trace that makes
    # the tool warn (cut short: always; a whole one: when its samples cover
    # under 95 % of the CPU, as on a loaded CI machine once) adds no line
    with open(trace, "rb") as f:
        data = f.read()
    cut_trace = os.path.join(d, "cut_for_o.bin")
    with open(cut_trace, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    for label, target in (("-o into a missing directory", os.path.join(d, "nodir", "x")),
                          ("-o at a directory", adir)):
        for t in ("sprof-fold", "sprof-top", "sprof-callgraph", "sprof-flamegraph"):
            for which, tr in (("trace", trace), ("cut trace", cut_trace)):
                check("%s (%s, %s)" % (label, t, which), [tool(t), tr, symmap, "-o", target], target,
                      workdir=work, may_accept=False)


def case_sprof_out(d):
    work = os.path.join(d, "w")
    os.mkdir(work)
    for form, argv, env in (("preload", [PROG_DYN, "work", "0.1"], {"LD_PRELOAD": os.path.join(LIB, "libsprof.so")}),
                            ("static", [PROG_STATIC, "work", "0.1"], {})):
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        existing = os.path.join(work, "existing.bin")
        with open(existing, "w") as f:
            f.write("keep\n")
        link_to_file = os.path.join(work, "link-file.bin")
        os.symlink(victim, link_to_file)
        dangling_target = os.path.join(d, "would-be-created")
        dangling = os.path.join(work, "dangling.bin")
        os.symlink(dangling_target, dangling)
        subdir = os.path.join(work, "subdir")
        os.mkdir(subdir)
        cases = [("symlink to a file", link_to_file), ("dangling symlink", dangling),
                 ("existing file", existing), ("directory", subdir),
                 ("missing directory", os.path.join(work, "nodir", "t.bin"))]
        for label, path in cases:
            global checks
            checks += 1
            before = {f: os.lstat(os.path.join(work, f)) for f in os.listdir(work)}
            e = dict(env)
            e.update({"SPROF_OUT": path, "SPROF_HZ": "1000"})
            rc, so, se = run(argv, env=e)
            lines = err_lines(se)
            where = "SPROF_OUT %s (%s)" % (label, form)
            if rc != 0:
                fail("%s: the program's exit status changed to %s: %s" % (where, rc, lines))
            if len(lines) != 1 or not lines[0].startswith("sprof:"):
                fail("%s: expected exactly one 'sprof:' warning, got %s" % (where, lines))
            after = {f: os.lstat(os.path.join(work, f)) for f in os.listdir(work)}
            if set(before) != set(after):
                fail("%s: files appeared or vanished: %s" % (where, sorted(set(before) ^ set(after))))
            for f, st in before.items():
                a = after.get(f)
                if a and (a.st_ino != st.st_ino or a.st_size != st.st_size or a.st_mtime_ns != st.st_mtime_ns):
                    fail("%s: %s was modified" % (where, f))
            if open(victim).read() != "precious\n":
                fail("%s: the symlink's target was written" % where)
            if os.path.lexists(dangling_target):
                fail("%s: the dangling symlink's target was created" % where)
            if os.listdir(subdir):
                fail("%s: wrote into the directory" % where)
            print("%s: exit %s, %s" % (where, rc, lines[0] if lines else "no warning"))
        for f in (existing, link_to_file, dangling):
            os.unlink(f)
        os.rmdir(subdir)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    case = sys.argv[1]
    fn = {"prefixes_reader": case_prefixes_reader, "prefixes_tools": case_prefixes_tools, "flips": case_flips, "buildid": case_buildid,
          "files": case_files, "messages": case_messages, "sprof_out": case_sprof_out}.get(case)
    if not fn:
        print("unknown case " + case, file=sys.stderr)
        return 2
    d = tempfile.mkdtemp(prefix="sprof-badinput-")
    try:
        fn(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("%s: %d checks, %d failures" % (case, checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
