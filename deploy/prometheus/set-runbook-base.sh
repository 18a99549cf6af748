#!/usr/bin/env bash
# Sets the base URL of every alert's runbook link.
#
#   deploy/prometheus/set-runbook-base.sh URL [FILE...]
#
# Every `runbook_url: BASE#anchor` line of the files becomes
# `runbook_url: URL#anchor` (the anchor, the alert name in lower case, is
# kept). URL is where docs/operations.md is served, e.g.
# https://wiki.example.org/rankwatch/operations.html or
# https://github.com/ORG/rankwatch/blob/main/docs/operations.md; it must be
# absolute (scheme://...) and contain no '#', quote, backslash or white
# space. Without FILEs: alerts.yml and the unit tests tests/*.yml beside this
# script (whose expected annotations carry the same links) and the
# PrometheusRule manifest ../kubernetes/prometheusrule.yaml (generated from
# alerts.yml: rewriting its links gives what regenerating it would), so
# that check.sh and tests/deploy_manifests_test.cc still pass afterwards.
# Prints the files changed; exits 2 on bad usage.
set -euo pipefail

usage() {
  echo "usage: $0 URL [FILE...]  (URL absolute, e.g. https://docs.example.org/rankwatch/operations.md)" >&2
  exit 2
}

[[ $# -ge 1 ]] || usage
base=$1
shift
if [[ ! "$base" =~ ^[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]#\"\'\\]+$ ]]; then
  echo "set-runbook-base.sh: not an absolute URL without '#', quotes, backslashes or spaces: $base" >&2
  usage
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
  shopt -s nullglob
  files=("$here/alerts.yml" "$here"/tests/*.yml)
  manifest="$(dirname "$here")/kubernetes/prometheusrule.yaml"
  if [[ -f "$manifest" ]]; then files+=("$manifest"); fi
fi

# sed replacement text: escape the delimiter `|` and `&` (backslashes are
# rejected above).
replacement=${base//|/\\|}
replacement=${replacement//&/\\&}

for f in "${files[@]}"; do
  if [[ ! -f "$f" ]]; then
    echo "set-runbook-base.sh: no such file: $f" >&2
    exit 2
  fi
  # A runbook_url value, optionally quoted, up to the anchor.
  if grep -qE '^[[:space:]]*runbook_url:[[:space:]]*["'\'']?[^#"'\'']*#' "$f"; then
    tmp=$(mktemp "$f.XXXXXX")
    sed -E "s|^([[:space:]]*runbook_url:[[:space:]]*[\"']?)[^#\"']*#|\\1${replacement}#|" \
      "$f" >"$tmp"
    if cmp -s "$f" "$tmp"; then
      rm -f "$tmp"
    else
      chmod --reference="$f" "$tmp"
      mv "$tmp" "$f"
      echo "$f"
    fi
  fi
done
