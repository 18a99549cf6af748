#!/usr/bin/env bash
# Fails when a non-test C++ file (.h, .cc) has more than 800 lines: a file
# that long holds more than one module (docs/conventions.md, "Code
# shape"). Tests (*_test.cc, *_test_util.h) may be longer: a case per
# behaviour reads better than a helper that hides the values. Run by
# scripts/test.sh beside check-format.sh; files as git sees them (tracked
# and new, not ignored), so build folders are left out.
set -euo pipefail
cd "$(dirname "$0")/.."

max_lines=800

# Over the limit today, each with a split pending; remove a line when its
# file is split. Nothing may be added here.
allowed=(
  # Split pending (issue 23): the config loader, changed by other work now.
  config/config_loader.cc
  # Split pending (issue 23): the event decoder, changed by other work now.
  daemon/stream/event_decoder.cc
)

is_allowed() {
  local f
  for f in "${allowed[@]}"; do [[ "$f" == "$1" ]] && return 0; done
  return 1
}

status=0
while read -r file; do
  [[ -f "$file" ]] || continue
  case "$file" in
    *_test.cc | *_test_util.h) continue ;;
  esac
  lines=$(wc -l <"$file")
  if ((lines > max_lines)); then
    if is_allowed "$file"; then continue; fi
    echo "check-file-size: $file has $lines lines (at most $max_lines outside tests): split it" >&2
    status=1
  elif is_allowed "$file"; then
    echo "check-file-size: $file has $lines lines now: remove it from the allow-list in $0" >&2
    status=1
  fi
done < <(git ls-files --cached --others --exclude-standard '*.h' '*.cc')
exit "$status"
