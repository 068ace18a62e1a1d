#!/bin/sh
# sprof-symmap on the Spinel-shaped fixture: names, inline frames, blocks,
# cost classes, determinism, -O0, no DWARF, non-PIE.
. "$SPROF_SRC/tests/compiler-plugin/common.sh"

# --- -O2 PIE with the Spinel map beside it ---
build_fixture fixture -O2 -g -fno-omit-frame-pointer -fPIE -pie
cp "$HERE/fixture.symbols.json" "$WORK/"
"$SYMMAP" "$WORK/fixture" 2> "$WORK/warn" || fail "sprof-symmap failed: $(cat "$WORK/warn")"
[ -s "$WORK/fixture.symmap" ] || fail "no fixture.symmap written"
# The empty-string quirk row gives exactly one warning line.
[ "$(grep -c 'empty strings' "$WORK/warn")" = 1 ] || fail "expected one empty-string warning: $(cat "$WORK/warn")"
check_all_functions "$WORK/fixture" "$WORK/fixture.symmap"
agree_with_addr2line "$WORK/fixture" "$WORK/fixture.symmap"
"$SYMMAP" --dump "$WORK/fixture.symmap" > "$WORK/dump" || fail "--dump failed"
grep -q '^pie: yes' "$WORK/dump" || fail "PIE not recorded"
grep -q '^build-id: [0-9a-f]\{40\}' "$WORK/dump" || fail "build-id not recorded"
grep -q '^cfi: [1-9]' "$WORK/dump" || fail "no CFI rows"
grep -q 'fixture.rb:3[01]$' "$WORK/dump" || fail "no .rb line rows"
grep -q 'inline #[0-9]* sp_scale  scale  (toplevel, user, inlined)  fixture.rb:34  called from fixture.rb:42$' "$WORK/dump" ||
    fail "--dump does not list the inline record of scale() called from run line 42"
grep -q '^lines: [1-9]' "$WORK/dump" || fail "--dump: no line rows"
grep -q 'Shape#perimeter' "$WORK/dump" && fail "row for a function not in the binary was not ignored"

# --- inline frames: a PC inside the always-inline scale() yields [scale, run]
#     with run's call-site line; cross-checked with addr2line -i ---
set -- $(nm -S "$WORK/fixture" | awk '$4 ~ /^sp_run(\.|$)/ { print $1, $2 }')
lo=$((0x$1)); size=$((0x$2)); a=$lo; found39=0; found42=0
while [ $a -lt $((lo + size)) ]; do
    hex=$(printf '0x%x' $a)
    out=$("$SYMMAP" --lookup "$WORK/fixture.symmap" "$hex")
    if printf '%s\n' "$out" | head -1 | grep -q '#0 scale  (toplevel, user, inlined)  fixture.rb:35'; then
        caller=$(printf '%s\n' "$out" | sed -n 2p)
        case "$caller" in
        *"#1 run  (toplevel, user)  fixture.rb:39"*) found39=1 ;;
        *"#1 run  (toplevel, user)  fixture.rb:42"*) found42=1 ;;
        *) fail "inlined scale at $hex: caller frame is '$caller'" ;;
        esac
        [ "$(printf '%s\n' "$out" | wc -l)" = 2 ] || fail "inlined scale at $hex: expected 2 frames: $out"
        addr2line -f -i -e "$WORK/fixture" "$hex" | head -1 | grep -q '^sp_scale$' ||
            fail "addr2line does not agree that $hex is inside sp_scale"
    fi
    a=$((a + 1))
done
[ $found39 = 1 ] || fail "no PC of the first inlined scale() call (run line 39) found"
[ "$(inline_callers "$WORK/fixture.symmap" "$WORK/fixture" sp_run | tr '\n' ' ')" = "39 42 " ] ||
    fail "inline_callers disagrees"
[ $found42 = 1 ] || fail "no PC of the second inlined scale() call (run line 42) found"

# --- nested inline tree: the GC-root cleanup inlined into Vec2#+ gives
#     [_sp_gc_root_pop, sp_gc_cleanup, Vec2#+], collector code classed gc ---
set -- $(nm -S "$WORK/fixture" | awk '$4 ~ /^sp_Vec2__plus(\.|$)/ { print $1, $2 }')
a=$((0x$1)); end=$((0x$1 + 0x$2)); : > "$WORK/pcs"
while [ $a -lt $end ]; do printf '0x%x\n' $a >> "$WORK/pcs"; a=$((a + 1)); done
"$SYMMAP" --lookup "$WORK/fixture.symmap" $(cat "$WORK/pcs") > "$WORK/plus.lookup"
awk '/#0 _sp_gc_root_pop  \(runtime, gc, inlined\)/ { s = 1; next }
     s == 1 && /#1 sp_gc_cleanup  \(runtime, gc, inlined\)/ { s = 2; next }
     s == 2 && /#2 Vec2#\+  \(imeth, user\)  fixture.rb:10/ { found = 1 }
     { s = 0 } END { exit !found }' "$WORK/plus.lookup" ||
    fail "no [_sp_gc_root_pop, sp_gc_cleanup, Vec2#+] chain in Vec2#+"
grep -q '#0 _sp_gc_root_push  (runtime, gc, inlined)' "$WORK/plus.lookup" || fail "no inlined _sp_gc_root_push frame"

