#!/usr/bin/env bash
# The daemon end to end under load, on the Kafka mock cluster: three
# processes (`rankwatch kafka-mock`, `rankwatch run`, `rankwatch
# produce-synthetic --fast`), measured from outside. See bench/README.md.
#
#   bench/daemon_load.sh RANKWATCH [REQUESTS] [PENDING]
#
# Phase 1 (throughput): REQUESTS requests (default 200000) of 10 results
# and 3 judgments on average are produced as fast as the producer can; the
# daemon consumes them concurrently. Reports the producer's own rate, the
# daemon's end-to-end rate (from the first produced event until every event
# is consumed), the daemon's CPU per event (utime + stime from /proc), the
# same by thread (the consumer, librdkafka's threads, the HTTP threads that
# serve this script's own polls of /metrics) and its peak RSS. Then it waits for the join to drain (idle_timeout 2s closes
# the last windows) and checks the accounting: every request produced is
# finalized or counted under a named reason (late results, duplicate
# results, rejected results events by reason); the script exits 1 if not.
#
# BROKER=real runs the same against a real Apache Kafka broker
# (scripts/kafka-server.sh: one KRaft node on loopback, its jars from
# Maven) instead of librdkafka's mock cluster; the topics are created first
# with Kafka's own TopicCommand.
#
# DURABLE=true runs the daemon with kafka.durable_state (its changelog on
# the same broker), for the cost of the checkpoints, every
# CHECKPOINT_INTERVAL (default 5s; the burst of phase 1 lasts about a
# second, so a short interval shows their cost).
#
# DAEMON_ENV="NAME=VALUE ..." sets environment variables of the daemon
# alone (e.g. GLIBC_TUNABLES=glibc.malloc.hugetlb=1).
#
# Phase 2 (memory): a fresh daemon with a one-hour join window is fed
# PENDING results events (default 100000) without judgments, all within one
# second of event time, so all stay pending; reports the RSS they add.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 RANKWATCH [REQUESTS] [PENDING]" >&2
  exit 2
fi
rw=$(realpath "$1")
requests=${2:-200000}
pending=${3:-100000}
dir=$(mktemp -d)
pids=()
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
broker=${BROKER:-mock}
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ $broker == real ]]; then
    "$here/scripts/kafka-server.sh" kill "$dir/kafka" >/dev/null 2>&1 || true
  fi
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"
metric_sum() {  # metric_sum PORT NAME: sum of the samples of NAME.
  http_get "$1" /metrics | awk -v n="$2" \
    '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.0f", s }'
}
# In a saved scrape: the sum of the samples of NAME whose labels include
# every `key="value"` given (absent metrics sum to 0; `has` tells).
scrape_sum() {  # scrape_sum FILE NAME [key="value"...]
  local file=$1 name=$2
  shift 2
  awk -v n="$name" -v want="$*" '
    $1 == n || index($1, n "{") == 1 {
      k = split(want, w, " ")
      for (i = 1; i <= k; ++i) if (index($1, w[i]) == 0) next
      s += $NF
    }
    END { printf "%.0f", s }' "$file"
}
scrape_has() { grep -q "^$2[ {]" "$1"; }  # scrape_has FILE NAME

echo "== machine"
echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
uptime

echo "== broker: $broker"
if [[ $broker == real ]]; then
  "$here/scripts/kafka-server.sh" start "$dir/kafka" --partitions 16 >&2
  bootstrap=$(cat "$dir/kafka/bootstrap")
  classpath=$("$here/scripts/kafka-server.sh" classpath)
  for topic in results judgments results2 judgments2; do
    java -Xmx256m -cp "$classpath" org.apache.kafka.tools.TopicCommand \
      --bootstrap-server "$bootstrap" --create --topic "$topic" \
      --partitions 16 --replication-factor 1 >/dev/null
  done
else
  "$rw" kafka-mock --brokers 1 --topic results:16 --topic judgments:16 \
    --topic results2:16 --topic judgments2:16 \
    --bootstrap-file "$dir/bootstrap" >/dev/null 2>"$dir/mock.log" &
  broker_pid=$!
  pids+=("$broker_pid")
  for _ in $(seq 100); do [[ -s "$dir/bootstrap" ]] && break; sleep 0.1; done
  bootstrap=$(cat "$dir/bootstrap")
fi
[[ $broker == real ]] && broker_pid=$(cat "$dir/kafka/pid")

