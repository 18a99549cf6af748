// Constants the stream tests share (test-only; not part of the library).
#ifndef RANKWATCH_DAEMON_STREAM_STREAM_TEST_UTIL_H_
#define RANKWATCH_DAEMON_STREAM_STREAM_TEST_UTIL_H_

#include <cstdint>

#include "metrics/measures.h"

namespace rankwatch::stream {

// The tests' "now": 2025-11-22, epoch ms.
inline constexpr int64_t kNow = 1'763'800'000'000;

// A rank no judge labelled, as the tests write grades per rank.
inline constexpr metrics::Grade U = metrics::kUnjudged;

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_STREAM_TEST_UTIL_H_
