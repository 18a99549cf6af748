#!/usr/bin/env bash
# Tests the inhibit rules of alertmanager.yml against a real Alertmanager:
# starts one on 127.0.0.1 (a free port, a temporary storage directory, no
# cluster) with the shipped inhibit_rules and a receiver that sends nothing,
# posts alerts with `amtool alert add`, and checks with `amtool alert query`
# which are inhibited:
#   * RankwatchSampleRatioMismatch{experiment="ranker-v2"} inhibits
#     RankwatchTreatmentSignificantlyWorse and RankwatchQueriesMoved of
#     experiment ranker-v2 (any treatment), not those of ranker-v3, and not the other alerts of ranker-v2's
#     variants;
#   * RankwatchTargetDown{instance="r1"} inhibits RankwatchEvictionsRising of
#     r1, not of r2, not itself, and not r1's RankwatchInputDeletedUnread
#     (lost input pages even while its replica is down).
# Needs prometheus-alertmanager and amtool (Debian package
# prometheus-alertmanager). Called by deploy/prometheus/check.sh; exits
# non-zero on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
config="$here/alertmanager.yml"

for tool in prometheus-alertmanager amtool; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "test-inhibition.sh: $tool not found (install prometheus-alertmanager)" >&2
    exit 2
  fi
done

tmp=$(mktemp -d)
am_pid=""
cleanup() {
  if [[ -n "$am_pid" ]]; then
    kill "$am_pid" 2>/dev/null
    wait "$am_pid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The shipped inhibit_rules (the last top-level key of alertmanager.yml, up
# to the next top-level key if one follows), with a route that notifies no
# one: the test must not reach the example receivers.
if ! grep -q '^inhibit_rules:' "$config"; then
  echo "test-inhibition.sh: no inhibit_rules in $config" >&2
  exit 1
fi
{
  cat <<'EOF'
route:
  receiver: blackhole
  group_by: [alertname]
receivers:
  - name: blackhole
EOF
  awk '/^inhibit_rules:/ {on = 1; print; next}
       on && /^[A-Za-z_]+:/ {on = 0}
       on {print}' "$config"
} >"$tmp/alertmanager.yml"
amtool check-config "$tmp/alertmanager.yml" >/dev/null || {
  echo "test-inhibition.sh: derived configuration invalid" >&2
  exit 1
}

# Start Alertmanager on a free port (retry on a port taken meanwhile).
url=""
for attempt in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 40000))
  mkdir -p "$tmp/data$attempt"
  prometheus-alertmanager --config.file="$tmp/alertmanager.yml" \
    --storage.path="$tmp/data$attempt" \
    --web.listen-address="127.0.0.1:$port" \
    --cluster.listen-address= \
    --log.level=warn >"$tmp/log$attempt" 2>&1 &
  am_pid=$!
  for _ in $(seq 1 50); do
    if ! kill -0 "$am_pid" 2>/dev/null; then
      break
    fi
    if amtool --alertmanager.url="http://127.0.0.1:$port" config show \
        >/dev/null 2>&1; then
      url="http://127.0.0.1:$port"
      break
    fi
    sleep 0.2
  done
  [[ -n "$url" ]] && break
  kill "$am_pid" 2>/dev/null
  wait "$am_pid" 2>/dev/null
  am_pid=""
done
if [[ -z "$url" ]]; then
  echo "test-inhibition.sh: could not start Alertmanager:" >&2
  cat "$tmp"/log* >&2
  exit 1
fi

am() { amtool --alertmanager.url="$url" "$@"; }

failed=0
add() {
  if ! am alert add "$@" >/dev/null; then
    echo "test-inhibition.sh: FAILED: amtool alert add $*" >&2
    failed=1
  fi
}
add alertname=RankwatchSampleRatioMismatch experiment=ranker-v2 severity=ticket
add alertname=RankwatchTreatmentSignificantlyWorse experiment=ranker-v2 baseline=A variant=B severity=ticket
add alertname=RankwatchTreatmentSignificantlyWorse experiment=ranker-v2 baseline=A variant=C severity=ticket
add alertname=RankwatchTreatmentSignificantlyWorse experiment=ranker-v3 baseline=A variant=D severity=ticket
add alertname=RankwatchQueriesMoved experiment=ranker-v2 baseline=A variant=B severity=ticket
add alertname=RankwatchQueriesMoved experiment=ranker-v3 baseline=A variant=D severity=ticket
add alertname=RankwatchQualityRegression variant=B severity=page
add alertname=RankwatchTargetDown instance=r1 job=rankwatch severity=page
add alertname=RankwatchEvictionsRising instance=r1 job=rankwatch severity=ticket
add alertname=RankwatchEvictionsRising instance=r2 job=rankwatch severity=ticket
add alertname=RankwatchInputDeletedUnread instance=r1 job=rankwatch topic=results severity=page

# expect STATE MATCHERS...: the alerts matching MATCHERS are all in STATE
# ("inhibited" or "active"), and there is at least one.
expect() {
  local state=$1
  shift
  local all inhibited
  all=$(am alert query --active --inhibited -o simple "$@" | tail -n +2 | grep -c . || true)
  inhibited=$(am alert query --inhibited -o simple "$@" | tail -n +2 | grep -c . || true)
  local want
  case "$state" in
    inhibited) want=$all ;;
    active) want=0 ;;
  esac
  echo "+ $state: $* ($all alerts, $inhibited inhibited)"
  if [[ "$all" -eq 0 || "$inhibited" -ne "$want" ]]; then
    echo "test-inhibition.sh: FAILED: expected $state: $*" >&2
    failed=1
  fi
}
expect inhibited alertname=RankwatchTreatmentSignificantlyWorse experiment=ranker-v2
expect active alertname=RankwatchTreatmentSignificantlyWorse experiment=ranker-v3
expect inhibited alertname=RankwatchQueriesMoved experiment=ranker-v2
expect active alertname=RankwatchQueriesMoved experiment=ranker-v3
expect active alertname=RankwatchSampleRatioMismatch
expect active alertname=RankwatchQualityRegression
expect inhibited alertname=RankwatchEvictionsRising instance=r1
expect active alertname=RankwatchEvictionsRising instance=r2
expect active alertname=RankwatchTargetDown
expect active alertname=RankwatchInputDeletedUnread instance=r1

if [[ $failed -ne 0 ]]; then
  echo "test-inhibition.sh: some checks failed; current alerts:" >&2
  am alert query --active --inhibited -o extended >&2
  exit 1
fi
echo "test-inhibition.sh: inhibit rules behave as documented"
