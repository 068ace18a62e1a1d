#!/bin/sh
# Fixture for the corpus tests that must run alone: builds
# ../shared/spinel-corpus with its own build.sh (plain cc) into DIR while
# other tests run, so that the serial part is only the measurement.
set -eu
: "${SPROF_SRC:?run through ctest}"
CORPUS="$SPROF_SRC/../shared/spinel-corpus"
[ -f "$CORPUS/build.sh" ] || { echo "SKIP: no Spinel corpus at $CORPUS"; exit 77; }
dir=${1:?usage: build_plain.sh DIR}
rm -rf "$dir"
bash "$CORPUS/build.sh" "$dir" > "$dir.log" 2>&1 || { cat "$dir.log"; exit 1; }
echo "ok   corpus built in $dir"
