#!/bin/sh
# Allocation reports and perf script text folded THROUGH the symmap, on a
# Spinel-shaped fixture (shop.c + shop.symbols.json) built here:
#   - the fixture prints its own allocation report the way SPINEL_ALLOC_SITES
#     does (glibc backtrace_symbols sites); every form of site is tried;
#   - perf script samples are written from the fixture's real symbols and
#     return addresses (nm + the report), so the expected Ruby stacks are
#     known: Item#label is inlined into Shop#restock.
# Skips (77) when the compiler or sprof-symmap is missing.
set -u
fail=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fail=1; }
here=$(cd "$(dirname "$0")" && pwd)
fold="$SPROF_BIN/sprof-fold"
symmap_tool="$SPROF_BIN/sprof-symmap"
cc=${CC:-cc}
[ -x "$symmap_tool" ] || { echo "SKIP: $symmap_tool not built"; exit 77; }
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($cc)"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm"; exit 77; }
d=$(mktemp -d /tmp/sprof-perfscript-sym-XXXXXX)
trap 'rm -rf "$d"' EXIT

"$cc" -std=gnu11 -O2 -g -fno-omit-frame-pointer -fPIE -pie -o "$d/shop" "$here/shop.c" \
  || { bad "fixture builds"; exit 1; }
"$symmap_tool" "$d/shop" -o "$d/shop.symmap" --spinel-map "$here/shop.symbols.json" --quiet \
  || { bad "symmap builds"; exit 1; }
SHOP_ALLOC_REPORT=1 "$d/shop" >"$d/alloc.txt" || { bad "fixture runs"; exit 1; }
[ "$(wc -l <"$d/alloc.txt")" = 2 ] && ok "fixture wrote 2 report lines" || { bad "report lines"; cat "$d/alloc.txt"; }

check_set() { # NAME FILE EXPECTED_LINES...
  name=$1 file=$2
  shift 2
  printf '%s\n' "$@" | LC_ALL=C sort >"$d/want"
  LC_ALL=C sort "$file" >"$d/got"
  if cmp -s "$d/want" "$d/got"; then ok "$name"; else bad "$name"; diff "$d/want" "$d/got"; fi
}

# --- allocation report: sites -> Ruby methods (Item#label exists only inlined) ---
"$fold" "$d/alloc.txt" "$d/shop.symmap" >"$d/out" 2>"$d/err" || { bad "fold alloc report"; cat "$d/err"; }
check_set "alloc report by content: Ruby methods, type leaf kept" "$d/out" \
  'alloc;<main>;Shop#restock;Item#label;String 5' \
  'alloc;<main>;Shop#audit;String 1'
"$fold" --alloc-report "$d/alloc.txt" "$d/shop.symmap" >"$d/out2" 2>/dev/null
cmp -s "$d/out" "$d/out2" && ok "--alloc-report FILE: same" || bad "--alloc-report FILE"

# --lines: each site's lines are those of the symmap at (site - 1), the call
# instruction, exactly as a sprof trace names a return address.
site_frames() { # OFFSET_HEX -> "Name:line;Name:line" root first
  "$symmap_tool" --lookup "$d/shop.symmap" "$(printf '%x' $(($1 - 1)))" |
    awk '{ n = $3; l = ""; for (i = 4; i <= NF; i++) if ($i ~ /:[0-9]+$/) { l = $i; sub(/.*:/, "", l) }
           s = n (l != "" && l != "0" ? ":" l : "") (NR > 1 ? ";" s : "") } END { print s }'
}
want_lines=""
while IFS= read -r line; do
  outer=$(printf '%s' "$line" | sed -n 's/^alloc;[^;]*(+\(0x[0-9a-f]*\)).*/\1/p')
  inner=$(printf '%s' "$line" | sed -n 's/^alloc;[^;]*;[^;]*(+\(0x[0-9a-f]*\)).*/\1/p')
  rest=$(printf '%s' "$line" | sed 's/.*;//')
  want_lines="$want_lines
