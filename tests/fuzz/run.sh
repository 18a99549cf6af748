#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan, UBSan) and runs each for a
# fixed time, two at a time on two cores or more. CI runs it from
# scripts/test.sh with the default time; run it longer by hand:
#
#   tests/fuzz/run.sh                  # every target, 20 s each (CI)
#   tests/fuzz/run.sh 600              # every target, 10 minutes each
#   tests/fuzz/run.sh 3600 config      # one target, an hour
#   tests/fuzz/run.sh --build-only     # build, run nothing
#   tests/fuzz/run.sh --no-build 20    # run what is built
#   tests/fuzz/run.sh --inputs 20      # each target a fixed count of inputs:
#                                      # what it runs in 20 s on one core
#
# scripts/test.sh builds and runs the targets beside the tests, at the
# lowest CPU priority, with --inputs: the same work however busy the
# machine is, done in the time the tests leave idle.
#
# Seeds come from tests/fuzz/corpus/<target> (read only); what a run finds
# goes to $FUZZ_BUILD/corpus/<target>, kept between runs. A failure (crash,
# sanitizer report, broken property) prints the fuzzer's report and the
# saved input, and exits 1; `$FUZZ_BUILD/tests/fuzz/<target>_fuzzer FILE`
# replays it. Tunables: FUZZ_BUILD (build directory, default
# build-fuzzers), FUZZ_JOBS (targets at once, default min(2, nproc)).
set -euo pipefail
cd "$(dirname "$0")/../.."

build_step=1 run_step=1 by_inputs=0
while [[ ${1:-} == --* ]]; do
  case $1 in
    --build-only) run_step=0 ;;
    --no-build) build_step=0 ;;
    --inputs) by_inputs=1 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
seconds=${1:-20}
shift || true
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(event_decoder config trec http checkpoint)
build=${FUZZ_BUILD:-build-fuzzers}
jobs=${FUZZ_JOBS:-$(( $(nproc) < 2 ? 1 : 2 ))}

if [[ $build_step == 1 ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DRANKWATCH_FUZZ=ON \
    -DRANKWATCH_BUILD_TESTS=OFF -DRANKWATCH_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_UNITY_BUILD=ON >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
  cmake --build "$build" -j "$(nproc)" --target fuzzers
fi
[[ $run_step == 1 ]] || exit 0

# Inputs over these sizes add little: the event decoder's limit in the
# target is 4 KiB; configurations and TREC files of a few KiB reach every
# branch; the checkpoint seeds are 2 to 12 KiB.
declare -A max_len=([event_decoder]=8192 [config]=4096 [trec]=4096 [http]=1024
                    [checkpoint]=16384)
# Inputs per second on one core (a 2-vCPU Debian 12 VM, from the seeds; the
# runs of 20 s in scripts/test.sh's log before --inputs): with --inputs,
# each target runs seconds x this many inputs, and a busy machine takes
# longer rather than testing less. Sixty times the seconds caps the run
# (a single input's hang is caught at 10 s by -timeout).
# checkpoint: 22,367 runs in 21 s from its 35 seeds alone (1,065 a
# second), but 20,000 took 52 s in scripts/test.sh on an idle machine once
# the corpus had grown (larger records: 385 a second), rounded to 400.
declare -A inputs_per_second=([event_decoder]=24000 [config]=4200 [trec]=12800
                              [http]=21000 [checkpoint]=400)

run_one() {
  local t=$1
  local work="$build/corpus/$t" log="$build/fuzz-$t.log"
  mkdir -p "$work" "$build/artifacts"
  local limit=(-max_total_time="$seconds") inputs=0
  if [[ $by_inputs == 1 ]]; then
    if [[ -z ${inputs_per_second[$t]:-} ]]; then
      echo "fuzz $t: FAILED: no rate in run.sh's inputs_per_second" >&2
      return 1
    fi
    inputs=$((seconds * inputs_per_second[$t]))
    limit=(-runs="$inputs" -max_total_time=$((60 * seconds)))
  fi
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$build/tests/fuzz/${t}_fuzzer" "${limit[@]}" \
       -max_len="${max_len[$t]:-4096}" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
       "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    local done_line runs
    done_line=$(grep -m1 -o 'Done [0-9]* runs in [0-9]* second(s)' "$log" || true)
    echo "fuzz $t: $done_line"
    # With --inputs, the cap cut the run short: it tested less, not longer.
    runs=$(grep -o '[0-9][0-9]*' <<<"$done_line" | head -n 1)
    if ((inputs > 0 && ${runs:-0} < inputs)); then
      echo "fuzz $t: FAILED: ${runs:-0} of $inputs inputs within the cap of $((60 * seconds)) s" >&2
      return 1
    fi
  else
    echo "fuzz $t: FAILED (log $log)" >&2
    tail -n 60 "$log" >&2
    return 1
  fi
}

pids=()
failed=0
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [[ ${#pids[@]} -ge $jobs ]]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit "$failed"
