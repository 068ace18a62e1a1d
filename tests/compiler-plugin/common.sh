# Shared helpers for the compiler-plugin shell tests (sourced).
set -eu
: "${SPROF_BIN:?run through ctest}" "${SPROF_SRC:?run through ctest}"
HERE="$SPROF_SRC/tests/compiler-plugin"
SYMMAP="$SPROF_BIN/sprof-symmap"
CC_FOR_TESTS="${CC_FOR_TESTS:-gcc}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sprof-plugin-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0

fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
finish() {
    if [ "$FAILS" -ne 0 ]; then echo "$FAILS failure(s)" >&2; exit 1; fi
    echo "ok"
}

# build_fixture OUT FLAGS...: the fixture program, built from a copy in $WORK
# so DWARF paths do not depend on the checkout.
build_fixture() {
    out=$1; shift
    cp "$HERE/fixture.c" "$HERE/fixture.rb" "$WORK/" 2>/dev/null || true
    (cd "$WORK" && "$CC_FOR_TESTS" "$@" -o "$out" fixture.c)
}

# frame0 SYMMAP ADDR: "ruby|kind|cost|flags|file:line" of the innermost frame.
lookup() { "$SYMMAP" --lookup "$1" "$2"; }

# Addresses (hex, no 0x) and names of the fixture's local/global text symbols.
text_symbols() { nm "$1" | awk '$2 ~ /^[tT]$/ { print $1, $3 }'; }

# The expected Ruby name, kind and cost of a fixture function, by base C name.
expected_for() {
    case "$1" in
    sp_Shape_area) echo "Shape#area|imeth|user" ;;
    sp_Vec2__plus) echo "Vec2#+|imeth|user" ;;
    sp_Vec2_len2) echo "Vec2#len2|imeth|user" ;;
    sp_Geo_Box_cls_make) echo "Geo::Box.make|cmeth|user" ;;
    sp_Geo_cls_dist2) echo "Geo.dist2|cmeth|user" ;;
    sp_fib) echo "fib|toplevel|user" ;;
    sp_run) echo "run|toplevel|user" ;;
    sp_scale) echo "scale|toplevel|user" ;;
    _sp_proc_fn_1) echo "block in run|block|user" ;;
    sp_pump) echo "pump|toplevel|user" ;;
    _fiber_body_1) echo "Fiber body in pump|block|user" ;;
    sp_gc_alloc) echo "sp_gc_alloc|runtime|gc" ;;
    sp_str_dup) echo "sp_str_dup|runtime|runtime" ;;
    main) echo "<main>|toplevel|user" ;;
    *) echo "" ;;
    esac
}

# Parse "0xADDR  #0 NAME  (kind, cost[, flags])  file:line  [c]" -> "NAME|kind|cost"
frame_summary() {
    sed -n 's/^0x[0-9a-f]*  #[0-9]* \(.*\)  (\([a-z]*\), \([a-z]*\)[^)]*).*/\1|\2|\3/p'
}

# check_all_functions BIN SYMMAP: every fixture function resolves to its exact name.
check_all_functions() {
    bin=$1; map=$2; seen=0
    text_symbols "$bin" > "$WORK/syms"
    while read -r addr name; do
        base=${name%%.*}
        want=$(expected_for "$base")
        # Without DWARF a proc has no lines to find its method by.
        if [ "${NO_DWARF:-0}" = 1 ]; then
            case "$base" in
            _sp_proc_fn_1) want="block in <unknown>|block|user" ;;
            _fiber_body_1) want="Fiber body in <unknown>|block|user" ;;
            esac
        fi
        [ -n "$want" ] || continue
        got=$("$SYMMAP" --lookup "$map" "0x$addr" | head -1 | frame_summary)
        if [ "$got" != "$want" ]; then fail "$bin: $name at 0x$addr: got '$got', want '$want'"; fi
        seen=$((seen + 1))
    done < "$WORK/syms"
    [ "$seen" -ge 10 ] || fail "$bin: only $seen fixture functions found in nm output"
}

# inline_callers SYMMAP BIN FUNC: for every PC of FUNC where the innermost
# frame is the inlined scale(), print the caller frame's line (sorted, unique).
inline_callers() {
    set -- "$1" "$2" $(nm -S "$2" | awk -v f="$3" '$4 == f || index($4, f ".") == 1 { print $1, $2; exit }')
    [ $# -eq 4 ] || return 0
    map=$1; lo=$((0x$3)); end=$((lo + 0x$4)); a=$lo
    while [ $a -lt $end ]; do
        printf '0x%x\n' $a
        a=$((a + 1))
    done > "$WORK/pcs"
    "$SYMMAP" --lookup "$map" $(cat "$WORK/pcs") |
        awk '/#0 scale  \(toplevel, user, inlined\)  fixture.rb:35/ { want = 1; next }
             want && /#1 run  \(toplevel, user\)  fixture.rb:/ { sub(/.*fixture.rb:/, ""); sub(/ .*/, ""); print }
             { want = 0 }' | sort -u
}

# agree_with_addr2line BIN SYMMAP: every byte of every text symbol gives the
# same function chain and lines as addr2line -f -i (bench/symmap/compare_addr2line.py).
agree_with_addr2line() {
    nm -S "$1" | awk '$3 ~ /^[tT]$/ && NF == 4 { print $1, $2 }' > "$WORK/ranges"
    : > "$WORK/all.addrs"
    while read -r a s; do
        i=0
        while [ $i -lt $((0x$s)) ]; do printf '0x%x\n' $((0x$a + i)); i=$((i + 1)); done >> "$WORK/all.addrs"
    done < "$WORK/ranges"
    addr2line -f -i -a -e "$1" < "$WORK/all.addrs" > "$WORK/a2l.out"
    "$SYMMAP" --lookup "$2" $(cat "$WORK/all.addrs") > "$WORK/ours.out"
    python3 "$SPROF_SRC/bench/symmap/compare_addr2line.py" "$WORK/a2l.out" "$WORK/ours.out" > "$WORK/agree"
    n=$(wc -l < "$WORK/all.addrs")
    grep -q "agreement with addr2line: $n of $n " "$WORK/agree" || fail "$1: differs from addr2line: $(cat "$WORK/agree")"
}
