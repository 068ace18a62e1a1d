#!/usr/bin/env python3
"""Compare `addr2line -f -i -a` output with `sprof-symmap --lookup` output on
the same addresses: same C function chain (innermost first) and same line
numbers. File names are not compared: binutils 2.40 reports the primary .c
file for GCC 12 DWARF 5 rows that precede the first DW_LNS_set_file, where
the line program's file register says the .rb file.

usage: compare_addr2line.py A2L_OUT LOOKUP_OUT"""
import re
import sys

CLONE = re.compile(r"(\.(isra|constprop|part|cold|lto_priv|localalias|clone|\d+))+$")

def base(name):
    """addr2line names clones by their DWARF name: compare without .isra.0 etc."""
    return CLONE.sub("", name)

def main():
    a2l, cur = {}, None
    for l in open(sys.argv[1]):
        l = l.rstrip("\n")
        if l.startswith("0x"):
            cur = int(l, 16)
            a2l[cur] = []
        else:
            a2l[cur].append(l)
    ours = {}
    pat = re.compile(r"0x([0-9a-f]+)  #(\d+) (.*?)  \(([^)]*)\)  (\S+)(?:  \[(.*)\])?$")
    for l in open(sys.argv[2]):
        m = pat.match(l.rstrip("\n"))
        if not m:
            continue
        a, depth = int(m.group(1), 16), int(m.group(2))
        frames = ours.setdefault(a, [])
        if depth == len(frames):  # an address listed twice prints twice
            frames.append((base(m.group(6) or m.group(3)), m.group(5).rsplit(":", 1)[-1]))
    same = shown = 0
    for a, lines in a2l.items():
        want = [(base(f), loc.rsplit(":", 1)[-1].split(" ")[0].replace("?", "0"))
                for f, loc in zip(lines[0::2], lines[1::2])]
        if ours.get(a) == want:
            same += 1
        elif shown < 5:
            shown += 1
            print("  differs at %#x: addr2line %s, symmap %s" % (a, want, ours.get(a)))
    print("agreement with addr2line: %d of %d addresses give the same frames and lines" % (same, len(a2l)))

if __name__ == "__main__":
    main()