alloc;$(site_frames "$outer");$(site_frames "$inner");$rest"
done <"$d/alloc.txt"
"$fold" --lines "$d/alloc.txt" "$d/shop.symmap" >"$d/out" 2>/dev/null
printf '%s\n' "$want_lines" | sed '/^$/d' | LC_ALL=C sort >"$d/want"
LC_ALL=C sort "$d/out" >"$d/got"
cmp -s "$d/want" "$d/got" && ok "--lines: .rb lines of the call sites" || { bad "--lines"; diff "$d/want" "$d/got"; }
grep -q '^alloc;<main>:15;Shop#restock:9;Item#label:[0-9]*;String 5$' "$d/out" && grep -q '^alloc;<main>:16;Shop#audit:11;String 1$' "$d/out" \
  && ok "--lines: <main>:15/16, Shop#restock:9, Shop#audit:11" || { bad "--lines values"; cat "$d/out"; }

# other site forms: "(sym+0xOFF)", absolute-only "[0xABS]" (load bias learned
# from the other sites), foreign modules, unknown offsets kept as written
first=$(sed -n 1p "$d/alloc.txt")
second=$(sed -n 2p "$d/alloc.txt")
inner_off=$(printf '%s' "$first" | sed -n 's/^alloc;[^;]*;[^;]*(+\(0x[0-9a-f]*\)).*/\1/p')
# decimal addresses (nm -t d): awk implementations differ on "0x" strings
func=$(nm -t d "$d/shop" | awk -v a=$((inner_off)) '$2 ~ /^[tT]$/ { v = $1 + 0; if (v <= a && v > best) { best = v; name = $3 } } END { print name }')
func_addr=$(nm -t d "$d/shop" | awk -v f="$func" '$3 == f { print $1 + 0 }')
sym_off=$(printf '0x%x' $((inner_off - func_addr)))
abs_only=$(printf '%s' "$second" | sed 's/;[^;]*(+0x[0-9a-f]*) \(\[0x[0-9a-f]*\]\)/;\1/g')
{
  printf '%s\n' "$first" | sed "s/;\([^;]*\)(+$inner_off) /;\1($func+$sym_off) /"
  printf '%s\n' "$abs_only"
  printf 'alloc;/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0x80) [0x7f0000029e40];./libfoo.so(+0x1234) [0x7f0000101234];Array 2\n'
  printf 'alloc;%s(+0xfffffff) [0x1];Hash 3\n' "$d/shop"
} >"$d/forms.txt"
"$fold" "$d/forms.txt" "$d/shop.symmap" >"$d/out" 2>"$d/err" || { bad "fold site forms"; cat "$d/err"; }
check_set "site forms: sym+off, absolute only, foreign, unknown" "$d/out" \
  'alloc;<main>;Shop#restock;Item#label;String 5' \
  'alloc;<main>;Shop#audit;String 1' \
  'alloc;__libc_start_main;./libfoo.so(+0x1234) [0x7f0000101234];Array 2' \
  "alloc;$d/shop(+0xfffffff) [0x1];Hash 3"
grep -q "$func+$sym_off" "$d/forms.txt" && grep -q ';\[0x' "$d/forms.txt" \
  && ok "site forms really were rewritten" || { bad "site forms rewrite"; cat "$d/forms.txt"; }

# without the symmap the sites stay as written
"$fold" "$d/alloc.txt" >"$d/out" 2>/dev/null
LC_ALL=C sort "$d/alloc.txt" | cmp -s - "$d/out" && ok "no symmap: report unchanged" || { bad "no symmap"; cat "$d/out"; }