start_daemon() {  # start_daemon NAME WINDOW TOPIC_SUFFIX IDLE_TIMEOUT
  cat >"$dir/$1.yaml" <<EOF
kafka:
  bootstrap_servers: "$bootstrap"
  group_id: $1
$(if [[ ${DURABLE:-false} == true ]]; then
    printf '  durable_state: true\n  checkpoint_interval: %s\n' \
      "${CHECKPOINT_INTERVAL:-5s}"
  fi)
  results_topic: results${3:-}
  judgments_topic: judgments${3:-}
  properties:
    session.timeout.ms: "6000"
    fetch.wait.max.ms: "${FETCH_WAIT:-10}"
    queued.min.messages: "${QMIN:-1000000}"
join:
  window: $2
  allowed_lateness: 5s
  idle_timeout: ${4:-1h}
  max_pending_requests: 2000000
aggregation:
  segments: [locale]
experiments:
  - {name: ranker-v2, baseline: A, treatments: [B]}
http:
  listen: 127.0.0.1:0
EOF
  rm -f "$dir/$1.port"
  # shellcheck disable=SC2086 # DAEMON_ENV: NAME=VALUE words.
  env ${DAEMON_ENV:-} "$rw" run --config "$dir/$1.yaml" \
    --port-file "$dir/$1.port" 2>"$dir/$1.log" &
  daemon_pid=$!
  pids+=("$daemon_pid")
  for _ in $(seq 300); do
    if [[ -s "$dir/$1.port" ]]; then
      port=$(cat "$dir/$1.port")
      [[ $(http_get "$port" /readyz) == ready* ]] && return 0
    fi
    sleep 0.1
  done
  echo "daemon $1 not ready" >&2
  cat "$dir/$1.log" >&2
  exit 1
}

wait_consumed() {  # wait_consumed PORT EVENTS
  for _ in $(seq 6000); do
    [[ $(metric_sum "$1" rankwatch_events_consumed_total) -ge $2 ]] && return 0
    sleep 0.05
  done
  echo "timed out waiting for $2 events" >&2
  exit 1
}

# Phase 1's accounting, printed and checked once the join has drained:
# returns 1 (with the reason) unless every request produced is finalized
# or counted under a named reason.
account() {  # account PORT REQUESTS_PRODUCED
  local port=$1 produced=$2 m="$dir/accounting.prom"
  http_get "$port" /metrics >"$m"
  local now finalized pending late_results duplicates rejected_results
  now=$(date +%s)
  finalized=$(scrape_sum "$m" rankwatch_requests_finalized_total)
  pending=$(scrape_sum "$m" rankwatch_pending_requests)
  late_results=$(scrape_sum "$m" rankwatch_late_results_total)
  duplicates=$(scrape_sum "$m" rankwatch_duplicate_results_total)
  rejected_results=$(scrape_sum "$m" rankwatch_events_rejected_total \
    'topic="results"')
  echo "requests produced: $produced"
  echo "finalized: $finalized, pending: $pending" \
    "(evicted early, among the finalized:" \
    "$(scrape_sum "$m" rankwatch_requests_evicted_total))"
  echo "results events: late $late_results, duplicate $duplicates," \
    "rejected $rejected_results"
  echo "judgments: late $(scrape_sum "$m" rankwatch_late_judgments_total)," \
    "orphaned $(scrape_sum "$m" rankwatch_orphaned_judgments_total)," \
    "rejected $(scrape_sum "$m" rankwatch_events_rejected_total \
      'topic="judgments"')"
  local name
  for name in rankwatch_rebalance_dropped_requests_total \
    rankwatch_replayed_events_total rankwatch_requests_reprocessed_total \
    rankwatch_requests_unjudged_total rankwatch_qrels_table_full_total; do
    if scrape_has "$m" "$name"; then
      echo "${name#rankwatch_}: $(scrape_sum "$m" "$name")"
    fi
  done
  # Every rejection reason the daemon exports, per topic, the timestamp
  # ones always (they are the ones this benchmark can meet).
  awk '/^rankwatch_events_rejected_total\{/ {
      topic = $1; sub(/.*topic="/, "", topic); sub(/".*/, "", topic)
      reason = $1; sub(/.*reason="/, "", reason); sub(/".*/, "", reason)
      if ($NF != 0 || reason ~ /timestamp/)
        line[topic] = line[topic] " " reason "=" $NF
    }
    END { for (t in line) print "rejected " t ":" line[t] }' "$m" | sort
  # Event time against the wall clock: a watermark ahead of now means
  # events stamped in the future moved it.
  awk -v now="$now" '
    /^rankwatch_watermark_timestamp_seconds / { w = $NF }
    /^rankwatch_last_event_timestamp_seconds\{/ {
      t = $1; sub(/.*topic="/, "", t); sub(/".*/, "", t)
      printf "newest %s event time: %+.1f s from now\n", t, $NF - now
      if (t == "results") r = $NF
    }
    END {
      printf "watermark: %+.1f s from now, %+.1f s from the newest results" \
             " event\n", w - now, w - r
    }' "$m"
  local named=$((late_results + duplicates + rejected_results))
  if [[ $((finalized + named)) -ne $produced ]]; then
    echo "ACCOUNTING FAILED: $produced requests produced, but finalized" \
      "($finalized) + late results ($late_results) + duplicate results" \
      "($duplicates) + rejected results events ($rejected_results) =" \
      "$((finalized + named)); $((produced - finalized - named)) requests" \
      "unaccounted for ($pending requests still pending)" >&2
    return 1
  fi
  echo "accounting closes: finalized + late + duplicate + rejected =" \
    "$produced requests"
  # The synthetic traffic has no duplicate, malformed or late request: here
  # every request must be scored, else the throughput figures above are
  # those of a daemon that dropped part of its input.
  if [[ $finalized -ne $produced ]]; then
    echo "FAILED: only $finalized of $produced requests finalized" \
      "($named counted as late, duplicate or rejected results events)" >&2
    return 1
  fi
}

