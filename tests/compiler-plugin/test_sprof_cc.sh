#!/bin/sh
# sprof-cc end to end: wraps the real compiler, writes <output>.symmap when
# linking, never fails a build over a symmap.
. "$SPROF_SRC/tests/compiler-plugin/common.sh"
SPROF_CC="$SPROF_BIN/sprof-cc"
export SPROF_REAL_CC="$CC_FOR_TESTS"
cp "$HERE/fixture.c" "$HERE/fixture.rb" "$WORK/"
cd "$WORK"

# --- link from C: names derived from the C source (#line + sp_* definitions) ---
"$SPROF_CC" -O2 -fPIE -pie fixture.c -o x 2> err || fail "sprof-cc failed: $(cat err)"
[ -s err ] && fail "sprof-cc printed: $(cat err)"
[ -x x ] || fail "no executable"
[ -s x.symmap ] || fail "no x.symmap"
readelf -S x | grep -q '\.debug_info' || fail "sprof-cc did not add -g"
addr() { nm "$1" | awk -v f="$2" '$3 == f || index($3, f ".") == 1 { print "0x" $1; exit }'; }
"$SYMMAP" --lookup x.symmap "$(addr x sp_Shape_area)" | grep -q '#0 Shape#area  (imeth, user, approx)  fixture.rb:' ||
    fail "C-source names: Shape#area"
"$SYMMAP" --lookup x.symmap "$(addr x sp_Geo_Box_cls_make)" | grep -q '#0 Geo::Box.make  (cmeth, user, approx)' ||
    fail "C-source names: Geo::Box.make"
"$SYMMAP" --lookup x.symmap "$(addr x _sp_proc_fn_1)" | grep -q '#0 block in run  (block, user, approx)' ||
    fail "C-source names: block in run (approximate: its method's name is demangled)"
"$SYMMAP" --lookup x.symmap "$(addr x sp_gc_alloc)" | grep -q '#0 sp_gc_alloc  (runtime, gc)' ||
    fail "C-source names: sp_gc_alloc is gc"

# --- a Spinel map beside the output wins: exact names ---
cp "$HERE/fixture.symbols.json" y.symbols.json
"$SPROF_CC" -O2 fixture.c -o y 2> err || fail "sprof-cc (map) failed"
# The fixture map has one row of empty strings: sprof-cc passes the
# generator's one-line verdict on (it runs it with --quiet), and nothing else.
[ "$(grep -c . err)" = 1 ] && grep -q '^sprof-cc: warning: y.symbols.json: suspicious name map: 1 of 11 rows have empty strings' err ||
    fail "sprof-cc (map) should print the map verdict once, printed: $(cat err)"
check_all_functions y y.symmap

# --- compile only: no symmap ---
"$SPROF_CC" -O2 -c fixture.c -o fixture.o || fail "sprof-cc -c failed"
[ -s fixture.o ] || fail "no object file"
ls ./*.o.symmap a.out.symmap 2>/dev/null && fail "compile-only wrote a symmap"
"$SPROF_CC" -E fixture.c > /dev/null || fail "sprof-cc -E failed"
ls a.out a.out.symmap 2>/dev/null && fail "-E linked or wrote a symmap"

# --- separate link step: no .c on the line, names from the demangler ---
"$SPROF_CC" fixture.o -o linked 2> err || fail "link step failed"
# no map and no C source: the generator's note says so and how to get a map
grep -q '^sprof-cc: note: linked: no Spinel symbols JSON .*spinel --profile.*--emit-symbol-map' err ||
    fail "link-only: no note about the missing symbols JSON: $(cat err)"
"$SYMMAP" --lookup linked.symmap "$(addr linked sp_Vec2__plus)" | grep -q '#0 Vec2#+  (imeth, user, approx)' ||
    fail "link-only: demangled Vec2#+"

# --- default output a.out; a path with spaces passes through untouched ---
"$SPROF_CC" fixture.c || fail "sprof-cc without -o failed"
[ -s a.out.symmap ] || fail "no a.out.symmap"
mkdir -p "out dir"
"$SPROF_CC" -O1 fixture.c -o "out dir/my prog" || fail "output path with spaces"
[ -s "out dir/my prog.symmap" ] || fail "no symmap for a path with spaces"

# --- the compiler's failure is the wrapper's failure ---
printf 'int main(void) { return syntax error; }\n' > broken.c
set +e
"$SPROF_CC" broken.c -o broken 2> err
rc=$?
set -e
[ $rc -ne 0 ] || fail "compile error not propagated"
[ ! -e broken.symmap ] || fail "symmap after a failed compile"

# --- a symmap failure is one warning, not a failed build ---
"$SPROF_CC" -O2 -s fixture.c -o stripped 2> err || fail "build failed because of the symmap"
[ -x stripped ] || fail "no stripped executable"
[ "$(wc -l < err)" = 1 ] && grep -q '^sprof-cc: warning: no symmap for stripped: .*stripped binary' err ||
    fail "expected one warning, got: $(cat err)"

# --- a user -g0 still wins (flags go before the user's) ---
"$SPROF_CC" -O2 -g0 fixture.c -o nodebug 2> err || fail "-g0 build failed"
grep -q '^sprof-cc: warning: nodebug: no DWARF' err || fail "-g0: the generator's no-DWARF warning not passed on: $(cat err)"
readelf -S nodebug | grep -q '\.debug_info' && fail "-g0 from the user did not win"
[ -s nodebug.symmap ] || fail "no symmap without DWARF"

# --- sprof-cc --help documents sprof-cc, not the compiler ---
"$SPROF_CC" --help > out || fail "sprof-cc --help failed"
grep -q '^usage: sprof-cc' out && grep -q SPROF_REAL_CC out || fail "sprof-cc --help: $(head -3 out)"

# --- SPROF_REAL_CC pointing back at sprof-cc is refused, not a fork bomb ---
set +e
SPROF_REAL_CC="$SPROF_CC" "$SPROF_CC" fixture.c -o loop 2> err
rc=$?
set -e
[ $rc -ne 0 ] && grep -q 'SPROF_REAL_CC runs sprof-cc again' err || fail "recursion not refused: $(cat err)"
finish