# --- perf script through the symmap ---
addr_of() { nm "$d/shop" | awk -v f="$1" '$3 == f { print "0x" $1 }'; }
restock=$(nm "$d/shop" | awk '$3 ~ /^sp_Shop_restock/ { print $3 }')
r0=$(printf '%s' "$first" | sed -n 's/^alloc;[^;]*;[^;]*(+\(0x[0-9a-f]*\)).*/\1/p')
r1=$(printf '%s' "$first" | sed -n 's/^alloc;[^;]*(+\(0x[0-9a-f]*\)).*/\1/p')
off_restock=$(printf '0x%x' $((r0 - $(addr_of "$restock"))))
off_main=$(printf '0x%x' $((r1 - $(addr_of main))))
bias=0x555555554000
rt() { printf '%x' $((bias + $1)); }
{
  printf 'shop 77/77 [000] 1.000: 250000 cpu-clock:\n'
  printf '\tffffffff81000010 native_write_msr+0x10 ([kernel.kallsyms])\n'
  printf '\t%16s sp_String_new+0x0 (%s)\n' "$(rt "$(addr_of sp_String_new)")" "$d/shop"
  printf '\t%16s %s+%s (%s)\n' "$(rt "$r0")" "$restock" "$off_restock" "$d/shop"
  printf '\t%16s main+%s (%s)\n' "$(rt "$r1")" "$off_main" "$d/shop"
  printf '\t    7f0000029d90 __libc_start_call_main+0x80 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n'
  printf 'shop 77/77 [000] 1.001: 250000 cpu-clock:\n'
  printf '\t%16s sp_String_new+0x0 (%s)\n' "$(rt "$(addr_of sp_String_new)")" "$d/shop"
  printf '\t%16s sp_Item_label+0x4 (inlined)\n' "$(rt "$r0")"
  printf '\t%16s %s+%s (%s)\n' "$(rt "$r0")" "$restock" "$off_restock" "$d/shop"
  printf '\t%16s main+%s (%s)\n' "$(rt "$r1")" "$off_main" "$d/shop"
  printf '\t    7f0000029d90 __libc_start_call_main+0x80 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n'
  # no call chain, symbol without offset, runtime address: the page offset places it
  printf '            shop    77 [000]     1.002:     250000 cpu-clock:  %s %s (%s)\n' \
    "$(rt "$(addr_of "$restock")")" "$restock" "$d/shop"
} >"$d/perf.txt"
"$fold" "$d/perf.txt" "$d/shop.symmap" >"$d/out" 2>"$d/err" || { bad "fold perf script"; cat "$d/err"; }
check_set "perf script: Ruby frames through the symmap (inlined Item#label)" "$d/out" \
  'shop;__libc_start_call_main;<main>;Shop#restock;Item#label;sp_String_new 2' \
  'shop;Shop#restock 1'
"$fold" --c-names "$d/perf.txt" "$d/shop.symmap" >"$d/out" 2>/dev/null
check_set "perf script --c-names" "$d/out" \
  "shop;__libc_start_call_main;main;$restock;sp_Item_label;sp_String_new 2" \
  "shop;$restock 1"
"$fold" "$d/perf.txt" >"$d/out" 2>/dev/null
check_set "perf script without symmap: perf's names (its inlined frame kept)" "$d/out" \
  "shop;__libc_start_call_main;main;$restock;sp_String_new 1" \
  "shop;__libc_start_call_main;main;$restock;sp_Item_label;sp_String_new 1" \
  "shop;$restock 1"

# --- merge: alloc report + perf script + folded, one output ---
printf 'shop;Shop#restock 2\n' >"$d/extra.folded"
"$fold" "$d/perf.txt" "$d/alloc.txt" "$d/extra.folded" "$d/shop.symmap" >"$d/out" 2>/dev/null
check_set "merge: perf script + alloc report + folded" "$d/out" \
  'shop;__libc_start_call_main;<main>;Shop#restock;Item#label;sp_String_new 2' \
  'shop;Shop#restock 3' \
  'alloc;<main>;Shop#restock;Item#label;String 5' \
  'alloc;<main>;Shop#audit;String 1'

exit $fail
