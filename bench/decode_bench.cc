// Google Benchmark for stream::EventDecoder: events per second that one
// decoder (one consuming thread) turns into decoded events, with the default
// schema and limits.
//
//   BM_DecodeResults:         a results event with 10 object entries
//                             (doc_id + score), ids, a variant, an epoch-ms
//                             timestamp and two segments (559 bytes).
//   BM_DecodeResultsStrings:  the same with the 10 doc ids as plain strings.
//   BM_DecodeResultsRfc3339:  BM_DecodeResults with an RFC 3339 timestamp.
//   BM_DecodeJudgment:        a single judgment event (118 bytes).
//   BM_DecodeJudgmentBatch:   a batch of 10 judgments.
//
// OpenSearch User Behavior Insights (schema.preset: ubi, the variant at
// query_attributes.experiment, unit client_id): nested paths.
//   BM_DecodeUbiQuery:        a query record with 10 hit ids and an RFC 3339
//                             timestamp (compare BM_DecodeResultsStrings /
//                             BM_DecodeResultsRfc3339).
//   BM_DecodeUbiQueryOffset:  the same stamped "+0000" (Java's ISO 8601,
//                             rewritten into RFC 3339 before parsing).
//   BM_DecodeUbiEvent:        a click event: doc and position under
//                             event_attributes (compare BM_DecodeJudgment).
//   BM_DecodeUbiEventIgnored: a "view" event (not in schema.actions).
//
// items/s counts events; bytes/s counts payload bytes.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/clock.h"
#include "config/config.h"
#include "daemon/stream/decode/event_decoder.h"

namespace {

using rankwatch::stream::EventDecoder;
using rankwatch::stream::JudgmentEvent;
using rankwatch::stream::ResultsEvent;

constexpr int kDocs = 10;

std::string ResultsPayload(bool objects, std::string_view timestamp) {
  std::string p = R"({"request_id": "r-81f2a9c4", "query_id": "q-123456",)"
                  R"( "variant": "B", "timestamp": )";
  p.append(timestamp);
  p += R"(, "results": [)";
  for (int i = 0; i < kDocs; ++i) {
    if (i > 0) p += ", ";
    const std::string id = "\"doc-" + std::to_string(1000 + 37 * i) + "\"";
    p += objects ? R"({"doc_id": )" + id + R"(, "score": )" +
                       std::to_string(20 - i) + ".25}"
                 : id;
  }
  return p + R"(], "segments": {"locale": "de", "device": "mobile"}})";
}

std::string BatchPayload() {
  std::string p = R"({"request_id": "r-81f2a9c4", "query_id": "q-123456",)"
                  R"( "timestamp": 1763805612000, "judgments": [)";
  for (int i = 0; i < kDocs; ++i) {
    if (i > 0) p += ", ";
    p += R"({"doc_id": "doc-)" + std::to_string(1000 + 37 * i) +
         R"(", "relevance": )" + std::to_string(i % 4) + "}";
  }
  return p + "]}";
}

std::string UbiQueryPayload(std::string_view timestamp) {
  std::string p =
      R"({"query_id": "d194b734-70a4-41dc-b103-b26a56a277b5",)"
      R"( "user_query": "laptop", "application": "Chorus",)"
      R"( "client_id": "CLIENT-9a9968ac-664b-42d7-9a9e-96f412b5ab49",)"
      R"( "query_attributes": {"experiment": "B", "page": 1},)"
      R"( "timestamp": ")";
  p.append(timestamp);
  p += R"(", "query_response_hit_ids": [)";
  for (int i = 0; i < kDocs; ++i) {
    if (i > 0) p += ", ";
    p += "\"B07" + std::to_string(1000000 + 37 * i) + "\"";
  }
  return p + "]}";
}

std::string UbiEventPayload(std::string_view action) {
  return R"({"application": "Chorus", "action_name": ")" + std::string(action) +
         R"(", "query_id": "d194b734-70a4-41dc-b103-b26a56a277b5",)"
         R"( "client_id": "CLIENT-9a9968ac-664b-42d7-9a9e-96f412b5ab49",)"
         R"( "session_id": "s-81f2a9c4", "timestamp": "2025-11-22T10:00:12.345Z",)"
         R"( "message_type": "INFO", "event_attributes": {"object":)"
         R"( {"object_id": "B071000037", "object_id_field": "product"},)"
         R"( "position": {"ordinal": 2}}})";
}

