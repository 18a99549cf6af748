#!/usr/bin/env bash
# Builds rankwatch with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs every test (unit, conformance, end-to-end), after installing what is
# missing on a Debian 12 machine. This is the command CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/check-format.sh
scripts/check-file-size.sh

build=build-test
# ccache (CMakeLists.txt uses it when installed) keyed on paths relative to
# the clone, so that a clone in another folder reuses this machine's cache;
# the build folder is not hashed (-g's compilation directory).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
jobs=$(nproc)
# -O1 with line tables: what sanitizers are meant for, and about half the
# compile time of -O2 -g (CI has two cores). Assertions stay on.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRANKWATCH_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
# The real Kafka broker's jars (Maven Central, cached in ~/.cache) resolve
# while the code compiles, rather than inside the `realkafka` fixture; a
# failure is reported here, on its own line, before any test runs.
mkdir -p "$build"
bash scripts/kafka-server.sh classpath >/dev/null 2>"$build/kafka-jars.log" &
jars_pid=$!
# A failed build leaves no Maven behind.
trap 'kill "$jars_pid" 2>/dev/null || true' EXIT
cmake --build "$build" -j "$jobs"
if ! wait "$jars_pid"; then
  cat "$build/kafka-jars.log" >&2
  echo "test.sh: resolving Apache Kafka's jars failed; the realkafka tests will try again" >&2
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Three tests per core, of which at most one per core computes: the tests
# that hold the `cpus` resource (tests/CMakeLists.txt, "Scheduling"); the
# end-to-end tests beside them mostly wait for joins, windows and scrapes.
# Absolute: ctest --test-dir reads it from the build folder.
resources="$PWD/$build/ctest-resources.json"
printf '{"version": {"major": 1, "minor": 0}, "local": [{"cpus": [{"id": "0", "slots": %d}]}]}\n' \
  "$jobs" >"$resources"
ctest --test-dir "$build" --output-on-failure -j $((3 * jobs)) \
  --resource-spec-file "$resources" --timeout 600 || {
  rc=$?
  # The end of the log is what a CI summary shows: repeat there the last
  # lines each failed test printed.
  bash scripts/failed-test-output.sh "$build" >&2 || true
  exit "$rc"
}
# The libFuzzer targets (tests/fuzz), 20 s each under ASan and UBSan in a
# separate clang build: about 80 s with that build on two cores.
tests/fuzz/run.sh 20
