#!/usr/bin/env bash
# End-to-end test of the example program: build it as the README does, run it
# under the runtime stub, fold, and check the profile against the CPU split
# the program measured itself (tests/e2e/check_profile.py says what is checked).
#
#   e2e.sh build             build app-rt (stub linked in), app (plain) and
#                            variant/app-rt (same program, one constant changed)
#   e2e.sh profile linked    run app-rt with SPROF_OUT, fold, check
#   e2e.sh profile preload   run app with LD_PRELOAD=libsprof.so, fold, check
#   e2e.sh profile fallback  as linked, but with the signal-based timer forced
#                            (SPROF_TIMER=cpuclock: what hosts without
#                            perf_event_open get)
#   e2e.sh buildid           a symmap from another build is refused naming both
#                            build-ids; --force folds anyway
#
# Env (set by ctest): SPROF_BIN, SPROF_LIB, SPROF_SRC, SPROF_BUILD.
# E2E_SECONDS (CPU seconds the example runs, default 3), E2E_HZ (default 1000),
# E2E_TOLERANCE (percentage points, default 3), E2E_SANITIZE=1 (build the
# example with ASan+UBSan too, for the -DSPROF_SANITIZE=ON build).
set -euo pipefail
: "${SPROF_BIN:?}" "${SPROF_LIB:?}" "${SPROF_SRC:?}" "${SPROF_BUILD:?}"
work=$SPROF_BUILD/tests/e2e/work
seconds=${E2E_SECONDS:-3}
hz=${E2E_HZ:-1000}
tolerance=${E2E_TOLERANCE:-3}
suffixes=u=user,r=runtime,g=gc,n=native # docs/folded.md, --classes
extra=()
[ "${E2E_SANITIZE:-0}" = 1 ] && extra=(-fsanitize=address,undefined -fno-sanitize-recover=all)

fail() { echo "e2e: FAIL: $*" >&2; exit 1; }

build_id() { readelf -n "$1" | awk '/Build ID:/ {print $3; exit}'; }

# The binary's own function symbols: a glibc leaf is a native frame not in here.
symbols() { nm --defined-only "$1" | awk '$2 ~ /^[tTwWiI]$/ {print $3}'; }

cmd_build() {
  rm -rf "$work"
  mkdir -p "$work/variant"
  local b=("$SPROF_SRC/examples/build.sh" --bin "$SPROF_BIN" --lib "$SPROF_LIB")
  "${b[@]}" "$work/app-rt" --stub -- "${extra[@]}"
  "${b[@]}" "$work/app" -- "${extra[@]}"
  # "rebuild with a tiny change": another collector threshold, same output name
  "${b[@]}" "$work/variant/app-rt" --stub -- "${extra[@]}" -DSP_GC_THRESHOLD=600000u
  local a v
  a=$(build_id "$work/app-rt"); v=$(build_id "$work/variant/app-rt")
  [ -n "$a" ] && [ -n "$v" ] || fail "the example has no GNU build-id"
  [ "$a" != "$v" ] || fail "the rebuilt variant has the same build-id $a"
  echo "e2e: built app-rt ($a), app ($(build_id "$work/app")), variant/app-rt ($v)"
  # built outside its source tree: app.rb is found beside the generated C
  # (the DWARF line tables name it), so the worker's block is placed in the
  # method whose def..end holds it, not guessed
  local blk
  blk=$("$SPROF_BIN/sprof-symmap" --dump "$work/app-rt.symmap" | grep ' _sp_proc_fn_1 ' || true)
  echo "e2e: worker block: ${blk:-not found}"
  case $blk in
    *"block in Pipeline#run"*guessed*|"") fail "the worker block's method is not known exactly: $blk" ;;
    *"block in Pipeline#run"*) ;;
    *) fail "the worker block is misnamed: $blk" ;;
  esac
}

