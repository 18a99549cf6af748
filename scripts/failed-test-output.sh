#!/usr/bin/env bash
# Prints, for each test the last ctest run of BUILD failed, the last lines of
# its output (from Testing/Temporary/LastTest.log), so that the reason of a
# failure is at the end of a CI log rather than hundreds of lines above it.
#
#   scripts/failed-test-output.sh BUILD [LINES]    # LINES: default 25
set -euo pipefail
build=${1:?usage: failed-test-output.sh BUILD [LINES]}
lines=${2:-25}
tmp="$build/Testing/Temporary"
[[ -f "$tmp/LastTestsFailed.log" ]] || exit 0
echo "==== output of the failed tests (last $lines lines each) ===="
# LastTestsFailed.log: "NUMBER:NAME" per line. LastTest.log holds each
# test's output between `"NAME" start time:` and `"NAME" end time:`.
while IFS=: read -r _ name; do
  [[ -n $name ]] || continue
  echo "---- $name"
  awk -v start="\"$name\" start time:" -v end="\"$name\" end time:" '
    index($0, start) == 1 { on = 1; next }
    index($0, end) == 1 { on = 0 }
    on' "$tmp/LastTest.log" | tail -n "$lines"
done <"$tmp/LastTestsFailed.log"