echo "== phase 1: $requests requests, produced with --fast"
# idle_timeout 2s: once the stream stops, the last windows close (the fast
# producer does not pause that long while it runs).
start_daemon load 30s "" 2s
cpu0=$(cpu_ticks "$daemon_pid")
threads0=$(thread_ticks "$daemon_pid")
broker0=$(cpu_ticks "$broker_pid")
t0=$(date +%s.%N)
"$rw" produce-synthetic --bootstrap "$bootstrap" --fast --rate 5000 \
  --requests "$requests" --judgments-per-request 3 --status-interval 0s \
  -X compression.type=lz4 -X linger.ms=20 >"$dir/produce.txt" &
producer_pid=$!
pids+=("$producer_pid")
# The second half: from the moment the daemon has consumed the events of
# half the requests (4 events per request on average) to the end. With
# REQUESTS/2 at least 175,000 (35 s of event time at 5,000 requests/s:
# the 30 s window and 5 s of allowed lateness), the join's window is full
# by then and every request admitted finalizes one that fell out of it:
# the steady state, where the pending store reuses its slots and memory,
# against the cold start above.
# (Polled 10 times a second: the script's polls cost the HTTP threads,
# counted apart.) Past the producer's end too: the daemon drains its
# backlog. Bounded: a daemon stalled short of the mark leaves it unmeasured.
half_mark=$((requests * 2))
half_events=
for _ in $(seq 1200); do
  consumed=$(metric_sum "$port" rankwatch_events_consumed_total)
  if [[ $consumed -ge $half_mark ]]; then
    half_cpu=$(cpu_ticks "$daemon_pid")
    half_threads=$(thread_ticks "$daemon_pid")
    half_events=$consumed
    break
  fi
  sleep 0.1
done
wait "$producer_pid"
t_produced=$(date +%s.%N)
events=$(sed -n 's/.* events=\([0-9]*\).*/\1/p' "$dir/produce.txt")
produced=$(sed -n 's/^requests=\([0-9]*\) .*/\1/p' "$dir/produce.txt")
wait_consumed "$port" "$events"
t1=$(date +%s.%N)
cpu1=$(cpu_ticks "$daemon_pid")
threads1=$(thread_ticks "$daemon_pid")
broker1=$(cpu_ticks "$broker_pid")
hz=$(getconf CLK_TCK)
cat "$dir/produce.txt"
awk -v e="$events" -v t0="$t0" -v tp="$t_produced" -v t1="$t1" \
  -v c0="$cpu0" -v c1="$cpu1" -v m0="$broker0" -v m1="$broker1" -v b="$broker" -v hz="$hz" 'BEGIN {
    printf "producer alone: %.0f events/s (%.2f s)\n", e / (tp - t0), tp - t0
    printf "daemon end to end: %d events in %.2f s = %.0f events/s\n",
           e, t1 - t0, e / (t1 - t0)
    printf "daemon CPU: %.2f s = %.2f us per event\n",
           (c1 - c0) / hz, (c1 - c0) / hz / e * 1e6
    printf "%s broker CPU: %.2f s = %.2f us per event\n",
           b, (m1 - m0) / hz, (m1 - m0) / hz / e * 1e6
  }'
