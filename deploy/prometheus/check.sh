#!/usr/bin/env bash
# Validates the shipped Prometheus and Alertmanager files: the configuration,
# the rule and alert files, their unit tests (deploy/prometheus/tests/) and
# the Alertmanager configuration. Runs from any directory; needs promtool
# and amtool (Debian packages prometheus and prometheus-alertmanager).
# Exits non-zero when any check fails.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deploy=$(dirname "$here")

for tool in promtool amtool; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check.sh: $tool not found (install prometheus and prometheus-alertmanager)" >&2
    exit 2
  fi
done

failed=0
run() {
  echo "+ $*"
  if ! "$@"; then
    echo "check.sh: FAILED: $*" >&2
    failed=1
  fi
}

run promtool check config "$here/prometheus.yml"
run promtool check rules "$here/rules.yml" "$here/alerts.yml"
shopt -s nullglob
tests=("$here"/tests/*.yml)
if [[ ${#tests[@]} -eq 0 ]]; then
  echo "check.sh: FAILED: no unit tests in $here/tests" >&2
  failed=1
else
  run promtool test rules "${tests[@]}"
fi
run amtool check-config "$deploy/alertmanager/alertmanager.yml"

# The end-to-end test shortens these durations; any other one would fail it
# (see the header of rules.yml).
bad=$(grep -noE '(\[|offset )[0-9]+[smhdwy]' "$here/rules.yml" "$here/alerts.yml" |
      grep -vE '(\[|offset )(5m|30m|1h|1d)$' || true)
bad_for=$(grep -noE '\bfor: *[0-9]+[smhdwy]\b' "$here/alerts.yml" "$here/rules.yml" |
          grep -vE 'for: *(0s|2m|5m|10m|15m)$' || true)
echo "+ duration tokens of rules.yml and alerts.yml"
if [[ -n "$bad$bad_for" ]]; then
  echo "check.sh: FAILED: durations outside [5m] [30m] [1h] [1d], offset 30m and for: 0s/2m/5m/10m/15m:" >&2
  echo "$bad$bad_for" >&2
  failed=1
fi

if [[ $failed -ne 0 ]]; then
  echo "check.sh: some checks failed" >&2
  exit 1
fi
echo "check.sh: all checks passed"
