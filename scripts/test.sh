#!/usr/bin/env bash
# Builds rankwatch with AddressSanitizer and UndefinedBehaviorSanitizer and
# runs every test (unit, conformance, end-to-end), after installing what is
# missing on a Debian 12 machine. This is the command CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/check-format.sh

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
cmake --build "$build" -j "$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600
# The libFuzzer targets (tests/fuzz), 20 s each under ASan and UBSan in a
# separate clang build: about 80 s with that build on two cores.
tests/fuzz/run.sh 20
