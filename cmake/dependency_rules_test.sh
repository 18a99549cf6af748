#!/usr/bin/env bash
# The dependency rules (cmake/dependency_rules.cmake) refuse what they
# forbid: each case copies the source tree's CMake files and sources,
# breaks one rule in the copy, configures it (no build) and expects the
# configure step to fail with the line naming that edge. The unbroken copy
# must configure, so that a failure is the rule's and not the copy's.
#
#   cmake/dependency_rules_test.sh <source dir>
set -uo pipefail

src=${1:?usage: dependency_rules_test.sh <source dir>}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0

# A fresh copy of the tree (working files, untracked ones included).
copy() {
  rm -rf "$scratch/tree" "$scratch/build"
  mkdir -p "$scratch/tree"
  (cd "$src" && git ls-files -co --exclude-standard -z |
     xargs -0 cp --parents -t "$scratch/tree" 2>/dev/null)
}

configure() {
  cmake -S "$scratch/tree" -B "$scratch/build" -DRANKWATCH_BUILD_TESTS=OFF \
    -DRANKWATCH_BUILD_BENCH=OFF -DRANKWATCH_CCACHE=OFF >"$scratch/out" 2>&1
}

# expect_refused <name> <pattern> : the configure step fails and its error
# contains <pattern> (joined into one line: CMake wraps messages).
expect_refused() {
  if configure; then
    echo "FAILED: $1: the configure step passed" >&2
    failed=1
    return
  fi
  if ! tr -s '\n ' '  ' <"$scratch/out" | grep -qF -- "$2"; then
    echo "FAILED: $1: no '$2' in:" >&2
    cat "$scratch/out" >&2
    failed=1
    return
  fi
  echo "ok: $1"
}

copy
if ! configure; then
  echo "FAILED: the unbroken tree does not configure:" >&2
  cat "$scratch/out" >&2
  exit 1
fi
echo "ok: the unbroken tree configures"

# A library including a header of a library above it (kafka, floor 4, of
# the exporter, floor 5).
copy
kafka_cc=$(cd "$scratch/tree" && ls daemon/kafka/*.cc | grep -v _test | head -1)
sed -i '1i #include "daemon/exporter/probe.h"' "$scratch/tree/$kafka_cc"
expect_refused "include upward" \
  "$kafka_cc (rankwatch_kafka) may not include daemon/exporter/probe.h"

# Between the stream's rooms: the join (floor 4) including the judges'
# header (floor 5), which stands on it.
copy
sed -i '1i #include "daemon/stream/judges/judge_monitor.h"' \
  "$scratch/tree/daemon/stream/join/join.cc"
expect_refused "include between the stream's rooms" \
  "daemon/stream/join/join.cc (rankwatch_stream_join) may not include daemon/stream/judges/judge_monitor.h"

# The CLI's headers are no library's to include (http, floor 1).
copy
http_cc=$(cd "$scratch/tree" && ls daemon/http/*.cc | grep -v _test | head -1)
sed -i '1i #include "daemon/cli/command_util.h"' "$scratch/tree/$http_cc"
expect_refused "include of the CLI" \
  "(rankwatch_http) may not include daemon/cli/command_util.h"

# Test helpers are no library's either.
copy
sed -i '1i #include "tests/testing/subprocess.h"' \
  "$scratch/tree/daemon/cli/command_util.cc"
expect_refused "include of tests/" \
  "(rankwatch_cli) may not include tests/testing/subprocess.h"

# Linking the CLI by its target name rather than its ALIAS.
copy
echo 'target_link_libraries(rankwatch_exporter PUBLIC rankwatch_cli)' \
  >>"$scratch/tree/daemon/CMakeLists.txt"
expect_refused "link by target name" \
  "rankwatch_exporter may not link rankwatch::cli"

# An outside library the CLI's rule does not list.
copy
echo 'target_link_libraries(rankwatch_cli PUBLIC ZLIB::ZLIB)' \
  >>"$scratch/tree/daemon/CMakeLists.txt"
expect_refused "outside library of the CLI" \
  "rankwatch_cli may not link ZLIB::ZLIB"

# A new library without a rule.
copy
printf 'add_library(rankwatch_extra %s)\n' \
  '${CMAKE_CURRENT_SOURCE_DIR}/cli/command_util.cc' \
  >>"$scratch/tree/daemon/CMakeLists.txt"
expect_refused "library without a rule" \
  "rankwatch_extra has no rule in cmake/dependency_rules.cmake"

# A rule allowing a library on its own floor or above.
copy
sed -i 's/^rankwatch_check_links(rankwatch_http FLOOR 1 ALLOWED rankwatch::base)/rankwatch_check_links(rankwatch_http FLOOR 1 ALLOWED rankwatch::base rankwatch::metrics)/' \
  "$scratch/tree/cmake/dependency_rules.cmake"
expect_refused "arrow to the same floor" \
  "rankwatch_http (floor 1) may not depend on rankwatch::metrics (floor 1)"

exit "$failed"
