// FUZZ_CHECK: what the fuzz targets assert. A failed property prints the
// condition and its place and aborts, which libFuzzer reports as a crash and
// saves the input (crash-<sha1>) for replay: `./target crash-<sha1>`.
// Works in every build type (assert() would vanish under NDEBUG).
#ifndef RANKWATCH_TESTS_FUZZ_FUZZ_CHECK_H_
#define RANKWATCH_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                     \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

#endif  // RANKWATCH_TESTS_FUZZ_FUZZ_CHECK_H_
