#!/usr/bin/env bash
# Installs what is missing (Debian 12), builds rankwatch (Release) into
# build/ and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DRANKWATCH_BUILD_TESTS=OFF \
  -DRANKWATCH_BUILD_BENCH=OFF >/dev/null
cmake --build build -j "$(nproc)" --target rankwatch

echo "== rankwatch eval -q -c on docs/examples/trec (trec_eval's measures)"
build/rankwatch eval -q -c -m P.1,3,5 -m recall.5 -m map -m ndcg_cut.5 \
  -m recip_rank -m judged.5 docs/examples/trec/qrels.txt docs/examples/trec/run.txt
