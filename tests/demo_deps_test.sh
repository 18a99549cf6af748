#!/usr/bin/env bash
# `scripts/demo.sh` installs `scripts/install-deps.sh --demo` only (issue 25,
# item 7): not the JDK, Maven, Chromium, Node.js, clang or the test
# libraries. This checks that the demo's build (Release, no tests, no
# benchmarks) configures with the test-only CMake packages disabled, and
# that nothing it found belongs to a package the demo list leaves out.
#
#   tests/demo_deps_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "${1:?usage: demo_deps_test.sh SOURCE_DIR}" && pwd)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

mapfile -t all < <(bash "$src/scripts/install-deps.sh" --list)
mapfile -t demo < <(bash "$src/scripts/install-deps.sh" --list --demo)
declare -A in_demo=() in_all=() test_only=()
for p in "${demo[@]}"; do in_demo[$p]=1; done
for p in "${all[@]}"; do
  in_all[$p]=1
  [[ -n ${in_demo[$p]:-} ]] || test_only[$p]=1
done
# The demo list is part of the full one, and leaves the heavy test tools out.
for p in "${demo[@]}"; do
  [[ -n ${in_all[$p]:-} ]] ||
    { echo "FAIL: $p is in the demo list but not in the full list"; exit 1; }
done
for p in openjdk-17-jre-headless maven chromium nodejs clang libgtest-dev \
  libbenchmark-dev prometheus-alertmanager kcat; do
  [[ -n ${test_only[$p]:-} ]] ||
    { echo "FAIL: the demo list installs $p, which only the tests need"; exit 1; }
done
[[ $(bash "$src/scripts/install-deps.sh" --list --demo --prometheus | tail -n 1) == prometheus ]] ||
  { echo "FAIL: --demo --prometheus does not add prometheus"; exit 1; }

if ! cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DRANKWATCH_BUILD_TESTS=OFF -DRANKWATCH_BUILD_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON >"$build/configure.log" 2>&1; then
  cat "$build/configure.log"
  echo "FAIL: the demo's build needs a test-only package to configure"
  exit 1
fi
# What the configure step found: package config folders, libraries, tools.
checked=0
while IFS= read -r path; do
  case $path in
    */cmake/* | *.so | *.a | /usr/bin/*) ;;
    *) continue ;;
  esac
  # The path itself first: a library's .so link belongs to its -dev
  # package, the file it points to to the runtime one. A path of several
  # packages reads "pkgA, pkgB: path"; an architecture suffix ":amd64" is
  # dropped.
  owners=$(dpkg -S "$path" 2>/dev/null | head -n 1 | sed 's/: .*//') || true
  [[ -n $owners ]] || owners=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -n 1 | sed 's/: .*//') || true
  [[ -n $owners ]] || continue
  checked=$((checked + 1))
  IFS=',' read -r -a list <<<"$owners"
  for owner in "${list[@]}"; do
    owner=${owner// /}
    owner=${owner%%:*}
    if [[ -n ${test_only[$owner]:-} ]]; then
      echo "FAIL: the demo's build uses $path from $owner, which install-deps.sh --demo does not install"
      exit 1
    fi
  done
done < <(grep -E '^[A-Za-z0-9_+.-]+:(FILEPATH|PATH)=/usr/' "$build/CMakeCache.txt" | cut -d= -f2 | sort -u)
[[ $checked -ge 10 ]] || { echo "FAIL: only $checked paths checked"; exit 1; }
echo "demo dependencies: ${#demo[@]} packages of ${#all[@]}; $checked paths the demo's build found checked"
