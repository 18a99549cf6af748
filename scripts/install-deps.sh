#!/usr/bin/env bash
# Installs the Debian 12 packages rankwatch needs, skipping those already
# present. Runs apt-get as root, or through sudo.
#
#   scripts/install-deps.sh           # build, test and run (CI, developers)
#   scripts/install-deps.sh --demo    # build and run the demo only
#   scripts/install-deps.sh --demo --prometheus   # ... with demo --prometheus
#   scripts/install-deps.sh --list [--demo [--prometheus]]   # print, install nothing
#
# The demo needs the compiler and the libraries (a Release build without
# tests or benchmarks: tests/demo_deps_test.sh checks that it configures
# without the test-only packages) and curl for the commands it suggests;
# not the JDK, Maven, Chromium, Node.js or clang of the tests.
set -euo pipefail

profile=all list=0 prometheus=0
for arg in "$@"; do
  case $arg in
    --demo) profile=demo ;;
    --prometheus) prometheus=1 ;;
    --list) list=1 ;;
    *)
      echo "install-deps: unknown option '$arg' (expected --demo, --prometheus, --list)" >&2
      exit 2
      ;;
  esac
done

packages=(
  # Toolchain (usually present) and build tools.
  g++ cmake make pkg-config git
  # A compiler cache: a second build of the same sources in any clone on
  # this machine (CI after a developer's build) compiles nothing again.
  ccache
  # Libraries.
  librdkafka-dev prometheus-cpp-dev libyaml-cpp-dev libsimdjson-dev
  libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev
  libboost-math-dev libzstd-dev
  # HTTPS on the endpoint (http.tls).
  libssl-dev
  # bcrypt password hashes in http.basic_auth (libxcrypt's crypt_rn).
  libcrypt-dev
  # The demo's suggested commands.
  curl
)
if [[ $profile != demo ]]; then
  # The Python package (pip install ., scripts/python-test.sh): Python's
  # headers for the module, and venv (with ensurepip) for the test
  # command's virtual environment; pip brings the rest from PyPI
  # (python/requirements-test.txt).
  packages+=(python3-dev python3-venv)
fi
if [[ $profile == demo ]]; then
  # `demo --prometheus`: Debian's Prometheus server.
  if [[ $prometheus == 1 ]]; then packages+=(prometheus); fi
else
  packages+=(
  # openssl makes the tests' self-signed certificates.
  openssl
  # Tests and benchmarks; Ninja for scripts/test.sh's build.
  libgtest-dev libgmock-dev libbenchmark-dev clang-format zstd ninja-build
  # The fuzz targets (tests/fuzz): clang, and libFuzzer with the sanitizer
  # runtimes (a recommendation of clang that --no-install-recommends skips).
  clang libclang-rt-14-dev
  # Real peers for the end-to-end tests: Prometheus server, promtool,
  # amtool.
  prometheus prometheus-alertmanager
  # A real Kafka broker for the `realkafka` tests (scripts/kafka-server.sh):
  # a Java runtime, Maven to fetch Kafka's jars from Maven Central, and
  # kcat, a Kafka client nobody here wrote.
  openjdk-17-jre-headless maven kcat
  # The status page in a real browser (tests/status_page_test.cc): Debian's
  # Chromium, headless, driven by playwright-core from the npm registry,
  # which the test installs into ~/.cache/rankwatch on first use (pinned in
  # tests/status_page/package.json); never a downloaded browser.
  chromium nodejs
  )
  # npm: Debian's package, unless node already brings its own (NodeSource's
  # nodejs includes npm and conflicts with Debian's npm package).
  command -v npm >/dev/null || packages+=(npm)
fi
if [[ $list == 1 ]]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt_install() {
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}
# A fresh machine may have no package lists yet: update only when needed.
if ! apt_install; then
  "${sudo[@]}" apt-get update -q
  apt_install
fi
# Debian's prometheus package may start its service on :9090; rankwatch's
# tests start their own servers and need nothing running.
