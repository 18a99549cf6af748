#!/usr/bin/env bash
# Builds rankwatch with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs every test (unit, conformance, end-to-end), after installing what is
# missing on a Debian 12 machine. This is the command CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's time goes to the log ("test.sh: ... s"), so a slow CI run says
# where its minutes went.
step() { echo "test.sh: $1 took $((SECONDS - step_start)) s" >&2; step_start=$SECONDS; }
step_start=$SECONDS

scripts/install-deps.sh
scripts/check-format.sh
scripts/check-file-size.sh
step "installing and checking the sources"

build=build-test
# ccache (CMakeLists.txt uses it when installed) keyed on paths relative to
# the clone, so that a clone in another folder reuses this machine's cache;
# the build folder is not hashed (-g's compilation directory).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
jobs=$(nproc)
# Ninja starts a test binary's sources while the libraries it links still
# compile (make waits for them), which keeps both cores busy to the end. A
# folder configured earlier for make starts over.
if [[ -f "$build/CMakeCache.txt" ]] &&
   ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$build/CMakeCache.txt"; then
  rm -rf "$build"
fi
# -O1 with line tables: what sanitizers are meant for, and about half the
# compile time of -O2 -g (CI has two cores). Assertions stay on. Every
# target compiles in unity batches of eight files, and the tests' own code
# at -O0 (cmake/test_build.cmake says why). ccache still hits from another
# clone: the batches include their files by absolute path, so it compares
# them preprocessed, with the paths under CCACHE_BASEDIR made relative.
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRANKWATCH_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_UNITY_BUILD=ON
# The real Kafka broker's jars (Maven Central, cached in ~/.cache) resolve
# while the code compiles, rather than inside the `realkafka` fixture; a
# failure is reported here, on its own line, before any test runs.
mkdir -p "$build"
bash scripts/kafka-server.sh classpath >/dev/null 2>"$build/kafka-jars.log" &
jars_pid=$!
fuzz_pid=
python_pid=
# A failed build or test run leaves no Maven or compiler behind (the fuzz
# build and the Python step run in process groups of their own: their
# compilers go with them). errexit holds in the trap too: each kill may fail.
trap 'kill "$jars_pid" 2>/dev/null || true
      if [[ -n $fuzz_pid ]]; then kill -- "-$fuzz_pid" 2>/dev/null || true; fi
      if [[ -n $python_pid ]]; then kill -- "-$python_pid" 2>/dev/null || true; fi' EXIT
cmake --build "$build" -j "$jobs"
if ! wait "$jars_pid"; then
  cat "$build/kafka-jars.log" >&2
  echo "test.sh: resolving Apache Kafka's jars failed; the realkafka tests will try again" >&2
fi
step "building"
# The libFuzzer targets (tests/fuzz: a clang build, then each target's
# fixed count of inputs, --inputs) go beside the tests at the lowest CPU
# priority: they take the time the end-to-end tests leave idle while they
# wait, and yield the cores to the tests that compute. What is left when
# the tests end runs on idle cores. Job control (set -m) gives the job a
# process group of its own in this session: a new session (setsid) would
# be a scheduler autogroup of its own, where nice no longer yields to the
# tests (seen: ctest 458 s instead of 361 s).
set -m
nice -n 19 tests/fuzz/run.sh --inputs 20 >"$build/fuzz.log" 2>&1 &
fuzz_pid=$!
# The Python package (pip install . into a virtual environment in the build
# folder: a Release build of base, metrics and trec without sanitizers,
# through ccache) and its pytest suite, beside the tests at a lower
# priority than they have and a higher one than the fuzzing: about 45 s of
# CPU on a fresh machine, 8 s when built before (scripts/python-test.sh).
nice -n 10 scripts/python-test.sh "$build" >"$build/python.log" 2>&1 &
python_pid=$!
set +m
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
step "testing"
if ! wait "$python_pid"; then
  python_pid=
  cat "$build/python.log" >&2
  echo "test.sh: building or testing the Python package failed" >&2
  exit 1
fi
python_pid=
grep -E '^python-test: |passed|failed' "$build/python.log" >&2 || true
step "the Python package after the tests"
if ! wait "$fuzz_pid"; then
  fuzz_pid=
  cat "$build/fuzz.log" >&2
  echo "test.sh: building or running the fuzz targets failed" >&2
  exit 1
fi
fuzz_pid=
grep '^fuzz ' "$build/fuzz.log" >&2 || true
step "fuzzing after the tests"
