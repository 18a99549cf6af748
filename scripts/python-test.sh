#!/usr/bin/env bash
# Builds the Python package as a user installs it (`pip install .`, in a
# virtual environment) and runs its pytest suite (python/tests) against
# pytrec_eval-terrier: the Python step of scripts/test.sh, which runs it
# beside ctest.
#
#   scripts/python-test.sh [BUILD_DIR]     # default: build-test
#
# A virtual environment in the build folder rather than pip's
# --break-system-packages: Debian's own Python packages stay as apt left
# them, two clones never share (or race on) one environment, and deleting
# the build folder deletes it. pip's download cache (~/.cache/pip) keeps a
# second clone's environment quick. The package builds in
# BUILD_DIR/python-build (Release, no sanitizers, through ccache, keyed on
# paths relative to the clone as scripts/test.sh's build), so a second run
# compiles nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-test}
venv=$build/python-venv
start=$SECONDS
mkdir -p "$build"
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install -r python/requirements-test.txt
echo "python-test: the environment took $((SECONDS - start)) s" >&2
step=$SECONDS
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
# --no-build-isolation: the build requirements are the environment's, so
# pip reuses the build folder instead of a fresh one in /tmp each time.
"${pip[@]}" install --no-build-isolation --no-deps \
  -C build-dir="$build/python-build" .
echo "python-test: building the package took $((SECONDS - step)) s" >&2
step=$SECONDS
# From the tests' folder: `import rankwatch` is the installed package.
(cd python/tests && "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .)
echo "python-test: pytest took $((SECONDS - step)) s; the Python step $((SECONDS - start)) s" >&2
