// libFuzzer target: the JSON event decoder
// (daemon/stream/decode/event_decoder.h), on results and judgment events, in
// both join modes, with small limits so that inputs reach them. Properties
// beyond "no crash": a decoded event stays within events.* limits (ids no
// longer than max_id_length, lists within max_results / max_judgments, the
// payload within max_event_bytes, the time within its bounds, no duplicate
// doc), holds the ids its mode requires, and decoding again with the same
// decoder gives the same event.
//
// Input: byte 0 picks the event kind, the join mode and whether a
// randomization unit is configured; the rest is the payload.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "config/config.h"
#include "daemon/stream/decode/event_decoder.h"
#include "tests/fuzz/fuzz_check.h"

namespace rankwatch::stream {
namespace {

constexpr int64_t kNowMs = 1'700'000'000'000;  // 2023-11-14T22:13:20Z.

config::EventLimitsConfig Limits() {
  config::EventLimitsConfig limits;
  limits.max_results = 8;
  limits.max_id_length = 16;
  limits.max_judgments = 4;
  limits.max_event_bytes = 4096;
  limits.min_timestamp_ms = 0;
  return limits;
}

bool IdFits(std::string_view id, const config::EventLimitsConfig& limits) {
  return !id.empty() && static_cast<int64_t>(id.size()) <= limits.max_id_length;
}

void CheckTime(int64_t ms, const config::EventLimitsConfig& limits) {
  FUZZ_CHECK(ms >= limits.min_timestamp_ms);
  const int64_t skew = std::chrono::duration_cast<std::chrono::milliseconds>(
                           limits.max_future_skew)
                           .count();
  FUZZ_CHECK(ms <= kNowMs + skew);
}

void CheckResults(const ResultsEvent& e, config::JoinMode mode,
                  const config::EventLimitsConfig& limits, size_t labels) {
  if (mode == config::JoinMode::kImpression) {
    FUZZ_CHECK(IdFits(e.request_id, limits));
  } else {
    FUZZ_CHECK(IdFits(e.query_id, limits));
  }
  FUZZ_CHECK(static_cast<int64_t>(e.request_id.size()) <= limits.max_id_length);
  FUZZ_CHECK(static_cast<int64_t>(e.query_id.size()) <= limits.max_id_length);
  FUZZ_CHECK(!e.variant.empty() &&
             static_cast<int64_t>(e.variant.size()) <= limits.max_id_length);
  FUZZ_CHECK(!e.doc_ids.empty());
  FUZZ_CHECK(static_cast<int64_t>(e.doc_ids.size()) <= limits.max_results);
  std::set<std::string_view> distinct;
  for (std::string_view d : e.doc_ids) {
    FUZZ_CHECK(IdFits(d, limits));
    FUZZ_CHECK(distinct.insert(d).second);
  }
  FUZZ_CHECK(e.segment_values.size() == labels);
  for (std::string_view v : e.segment_values) {
    FUZZ_CHECK(static_cast<int64_t>(v.size()) <= limits.max_id_length);
  }
  FUZZ_CHECK(static_cast<int64_t>(e.unit.size()) <= limits.max_id_length);
  CheckTime(e.timestamp_ms, limits);
}

void CheckJudgments(const JudgmentEvent& e, config::JoinMode mode,
                    const config::EventLimitsConfig& limits) {
  if (mode == config::JoinMode::kImpression) {
    FUZZ_CHECK(IdFits(e.request_id, limits));
  } else {
    FUZZ_CHECK(IdFits(e.query_id, limits));
  }
  FUZZ_CHECK(!e.judgments.empty());
  FUZZ_CHECK(static_cast<int64_t>(e.judgments.size()) <= limits.max_judgments);
  for (const Judgment& j : e.judgments) FUZZ_CHECK(IdFits(j.doc_id, limits));
  CheckTime(e.timestamp_ms, limits);
}

// The decoded event as text, to compare two decodings.
std::string Snapshot(const ResultsEvent& e) {
  std::string s = std::string(e.request_id) + '\x1f' + std::string(e.query_id) +
                  '\x1f' + std::string(e.variant) + '\x1f' +
                  std::to_string(e.timestamp_ms) + '\x1f' +
                  std::string(e.unit) + '\x1f' + std::to_string(e.unit_hash);
  for (std::string_view d : e.doc_ids) s += '\x1e' + std::string(d);
  for (std::string_view v : e.segment_values) s += '\x1d' + std::string(v);
  return s;
}

std::string Snapshot(const JudgmentEvent& e) {
  std::string s = std::string(e.request_id) + '\x1f' + std::string(e.query_id) +
                  '\x1f' + std::to_string(e.timestamp_ms);
  for (const Judgment& j : e.judgments) {
    s += '\x1e' + std::string(j.doc_id) + '=' +
         (j.grade ? std::to_string(*j.grade) : "null");
  }
  return s;
}

}  // namespace
}  // namespace rankwatch::stream

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rankwatch;
  using namespace rankwatch::stream;
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const std::string_view payload(reinterpret_cast<const char*>(data + 1),
                                 size - 1);
  const config::JoinMode mode = (selector & 2) != 0
                                    ? config::JoinMode::kQrels
                                    : config::JoinMode::kImpression;
  config::SchemaConfig schema;
  if ((selector & 4) != 0) schema.unit = "user_id";
  if ((selector & 8) != 0) schema.default_relevance = 1;
  const config::EventLimitsConfig limits = Limits();
  const std::vector<std::string> labels = {"locale", "device"};
  static const FakeClock clock(kNowMs);
  // Variant "I" interleaves teams A and B; kind "label" is no click.
  EventDecoder decoder(schema, limits, mode, labels, &clock,
                       DecodeRules{{{"x", "I", {"A", "B"}}}, {"label"}});
  // A fallback time (the Kafka record's) for half the inputs.
  const std::optional<int64_t> fallback =
      (selector & 16) != 0 ? std::optional<int64_t>(kNowMs) : std::nullopt;

  if ((selector & 1) == 0) {
    ResultsEvent event;
    const DecodeStatus s = decoder.DecodeResults(payload, fallback, &event);
    if (static_cast<int64_t>(payload.size()) > limits.max_event_bytes) {
      FUZZ_CHECK(!s.ok());
    }
    if (!s.ok()) {
      FUZZ_CHECK(!s.detail.empty());
      return 0;
    }
    CheckResults(event, mode, limits, labels.size());
    // Interleaved lists have a team per result, others none.
    FUZZ_CHECK(event.interleaving == (event.variant == "I" ? 0 : -1));
    FUZZ_CHECK(event.teams.size() ==
               (event.interleaving == 0 ? event.doc_ids.size() : 0));
    for (uint8_t t : event.teams) FUZZ_CHECK(t <= 1);
    const std::string first = Snapshot(event);
    ResultsEvent again;
    FUZZ_CHECK(decoder.DecodeResults(payload, fallback, &again).ok());
    FUZZ_CHECK(Snapshot(again) == first);
  } else {
    JudgmentEvent event;
    const DecodeStatus s = decoder.DecodeJudgments(payload, fallback, &event);
    if (static_cast<int64_t>(payload.size()) > limits.max_event_bytes) {
      FUZZ_CHECK(!s.ok());
    }
    if (!s.ok()) {
      FUZZ_CHECK(!s.detail.empty());
      return 0;
    }
    CheckJudgments(event, mode, limits);
    for (const Judgment& j : event.judgments) {
      FUZZ_CHECK(j.click_excluded == (j.kind == "label"));
    }
    const std::string first = Snapshot(event);
    JudgmentEvent again;
    FUZZ_CHECK(decoder.DecodeJudgments(payload, fallback, &again).ok());
    FUZZ_CHECK(Snapshot(again) == first);
  }
  return 0;
}
