// The seed of a randomized test: RANKWATCH_SEED when it is set (to repeat a
// failure), else a fresh one; SeedNote is the line the test shows with it
// (SCOPED_TRACE) so that a failure names the seed that repeats it.
// Header-only, stateless, thread-safe.
#ifndef RANKWATCH_TESTS_TESTING_TEST_SEED_H_
#define RANKWATCH_TESTS_TESTING_TEST_SEED_H_

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

namespace rankwatch::testing {

inline uint64_t TestSeed() {
  if (const char* s = std::getenv("RANKWATCH_SEED")) {
    return std::strtoull(s, nullptr, 10);
  }
  return std::random_device()();
}

inline std::string SeedNote(uint64_t seed) {
  return "seed " + std::to_string(seed) +
         " (RANKWATCH_SEED=" + std::to_string(seed) + " repeats it)";
}

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_TEST_SEED_H_
