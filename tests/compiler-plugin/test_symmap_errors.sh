#!/bin/sh
# Hostile and broken inputs: every refusal is one line on stderr, a non-zero
# exit, no crash and no output file.
. "$SPROF_SRC/tests/compiler-plugin/common.sh"

# expect_refusal WHAT PATTERN CMD...: non-zero (not a crash), one stderr line matching PATTERN.
expect_refusal() {
    what=$1; pattern=$2; shift 2
    set +e
    "$@" > "$WORK/out" 2> "$WORK/err"
    rc=$?
    set -e
    if [ $rc -eq 0 ]; then fail "$what: accepted"; return; fi
    if [ $rc -ge 128 ]; then fail "$what: crashed (exit $rc)"; return; fi
    [ "$(wc -l < "$WORK/err")" = 1 ] || fail "$what: expected one error line, got: $(cat "$WORK/err")"
    grep -q -- "$pattern" "$WORK/err" || fail "$what: error '$(cat "$WORK/err")' does not match '$pattern'"
    [ ! -s "$WORK/out" ] || fail "$what: printed output: $(head -3 "$WORK/out")"
}

build_fixture fixture -O2 -g -fno-omit-frame-pointer -fPIE -pie
cp "$HERE/fixture.symbols.json" "$WORK/"
"$SYMMAP" --quiet "$WORK/fixture"
map="$WORK/fixture.symmap"
size=$(wc -c < "$map")

# --- truncated symmaps ---
for n in 0 4 16 64 $((size / 2)) $((size - 8)); do
    head -c "$n" "$map" > "$WORK/trunc.symmap"
    expect_refusal "symmap truncated to $n bytes" "trunc.symmap" "$SYMMAP" --dump "$WORK/trunc.symmap"
done

# --- corrupted magic ---
cp "$map" "$WORK/bad.symmap"
printf 'XXXX' | dd of="$WORK/bad.symmap" bs=1 seek=0 conv=notrunc 2>/dev/null
expect_refusal "symmap with bad magic" "bad.symmap" "$SYMMAP" --dump "$WORK/bad.symmap"

# --- one corrupted byte anywhere in the first 512 bytes: refused cleanly or
#     still valid, never a crash or a multi-line error ---
off=0
while [ $off -lt 512 ] && [ $off -lt "$size" ]; do
    cp "$map" "$WORK/flip.symmap"
    printf '\377' | dd of="$WORK/flip.symmap" bs=1 seek=$off conv=notrunc 2>/dev/null
    set +e
    "$SYMMAP" --lookup "$WORK/flip.symmap" 0x1240 > /dev/null 2> "$WORK/err"
    rc=$?
    set -e
    if [ $rc -ge 128 ]; then fail "byte $off corrupted: crash (exit $rc)"; fi
    if [ $rc -ne 0 ] && [ "$(wc -l < "$WORK/err")" != 1 ]; then fail "byte $off corrupted: $(cat "$WORK/err")"; fi
    off=$((off + 7))
done

# --- bad Spinel maps ---
rm -f "$WORK/fixture.symmap"
printf '{"symbols":[\n  {"c":"sp_fib", "ruby":"fib",}\n]}\n' > "$WORK/syntax.json"
expect_refusal "JSON syntax error" "syntax.json:2:[0-9]*: " "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/syntax.json"
[ ! -e "$WORK/fixture.symmap" ] || fail "symmap written despite a bad map"
printf '{"symbols":{}}' > "$WORK/shape1.json"
expect_refusal "symbols not an array" 'shape1.json: "symbols" must be an array' "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/shape1.json"
printf '{"symbols":[{"c":42,"ruby":"x"}]}' > "$WORK/shape2.json"
expect_refusal "c not a string" 'shape2.json: symbols\[0\]: "c" must be a string' "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/shape2.json"
printf '{"symbols":[{"c":"sp_fib","ruby":"fib","kind":"method"}]}' > "$WORK/shape3.json"
expect_refusal "unknown kind" 'shape3.json: symbols\[0\]: "kind" must be' "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/shape3.json"
printf '{"symbols":[{"c":"sp_fib","ruby":"fib","kind":"toplevel","line":-3}]}' > "$WORK/shape4.json"
expect_refusal "negative line" 'shape4.json: symbols\[0\]: "line"' "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/shape4.json"
printf '[1,2]' > "$WORK/shape5.json"
expect_refusal "array at top level" 'shape5.json: top level must be an object' "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/shape5.json"
expect_refusal "missing map" 'nonexistent.json' "$SYMMAP" "$WORK/fixture" --spinel-map "$WORK/nonexistent.json"
# A broken map found beside the binary is an error too, not silently skipped.
cp "$WORK/syntax.json" "$WORK/fixture.symbols.json"
expect_refusal "bad default map" "fixture.symbols.json:2:" "$SYMMAP" "$WORK/fixture"
rm -f "$WORK/fixture.symbols.json"

# --- bad binaries ---
cp "$WORK/fixture" "$WORK/stripped"
strip -s "$WORK/stripped"
expect_refusal "stripped binary" "stripped: stripped binary: no symbol table; rebuild without -s" "$SYMMAP" "$WORK/stripped"
[ ! -e "$WORK/stripped.symmap" ] || fail "symmap written for a stripped binary"
printf 'not an elf file at all\n' > "$WORK/text"
expect_refusal "not ELF" "text: not an ELF file" "$SYMMAP" "$WORK/text"
head -c 100 "$WORK/fixture" > "$WORK/cut"
expect_refusal "truncated ELF" "cut: " "$SYMMAP" "$WORK/cut"
expect_refusal "missing binary" "nothere: No such file" "$SYMMAP" "$WORK/nothere"

# --- bad command lines ---
"$SYMMAP" --quiet "$WORK/fixture" -o "$WORK/ok.symmap"
expect_refusal "bad lookup address" "zz: not a hex address" "$SYMMAP" --lookup "$WORK/ok.symmap" zz
expect_refusal "unknown option" "unknown or incomplete option --frobnicate" "$SYMMAP" --frobnicate
finish
