#!/usr/bin/env bash
# Fails when a function in a non-test C++ file (.cc) has more than 100
# lines: a function that long does more than one thing (docs/conventions.md,
# "Code shape"). Tests (*_test.cc) are left out, as in check-file-size.sh,
# which runs this script; files as git sees them (tracked and new, not
# ignored), so build folders are left out.
#
# The scanner (scripts/check-function-size.py) counts braces in the code
# with comments, literals and preprocessor lines blanked; its docstring says
# how it tells a function body from a class or an initializer, and that a
# length runs from the declarator's first line to the closing brace. It
# agrees with Universal Ctags' function ends on this tree. python3 is there
# wherever check-format.sh runs (Debian's clang-format depends on it).
#
# scripts/function-size-allow.txt lists the functions that may stay longer
# for now, each with the reason; an entry that is no longer needed fails
# the check, so the list only shrinks.
set -euo pipefail
cd "$(dirname "$0")/.."

files=()
while read -r file; do
  [[ -f "$file" ]] || continue
  case "$file" in
    *_test.cc) continue ;;
  esac
  files+=("$file")
done < <(git ls-files --cached --others --exclude-standard '*.cc')
python3 scripts/check-function-size.py --self-test
exec python3 scripts/check-function-size.py --max-lines 100 \
  --allow scripts/function-size-allow.txt "${files[@]}"
