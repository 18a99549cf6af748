#!/bin/bash
# compare_case.sh: the case of `rankwatch compare` in bench/README.md: one
# gen_trec_case case (qrels.txt, run.txt = run0.txt) and RUNS-1 more runs
# of the same queries made by perturbing run0's scores, so that all the runs
# share the qrels (gen_trec_case with another --seed would draw other
# qrels). Run k adds uniform noise in [0, k * 0.5) to every score (awk's
# srand(k) stream: reproducible with the same awk), which reorders the lists
# more the larger k is, and gets the run id runK.
#
#   bench/compare_case.sh GEN_TREC_CASE OUT_DIR [RUNS=5] [gen_trec_case options]
set -euo pipefail
gen=$1
out=$2
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
mkdir -p "$out"
"$gen" "$out" "$@"
mv "$out/run.txt" "$out/run0.txt"
for ((k = 1; k < runs; k++)); do
  awk -v k="$k" 'BEGIN { srand(k) }
    { printf "%s %s %s %s %.6f run%d\n", $1, $2, $3, $4, $5 + rand() * k * 0.5, k }' \
    "$out/run0.txt" > "$out/run$k.txt" &
  # Two at a time: the machine has two cores.
  if ((k % 2 == 0)); then wait; fi
done
wait
ls -l "$out"
