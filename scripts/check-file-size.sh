#!/usr/bin/env bash
# Fails when a non-test C++ file (.h, .cc) has more than 800 lines: a file
# that long holds more than one module (docs/conventions.md, "Code
# shape"); then runs scripts/check-function-size.sh, the same rule for
# functions (at most 100 lines). Tests (*_test.cc, *_test_util.h) may be longer: a case per
# behaviour reads better than a helper that hides the values. Run by
# scripts/test.sh beside check-format.sh; files as git sees them (tracked
# and new, not ignored), so build folders are left out.
set -euo pipefail
cd "$(dirname "$0")/.."

max_lines=800

status=0
while read -r file; do
  [[ -f "$file" ]] || continue
  case "$file" in
    *_test.cc | *_test_util.h) continue ;;
  esac
  lines=$(wc -l <"$file")
  if ((lines > max_lines)); then
    echo "check-file-size: $file has $lines lines (at most $max_lines outside tests): split it" >&2
    status=1
  fi
done < <(git ls-files --cached --others --exclude-standard '*.h' '*.cc')
scripts/check-function-size.sh || status=1
exit "$status"
