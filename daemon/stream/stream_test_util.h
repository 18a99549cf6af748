// Constants the stream tests share (test-only; not part of the library).
#ifndef RANKWATCH_DAEMON_STREAM_STREAM_TEST_UTIL_H_
#define RANKWATCH_DAEMON_STREAM_STREAM_TEST_UTIL_H_

#include <cstdint>
#include <memory>

#include "base/clock.h"
#include "config/config.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "gtest/gtest.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

// The tests' "now": 2025-11-22, epoch ms.
inline constexpr int64_t kNow = 1'763'800'000'000;

// A rank no judge labelled, as the tests write grades per rank.
inline constexpr metrics::Grade U = metrics::kUnjudged;

// The pipeline of `config` on `clock` (which must outlive it); a
// configuration it refuses fails the test (and gives null).
inline std::unique_ptr<Pipeline> NewTestPipeline(const config::Config& config,
                                                 const Clock* clock) {
  auto p = Pipeline::Create(config, clock);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(p).value() : nullptr;
}

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_STREAM_TEST_UTIL_H_
