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
"$SYMMAP" --dump "$WORK/fixture.symmap" > "$WORK/dump" || fail "--dump failed"
grep -q '^pie: yes' "$WORK/dump" || fail "PIE not recorded"
grep -q '^build-id: [0-9a-f]\{40\}' "$WORK/dump" || fail "build-id not recorded"
grep -q '^cfi: [1-9]' "$WORK/dump" || fail "no CFI rows"
grep -q 'fixture.rb:3[01]$' "$WORK/dump" || fail "no .rb line rows"
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

# --- non-PIE ---
build_fixture fixture_nopie -O2 -g -fno-omit-frame-pointer -fno-pie -no-pie
cp "$HERE/fixture.symbols.json" "$WORK/fixture_nopie.symbols.json"
"$SYMMAP" --quiet "$WORK/fixture_nopie" || fail "non-PIE failed"
"$SYMMAP" --dump "$WORK/fixture_nopie.symmap" | grep -q '^pie: no' || fail "non-PIE recorded as PIE"
check_all_functions "$WORK/fixture_nopie" "$WORK/fixture_nopie.symmap"
finish
