#!/bin/bash
# End to end: a C++ program (tests/native-names/cxx_prog.cpp: namespaced,
# templated and overloaded functions, a lambda, and std::_Hash_bytes from
# libstdc++.so) built with g++, its symmap written by sprof-symmap, run under
# the preloaded runtime, then folded and viewed: every C++ frame must be shown
# demangled (symmap names, DWARF inline names, and the library's ELF symbol
# resolved by the offline tools), with the mangled name kept where the format
# has room (symmap c_name, pprof system_name, sprof-fold --c-names).
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_LIB:?}" "${SPROF_SRC:?}"
CXX=${CXX:-g++}
if ! command -v "$CXX" >/dev/null; then
    echo "SKIP: $CXX not found (Debian g++, in scripts/deps.sh)"
    [ "${SPROF_REQUIRE_ALL:-0}" = 1 ] && exit 1
    exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$CXX" -O2 -g -fno-omit-frame-pointer -o prog "$SPROF_SRC/tests/native-names/cxx_prog.cpp"
"$SPROF_BIN/sprof-symmap" prog
SPROF_OUT=t.bin LD_PRELOAD="$SPROF_LIB/libsprof.so" ./prog 0.8 >/dev/null
"$SPROF_BIN/sprof-fold" t.bin prog.symmap >folded 2>fold.err
cat folded

want=(
    'geo::scale(int)'
    'geo::scale(double)'
    'geo::Grid<int>::sum_cells() const'
    'geo::Grid<double>::sum_cells() const'
    'main::{lambda(unsigned long)#1}::operator()(unsigned long) const'
    'std::_Hash_bytes(void const*, unsigned long, unsigned long)'
)
for w in "${want[@]}"; do
    grep -qF -- "$w" folded || fail "folded output lacks $w"
done
# the inlined std::hash<std::string>::operator() comes from DWARF's linkage name
grep -qF 'std::hash<std::__cxx11::basic_string<char' folded || fail "no demangled inline frame from DWARF"
if grep -E '(^|;)_Z' folded; then fail "mangled names left in folded output"; fi

# the raw names stay available
"$SPROF_BIN/sprof-fold" --c-names t.bin prog.symmap 2>/dev/null | grep -qF '_ZN3geo5scaleEi' ||
    fail "--c-names lost the mangled name"
"$SPROF_BIN/sprof-symmap" --dump prog.symmap >dump
grep -F '_ZNK3geo4GridIiE9sum_cellsEv' dump | grep -qF 'geo::Grid<int>::sum_cells() const' ||
    fail "symmap: c_name/ruby_name pair missing"

# another view: sprof-top (text and JSON)
"$SPROF_BIN/sprof-top" -n 0 t.bin prog.symmap >top 2>/dev/null
cat top
for w in 'geo::scale(int)' 'geo::Grid<double>::sum_cells() const' 'std::_Hash_bytes('; do
    grep -qF -- "$w" top || fail "sprof-top lacks $w"
done
"$SPROF_BIN/sprof-top" --json -n 0 t.bin prog.symmap >top.json 2>/dev/null
# exports: pprof keeps the mangled name as system_name, speedscope shows the demangled one
"$SPROF_BIN/sprof-export" t.bin prog.symmap --pprof p.pb.gz --speedscope s.json 2>/dev/null
python3 - <<'PY'
import gzip, json, sys
top = json.load(open("top.json"))
names = {r["name"] for r in top["rows"]}
assert "geo::scale(int)" in names and "geo::scale(double)" in names, names
ss = json.load(open("s.json"))
frames = {f["name"] for f in ss["shared"]["frames"]}
assert "geo::Grid<int>::sum_cells() const" in frames, frames
assert not any(n.startswith("_Z") for n in frames), frames
# pprof: walk profile.proto's string table (field 6) and functions (field 5:
# name 2, system_name 3, both string indexes)
data = gzip.decompress(open("p.pb.gz", "rb").read())
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i); f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif t == 1: v = b[i:i + 8]; i += 8
        elif t == 5: v = b[i:i + 4]; i += 4
        yield f, v
strings, funcs = [], []
for f, v in fields(data):
    if f == 6: strings.append(v.decode())
    elif f == 5: funcs.append(dict(fields(v)))
pairs = {(strings[fn.get(2, 0)], strings[fn.get(3, 0)]) for fn in funcs}
for want in [("geo::scale(int)", "_ZN3geo5scaleEi"), ("geo::scale(double)", "_ZN3geo5scaleEd"),
             ("std::_Hash_bytes(void const*, unsigned long, unsigned long)", "_ZSt11_Hash_bytesPKvmm")]:
    assert want in pairs, (want, sorted(pairs))
print("pprof: name/system_name pairs ok")
PY
# text inputs that carry raw names: folded files and `perf script --no-demangle`
printf 'main;_ZN3geo5scaleEi 5\nmain;_RNvCs6GmmlP4bgsG_1r4work 2\n' >raw.folded
"$SPROF_BIN/sprof-fold" raw.folded 2>/dev/null >raw.out
grep -qxF 'main;geo::scale(int) 5' raw.out && grep -qxF 'main;r::work 2' raw.out || fail "folded input: $(cat raw.out)"
printf 'prog 123 1.0: 1 cpu-clock:\n\t    1234 _ZN1r4main17h086b0cfd890a8ea9E+0x10 (/tmp/prog)\n\t    5678 main+0x20 (/tmp/prog)\n\n' >ps.txt
"$SPROF_BIN/sprof-fold" --perf-script ps.txt 2>/dev/null >ps.out
grep -qxF 'prog;main;r::main 1' ps.out || fail "perf script input: $(cat ps.out)"

echo "PASS: C++ frames demangled in folded, top, speedscope and pprof; raw names kept"
