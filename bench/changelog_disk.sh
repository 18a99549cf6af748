#!/usr/bin/env bash
# The durable-state changelog on disk over a long run (issue 40, item 5): a
# real Apache Kafka broker (scripts/kafka-server.sh), live synthetic
# traffic, and two daemons reading the same topics with durable state, one
# in each of two consumer groups:
#   * `rw-created`: its changelog created by rankwatch (compacted, segments
#     rolled every minute: daemon/kafka/changelog.cc, kTopicSettings);
#   * `rw-defaults`: its changelog created beforehand, compacted with the
#     broker's segment defaults (1 GiB, 7 days), as rankwatch created it
#     before (and as a topic created by hand usually is).
# Every minute it prints, per group, the bytes of the latest checkpoint
# round (the state, rankwatch_checkpoint_bytes) and the changelog's records
# on disk (its segments' .log files). See bench/README.md.
#
#   bench/changelog_disk.sh RANKWATCH [MINUTES] [RATE] [WINDOW]
#
# Defaults: 60 minutes, 300 requests/s, a 30 s join window. The broker is
# the test broker of scripts/kafka-server.sh (its log cleaner looks every
# second instead of Kafka's 15 s: with one-minute segments that changes
# little; with 7-day segments nothing).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 RANKWATCH [MINUTES] [RATE] [WINDOW]" >&2
  exit 2
fi
rw=$(realpath "$1")
minutes=${2:-60}
rate=${3:-300}
window=${4:-30s}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$here/scripts/kafka-server.sh" kill "$dir/kafka" >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=bench/lib.sh
source "$here/bench/lib.sh"

echo "== machine"
echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "== $minutes min at $rate requests/s, join.window $window"
"$here/scripts/kafka-server.sh" start "$dir/kafka" --partitions 8 >&2
bootstrap=$(cat "$dir/kafka/bootstrap")
classpath=$("$here/scripts/kafka-server.sh" classpath)
topics() {  # topics ARGS...: Kafka's own TopicCommand.
  java -Xmx256m -cp "$classpath" org.apache.kafka.tools.TopicCommand \
    --bootstrap-server "$bootstrap" "$@" >/dev/null
}
for topic in results judgments; do
  topics --create --topic "$topic" --partitions 8 --replication-factor 1
done
# What rankwatch created before: compacted, 64 MiB records, the rest the
# broker's defaults.
topics --create --topic rw-defaults-changelog --partitions 8 \
  --replication-factor 1 --config cleanup.policy=compact \
  --config max.message.bytes=67108864

declare -A ports
start_daemon() {  # start_daemon GROUP
  cat >"$dir/$1.yaml" <<EOF
kafka:
  bootstrap_servers: "$bootstrap"
  group_id: $1
  properties:
    session.timeout.ms: "6000"
join:
  window: $window
  allowed_lateness: 5s
experiments:
  - {name: ranker-v2, baseline: A, treatments: [B]}
http:
  listen: 127.0.0.1:0
EOF
  "$rw" run --config "$dir/$1.yaml" --port-file "$dir/$1.port" \
    2>"$dir/$1.log" &
  pids+=($!)
  for _ in $(seq 600); do
    if [[ -s "$dir/$1.port" ]]; then
      ports[$1]=$(cat "$dir/$1.port")
      [[ $(http_get "${ports[$1]}" /readyz) == ready* ]] && return 0
    fi
    sleep 0.1
  done
  echo "daemon $1 not ready" >&2
  cat "$dir/$1.log" >&2
  exit 1
}
start_daemon rw-created
start_daemon rw-defaults

"$rw" produce-synthetic --bootstrap "$bootstrap" --rate "$rate" \
  --duration "${minutes}m" >/dev/null 2>"$dir/producer.log" &
pids+=($!)

gauge() {  # gauge GROUP NAME
  http_get "${ports[$1]}" /metrics | awk -v n="$2" \
    '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.0f", s }'
}
# The records on disk: the bytes of the segments' .log files (the index
# files are preallocated sparse files, 10 MiB each, not data).
disk() {  # disk TOPIC
  find "$dir/kafka/data" -path "*/$1-*" -name '*.log' -printf '%s\n' |
    awk '{ s += $1 } END { printf "%.0f", s }'
}
printf '%6s %12s %14s %12s %14s %10s\n' minute state_created disk_created \
  state_default disk_default events
for m in $(seq 1 "$minutes"); do
  sleep 60
  printf '%6d %12s %14s %12s %14s %10s\n' "$m" \
    "$(gauge rw-created rankwatch_checkpoint_bytes)" \
    "$(disk rw-created-changelog)" \
    "$(gauge rw-defaults rankwatch_checkpoint_bytes)" \
    "$(disk rw-defaults-changelog)" \
    "$(gauge rw-created rankwatch_events_consumed_total)"
done
echo "== disk use of each changelog's folders at the end (du, blocks)"
for t in rw-created-changelog rw-defaults-changelog; do
  echo "$t: $(du -sc --block-size=1 "$dir/kafka/data/$t"-* | awk 'END { print $1 }') bytes"
done
echo "== segment files at the end"
for t in rw-created-changelog rw-defaults-changelog; do
  echo "$t: $(find "$dir/kafka/data" -path "*/$t-*" -name '*.log' | wc -l) .log files"
done
