// Proves that a warmed-up EventDecoder allocates nothing per event.
//
// Replaces the global operator new/delete of the whole test binary with
// counting versions built on malloc/free. Counting is off except inside the
// measured loop, so other tests in the binary are unaffected.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "daemon/stream/decode/event_decoder.h"
#include "gtest/gtest.h"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};

void* CountedAlloc(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  return std::malloc(n == 0 ? 1 : n);
}

void* CountedAlignedAlloc(std::size_t n, std::align_val_t align) {
  if (g_counting.load(std::memory_order_relaxed)) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
  }
  const std::size_t a = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  return std::aligned_alloc(a, (n + a - 1) / a * a);
}

void* OrThrow(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

// These replacements pair malloc with free by design; GCC 12 cannot see that
// operator new here is malloc and warns where it inlines a delete (at -O1),
// anywhere in this file.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t n) { return OrThrow(CountedAlloc(n)); }
void* operator new[](std::size_t n) { return OrThrow(CountedAlloc(n)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return CountedAlloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return CountedAlloc(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return OrThrow(CountedAlignedAlloc(n, a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return OrThrow(CountedAlignedAlloc(n, a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace rankwatch::stream {
namespace {

std::string ResultsPayload(int docs, bool objects) {
  std::string p = R"({"request_id": "r-81f2", "query_id": "q-123",
      "variant": "B", "timestamp": "2025-11-22T10:00:00.123Z",
      "segments": {"locale": "de", "device": 3, "other": {"x": 1}},
      "results": [)";
  for (int i = 0; i < docs; ++i) {
    if (i > 0) p += ", ";
    const std::string id = "\"doc-\\u00e9" + std::to_string(i) + "\"";
    p += objects ? R"({"doc_id": )" + id + R"(, "score": 1.5})" : id;
  }
  return p + "]}";
}

std::string BatchPayload(int judgments) {
  std::string p = R"({"request_id": "r-81f2", "timestamp": 1763805612000,
                      "judgments": [)";
  for (int i = 0; i < judgments; ++i) {
    if (i > 0) p += ", ";
    p += R"({"doc_id": "d)" + std::to_string(i) + R"(", "relevance": )" +
         (i % 3 == 0 ? std::string("null") : std::to_string(i % 4)) + "}";
  }
  return p + "]}";
}

TEST(DecoderAllocationTest, WarmDecoderDoesNotAllocate) {
  // 2026-01-01T00:00:00Z: every event below is in the past.
  const FakeClock clock(1767225600000);
  EventDecoder decoder(config::SchemaConfig(), config::EventLimitsConfig(),
                       config::JoinMode::kImpression, {"locale", "device"},
                       &clock);
  const std::vector<std::string> results = {
      ResultsPayload(10, true), ResultsPayload(1, false),
      ResultsPayload(1000, true), ResultsPayload(50, false),
      ResultsPayload(3, true)};
  const std::vector<std::string> judgments = {
      R"({"request_id": "r-81f2", "doc_id": "d7", "relevance": 2,
          "timestamp": 1763805612000})",
      BatchPayload(100), BatchPayload(2),
      R"({"request_id": 5, "doc_id": 7, "relevance": 2.0})"};
  ResultsEvent results_event;
  JudgmentEvent judgment_event;
  bool all_ok = true;
  // The Kafka timestamp, for the event without a field: within the
  // default events.min_timestamp (2010) and the clock
  // (date -u -d @1763805612 -> 2025-11-22T10:00:12Z).
  constexpr int64_t kRecordTime = 1763805612000;
  const auto decode_all = [&] {
    for (const std::string& p : results) {
      all_ok &= decoder.DecodeResults(p, kRecordTime, &results_event).ok();
    }
    for (const std::string& p : judgments) {
      all_ok &= decoder.DecodeJudgments(p, kRecordTime, &judgment_event).ok();
    }
  };
  decode_all();  // Warm-up: buffers grow to the largest event.
  ASSERT_TRUE(all_ok);

  g_allocations = 0;
  g_counting = true;
  for (int round = 0; round < 200; ++round) decode_all();
  g_counting = false;
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_EQ(judgment_event.judgments.size(), 1u);  // The last event.

  // The counter does count: a rejection allocates its detail.
  g_counting = true;
  const DecodeStatus rejected =
      decoder.DecodeResults(R"({"request_id": ""})", 1, &results_event);
  g_counting = false;
  EXPECT_FALSE(rejected.ok());
  EXPECT_GT(g_allocations.load(), 0);
}

// Nested paths (the UBI preset) are read without allocating too, and so
// are the teams of interleaved hit ids (schema.teams).
TEST(DecoderAllocationTest, WarmUbiDecoderDoesNotAllocate) {
  const FakeClock clock(1767225600000);
  config::SchemaConfig schema = config::UbiSchema();
  schema.segments = "query_attributes";
  schema.variant = "query_attributes.experiment.variant";
  schema.unit = "client_id";
  schema.teams = "query_attributes.teams";
  EventDecoder decoder(schema, config::EventLimitsConfig(),
                       config::JoinMode::kImpression, {"page"}, &clock,
                       DecodeRules{{{"ab", "il", {"A", "B"}}}, {}});
  const std::string query =
      R"({"query_id": "q-1", "client_id": "c-1", "user_query": "laptop",
          "query_attributes": {"page": 1, "experiment": {"variant": "B"}},
          "query_response_hit_ids": ["a", "b", "c"],
          "timestamp": "2025-01-23T13:18:22.274+0000"})";
  std::string interleaved =
      R"({"query_id": "q-2", "client_id": "c-1", "user_query": "laptop",
          "query_attributes": {"experiment": {"variant": "il"}, "teams": [)";
  for (int i = 0; i < 50; ++i) interleaved += i == 0 ? "\"B\"" : ", \"A\"";
  interleaved +=
      R"(]}, "timestamp": 1737638302274, "query_response_hit_ids": [)";
  for (int i = 0; i < 50; ++i) {
    interleaved += (i == 0 ? "\"d" : ", \"d") + std::to_string(i) + "\"";
  }
  interleaved += "]}";
  const std::vector<std::string> events = {
      R"({"action_name": "click", "query_id": "q-1", "timestamp":
          "2025-01-23T13:18:30", "event_attributes": {"object":
          {"object_id": "b"}, "position": {"ordinal": 2}}})",
      R"({"action_name": "view", "query_id": "q-1", "timestamp":
          1737638310000, "event_attributes": {"position": null}})"};
  ResultsEvent results_event;
  JudgmentEvent judgment_event;
  bool all_ok = true;
  const auto decode_all = [&] {
    all_ok &= decoder.DecodeResults(interleaved, -1, &results_event).ok();
    all_ok &= decoder.DecodeResults(query, -1, &results_event).ok();
    for (const std::string& p : events) {
      all_ok &= decoder.DecodeJudgments(p, -1, &judgment_event).ok();
    }
  };
  decode_all();
  ASSERT_TRUE(all_ok);
  g_allocations = 0;
  g_counting = true;
  for (int round = 0; round < 200; ++round) decode_all();
  g_counting = false;
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(g_allocations.load(), 0);
  // Views last until the next decode: decode the query again to look.
  ASSERT_TRUE(decoder.DecodeResults(query, -1, &results_event).ok());
  EXPECT_EQ(results_event.variant, "B");
  EXPECT_EQ(results_event.interleaving, -1);
  ASSERT_TRUE(decoder.DecodeResults(interleaved, -1, &results_event).ok());
  EXPECT_EQ(results_event.interleaving, 0);
  ASSERT_EQ(results_event.teams.size(), 50u);
  EXPECT_EQ(results_event.teams[0], 1);   // "B"
  EXPECT_EQ(results_event.teams[49], 0);  // "A"
}

// schema.covariate, flat and nested, in each of its outcomes (a number,
// a string, 1e999, null, absent) is read without allocating.
TEST(DecoderAllocationTest, WarmCovariateDecoderDoesNotAllocate) {
  const FakeClock clock(1767225600000);
  for (const char* path : {"pre_ndcg", "pre.stats.ndcg"}) {
    SCOPED_TRACE(path);
    config::SchemaConfig schema;
    schema.covariate = path;
    const bool nested = std::string_view(path).find('.') != std::string::npos;
    EventDecoder decoder(schema, config::EventLimitsConfig(),
                         config::JoinMode::kImpression, {}, &clock);
    std::vector<std::string> events;
    for (const char* value : {"0.625", R"("NaN")", "1e999", "null", ""}) {
      std::string field;
      if (*value != '\0') {
        field = nested ? std::string(R"(, "pre": {"stats": {"ndcg": )") +
                             value + "}}"
                       : std::string(R"(, "pre_ndcg": )") + value;
      }
      events.push_back(R"({"request_id": "r-1", "timestamp": 1763805612000, )"
                       R"("results": ["a", "b"])" +
                       field + "}");
    }
    ResultsEvent results_event;
    bool all_ok = true;
    const auto decode_all = [&] {
      for (const std::string& p : events) {
        all_ok &= decoder.DecodeResults(p, -1, &results_event).ok();
      }
    };
    decode_all();
    ASSERT_TRUE(all_ok);
    g_allocations = 0;
    g_counting = true;
    for (int round = 0; round < 200; ++round) decode_all();
    g_counting = false;
    EXPECT_TRUE(all_ok);
    EXPECT_EQ(g_allocations.load(), 0);
    ASSERT_TRUE(decoder.DecodeResults(events[0], -1, &results_event).ok());
    EXPECT_EQ(results_event.covariate, 0.625);
  }
}

}  // namespace
}  // namespace rankwatch::stream
