#!/usr/bin/env bash
# Fails when a C++ file differs from clang-format's output (.clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  '*.h' '*.cc' | while read -r f; do [[ -f "$f" ]] && echo "$f"; done)
clang-format --dry-run -Werror "${files[@]}"