cmd_profile() {
  local form=$1 exe env=()
  case $form in
    linked) exe=$work/app-rt ;;
    fallback) exe=$work/app-rt; env=(SPROF_TIMER=cpuclock) ;;
    preload) exe=$work/app; env=(LD_PRELOAD="$SPROF_LIB/libsprof.so") ;;
    *) fail "unknown form $form (linked|preload|fallback)" ;;
  esac
  [ -x "$exe" ] && [ -s "$exe.symmap" ] || fail "$exe not built (run the e2e_build test first)"
  local d=$work/$form
  rm -rf "$d"; mkdir -p "$d"
  env "${env[@]}" SPROF_OUT="$d/trace.bin" SPROF_HZ="$hz" SPROF_EXAMPLE_SPLIT="$d/split.txt" \
    "$exe" "$seconds" 2>"$d/run.err" || { cat "$d/run.err" >&2; fail "$exe exited with $?"; }
  cat "$d/run.err" >&2
  [ -s "$d/trace.bin" ] || fail "no trace written by $exe"
  "$SPROF_BIN/sprof-trace" info "$d/trace.bin" | sed -n '/mechanism:/p;/samples:/p;/delivered rate:/p' || true
  "$SPROF_BIN/sprof-fold" "$d/trace.bin" "$exe.symmap" -o "$d/app.folded"
  "$SPROF_BIN/sprof-fold" --classes "$d/trace.bin" "$exe.symmap" -o "$d/classes.folded" 2>/dev/null
  "$SPROF_BIN/sprof-fold" --lines "$d/trace.bin" "$exe.symmap" -o "$d/lines.folded" 2>/dev/null
  "$SPROF_BIN/sprof-fold" --weight=cpu "$d/trace.bin" "$exe.symmap" -o "$d/cpu.folded" 2>/dev/null
  symbols "$exe" >"$d/symbols.txt"
  cat "$d/split.txt"
  local rc=0
  python3 "$SPROF_SRC/tests/e2e/check_profile.py" --label "$form" --folded "$d/app.folded" \
    --classes "$d/classes.folded" --lines "$d/lines.folded" --cpu "$d/cpu.folded" --split "$d/split.txt" --symbols "$d/symbols.txt" \
    --suffixes "$suffixes" --tolerance "$tolerance" || rc=$?
  if [ $rc -ne 0 ]; then
    echo "--- hottest stacks ($d/app.folded):"
    awk '{print $NF "\t" $0}' "$d/app.folded" | sort -rn | head -15 | cut -f2 | cut -c1-200
    exit $rc
  fi
}

cmd_buildid() {
  local d=$work/buildid exe=$work/app-rt
  [ -x "$exe" ] && [ -s "$work/variant/app-rt.symmap" ] || fail "example not built (run the e2e_build test first)"
  rm -rf "$d"; mkdir -p "$d"
  SPROF_OUT="$d/trace.bin" SPROF_EXAMPLE_SPLIT="$d/split.txt" "$exe" 0.3
  local a v rc=0
  a=$(build_id "$exe"); v=$(build_id "$work/variant/app-rt")

  "$SPROF_BIN/sprof-fold" "$d/trace.bin" "$exe.symmap" -o "$d/same.folded" 2>"$d/same.err" \
    || { cat "$d/same.err" >&2; fail "folding against its own symmap failed"; }
  [ -s "$d/same.folded" ] || fail "empty profile against its own symmap"

  "$SPROF_BIN/sprof-fold" "$d/trace.bin" "$work/variant/app-rt.symmap" -o "$d/other.folded" \
    2>"$d/other.err" || rc=$?
  echo "refusal: $(cat "$d/other.err")"
  [ $rc -ne 0 ] || fail "a symmap from another build was accepted (exit 0)"
  [ ! -e "$d/other.folded" ] || fail "refused, yet $d/other.folded was written"
  grep -q "$a" "$d/other.err" || fail "the refusal does not name the trace's build-id $a"
  grep -q "$v" "$d/other.err" || fail "the refusal does not name the symmap's build-id $v"

  "$SPROF_BIN/sprof-fold" --force "$d/trace.bin" "$work/variant/app-rt.symmap" -o "$d/forced.folded" \
    2>"$d/forced.err" || { cat "$d/forced.err" >&2; fail "--force did not fold"; }
  [ -s "$d/forced.folded" ] || fail "--force wrote an empty profile"
  echo "e2e: buildid ok: refused naming $a and $v (exit $rc); --force folded $(wc -l <"$d/forced.folded") stacks"
}

case ${1:-} in
  build) cmd_build ;;
  profile) cmd_profile "${2:-}" ;;
  buildid) cmd_buildid ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
