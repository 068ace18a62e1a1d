#!/bin/bash
# cpack -G DEB -> sprof_<version>_amd64.deb; apt-get install ./sprof_*.deb
# on this machine; the installed tools run, man finds the pages, the example
# is profiled from /usr; apt-get purge after. It changes /usr, so it runs
# only when asked: SPROF_PACKAGE_TEST=1 (the `package` stage of .ci/run), as
# root with apt-get, and not over an sprof package installed otherwise.
# --no-install-recommends: its dependencies are the build's (already here),
# so no download is needed.
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
[ "${SPROF_PACKAGE_TEST:-0}" = 1 ] || skip "set SPROF_PACKAGE_TEST=1 to build and install the .deb (changes /usr)"
[ "$(id -u)" = 0 ] || skip "needs root"
command -v apt-get > /dev/null || skip "needs apt-get"
dpkg-query -W -f='${Status}' sprof 2> /dev/null | grep -q "ok installed" && skip "an sprof package is already installed; not touching it"
w=$(mktemp -d /tmp/sprof-deb.XXXXXX)
installed=0
cleanup() {
    [ $installed = 1 ] && apt-get purge -y -o DPkg::Lock::Timeout=120 sprof > "$w/remove.log" 2>&1
    rm -rf "$w"
}
trap cleanup EXIT
cd "$w"
cpack -G DEB --config "$SPROF_BUILD/CPackConfig.cmake" -B "$w" > cpack.log 2>&1 || fail "cpack: $(tail -20 cpack.log)"
deb=$(ls "$w"/sprof_"$SPROF_VERSION"_*.deb 2> /dev/null | head -1)
[ -n "$deb" ] || fail "no sprof_${SPROF_VERSION}_*.deb: $(ls "$w")"
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
installed=1
apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=120 "$deb" > install.log 2>&1 || fail "apt-get install: $(tail -20 install.log)"
for t in $SPROF_TOOLS; do
    [ "$("/usr/bin/$t" --version | head -1)" = "$t (sprof) $SPROF_VERSION" ] || fail "/usr/bin/$t --version"
    man -w "$t" > /dev/null 2>&1 || fail "man -w $t"
done
man -w 7 sprof-env > /dev/null || fail "man -w 7 sprof-env"
[ "$(pkg-config --modversion sprof)" = "$SPROF_VERSION" ] || fail "pkg-config sprof"
mkdir work
cp "$SPROF_SRC/examples/app.c" "$SPROF_SRC/examples/sp_runtime.h" "$SPROF_SRC/examples/app.symbols.json" work/
bash "$SPROF_SRC/tests/install/profile_example.sh" /usr/bin /usr/lib "$(pkg-config --variable=pcfiledir sprof)" "$w/work" ||
    fail "profiling the example with the package's files"
apt-get purge -y -o DPkg::Lock::Timeout=120 sprof > remove.log 2>&1 || fail "apt-get purge: $(tail -5 remove.log)"
installed=0
[ ! -e /usr/bin/sprof-fold ] || fail "apt-get purge left /usr/bin/sprof-fold"
echo "ok: installed, used and removed $(basename "$deb")"
