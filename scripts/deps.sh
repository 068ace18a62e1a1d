# shellcheck shell=bash
# The one list of Debian packages sprof needs; sourced by scripts/demo,
# scripts/test and .ci/run. Add a package here, nowhere else.
#
#   sprof_install_deps build   what building sprof and profiling the example needs
#   sprof_install_deps test    that plus everything the whole test suite uses
#
# Runs apt-get only when something is missing (so it also works offline on a
# machine that is already set up); as root directly, else through sudo.
# SPROF_SKIP_DEPS=1 skips the check entirely.

SPROF_BUILD_DEPS=(
  cmake gcc make pkg-config binutils
  libelf-dev libdwarf-dev uthash-dev libjansson-dev zlib1g-dev
  libiberty-dev                   # C++ and Rust demangler (symmap/native, docs/native-names.md)
)
SPROF_TEST_DEPS=(
  python3                         # test drivers and checkers
  g++                             # C++ program for the demangling end-to-end test (tests/native-names)
  clang libfuzzer-14-dev          # fuzz harnesses (tests/fuzz/run.sh)
  google-perftools libgoogle-perftools-dev  # gperftools comparison (bench/, tests)
  graphviz                        # dot: renders sprof-callgraph output in tests
  golang-go                       # go tool pprof reads sprof's pprof export in tests
  chromium                        # headless render of the flamegraph SVG/HTML in tests
  linux-perf                      # perf comparison (bench/, perf script import tests)
  nodejs npm                      # speedscope schema check of sprof-export (tests/views)
)

# A package counts as present when dpkg has it, or when a command of the same
# name is on PATH from elsewhere (npm bundled with a nodesource nodejs, say:
# installing Debian's npm over it would conflict).
sprof_missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' && continue
    command -v "$p" >/dev/null 2>&1 && continue
    echo "$p"
  done
}

sprof_install_deps() {
  local what=${1:-build}
  [ "${SPROF_SKIP_DEPS:-0}" = 1 ] && return 0
  local pkgs=("${SPROF_BUILD_DEPS[@]}")
  [ "$what" = test ] && pkgs+=("${SPROF_TEST_DEPS[@]}")
  local missing
  missing=$(sprof_missing_packages "${pkgs[@]}")
  if [ -z "$missing" ]; then
    echo "deps: all ${#pkgs[@]} packages already installed"
    return 0
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "deps: not root and no sudo; install: $missing" >&2; return 1; }
    sudo=(sudo)
  fi
  echo "deps: installing" $missing
  # shellcheck disable=SC2086 # word splitting of the package list is intended
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  # shellcheck disable=SC2086
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}