# --- determinism: rebuild the same binary, regenerate, compare bytes ---
cp "$WORK/fixture.symmap" "$WORK/first.symmap"
rm -f "$WORK/fixture" "$WORK/fixture.symmap"
build_fixture fixture -O2 -g -fno-omit-frame-pointer -fPIE -pie
"$SYMMAP" --quiet "$WORK/fixture"
cmp "$WORK/first.symmap" "$WORK/fixture.symmap" || fail "two builds gave different symmap bytes"

# --- -O0: everything is a real function; names still exact ---
build_fixture fixture_O0 -O0 -g -fno-omit-frame-pointer -fPIE -pie
cp "$HERE/fixture.symbols.json" "$WORK/fixture_O0.symbols.json"
"$SYMMAP" --quiet "$WORK/fixture_O0" || fail "sprof-symmap -O0 failed"
check_all_functions "$WORK/fixture_O0" "$WORK/fixture_O0.symmap"
[ "$(inline_callers "$WORK/fixture_O0.symmap" "$WORK/fixture_O0" sp_run | tr '\n' ' ')" = "39 42 " ] ||
    fail "-O0: always_inline scale() not found inlined at run lines 39 and 42"

# --- no DWARF: symbol table only, one warning, names still from the map ---
build_fixture fixture_nodebug -O2 -fno-omit-frame-pointer -fPIE -pie
cp "$HERE/fixture.symbols.json" "$WORK/fixture_nodebug.symbols.json"
"$SYMMAP" "$WORK/fixture_nodebug" 2> "$WORK/warn" || fail "no-DWARF build refused"
grep -q 'no DWARF: symbol table only' "$WORK/warn" || fail "no warning about missing DWARF"
NO_DWARF=1 check_all_functions "$WORK/fixture_nodebug" "$WORK/fixture_nodebug.symmap"
"$SYMMAP" --dump "$WORK/fixture_nodebug.symmap" | grep -q 'sp_fib  fib  (toplevel, user, nodebug)' ||
    fail "no-DWARF functions not flagged nodebug"

# --- no map at all: the demangler names sp_* functions, marked approximate ---
build_fixture fixture_nomap -O2 -g -fno-omit-frame-pointer -fPIE -pie
"$SYMMAP" --quiet "$WORK/fixture_nomap" || fail "no-map run failed"
addr=$(nm "$WORK/fixture_nomap" | awk '$3 ~ /^sp_Vec2__plus/ { print $1 }')
"$SYMMAP" --lookup "$WORK/fixture_nomap.symmap" "0x$addr" | grep -q '#0 Vec2#+  (imeth, user, approx)' ||
    fail "demangled Vec2#+ not found (approx)"

# --- DWARF 4 (.debug_ranges, 1-based file indexes) ---
build_fixture fixture_dw4 -O2 -gdwarf-4 -fno-omit-frame-pointer -fPIE -pie
cp "$HERE/fixture.symbols.json" "$WORK/fixture_dw4.symbols.json"
"$SYMMAP" --quiet "$WORK/fixture_dw4" || fail "DWARF 4 build failed"
check_all_functions "$WORK/fixture_dw4" "$WORK/fixture_dw4.symmap"
agree_with_addr2line "$WORK/fixture_dw4" "$WORK/fixture_dw4.symmap"
[ "$(inline_callers "$WORK/fixture_dw4.symmap" "$WORK/fixture_dw4" sp_run | tr '\n' ' ')" = "39 42 " ] ||
    fail "DWARF 4: inlined scale() not found at run lines 39 and 42"

# --- clang (DWARF 5 from another producer), when installed ---
if command -v clang > /dev/null 2>&1; then
    CC_FOR_TESTS=clang build_fixture fixture_clang -O2 -g -fno-omit-frame-pointer -fPIE -pie
    cp "$HERE/fixture.symbols.json" "$WORK/fixture_clang.symbols.json"
    "$SYMMAP" --quiet "$WORK/fixture_clang" || fail "clang build failed"
    [ "$(inline_callers "$WORK/fixture_clang.symmap" "$WORK/fixture_clang" sp_run | tr '\n' ' ')" = "39 42 " ] ||
        fail "clang: inlined scale() not found at run lines 39 and 42"
    addr=$(nm "$WORK/fixture_clang" | awk '$3 == "sp_fib" { print $1 }')
    "$SYMMAP" --lookup "$WORK/fixture_clang.symmap" "0x$addr" | grep -q '#0 fib  (toplevel, user)  fixture.rb:3[01]' ||
        fail "clang: sp_fib not fib at fixture.rb"
fi

# --- non-PIE ---
build_fixture fixture_nopie -O2 -g -fno-omit-frame-pointer -fno-pie -no-pie
cp "$HERE/fixture.symbols.json" "$WORK/fixture_nopie.symbols.json"
"$SYMMAP" --quiet "$WORK/fixture_nopie" || fail "non-PIE failed"
"$SYMMAP" --dump "$WORK/fixture_nopie.symmap" | grep -q '^pie: no' || fail "non-PIE recorded as PIE"
check_all_functions "$WORK/fixture_nopie" "$WORK/fixture_nopie.symmap"
finish
