#!/usr/bin/env bash
# Times `rankwatch eval` against trec_eval on one case and checks that their
# outputs are identical. See bench/README.md.
#
#   bench/compare_trec_eval.sh TREC_EVAL RANKWATCH CASE_DIR [RUNS]
#
# TREC_EVAL is a trec_eval binary you built yourself; this script neither
# fetches nor builds it. CASE_DIR holds qrels.txt and run.txt (from
# gen_trec_case). RUNS (default 7) timed runs per tool, after one warm-up
# that also brings the files into the page cache; TREC_EVAL_RUNS, when set,
# times trec_eval that many times instead (it is 40 times slower). MEASURES,
# when set, replaces the default measures: MEASURES= (empty) times
# trec_eval's default official set, MEASURES="-m all_trec" the whole
# all_trec set. Wall times come from hyperfine when it is installed, else
# from /usr/bin/time -v (one run each for time and peak RSS); `wc -l` on
# the run is timed too, as the floor of reading the file.
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 TREC_EVAL RANKWATCH CASE_DIR [RUNS]" >&2
  exit 2
fi
trec_eval=$1
rankwatch=$2
case_dir=$3
runs=${4:-7}
te_runs=${TREC_EVAL_RUNS:-$runs}
measures=(-m P.1,5,10 -m recall.1,5,10 -m map_cut.10 -m ndcg_cut.10 -m recip_rank)
if [[ -n ${MEASURES+set} ]]; then
  read -r -a measures <<<"$MEASURES"
fi
qrels=$case_dir/qrels.txt
run=$case_dir/run.txt
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== machine"
echo "nproc: $(nproc)"
grep -m1 'model name' /proc/cpuinfo
uptime

echo "== outputs (summary and -q per query)"
"$trec_eval" "${measures[@]}" "$qrels" "$run" >"$out/te.txt"
"$rankwatch" eval "${measures[@]}" "$qrels" "$run" >"$out/rw.txt"
"$trec_eval" -q "${measures[@]}" "$qrels" "$run" >"$out/te.q.txt"
"$rankwatch" eval -q "${measures[@]}" "$qrels" "$run" >"$out/rw.q.txt"
if cmp -s "$out/te.txt" "$out/rw.txt" && cmp -s "$out/te.q.txt" "$out/rw.q.txt"; then
  echo "identical ($(wc -l <"$out/te.q.txt") lines with -q)"
else
  echo "OUTPUTS DIFFER" >&2
  diff "$out/te.q.txt" "$out/rw.q.txt" | head -20 >&2
  exit 1
fi
cat "$out/te.txt"

# Median and range of the wall times in file $2 (lines "wall user sys
# rss_kb"), and the median of each other column, labelled $1.
summarize() {
  python3 - "$1" "$2" <<'EOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
wall, user, system, rss = (statistics.median(c) for c in zip(*rows))
walls = [r[0] for r in rows]
print(f'{sys.argv[1]}: median {wall:.3f} s, range {min(walls):.3f}-'
      f'{max(walls):.3f} s, user {user:.3f} s, system {system:.3f} s, '
      f'peak RSS {rss / 1024:.1f} MiB ({len(rows)} runs)')
EOF
}
# Runs the command after $1 and $2 (a label and a run count): one warm-up,
# then $2 runs under /usr/bin/time -v.
timed() {
  local name=$1 count=$2
  shift 2
  "$@" >/dev/null
  : >"$out/runs.txt"
  for _ in $(seq "$count"); do
    /usr/bin/time -v "$@" >/dev/null 2>"$out/time.txt"
    awk -F': ' '
      /Elapsed \(wall clock\)/ { n = split($2, t, ":"); wall = t[n] + (n > 1 ? 60 * t[n - 1] : 0) }
      /User time/ { user = $2 }
      /System time/ { sys = $2 }
      /Maximum resident set size/ { rss = $2 }
      END { print wall, user, sys, rss }' "$out/time.txt" >>"$out/runs.txt"
  done
  summarize "$name" "$out/runs.txt"
}

if command -v hyperfine >/dev/null && [[ $te_runs == "$runs" ]]; then
  echo "== wall time (hyperfine, $runs runs each)"
  hyperfine --warmup 1 --runs "$runs" --style basic \
    --export-json "$out/hyperfine.json" \
    -n trec_eval "$trec_eval ${measures[*]} $qrels $run" \
    -n "rankwatch eval" "$rankwatch eval ${measures[*]} $qrels $run"
  python3 - "$out/hyperfine.json" <<'EOF'
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    t = r["times"]
    print(f'{r["command"]}: median {statistics.median(t):.3f} s, '
          f'range {min(t):.3f}-{max(t):.3f} s, user {r["user"]:.3f} s, '
          f'system {r["system"]:.3f} s')
EOF

  echo "== peak RSS (/usr/bin/time -v, $runs runs each)"
  peak() {
    local name=$1
    shift
    local values=()
    for _ in $(seq "$runs"); do
      /usr/bin/time -v "$@" >/dev/null 2>"$out/time.txt"
      values+=("$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time.txt")")
    done
    printf '%s\n' "${values[@]}" | sort -n | awk -v name="$name" '
      { v[NR] = $1 }
      END { printf "%s: median %.1f MiB, range %.1f-%.1f MiB\n", name,
            v[int((NR + 1) / 2)] / 1024, v[1] / 1024, v[NR] / 1024 }'
  }
  peak trec_eval "$trec_eval" "${measures[@]}" "$qrels" "$run"
  peak "rankwatch eval" "$rankwatch" eval "${measures[@]}" "$qrels" "$run"
else
  echo "== wall time, user time and peak RSS (/usr/bin/time -v; trec_eval $te_runs runs, rankwatch $runs)"
  timed trec_eval "$te_runs" "$trec_eval" "${measures[@]}" "$qrels" "$run"
  timed "rankwatch eval" "$runs" "$rankwatch" eval "${measures[@]}" "$qrels" "$run"
fi
echo "== the floor: wc -l on the run ($runs runs)"
timed "wc -l" "$runs" wc -l "$run"
