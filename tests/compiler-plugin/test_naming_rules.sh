#!/bin/sh
# One small synthetic program per naming/location rule of issue 15
# (docs/ruby-names.md): glibc code inlined into a Ruby method is not a
# block; blocks and fiber bodies are named after the method whose def..end
# really holds them, or <main>; Spinel's class-clone rows are corrected;
# methods merged by identical code folding are named together; a broken map
# is one warning, even under --quiet; main is <main>; runtime helpers never
# show a .rb file, nor a C file that no longer exists.
. "$SPROF_SRC/tests/compiler-plugin/common.sh"
cd "$WORK"
addr() { nm "$1" | awk -v f="$2" '$3 == f || index($3, f ".") == 1 { print "0x" $1; exit }'; }
frame0() { "$SYMMAP" --lookup "$1.symmap" "$(addr "$1" "$2")" | head -1; } # BINARY C_NAME

# --- the program: Spinel-shaped C with #line into app.rb ---
cat > app.rb <<'RB'
class Consumer
  def total
    @n = 1
    [1, 2].each { |x| @n += x }
    @n
  end
end

f = Fiber.new do
  puts "in fiber"
  Fiber.yield 1
end

class Sphere
  def intersect(r)
    r * 3
  end
end

class A
  def sum(o) = o.a * 3 + o.b
end
class B
  def total(o) = o.a * 3 + o.b
end
puts Consumer.new.total
RB
cat > app.c <<'C'
#include <stdio.h>
#include <stdlib.h>
typedef struct { long a, b; } Obj;
static volatile long sink;
static long counter;
/* a runtime helper defined after Ruby code: inherits its #line */
#line 4 "app.rb"
__attribute__((noinline)) static void _sp_proc_fn_1(long x) { counter += x; }
#line 3 "app.rb"
__attribute__((noinline)) static long sp_Consumer_total(const char *s) {
#line 3 "app.rb"
  counter = atol(s);
#line 4 "app.rb"
  _sp_proc_fn_1(1); _sp_proc_fn_1(2);
#line 5 "app.rb"
  return counter;
}
__attribute__((noinline)) static void sp_helper_runtime(void) { sink++; }
#line 10 "app.rb"
__attribute__((noinline)) static void _fiber_body_1(void) {
#line 10 "app.rb"
  puts("in fiber");
#line 11 "app.rb"
  sink += 1;
}
#line 16 "app.rb"
__attribute__((noinline)) static long sp_Sphere__implicit_852_intersect(long r) { sink += r; return r * 3; }
#line 21 "app.rb"
__attribute__((noinline)) static long sp_A_sum(Obj *o) { o->b += o->a * 3; return o->b; }
#line 24 "app.rb"
__attribute__((noinline)) static long sp_B_total(Obj *o) { o->b += o->a * 3; return o->b; }
#line 26 "app.rb"
int main(int argc, char **argv) {
#line 26 "app.rb"
  Obj o = { argc, 2 };
  sink += sp_Consumer_total(argc > 5 ? argv[1] : "7");
  _fiber_body_1();
  sp_helper_runtime();
  sink += sp_Sphere__implicit_852_intersect(argc);
  sink += sp_A_sum(&o);
  sink += sp_B_total(&o);
  return 0;
}
C
cat > app.symbols.json <<'JSON'
{"symbols":[
 {"c":"sp_Consumer_total","ruby":"Consumer#total","kind":"imeth","file":"/elsewhere/app.rb","line":2},
 {"c":"sp_Sphere__implicit_852_intersect","ruby":"Sphere::::implicit::852#intersect","kind":"imeth","file":"/elsewhere/app.rb","line":15},
 {"c":"sp_A_sum","ruby":"A#sum","kind":"imeth","file":"/elsewhere/app.rb","line":21},
 {"c":"sp_B_total","ruby":"B#total","kind":"imeth","file":"/elsewhere/app.rb","line":24},
 {"c":"sp_Method_initialize","ruby":"Method#initialize","kind":"imeth","file":null,"line":null}
]}
JSON
mkdir gen
cp app.c gen/out.c
(cd gen && "$CC_FOR_TESTS" -O2 -g -fno-omit-frame-pointer -o ../app out.c) || { fail "cannot build app"; finish; }
rm -rf gen # Spinel deletes its temporary out.c

"$SYMMAP" app 2> warn || fail "sprof-symmap failed: $(cat warn)"

# Identical code folding really happened (else the folding check is moot).
if [ "$(addr app sp_A_sum)" = "$(addr app sp_B_total)" ]; then
    frame0 app sp_A_sum | grep -Eq '#0 (A#sum \(\+1 folded: B#total\)|B#total \(\+1 folded: A#sum\))  \(imeth, user, folded\)' ||
        fail "folded methods: $(frame0 app sp_A_sum)"
