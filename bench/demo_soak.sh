#!/usr/bin/env bash
# The demo's setup over a long run (issue 25, item 9): `rankwatch
# kafka-mock`, `rankwatch run` and `rankwatch produce-synthetic --rate RATE`
# as three processes, so that each one's CPU shows, sampled from outside
# every INTERVAL seconds. See bench/README.md, "Demo soak".
#
#   bench/demo_soak.sh RANKWATCH [RATE] [MINUTES] [INTERVAL] [-X prop=value...]
#
# RATE: requests per second (default 100, the demo's default); MINUTES:
# default 15; INTERVAL: default 30. Arguments after them go to
# produce-synthetic (e.g. `-X linger.ms=5`, the producer's setting before
# the fix). Each sample prints the CPU of the mock cluster, the daemon and
# the producer over the interval (utime + stime from /proc, % of one core),
# the mock's RSS, the consumer lag summed over partitions
# (rankwatch_consumer_lag_messages) and how far event time trails the wall
# clock (now minus the oldest rankwatch_watermark_timestamp_seconds). The
# summary gives the median and maximum of each over the second half of the
# run, when librdkafka's mock partitions are full (it keeps about 5 MiB or
# 100,000 message sets per partition). Exits 1 if the second half's median
# mock CPU exceeds MAX_CPU (default 50%) or its maximum lag exceeds MAX_LAG
# (default 5000 messages): what it did before the fix (75-94% of a core,
# 14,000 messages of lag at 300 requests/s).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 RANKWATCH [RATE] [MINUTES] [INTERVAL] [-X prop=value...]" >&2
  exit 2
fi
rw=$(realpath "$1")
shift
rate=100 minutes=15 interval=30
[[ $# -gt 0 && $1 != -* ]] && { rate=$1; shift; }
[[ $# -gt 0 && $1 != -* ]] && { minutes=$1; shift; }
[[ $# -gt 0 && $1 != -* ]] && { interval=$1; shift; }
producer_args=("$@")
max_cpu=${MAX_CPU:-50}
max_lag=${MAX_LAG:-5000}
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rss_mb() { awk -v k="$(rss_kib "$1" VmRSS)" 'BEGIN { printf "%.0f", k / 1024 }'; }
alive() { for p in "$@"; do kill -0 "$p" 2>/dev/null || return 1; done; }

echo "# $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); rate $rate/s; ${minutes} min; producer: ${producer_args[*]:-defaults}"
"$rw" kafka-mock --topic results:4 --topic judgments:4 \
  --bootstrap-file "$dir/bootstrap" >/dev/null 2>"$dir/mock.log" &
mock=$!
pids+=("$mock")
for _ in $(seq 100); do [[ -s "$dir/bootstrap" ]] && break; sleep 0.1; done
bootstrap=$(cat "$dir/bootstrap")
cat >"$dir/rw.yaml" <<YAML
kafka:
  bootstrap_servers: "$bootstrap"
join:
  window: 30s
  allowed_lateness: 5s
aggregation:
  segments: [locale]
experiments:
  - {name: ranker-v2, baseline: A, treatments: [B]}
http:
  listen: 127.0.0.1:0
YAML
"$rw" run --config "$dir/rw.yaml" --port-file "$dir/port" 2>"$dir/daemon.log" &
daemon=$!
pids+=("$daemon")
for _ in $(seq 100); do [[ -s "$dir/port" ]] && break; sleep 0.1; done
port=$(cat "$dir/port")
"$rw" produce-synthetic --bootstrap "$bootstrap" --rate "$rate" \
  --variants A,B "${producer_args[@]}" >/dev/null 2>"$dir/producer.log" &
producer=$!
pids+=("$producer")

hz=$(getconf CLK_TCK)
samples=$((minutes * 60 / interval))
echo -e "seconds\tmock_cpu_pct\tdaemon_cpu_pct\tproducer_cpu_pct\tmock_rss_mb\tlag_messages\tevent_time_delay_s"
declare -A prev
for p in "$mock" "$daemon" "$producer"; do prev[$p]=$(cpu_ticks "$p"); done
: >"$dir/samples"
for ((i = 1; i <= samples; i++)); do
  sleep "$interval"
  if ! alive "$mock" "$daemon" "$producer"; then
    tail -n 5 "$dir"/*.log >&2
    echo "demo_soak: a process exited" >&2
    exit 1
  fi
  line="$((i * interval))"
  for p in "$mock" "$daemon" "$producer"; do
    now=$(cpu_ticks "$p")
    line+="\t$(awk -v d=$((now - prev[$p])) -v hz="$hz" -v t="$interval" 'BEGIN { printf "%.1f", 100 * d / hz / t }')"
    prev[$p]=$now
  done
  metrics=$(http_get "$port" /metrics || true)
  lag=$(awk '$1 ~ /^rankwatch_consumer_lag_messages[{ ]/ { s += $NF } END { printf "%.0f", s }' <<<"$metrics")
  delay=$(awk -v now="$(date +%s.%N)" '$1 ~ /^rankwatch_watermark_timestamp_seconds($|{)/ && $NF > 0 {
      if (min == "" || $NF < min) min = $NF }
    END { if (min == "") print "nan"; else printf "%.1f", now - min }' <<<"$metrics")
  line+="\t$(rss_mb "$mock")\t$lag\t$delay"
  echo -e "$line"
  echo -e "$line" >>"$dir/samples"
done
summary=$(awk -v from=$((samples / 2 + 1)) 'NR >= from' "$dir/samples" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
names = ["mock_cpu_pct", "daemon_cpu_pct", "producer_cpu_pct", "mock_rss_mb",
         "lag_messages", "event_time_delay_s"]
for c, name in enumerate(names, start=1):
    v = [float(r[c]) for r in rows if r[c] != "nan"]
    print(f"{name}\t{statistics.median(v):.1f}\t{max(v):.1f}" if v else f"{name}\tnan\tnan")
')
echo -e "\nsecond half\tmedian\tmax\n$summary"
mock_cpu=$(awk '$1 == "mock_cpu_pct" { print $2 }' <<<"$summary")
lag_max=$(awk '$1 == "lag_messages" { print $3 }' <<<"$summary")
if awk -v c="$mock_cpu" -v l="$lag_max" -v mc="$max_cpu" -v ml="$max_lag" \
  'BEGIN { exit !(c > mc || l > ml) }'; then
  echo "demo_soak: over bound (median mock CPU $mock_cpu% > $max_cpu%, or max lag $lag_max > $max_lag)" >&2
  exit 1
fi
echo "demo_soak: within bounds (median mock CPU <= $max_cpu%, lag <= $max_lag)"
