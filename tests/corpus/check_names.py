#!/usr/bin/env python3
"""Checks names and locations of the corpus programs (tests/corpus).

For every program, on the plain build (sprof-symmap after cc) and on the
CC=sprof-cc build:
  blocks     every `block in` / `Fiber body in` record of the symmap is a
             function defined in the program's generated C, placed in its .rb
             (glibc's putc/atol inlined into a Ruby method are not blocks), and
             so is every such frame of the profile;
  main       the C main is `<main>`, kind toplevel, class user, at a .rb line;
  hot names  the hottest Ruby (class user) methods of the profile are Ruby
             names from the program's symbols JSON (class clones corrected:
             no `implicit`), `<main>` or blocks, and exact (not guessed);
  locations  no runtime/gc/native record or sprof-top row has a .rb file, and
             no absolute non-.rb path that does not exist;
  verdict    sprof-cc (which runs sprof-symmap --quiet) passed the map's
             one-line verdict on (every corpus map has the bad
             `Method#initialize` row).
Prints what it saw (block frames, hot methods, main) for the record.
"""
import argparse
import json
import os
import re
import sys

FUNC = re.compile(r"^  0x[0-9a-f]+-0x[0-9a-f]+  (\S+)  (.*)  \(([a-z, ]+)\)  (\S+)$")
INLINE = re.compile(r"^\s+inline #\d+ (\S+)  (.*)  \(([a-z, ]+)\)  (\S+)  called from (\S+)$")
CLONE = re.compile(r"(::::implicit::|::implicit::|__implicit_)\d+")
fails = 0


def check(cond, msg):
    global fails
    if not cond:
        fails += 1
        print("FAIL " + msg)
    return cond


def is_block(name):
    return name.startswith("block in ") or name.startswith("Fiber body in ")


def loc_file(loc):
    return "" if loc.startswith("??") else loc.rsplit(":", 1)[0]


def records(dump_path):
    out = []
    with open(dump_path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = FUNC.match(line)
            if m:
                out.append(("func", m.group(1), m.group(2), [w.strip() for w in m.group(3).split(",")], loc_file(m.group(4))))
                continue
            m = INLINE.match(line)
            if m:
                out.append(("inline", m.group(1), m.group(2), [w.strip() for w in m.group(3).split(",")], loc_file(m.group(4))))
    return out


def defined_in(cname, c_source):
    """Is `cname` (clone suffix dropped) a function defined in the generated C?"""
    base = cname.split(".")[0]
    return re.search(rf"^[A-Za-z_][^;\n]*\b{re.escape(base)}\s*\([^;\n]*$", c_source, re.M) is not None


def check_dump(prog, label, dump_path, c_source):
    recs = records(dump_path)
    if not check(len(recs) > 0, f"{prog} ({label}): no records parsed from {dump_path}"):
        return set()
    blocks = set()
    for kind, cname, ruby, flags, file in recs:
        cost = flags[1]
        if is_block(ruby):
            blocks.add(ruby)
            check(file.endswith(".rb"), f"{prog} ({label}): {kind} {cname} named {ruby!r} but its code is from {file or 'nowhere'}")
            check(defined_in(cname, c_source), f"{prog} ({label}): {kind} {cname} named {ruby!r} is not defined in the program's C")
        if cost != "user":
            check(not file.endswith(".rb"), f"{prog} ({label}): {cost} code {cname} placed in {file}")
        if file.startswith("/") and not file.endswith(".rb"):
            check(os.path.exists(file), f"{prog} ({label}): {cname} placed in {file}, which does not exist")
        if kind == "func" and cname.split(".")[0] == "main":
            check(ruby == "<main>" and flags[:2] == ["toplevel", "user"] and (cname != "main" or file.endswith(".rb")),
                  f"{prog} ({label}): main is {ruby!r} ({', '.join(flags)}) at {file or 'nowhere'}")
            if cname == "main":
                print(f"     {prog} ({label}): main is {ruby} ({', '.join(flags)}) at {os.path.basename(file)}")
        if cost == "user":
            check("implicit" not in ruby, f"{prog} ({label}): uncorrected class clone name {ruby!r}")
    return blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cc-log", required=True)
    ap.add_argument("progs", nargs="+")
    a = ap.parse_args()
    cc_log = open(a.cc_log).read()
    for p in a.progs:
        with open(os.path.join(a.corpus, "programs", p, p + ".symbols.json")) as f:
            rows = json.load(f)["symbols"]
        ruby_names = {CLONE.sub("", r["ruby"]) for r in rows if r.get("ruby") and r.get("file")}
        with open(os.path.join(a.corpus, "programs", p, p + ".c")) as f:
            c_source = f.read()
        block_records = check_dump(p, "plain", os.path.join(a.plain, p + ".dump"), c_source)
        cc_dump = os.path.join(a.cc, p + ".dump")
        if check(os.path.exists(cc_dump) and os.path.getsize(cc_dump) > 0, f"{p} (sprof-cc): no symmap dump"):
            check_dump(p, "sprof-cc", cc_dump, c_source)
        check(re.search(rf"^sprof-cc: warning: [^ ]*{re.escape(p)}\.symbols\.json: suspicious name map: .*Method#initialize", cc_log, re.M),
              f"{p} (sprof-cc): the map verdict was not passed on")

        # The profile: block frames, hot methods, locations.
        frames = set()
        with open(os.path.join(a.plain, p + ".folded")) as f:
            for line in f:
                stack = line.rsplit(" ", 1)[0]
                frames.update(stack.split(";"))
        fblocks = sorted(n for n in frames if is_block(n))
        for n in fblocks:
            check(n in block_records, f"{p}: profile frame {n!r} is no block record of the symmap")
        print(f"     {p}: block frames in the profile: {fblocks if fblocks else 'none'}")
        with open(os.path.join(a.plain, p + ".top.json")) as f:
            top = json.load(f)
        rows_top = top["rows"]
        hot = [r for r in sorted(rows_top, key=lambda r: -r["self"]) if r["class"] == "user"][:4]
        check(len(hot) > 0, f"{p}: no Ruby method in the profile")
        named = 0
        for r in hot:
            n = r["name"]
            ok = n == "<main>" or is_block(n) or n in ruby_names
            named += n in ruby_names
            check(ok, f"{p}: hot Ruby method {n!r} is not a name from {p}.symbols.json")
            check(r.get("name_trust") == "exact", f"{p}: hot Ruby method {n!r} has a {r.get('name_trust')} name")
        check(named > 0 or not ruby_names & {r["name"] for r in rows_top},
              f"{p}: none of the hot Ruby methods is a name from the map")
        print(f"     {p}: hottest Ruby methods: {', '.join(r['name'] + ' (' + (r['file'] and os.path.basename(r['file'])) + ':' + str(r['line']) + ')' for r in hot)}")
        for r in rows_top:
            if r["class"] not in ("user", "kernel"):
                check(not r["file"].endswith(".rb"), f"{p}: sprof-top places {r['class']} code {r['name']} in {r['file']}:{r['line']}")
            if r["file"].startswith("/") and not r["file"].endswith(".rb"):
                check(os.path.exists(r["file"]), f"{p}: sprof-top places {r['name']} in {r['file']}, which does not exist")
            if r["name"] == "<main>":
                check(r["class"] == "user" and r["file"].endswith(".rb"), f"{p}: <main> is {r['class']} at {r['file']!r}")
    print("ok   corpus names and locations" if not fails else f"{fails} check(s) failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
