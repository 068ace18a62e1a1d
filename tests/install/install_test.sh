#!/bin/bash
# cmake --install into a temporary prefix: every tool, libsprof.so, a
# relocatable libsprof_rt.a, headers, sprof.pc, man pages; then the example
# is built, profiled (preloaded and linked in), folded and drawn with the
# installed files only: in a private mount namespace where the build and
# source trees are hidden under empty tmpfs mounts (root; else skipped).
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
w=$(mktemp -d /tmp/sprof-install.XXXXXX)
trap 'rm -rf "$w"' EXIT
p=$w/prefix
cmake --install "$SPROF_BUILD" --prefix "$p" > "$w/install.log" || fail "cmake --install: $(tail -5 "$w/install.log")"

for t in $SPROF_TOOLS; do
    [ -x "$p/bin/$t" ] || fail "bin/$t not installed"
    [ -s "$p/share/man/man1/$t.1" ] || fail "share/man/man1/$t.1 not installed"
done
for f in lib/libsprof.so lib/libsprof_rt.a lib/libsprof_rt_core.a lib/pkgconfig/sprof.pc \
         include/sprof/trace_format.h share/man/man7/sprof-env.7 share/bash-completion/completions/sprof-fold; do
    [ -s "$p/$f" ] || fail "$f not installed"
done
grep -q "$SPROF_BUILD" "$p/lib/libsprof_rt.a" && fail "the installed libsprof_rt.a names the build tree"
grep -q 'INPUT(libsprof_rt_core.a)' "$p/lib/libsprof_rt.a" || fail "libsprof_rt.a: no relative INPUT"
[ "$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --modversion sprof)" = "$SPROF_VERSION" ] || fail "sprof.pc version"
if command -v man > /dev/null; then
    MANPATH=$p/share/man man -w sprof-fold | grep -q "^$p/" || fail "man -w sprof-fold: not the installed page"
fi

# relocatable: the prefix moved after installation still works
mv "$p" "$w/moved"
p=$w/moved
mkdir "$w/work"
cp "$SPROF_SRC/examples/app.c" "$SPROF_SRC/examples/sp_runtime.h" "$SPROF_SRC/examples/app.symbols.json" "$w/work/"
cp "$SPROF_SRC/tests/install/profile_example.sh" "$w/"
run=(bash "$w/profile_example.sh" "$p/bin" "$p/lib" "$p/lib/pkgconfig" "$w/work")
if [ "$(id -u)" = 0 ] && unshare --mount true 2> /dev/null; then
    # hide the build and source trees from everything below (this process's
    # own mounts only: tests running beside it still see them)
    unshare --mount bash -c 'mount --make-rprivate / && mount -t tmpfs none "$1" && mount -t tmpfs none "$2" &&
        [ ! -e "$1/bin" ] && shift 2 && exec "$@"' _ "$SPROF_BUILD" "$SPROF_SRC" "${run[@]}" ||
        fail "profiling from the prefix with the build and source trees hidden"
else
    echo "SKIP: needs root and unshare --mount to hide the build tree"
    exit 77
fi
