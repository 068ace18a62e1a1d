#!/usr/bin/env bash
# Output to a device or FIFO is written in place: the temp-file-and-rename
# path must never replace a device node (it once turned /dev/null into a
# plain file). Each tool writes to a private character device made for the
# test (mknod needs root; otherwise only the FIFO half runs).
set -u
bin=$SPROF_BIN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'main;Foo#bar;Baz#qux 3\nmain;Foo#bar 2\n' > "$work/in.folded"
fail=0
check_target() { # name target-path
    local kind=$1 t=$2
    for tool in "sprof-fold $work/in.folded -o" "sprof-top $work/in.folded -o" \
                "sprof-callgraph $work/in.folded -o" "sprof-flamegraph $work/in.folded -o"; do
        if [ "$kind" = fifo ]; then
            cat "$t" > "$work/fifo.out" &
            reader=$!
        fi
        # shellcheck disable=SC2086
        if ! $bin/$tool "$t" 2>"$work/err"; then
            echo "FAIL: $tool $t: $(cat "$work/err")"; fail=1
        fi
        [ "$kind" = fifo ] && wait "$reader"
        if [ "$kind" = dev ] && [ ! -c "$t" ]; then
            echo "FAIL: $tool replaced the character device $t"; fail=1
            rm -f "$t"; mknod -m 666 "$t" c 1 3
        fi
        if [ "$kind" = fifo ]; then
            [ -p "$t" ] || { echo "FAIL: $tool replaced the FIFO $t"; fail=1; rm -f "$t"; mkfifo "$t"; }
            [ -s "$work/fifo.out" ] || { echo "FAIL: $tool wrote nothing into the FIFO"; fail=1; }
        fi
        ls -a "$(dirname "$t")" | grep -q '\.XXXXXX\|^\.\(null\|fifo\)\.' && { echo "FAIL: $tool left a temp file"; fail=1; }
    done
}
if [ "$(id -u)" = 0 ] && mknod -m 666 "$work/null" c 1 3 2>/dev/null; then
    check_target dev "$work/null"
else
    echo "note: not root or mknod refused; device case skipped"
fi
mkfifo "$work/fifo"
check_target fifo "$work/fifo"
[ $fail = 0 ] && echo "ok: devices and FIFOs written in place by every tool"
exit $fail
