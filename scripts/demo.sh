#!/usr/bin/env bash
# Installs what the demo needs and is missing (Debian 12: the compiler and
# the libraries, plus Prometheus with --prometheus; not the test toolchain),
# builds rankwatch (Release) into build/ and runs the demo: a Kafka mock
# cluster, synthetic A/B traffic and the daemon serving Prometheus metrics
# on 127.0.0.1:9464. Extra arguments go to `rankwatch demo` (e.g.
# --regress-variant B --regress-after 2m).
set -euo pipefail
cd "$(dirname "$0")/.."

deps=(--demo)
for arg in "$@"; do
  if [[ $arg == --prometheus ]]; then deps+=(--prometheus); fi
done
scripts/install-deps.sh "${deps[@]}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRANKWATCH_BUILD_TESTS=OFF \
  -DRANKWATCH_BUILD_BENCH=OFF >/dev/null
cmake --build build -j "$(nproc)" --target rankwatch
exec build/rankwatch demo "$@"
