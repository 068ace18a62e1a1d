#!/bin/sh
# The command-line conventions of every sprof tool (docs/install.md):
#   TOOL --version  -> stdout "TOOL (sprof) VERSION", exit 0
#   TOOL --help     -> stdout, nothing on stderr, exit 0
#   TOOL --bad      -> exit 2, stderr starts "TOOL: "
#   a missing input -> exit 1 (sprof-record: a missing command, 127), stderr
#                      lines start "TOOL: "
#   man page build/man/man1/TOOL.1
# and the views' shared input options (--threads --from --to --tid --weight
# --no-inline --force) are accepted by every view.
set -u
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ -n "${SPROF_TOOLS:-}" ] || { echo "FAIL: SPROF_TOOLS is empty"; exit 1; }

for t in $SPROF_TOOLS; do
    b=$SPROF_BIN/$t
    "$b" --version > "$W/out" 2> "$W/err"; rc=$?
    [ $rc = 0 ] || fail "$t --version exits $rc"
    [ "$(head -1 "$W/out")" = "$t (sprof) $SPROF_VERSION" ] || fail "$t --version prints: $(head -1 "$W/out")"
    "$b" --help > "$W/out" 2> "$W/err"; rc=$?
    [ $rc = 0 ] || fail "$t --help exits $rc"
    [ -s "$W/out" ] || fail "$t --help prints nothing on stdout"
    [ -s "$W/err" ] && fail "$t --help writes to stderr: $(head -2 "$W/err")"
    grep -q "usage: $t" "$W/out" || fail "$t --help has no 'usage: $t' line"
    [ -s "$SPROF_BUILD/man/man1/$t.1" ] || fail "$t has no man page ($SPROF_BUILD/man/man1/$t.1)"
    [ "$t" = sprof-cc ] && continue # any other argument is the compiler's
    "$b" --no-such-option > "$W/out" 2> "$W/err"; rc=$?
    [ $rc = 2 ] || fail "$t --no-such-option exits $rc, not 2"
    case $(head -1 "$W/err") in "$t: "*) ;; *) fail "$t --no-such-option: first line not prefixed: $(head -1 "$W/err")" ;; esac
    want=1
    case $t in
    sprof-record) set -- -o "$W/r.svg" -- "$W/missing"; want=127 ;; # the command's status: not found
    sprof-trace) set -- info "$W/missing" ;;
    sprof-diff) set -- "$W/missing" "$W/missing2" ;;
    sprof-export) set -- --pprof "$W/o.pb.gz" "$W/missing" ;;
    *) set -- "$W/missing" ;;
    esac
    "$b" "$@" > "$W/out" 2> "$W/err"; rc=$?
    [ $rc = $want ] || fail "$t $* (missing input) exits $rc, not $want"
    grep -v "^$t: " "$W/err" > "$W/bad"
    [ -s "$W/bad" ] && fail "$t (missing input): lines without the '$t: ' prefix: $(head -2 "$W/bad")"
done

# sprof-cc --help is sprof-cc's, not the compiler's
"$SPROF_BIN/sprof-cc" --help | grep -q 'SPROF_REAL_CC' || fail "sprof-cc --help does not document sprof-cc"

# every view takes the shared input options; a bad value is a usage error
printf 'main;Foo#bar 3\nmain;Baz#qux 1\n' > "$W/a.folded"
printf 'main;Foo#bar 1\nmain;Baz#qux 3\n' > "$W/b.folded"
shared="--threads --from 0 --to 100 --weight samples --no-inline --force"
for t in sprof-fold sprof-top sprof-flamegraph sprof-callgraph sprof-diff sprof-export; do
    case $t in
    sprof-diff) ins="$W/a.folded $W/b.folded" ;;
    sprof-export) ins="--speedscope $W/o.json $W/a.folded" ;;
    *) ins="$W/a.folded" ;;
    esac
    # shellcheck disable=SC2086
    "$SPROF_BIN/$t" $shared $ins > "$W/out" 2> "$W/err"; rc=$?
    [ $rc = 0 ] || fail "$t with the shared options exits $rc: $(head -2 "$W/err")"
    # shellcheck disable=SC2086
    "$SPROF_BIN/$t" --tid 1,2 --weight auto $ins > "$W/out" 2> "$W/err"; rc=$?
    [ $rc = 0 ] || fail "$t --tid 1,2 --weight auto exits $rc: $(head -2 "$W/err")"
    for bad in "--weight bogus" "--from x" "--tid a" "--from 5 --to 1"; do
        # shellcheck disable=SC2086
        "$SPROF_BIN/$t" $bad $ins > "$W/out" 2> "$W/err"; rc=$?
        [ $rc = 2 ] || fail "$t $bad exits $rc, not 2"
        case $(head -1 "$W/err") in "$t: "*) ;; *) fail "$t $bad: not prefixed: $(head -1 "$W/err")" ;; esac
    done
done

[ $fails = 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok: $(echo $SPROF_TOOLS | wc -w) tools"