EventDecoder MakeDecoder() {
  return EventDecoder(rankwatch::config::SchemaConfig(),
                      rankwatch::config::EventLimitsConfig(),
                      rankwatch::config::JoinMode::kImpression, {"locale"},
                      rankwatch::SystemClock::Get());
}

EventDecoder MakeUbiDecoder() {
  rankwatch::config::SchemaConfig schema = rankwatch::config::UbiSchema();
  schema.unit = "client_id";
  return EventDecoder(schema, rankwatch::config::EventLimitsConfig(),
                      rankwatch::config::JoinMode::kImpression, {},
                      rankwatch::SystemClock::Get());
}

// Aborts the run: a benchmark of rejections would measure the wrong thing.
void Fail(const rankwatch::stream::DecodeStatus& status) {
  std::fprintf(stderr, "decode failed: %s\n", status.detail.c_str());
  std::abort();
}

void DecodeResults(benchmark::State& state, const std::string& payload,
                   EventDecoder decoder = MakeDecoder()) {
  ResultsEvent event;
  for (auto _ : state) {
    rankwatch::stream::DecodeStatus status =
        decoder.DecodeResults(payload, std::nullopt, &event);
    if (!status.ok()) Fail(status);
    benchmark::DoNotOptimize(event.doc_ids.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(payload.size()));
  state.counters["payload_bytes"] = static_cast<double>(payload.size());
}

void DecodeJudgments(benchmark::State& state, const std::string& payload,
                     EventDecoder decoder = MakeDecoder()) {
  JudgmentEvent event;
  for (auto _ : state) {
    rankwatch::stream::DecodeStatus status =
        decoder.DecodeJudgments(payload, std::nullopt, &event);
    if (!status.ok()) Fail(status);
    benchmark::DoNotOptimize(event.judgments.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(payload.size()));
  state.counters["payload_bytes"] = static_cast<double>(payload.size());
}

void BM_DecodeResults(benchmark::State& state) {
  DecodeResults(state, ResultsPayload(true, "1763805600123"));
}
BENCHMARK(BM_DecodeResults);

void BM_DecodeResultsStrings(benchmark::State& state) {
  DecodeResults(state, ResultsPayload(false, "1763805600123"));
}
BENCHMARK(BM_DecodeResultsStrings);

void BM_DecodeResultsRfc3339(benchmark::State& state) {
  DecodeResults(state, ResultsPayload(true, R"("2025-11-22T10:00:00.123Z")"));
}
BENCHMARK(BM_DecodeResultsRfc3339);

void BM_DecodeJudgment(benchmark::State& state) {
  DecodeJudgments(state,
                  R"({"request_id": "r-81f2a9c4", "query_id": "q-123456",)"
                  R"( "doc_id": "doc-1037", "relevance": 2,)"
                  R"( "timestamp": 1763805612000})");
}
BENCHMARK(BM_DecodeJudgment);

void BM_DecodeJudgmentBatch(benchmark::State& state) {
  DecodeJudgments(state, BatchPayload());
}
BENCHMARK(BM_DecodeJudgmentBatch);

void BM_DecodeUbiQuery(benchmark::State& state) {
  DecodeResults(state, UbiQueryPayload("2025-11-22T10:00:00.123Z"),
                MakeUbiDecoder());
}
BENCHMARK(BM_DecodeUbiQuery);

void BM_DecodeUbiQueryOffset(benchmark::State& state) {
  DecodeResults(state, UbiQueryPayload("2025-11-22T10:00:00.123+0000"),
                MakeUbiDecoder());
}
BENCHMARK(BM_DecodeUbiQueryOffset);

void BM_DecodeUbiEvent(benchmark::State& state) {
  DecodeJudgments(state, UbiEventPayload("click"), MakeUbiDecoder());
}
BENCHMARK(BM_DecodeUbiEvent);

void BM_DecodeUbiEventIgnored(benchmark::State& state) {
  DecodeJudgments(state, UbiEventPayload("view"), MakeUbiDecoder());
}
BENCHMARK(BM_DecodeUbiEventIgnored);

}  // namespace

BENCHMARK_MAIN();
