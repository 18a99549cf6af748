#!/usr/bin/env bash
# docs/conventions.md stays true about which code has no test of its own:
# every source file of the product (not tests/ or bench/) without an
# x_test.cc beside it is named in its "Code without a test of its own name"
# paragraph, and every file named there still has none.
#
#   cmake/untested_files_test.sh <source dir>
set -uo pipefail

src=${1:?usage: untested_files_test.sh <source dir>}
cd "$src" || exit 2
doc=docs/conventions.md
# The paragraph: from its title to the line naming this script.
section=$(awk '/\*\*Code without a test of its own name\.\*\*/ { on = 1 }
               on { print }
               on && /untested_files_test\.sh/ { exit }' "$doc")
if [[ -z "$section" ]]; then
  echo "FAILED: $doc has no 'Code without a test of its own name' paragraph" >&2
  exit 1
fi
failed=0
untested=()
while IFS= read -r f; do
  case $f in *_test.cc | tests/* | bench/*) continue ;; esac
  [[ -f "${f%.cc}_test.cc" ]] || untested+=("$f")
done < <(git ls-files -co --exclude-standard '*.cc' | sort -u)
for f in "${untested[@]}"; do
  # Named by its path under its library's folder (`cli/signals.cc`) or,
  # for the HTTP server's files, its name.
  if ! grep -qF "$(basename "$f")\`" <<<"$section"; then
    b=$(basename "$f" .cc)
    echo "FAILED: $f has no ${b}_test.cc and $doc does not name it" >&2
    failed=1
  fi
done
# The other way: a file the paragraph names that has its own test now.
while IFS= read -r named; do
  while IFS= read -r f; do
    [[ -f "$f" ]] || continue
    if [[ -f "${f%.cc}_test.cc" ]]; then
      echo "FAILED: $doc lists $f, which has ${f%.cc}_test.cc" >&2
      failed=1
    fi
  done < <(git ls-files -co --exclude-standard "*/$named" "$named" |
             grep -v '^tests/\|^bench/')
done < <(grep -oE '`[a-z_/]+\.cc`' <<<"$section" | tr -d '`' |
           grep -v '_test\.cc$' | xargs -n1 basename | sort -u)
if [[ $failed -eq 0 ]]; then
  echo "ok: ${#untested[@]} files without a test of their own, all named in $doc"
fi
exit "$failed"
