#!/usr/bin/env bash
# Times `rankwatch eval` on one case read plain, gzipped and zstd-compressed,
# and checks that the three outputs are identical. See bench/README.md.
#
#   bench/eval_compressed.sh RANKWATCH CASE_DIR [RUNS] [OTHER_RANKWATCH]
#
# CASE_DIR holds qrels.txt and run.txt (from gen_trec_case); the script
# writes qrels.txt.gz, run.txt.gz (gzip -6) and qrels.txt.zst, run.txt.zst
# (zstd -3) beside them when missing. RUNS (default 5) timed runs per
# variant, after one warm-up each; prints the median and range of wall time
# and the median peak RSS (/usr/bin/time). OTHER_RANKWATCH, when given, is
# timed on the plain files too, interleaved run by run with RANKWATCH (a
# before/after comparison under the same load).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 RANKWATCH CASE_DIR [RUNS] [OTHER_RANKWATCH]" >&2
  exit 2
fi
rankwatch=$1
case_dir=$2
runs=${3:-5}
other=${4:-}
measures=(-m P.1,5,10 -m recall.1,5,10 -m map_cut.10 -m ndcg_cut.10 -m recip_rank)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for f in qrels.txt run.txt; do
  [[ -f $case_dir/$f.gz ]] || gzip -6 -k -c "$case_dir/$f" >"$case_dir/$f.gz"
  [[ -f $case_dir/$f.zst ]] || zstd -q -3 -c "$case_dir/$f" >"$case_dir/$f.zst"
done
ls -l "$case_dir"

echo "== machine"
echo "nproc: $(nproc)"
grep -m1 'model name' /proc/cpuinfo
uptime

# name binary suffix
variants=("plain|$rankwatch|" "gzip|$rankwatch|.gz" "zstd|$rankwatch|.zst")
[[ -n $other ]] && variants+=("plain (OTHER_RANKWATCH)|$other|")

echo "== outputs"
for v in "${variants[@]}"; do
  IFS='|' read -r name bin ext <<<"$v"
  "$bin" eval -q "${measures[@]}" "$case_dir/qrels.txt$ext" \
    "$case_dir/run.txt$ext" >"$out/out.txt"
  if [[ ! -f $out/want.txt ]]; then
    mv "$out/out.txt" "$out/want.txt"
  elif ! cmp -s "$out/want.txt" "$out/out.txt"; then
    echo "OUTPUT DIFFERS: $name" >&2
    exit 1
  fi
done
echo "identical ($(wc -l <"$out/want.txt") lines with -q)"

echo "== wall time and peak RSS, $runs runs each (after 1 warm-up)"
for v in "${variants[@]}"; do
  IFS='|' read -r name bin ext <<<"$v"
  "$bin" eval "${measures[@]}" "$case_dir/qrels.txt$ext" \
    "$case_dir/run.txt$ext" >/dev/null
done
for ((i = 0; i < runs; i++)); do
  for v in "${variants[@]}"; do
    IFS='|' read -r name bin ext <<<"$v"
    /usr/bin/time -f "%e %M" -a -o "$out/times.$name" "$bin" eval \
      "${measures[@]}" "$case_dir/qrels.txt$ext" "$case_dir/run.txt$ext" \
      >/dev/null
  done
done
for v in "${variants[@]}"; do
  IFS='|' read -r name bin ext <<<"$v"
  median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  wall=$(cut -d' ' -f1 "$out/times.$name" | median)
  rss=$(cut -d' ' -f2 "$out/times.$name" | median)
  low=$(cut -d' ' -f1 "$out/times.$name" | sort -n | head -1)
  high=$(cut -d' ' -f1 "$out/times.$name" | sort -n | tail -1)
  awk -v n="$name" -v w="$wall" -v l="$low" -v h="$high" -v r="$rss" 'BEGIN {
    printf "%s: median %.2f s (range %.2f-%.2f s), peak RSS median %.1f MiB\n",
      n, w, l, h, r / 1024 }'
done