# The daemon's CPU by thread: the HTTP threads serve this script's polls
# of /metrics (20 a second while it waits; Prometheus scrapes every 15 s
# or so), a cost of the measurement, not of the events.
awk -v e="$events" -v hz="$hz" -v a="$threads0" -v b="$threads1" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    printf "daemon CPU by thread: consumer %.2f us, librdkafka %.2f us," \
           " HTTP (this script'"'"'s polls) %.2f us per event\n",
           (y[1] - x[1]) / hz / e * 1e6, (y[2] - x[2]) / hz / e * 1e6,
           (y[3] - x[3]) / hz / e * 1e6
    printf "daemon CPU without the HTTP threads: %.2f us per event\n",
           (y[1] - x[1] + y[2] - x[2]) / hz / e * 1e6
  }'
if [[ -n $half_events ]]; then
  awk -v e="$((events - half_events))" -v from="$half_events" -v hz="$hz" \
    -v c0="$half_cpu" -v c1="$cpu1" -v a="$half_threads" -v b="$threads1" \
    -v warm="$((requests / 2 >= 175000))" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    printf "second half (from event %d, %d events, %s): daemon CPU %.2f us" \
           " per event; consumer %.2f us, librdkafka %.2f us, HTTP %.2f us;" \
           " without the HTTP threads %.2f us\n", from, e,
           warm ? "the window full: steady state" \
                : "the window not yet full: REQUESTS below 350000",
           (c1 - c0) / hz / e * 1e6, (y[1] - x[1]) / hz / e * 1e6,
           (y[2] - x[2]) / hz / e * 1e6, (y[3] - x[3]) / hz / e * 1e6,
           (y[1] - x[1] + y[2] - x[2]) / hz / e * 1e6
  }'
else
  echo "second half: not measured (the daemon did not reach half the events" \
    "within 120 s)"
fi
echo "daemon peak RSS: $(rss_kib "$daemon_pid" VmHWM) KiB"
if [[ ${DURABLE:-false} == true ]]; then
  echo "checkpoints: $(metric_sum "$port" rankwatch_checkpoints_total)," \
    "latest round $(metric_sum "$port" rankwatch_checkpoint_bytes) bytes"
fi
echo "when all events were consumed:" \
  "finalized $(metric_sum "$port" rankwatch_requests_finalized_total)," \
  "pending $(metric_sum "$port" rankwatch_pending_requests)," \
  "late results $(metric_sum "$port" rankwatch_late_results_total)"
# Drain: with no more events, the idle timeout lets event time advance
# until every window has closed (bounded wait).
for _ in $(seq 600); do
  [[ $(metric_sum "$port" rankwatch_pending_requests) -eq 0 ]] && break
  sleep 0.1
done
echo "== phase 1 accounting"
accounting_ok=1
account "$port" "$produced" || accounting_ok=0
kill "$daemon_pid"

echo "== phase 2: $pending pending requests (join window 1h, no judgments)"
start_daemon memory 1h 2
rss0=$(rss_kib "$daemon_pid" VmRSS)
"$rw" produce-synthetic --bootstrap "$bootstrap" --fast --rate 1000000 \
  --requests "$pending" --judgments-per-request 0 --status-interval 0s \
  --results-topic results2 --judgments-topic judgments2 \
  -X compression.type=lz4 >"$dir/produce2.txt"
wait_consumed "$port" "$pending"
sleep 1
rss1=$(rss_kib "$daemon_pid" VmRSS)
held=$(metric_sum "$port" rankwatch_pending_requests)
awk -v a="$rss0" -v b="$rss1" -v n="$held" 'BEGIN {
  printf "pending requests: %d; RSS %.1f MiB -> %.1f MiB: %.0f bytes each\n",
         n, a / 1024, b / 1024, (b - a) * 1024 / n }'

if [[ $accounting_ok -ne 1 ]]; then
  echo "FAILED: phase 1 did not finalize or account for every request" \
    "(see its accounting above)" >&2
  exit 1
fi