else
    echo "note: $CC_FOR_TESTS did not fold sp_A_sum and sp_B_total; folding check skipped"
fi

# Class clone rows: "Sphere::::implicit::852#intersect" is Sphere#intersect, exact.
frame0 app sp_Sphere__implicit_852_intersect | grep -q '#0 Sphere#intersect  (imeth, user)  ' ||
    fail "class clone: $(frame0 app sp_Sphere__implicit_852_intersect)"

# atol inlined from <stdlib.h> into Consumer#total: native, never a block.
"$SYMMAP" --dump app.symmap > dump
grep -q 'inline #[0-9]* atol  atol  (native, native, inlined)' dump || fail "atol inline record: $(grep atol dump)"
grep -q 'block in.*inlined' dump && fail "an inline record named a block: $(grep 'block in' dump)"

# The block inside Consumer#total (line 4, within def..end 2-6) is its block.
frame0 app _sp_proc_fn_1 | grep -q '#0 block in Consumer#total  (block, user)  ' ||
    fail "block in a method: $(frame0 app _sp_proc_fn_1)"
# The fiber at top level after the class is <main>'s, as CRuby names it.
frame0 app _fiber_body_1 | grep -q '#0 Fiber body in <main>  (block, user)  ' ||
    fail "fiber at top level: $(frame0 app _fiber_body_1)"

# main is the top-level script: <main>, user, on its .rb lines.
frame0 app main | grep -q '#0 <main>  (toplevel, user)  app.rb:2[6-9]' ||
    fail "main: $(frame0 app main)"

# A runtime helper that inherited app.rb's #line shows no .rb file; code
# from the deleted out.c shows no file at all.
grep -E '^  0x[0-9a-f]+-0x[0-9a-f]+  sp_helper_runtime ' dump | grep -q '??:0$' ||
    fail "runtime helper location: $(grep sp_helper_runtime dump)"
grep -q 'out\.c' dump && fail "a location points at the deleted out.c: $(grep out.c dump | head -3)"

# The map's bad row gives one warning line.
[ "$(grep -c . warn)" = 1 ] && grep -q 'suspicious name map: 1 row(s) without a file name, for a C function the binary does not have (Method#initialize)' warn ||
    fail "map verdict: $(cat warn)"

# --- without the .rb source: the next-def guess, flagged guessed ---
mkdir nosrc && cp app app.symbols.json nosrc/ && (cd nosrc && "$SYMMAP" app --quiet 2>/dev/null) ||
    fail "sprof-symmap (no .rb) failed"
frame0 nosrc/app _fiber_body_1 | grep -q '#0 Fiber body in Consumer#total  (block, user, approx, guessed)' ||
    fail "fiber without source: $(frame0 nosrc/app _fiber_body_1)"

# --- a map whose every string is empty: one warning, even under --quiet ---
mkdir empty && cp app app.rb empty/
printf '{"symbols":[{"c":"","ruby":"","kind":"imeth","file":"","line":3},{"c":"","ruby":"","kind":"","file":"","line":8}]}\n' \
    > empty/app.symbols.json
(cd empty && "$SYMMAP" app --quiet 2> warn) || fail "sprof-symmap (empty map) failed"
[ "$(grep -c . empty/warn)" = 1 ] && grep -q 'broken name map: none of its 2 rows names a C function (every string is empty' empty/warn ||
    fail "empty map verdict: $(cat empty/warn)"
frame0 empty/app sp_Consumer_total | grep -q '#0 Consumer#total  (imeth, user, approx)' ||
    fail "empty map: names from C: $(frame0 empty/app sp_Consumer_total)"
# sprof-cc runs sprof-symmap --quiet and passes the verdict on.
cp empty/app.symbols.json cc.symbols.json
SPROF_REAL_CC="$CC_FOR_TESTS" "$SPROF_BIN/sprof-cc" -O2 app.c -o cc 2> ccwarn || fail "sprof-cc failed"
grep -q '^sprof-cc: warning: cc.symbols.json: broken name map' ccwarn || fail "sprof-cc swallowed the verdict: $(cat ccwarn)"
# ... and with a broken map, the C sources name the methods (approximate).
frame0 cc sp_Consumer_total | grep -q '#0 Consumer#total  (imeth, user, approx)' ||
    fail "broken map + C source: $(frame0 cc sp_Consumer_total)"

# --- a map with no rows at all ---
mkdir norows && cp app norows/ && printf '{"symbols":[]}\n' > norows/app.symbols.json
(cd norows && "$SYMMAP" app --quiet 2> warn) || fail "sprof-symmap (no rows) failed"
grep -q 'broken name map: it has no rows' norows/warn || fail "no-rows verdict: $(cat norows/warn)"
finish
