#include "daemon/stream/decode/event_decoder.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/random.h"
#include "base/string_index.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

using config::EventLimitsConfig;
using config::JoinMode;
using config::SchemaConfig;

constexpr std::optional<int64_t> kNoFallback = std::nullopt;

// The wall clock of the tests: 2026-01-01T00:00:00Z
// (date -u -d 2026-01-01T00:00:00Z +%s -> 1767225600).
constexpr int64_t kWallNow = 1767225600000;

// "ok", or "<reason>: <detail>", so that one EXPECT_EQ checks both.
std::string Outcome(const DecodeStatus& status) {
  if (status.ok()) return "ok";
  return std::string(RejectReasonName(*status.reason)) + ": " + status.detail;
}

std::string SimdjsonMessage(simdjson::error_code e) {
  return std::string("malformed_json: ") + simdjson::error_message(e);
}

// The default limits but events.min_timestamp at 1970-01-01T00:00:00Z:
// most cases stamp their events at small times (1 ms) to keep them short.
// The default floor, 2010, has cases of its own (DecodeTimeBoundsTest).
EventLimitsConfig AnyTime() {
  EventLimitsConfig limits;
  limits.min_timestamp_ms = 0;
  return limits;
}

// Decodes with a fresh decoder per test, its wall clock at kWallNow; keeps the
// last events for checks.
class Decoder {
 public:
  explicit Decoder(JoinMode mode = JoinMode::kImpression,
                   std::vector<std::string> segment_labels = {},
                   const SchemaConfig& schema = {},
                   const EventLimitsConfig& limits = AnyTime(),
                   DecodeRules rules = {})
      : decoder_(schema, limits, mode, std::move(segment_labels), &clock,
                 std::move(rules)) {}

  std::string Results(std::string_view payload,
                      std::optional<int64_t> fallback = kNoFallback) {
    return Outcome(decoder_.DecodeResults(payload, fallback, &results));
  }
  std::string Judgments(std::string_view payload,
                        std::optional<int64_t> fallback = kNoFallback) {
    return Outcome(decoder_.DecodeJudgments(payload, fallback, &judgments));
  }

  FakeClock clock{kWallNow};  // Before decoder_, which points to it.
  ResultsEvent results;
  JudgmentEvent judgments;

 private:
  EventDecoder decoder_;
};

std::vector<std::string> Strings(const std::vector<std::string_view>& v) {
  return {v.begin(), v.end()};
}

// ---- Names ----------------------------------------------------------------

TEST(EventsTest, NamesAreStableSnakeCase) {
  EXPECT_EQ(TopicName(Topic::kResults), "results");
  EXPECT_EQ(TopicName(Topic::kJudgments), "judgments");
  const std::vector<std::string_view> expected = {
      "malformed_json",     "too_large",        "missing_field",
      "wrong_type",         "empty_id",         "id_too_long",
      "bad_timestamp",      "empty_results",    "too_many_results",
      "duplicate_doc",      "non_finite_score", "non_integer_relevance",
      "too_many_judgments", "future_timestamp", "past_timestamp",
      "unknown_team",       "duplicate_key",    "unknown_judge"};
  ASSERT_EQ(static_cast<int>(expected.size()), kNumRejectReasons);
  for (int i = 0; i < kNumRejectReasons; ++i) {
    EXPECT_EQ(RejectReasonName(static_cast<RejectReason>(i)), expected[i]);
  }
}

// ---- Results events ---------------------------------------------------------

TEST(DecodeResultsTest, TeamsOfInterleavedVariantsOnly) {
  Decoder d(JoinMode::kImpression, {}, {}, AnyTime(),
            DecodeRules{{{"x", "I", {"A", "7"}}}, {}});
  ASSERT_EQ(
      d.Results(
          R"({"request_id": "r", "variant": "I", "timestamp": 5, "results": [
                {"doc_id": "a", "team": "7"}, {"team": "A", "doc_id": "b"},
                {"doc_id": "c", "team": 7}]})"),
      "ok");
  EXPECT_EQ(d.results.interleaving, 0);
  EXPECT_EQ(d.results.teams, (std::vector<uint8_t>{1, 0, 1}));
  // Another variant: teams are not read, whatever they say.
  ASSERT_EQ(
      d.Results(
          R"({"request_id": "r", "variant": "A", "timestamp": 5, "results": [
                {"doc_id": "a", "team": "C"}, "b"]})"),
      "ok");
  EXPECT_EQ(d.results.interleaving, -1);
  EXPECT_TRUE(d.results.teams.empty());
  // A team of the wrong type is rejected as any id would be.
  EXPECT_EQ(
      d.Results(
          R"({"request_id": "r", "variant": "I", "timestamp": 5, "results": [
                {"doc_id": "a", "team": true}]})"),
      "wrong_type: results[0].team is not a string or an integer");
}

TEST(DecodeJudgmentsTest, KindsOfEntriesAndEvents) {
  Decoder d(JoinMode::kImpression, {}, {}, AnyTime(),
            DecodeRules{{}, {"label", "llm"}});
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "kind": "label", "timestamp": 5,
                "judgments": [{"doc_id": "a", "relevance": 1},
                              {"doc_id": "b", "relevance": 1, "kind": "click"},
                              {"doc_id": "c", "relevance": 2, "kind": "llm"}]})"),
            "ok");
  ASSERT_EQ(d.judgments.judgments.size(), 3u);
  EXPECT_EQ(d.judgments.judgments[0].kind, "label");
  EXPECT_TRUE(d.judgments.judgments[0].click_excluded);
  EXPECT_EQ(d.judgments.judgments[1].kind, "click");
  EXPECT_FALSE(d.judgments.judgments[1].click_excluded);
  EXPECT_TRUE(d.judgments.judgments[2].click_excluded);
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "doc_id": "a", "timestamp": 5,
                "relevance": 1})"),
            "ok");
  EXPECT_EQ(d.judgments.judgments[0].kind, "");
  EXPECT_FALSE(d.judgments.judgments[0].click_excluded);
}

// schema.judge (issue 29): a batch entry's judge, else the event's, else
// judges.default; each resolved to its place in judges.names.
TEST(DecodeJudgmentsTest, JudgesOfEntriesAndEvents) {
  const config::JudgesConfig judges{{"human", "umbrela", "7"}, "umbrela"};
  Decoder d(JoinMode::kImpression, {}, {}, AnyTime(),
            DecodeRules{{}, {}, judges});
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "judge": "human", "timestamp": 5,
                "judgments": [{"doc_id": "a", "relevance": 1},
                              {"doc_id": "b", "relevance": 1, "judge": 7},
                              {"doc_id": "c", "relevance": 2,
                               "judge": "umbrela"}]})"),
            "ok");
  ASSERT_EQ(d.judgments.judgments.size(), 3u);
  EXPECT_EQ(d.judgments.judgments[0].judge_name, "human");
  EXPECT_EQ(d.judgments.judgments[0].judge, 0);
  EXPECT_EQ(d.judgments.judgments[1].judge_name, "7");  // An integer id.
  EXPECT_EQ(d.judgments.judgments[1].judge, 2);
  EXPECT_EQ(d.judgments.judgments[2].judge, 1);
  // Neither the entry nor the event names one: judges.default.
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "doc_id": "a", "timestamp": 5,
                "relevance": 1})"),
            "ok");
  EXPECT_EQ(d.judgments.judgments[0].judge_name, "umbrela");
  EXPECT_EQ(d.judgments.judgments[0].judge, 1);
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 5,
                "judgments": [{"doc_id": "a", "relevance": 1},
                              {"doc_id": "b", "relevance": 0,
                               "judge": "Human"}]})"),
            "unknown_judge: judgments[1].judge 'Human' is not one of "
            "judges.names (human, umbrela, 7)");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 5,
                "judgments": [{"doc_id": "a", "judge": "human",
                               "judge": "umbrela"}]})"),
            "duplicate_key: duplicate key 'judge' in judgments[0]");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 5, "doc_id": "a",
                "relevance": 1, "judge": {"name": "human"}})"),
            "wrong_type: 'judge' is not a string or an integer");

  // Without a default, a judgment must name its judge.
  Decoder strict(JoinMode::kImpression, {}, {}, AnyTime(),
                 DecodeRules{{}, {}, config::JudgesConfig{{"human"}, ""}});
  EXPECT_EQ(strict.Judgments(R"({"request_id": "r", "timestamp": 5,
                "judgments": [{"doc_id": "a", "relevance": 1,
                               "judge": "human"},
                              {"doc_id": "b", "relevance": 1}]})"),
            "missing_field: missing field 'judge' in judgments[1]");

  // Without judges the field is not read, whatever it holds.
  Decoder none(JoinMode::kImpression, {}, {}, AnyTime());
  ASSERT_EQ(none.Judgments(R"({"request_id": "r", "timestamp": 5,
                "doc_id": "a", "relevance": 1, "judge": {"name": "human"}})"),
            "ok");
  EXPECT_EQ(none.judgments.judgments[0].judge, -1);
  EXPECT_EQ(none.judgments.judgments[0].judge_name, "");
}

TEST(DecodeResultsTest, ObjectFormFromTheIssue) {
  Decoder d(JoinMode::kImpression, {"locale"});
  ASSERT_EQ(d.Results(R"({"request_id": "r-81f2", "query_id": "q-123",
      "variant": "B", "timestamp": 1763805600123,
      "results": [{"doc_id": "d7", "score": 12.1}, {"doc_id": "d3"}],
      "segments": {"locale": "de"}})"),
            "ok");
  EXPECT_EQ(d.results.request_id, "r-81f2");
  EXPECT_EQ(d.results.query_id, "q-123");
  EXPECT_EQ(d.results.variant, "B");
  EXPECT_EQ(d.results.timestamp_ms, 1763805600123);
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"d7", "d3"}));
  EXPECT_EQ(Strings(d.results.segment_values), std::vector<std::string>{"de"});
}

TEST(DecodeResultsTest, StringFormAndMixedEntries) {
  Decoder d;
  ASSERT_EQ(d.Results(R"({"request_id":"r","timestamp":1,
                          "results":["a","b","c"]})"),
            "ok");
  EXPECT_EQ(Strings(d.results.doc_ids),
            (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(d.Results(R"({"request_id":"r","timestamp":1,
                          "results":["a",{"doc_id":"b","score":-1},42]})"),
            "ok");
  EXPECT_EQ(Strings(d.results.doc_ids),
            (std::vector<std::string>{"a", "b", "42"}));
}

TEST(DecodeResultsTest, UnknownFieldsAreIgnored) {
  Decoder d;
  ASSERT_EQ(d.Results(R"({"extra": {"deep": [1, {"x": null}], "s": "\u0041"},
      "request_id": "r", "n": 1.5e3, "flag": true, "nothing": null,
      "results": [{"rank": 1, "doc_id": "d1", "meta": {"a": [true]},
                   "score": 0.5, "debug": "x"}],
      "timestamp": 5, "tail": []})"),
            "ok");
  EXPECT_EQ(Strings(d.results.doc_ids), std::vector<std::string>{"d1"});
  EXPECT_EQ(d.results.timestamp_ms, 5);
}

TEST(DecodeResultsTest, EscapesInIdsAndKeysAreUnescaped) {
  Decoder d;
  ASSERT_EQ(d.Results(R"({"request\u005fid": "r\"1\\", "timestamp": 1,
                          "results": ["d\u00e9", {"doc_id": "tab\there"}]})"),
            "ok");
  EXPECT_EQ(d.results.request_id, "r\"1\\");
  EXPECT_EQ(Strings(d.results.doc_ids),
            (std::vector<std::string>{"d\xc3\xa9", "tab\there"}));
}

TEST(DecodeResultsTest, IntegerIdsUseTheirLiteralText) {
  Decoder d;
  ASSERT_EQ(d.Results(R"({"request_id": 81, "query_id": -123 , "variant": 2,
                          "timestamp": 1, "results": [7, {"doc_id": 0}]})"),
            "ok");
  EXPECT_EQ(d.results.request_id, "81");
  EXPECT_EQ(d.results.query_id, "-123");
  EXPECT_EQ(d.results.variant, "2");
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"7", "0"}));
  // A float is not an id.
  EXPECT_EQ(d.Results(R"({"request_id": 1.5, "timestamp": 1,
                          "results": ["a"]})"),
            "wrong_type: 'request_id' is not a string or an integer");
  EXPECT_EQ(
      d.Results(R"({"request_id": "r", "timestamp": 1, "results": [1e2]})"),
      "wrong_type: results[0] is not an object, a string or an integer");
}

TEST(DecodeResultsTest, VariantDefaults) {
  Decoder d;
  ASSERT_EQ(d.Results(R"({"request_id":"r","timestamp":1,"results":["a"]})"),
            "ok");
  EXPECT_EQ(d.results.variant, "default");
  SchemaConfig schema;
  schema.default_variant = "control";
  Decoder custom(JoinMode::kImpression, {}, schema);
  ASSERT_EQ(
      custom.Results(R"({"request_id":"r","timestamp":1,"results":["a"]})"),
      "ok");
  EXPECT_EQ(custom.results.variant, "control");
}

// schema.covariate: a finite JSON number is the list's covariate; absent,
// null, a string (even "NaN" or "1.5"), a boolean, a container or a
// number no double holds leave the list without one (NaN) and never
// reject the event, each outcome named; broken JSON there is still
// malformed_json. Without schema.covariate nothing is read.
TEST(DecodeResultsTest, Covariate) {
  SchemaConfig schema;
  schema.covariate = "pre_ndcg";
  Decoder d(JoinMode::kImpression, {}, schema);
  const auto decode = [&](std::string_view value) {
    return d.Results(
        std::string(R"({"request_id":"r","timestamp":1,"results":["a"])") +
        (value.empty() ? "" : ",\"pre_ndcg\":" + std::string(value)) + "}");
  };
  ASSERT_EQ(decode("0.625"), "ok");
  EXPECT_EQ(d.results.covariate, 0.625);
  EXPECT_EQ(d.results.covariate_outcome, CovariateOutcome::kPresent);
  ASSERT_EQ(decode("-3"), "ok");
  EXPECT_EQ(d.results.covariate, -3.0);
  ASSERT_EQ(decode("2.5e-3"), "ok");
  EXPECT_EQ(d.results.covariate, 0.0025);
  const std::pair<const char*, CovariateOutcome> missing[] = {
      {"", CovariateOutcome::kAbsent},
      {"null", CovariateOutcome::kNull},
      {R"("0.5")", CovariateOutcome::kWrongType},
      {R"("NaN")", CovariateOutcome::kWrongType},
      {"true", CovariateOutcome::kWrongType},
      {"[0.5]", CovariateOutcome::kWrongType},
      {R"({"v":0.5})", CovariateOutcome::kWrongType},
      {"1e999", CovariateOutcome::kNotFinite},
      {"-1e400", CovariateOutcome::kNotFinite},
  };
  for (const auto& [value, outcome] : missing) {
    ASSERT_EQ(decode(value), "ok") << value;
    EXPECT_TRUE(std::isnan(d.results.covariate)) << value;
    EXPECT_EQ(d.results.covariate_outcome, outcome) << value;
    EXPECT_EQ(d.results.doc_ids.size(), 1u) << value;
  }
  EXPECT_EQ(CovariateOutcomeName(CovariateOutcome::kNotFinite), "not_finite");
  // NaN is not JSON: the event is broken, as it would be anywhere.
  EXPECT_EQ(decode("NaN"), SimdjsonMessage(simdjson::TAPE_ERROR));
  EXPECT_EQ(decode("01"), SimdjsonMessage(simdjson::NUMBER_ERROR));
  EXPECT_TRUE(std::isnan(d.results.covariate));  // Cleared on rejection.
  EXPECT_EQ(decode("1,\"pre_ndcg\":2"),
            "duplicate_key: duplicate key 'pre_ndcg'");
  // Without schema.covariate the field is not read.
  Decoder none;
  ASSERT_EQ(none.Results(R"({"request_id":"r","timestamp":1,)"
                         R"("results":["a"],"pre_ndcg":0.5})"),
            "ok");
  EXPECT_TRUE(std::isnan(none.results.covariate));
}

// A dotted covariate path: read in the same pass as the other nested
// fields. An object of that path alone that is null, absent or not an
// object leaves the list without a covariate; one shared with another
// field's path keeps that field's rule (wrong_type).
TEST(DecodeResultsTest, NestedCovariate) {
  SchemaConfig schema;
  schema.covariate = "pre.stats.ndcg";
  schema.variant = "pre.variant";
  Decoder d(JoinMode::kImpression, {}, schema);
  const auto decode = [&](std::string_view pre) {
    return d.Results(
        std::string(R"({"request_id":"r","timestamp":1,"results":["a"])") +
        (pre.empty() ? "" : ",\"pre\":" + std::string(pre)) + "}");
  };
  ASSERT_EQ(decode(R"({"variant":"B","stats":{"ndcg":0.4,"other":1}})"), "ok");
  EXPECT_EQ(d.results.covariate, 0.4);
  EXPECT_EQ(d.results.variant, "B");
  EXPECT_EQ(d.results.covariate_outcome, CovariateOutcome::kPresent);
  const std::pair<const char*, CovariateOutcome> missing[] = {
      {"", CovariateOutcome::kAbsent},
      {"null", CovariateOutcome::kAbsent},
      {R"({"variant":"B"})", CovariateOutcome::kAbsent},
      {R"({"stats":null})", CovariateOutcome::kAbsent},
      {R"({"stats":{"ndcg":null}})", CovariateOutcome::kNull},
      {R"({"stats":7})", CovariateOutcome::kWrongType},
      {R"({"stats":"x"})", CovariateOutcome::kWrongType},
      {R"({"stats":{"ndcg":"0.4"}})", CovariateOutcome::kWrongType},
  };
  for (const auto& [pre, outcome] : missing) {
    ASSERT_EQ(decode(pre), "ok") << pre;
    EXPECT_TRUE(std::isnan(d.results.covariate)) << pre;
    EXPECT_EQ(d.results.covariate_outcome, outcome) << pre;
  }
  // "pre" also leads to the variant: not an object is wrong_type.
  EXPECT_EQ(decode("7"), "wrong_type: 'pre' is not an object");
  EXPECT_EQ(decode(R"({"stats":tru})"),
            SimdjsonMessage(simdjson::T_ATOM_ERROR));
}

// Issue 42: a field's value outside its [min, max] (by default +-1e15, the
// widest a sum of squares cannot overflow from) is left out and counted
// out_of_range; the event is not rejected and the other fields keep theirs.
TEST(DecodeResultsTest, FieldValuesOutsideTheirRangeAreLeftOut) {
  SchemaConfig schema;
  schema.fields = {{"latency_ms", "latency_ms", false, 10},
                   {"revenue", "revenue", true, 1, -100, 1000}};
  Decoder d(JoinMode::kImpression, {}, schema);
  const auto decode = [&](std::string_view extra) {
    return d.Results(
        std::string(R"({"request_id":"r","timestamp":1,"results":["a"])") +
        std::string(extra) + "}");
  };
  ASSERT_EQ(decode(R"(,"latency_ms":1e200,"revenue":1000)"), "ok");
  EXPECT_TRUE(std::isnan(d.results.fields[0]));
  EXPECT_EQ(d.results.field_outcomes[0], CovariateOutcome::kOutOfRange);
  EXPECT_EQ(d.results.fields[1], 1000.0);  // The bounds are inclusive.
  EXPECT_EQ(d.results.field_outcomes[1], CovariateOutcome::kPresent);
  ASSERT_EQ(decode(R"(,"latency_ms":1e15,"revenue":-100.5)"), "ok");
  EXPECT_EQ(d.results.fields[0], 1e15);
  EXPECT_EQ(d.results.field_outcomes[0], CovariateOutcome::kPresent);
  EXPECT_TRUE(std::isnan(d.results.fields[1]));
  EXPECT_EQ(d.results.field_outcomes[1], CovariateOutcome::kOutOfRange);
  ASSERT_EQ(decode(R"(,"latency_ms":-1.0000001e15)"), "ok");
  EXPECT_EQ(d.results.field_outcomes[0], CovariateOutcome::kOutOfRange);
  EXPECT_EQ(CovariateOutcomeName(CovariateOutcome::kOutOfRange),
            "out_of_range");
}

// schema.fields: each field's value read as the covariate is (a finite
// number, else NaN with the outcome, never a rejection), flat or on a
// dotted path, in the fields' order; a shared object on the way to two
// fields and the covariate leaves all three without a value when it is
// not an object; a field given twice is a duplicate key.
TEST(DecodeResultsTest, ResultFields) {
  SchemaConfig schema;
  schema.covariate = "pre.x";
  schema.fields = {{"latency_ms", "latency_ms", false},
                   {"revenue", "pre.revenue", true},
                   {"depth", "pre.deep.n", true}};
  Decoder d(JoinMode::kImpression, {}, schema);
  const auto decode = [&](std::string_view extra) {
    return d.Results(
        std::string(R"({"request_id":"r","timestamp":1,"results":["a"])") +
        std::string(extra) + "}");
  };
  ASSERT_EQ(decode(R"(,"latency_ms":120.5,"pre":{"revenue":3,"x":0.5,)"
                   R"("deep":{"n":-2}})"),
            "ok");
  EXPECT_EQ(d.results.fields[0], 120.5);
  EXPECT_EQ(d.results.fields[1], 3.0);
  EXPECT_EQ(d.results.fields[2], -2.0);
  EXPECT_EQ(d.results.covariate, 0.5);
  EXPECT_TRUE(std::isnan(d.results.fields[3]));  // Not configured.
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(d.results.field_outcomes[i], CovariateOutcome::kPresent) << i;
  }
  // Each outcome, and the others' values unaffected.
  ASSERT_EQ(decode(R"(,"latency_ms":"fast","pre":{"revenue":null,)"
                   R"("deep":{"n":1e999}})"),
            "ok");
  EXPECT_TRUE(std::isnan(d.results.fields[0]));
  EXPECT_EQ(d.results.field_outcomes[0], CovariateOutcome::kWrongType);
  EXPECT_EQ(d.results.field_outcomes[1], CovariateOutcome::kNull);
  EXPECT_EQ(d.results.field_outcomes[2], CovariateOutcome::kNotFinite);
  EXPECT_EQ(d.results.covariate_outcome, CovariateOutcome::kAbsent);
  // "pre" leads to optional numbers only: not an object, none has a value.
  ASSERT_EQ(decode(R"(,"latency_ms":7,"pre":5)"), "ok");
  EXPECT_EQ(d.results.fields[0], 7.0);
  EXPECT_EQ(d.results.field_outcomes[1], CovariateOutcome::kWrongType);
  EXPECT_EQ(d.results.field_outcomes[2], CovariateOutcome::kWrongType);
  EXPECT_EQ(d.results.covariate_outcome, CovariateOutcome::kWrongType);
  ASSERT_EQ(decode(R"(,"pre":{"deep":[1]})"), "ok");
  EXPECT_EQ(d.results.field_outcomes[0], CovariateOutcome::kAbsent);
  EXPECT_EQ(d.results.field_outcomes[1], CovariateOutcome::kAbsent);
  EXPECT_EQ(d.results.field_outcomes[2], CovariateOutcome::kWrongType);
  EXPECT_EQ(d.results.covariate_outcome, CovariateOutcome::kAbsent);
  EXPECT_EQ(decode(R"(,"latency_ms":1,"latency_ms":2)"),
            "duplicate_key: duplicate key 'latency_ms'");
  EXPECT_TRUE(std::isnan(d.results.fields[0]));  // Cleared on rejection.
  EXPECT_EQ(d.results.field_outcomes[0], CovariateOutcome::kAbsent);
  // Flat schemas take the nested reader with fields: the other keys still
  // read as before.
  SchemaConfig flat;
  flat.fields = {{"latency_ms", "latency_ms", false}};
  Decoder f(JoinMode::kImpression, {}, flat);
  ASSERT_EQ(f.Results(R"({"request_id":"r","variant":"B","timestamp":1,)"
                      R"("results":["a","b"],"latency_ms":35})"),
            "ok");
  EXPECT_EQ(f.results.fields[0], 35.0);
  EXPECT_EQ(f.results.variant, "B");
  EXPECT_EQ(f.results.doc_ids.size(), 2u);
  EXPECT_EQ(f.Results(R"({"request_id":"r","timestamp":1,"results":[]})"),
            "empty_results: 'results' is empty");
}

// schema.unit: a string or integer id, hashed; null or absent falls back
// to the request id (the request is its own unit); any other type is
// rejected like a bad variant. Without schema.unit nothing is read, not
// even a key "".
TEST(DecodeResultsTest, Unit) {
  SchemaConfig schema;
  schema.unit = "user_id";
  Decoder d(JoinMode::kImpression, {}, schema);
  ASSERT_EQ(d.Results(R"({"request_id":"r","user_id":"u7","timestamp":1,)"
                      R"("results":["a"]})"),
            "ok");
  EXPECT_EQ(d.results.unit, "u7");
  EXPECT_EQ(d.results.unit_hash, HashBytes("u7"));
  ASSERT_EQ(d.Results(R"({"request_id":"r","user_id":42,"timestamp":1,)"
                      R"("results":["a"]})"),
            "ok");
  EXPECT_EQ(d.results.unit, "42");
  EXPECT_EQ(d.results.unit_hash, HashBytes("42"));
  for (const char* payload :
       {R"({"request_id":"r2","user_id":null,"timestamp":1,"results":["a"]})",
        R"({"request_id":"r2","timestamp":1,"results":["a"]})"}) {
    ASSERT_EQ(d.Results(payload), "ok") << payload;
    EXPECT_EQ(d.results.unit, "");
    EXPECT_EQ(d.results.unit_hash, HashBytes("r2"));
  }
  EXPECT_EQ(d.Results(R"({"request_id":"r","user_id":{},"timestamp":1,)"
                      R"("results":["a"]})"),
            "wrong_type: 'user_id' is not a string or an integer");
  EXPECT_EQ(d.results.unit_hash, 0u);
  Decoder none;
  ASSERT_EQ(none.Results(R"({"request_id":"r","":{},"user_id":"u",)"
                         R"("timestamp":1,"results":["a"]})"),
            "ok");
  EXPECT_EQ(none.results.unit, "");
  EXPECT_EQ(none.results.unit_hash, 0u);
}

TEST(DecodeResultsTest, SegmentsExtractOnlyConfiguredLabels) {
  Decoder d(JoinMode::kImpression, {"device", "locale", "tier", "app"});
  ASSERT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
      "segments": {"locale": "de", "other": {"nested": 1}, "tier": 3,
                   "app": true, "device": null}})"),
            "ok");
  EXPECT_EQ(Strings(d.results.segment_values),
            (std::vector<std::string>{"", "de", "3", "true"}));

  ASSERT_EQ(d.Results(R"({"request_id":"r","timestamp":1,"results":["a"]})"),
            "ok");
  EXPECT_EQ(Strings(d.results.segment_values),
            (std::vector<std::string>{"", "", "", ""}));

  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": {"lang": "de"}}})"),
            "wrong_type: segments.locale is not a string, a number or a "
            "boolean");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": ["de"]})"),
            "wrong_type: 'segments' is not an object");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": ")" +
                      std::string(513, 'x') + R"("}})"),
            "id_too_long: segments.locale is 513 bytes (max 512)");
}

TEST(DecodeResultsTest, SegmentsWithoutLabelsAreSkipped) {
  Decoder d;
  ASSERT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": "de"}})"),
            "ok");
  EXPECT_TRUE(d.results.segment_values.empty());
}

TEST(DecodeResultsTest, CustomSchemaNames) {
  SchemaConfig schema;
  schema.request_id = "rid";
  schema.query_id = "q";
  schema.variant = "arm";
  schema.timestamp = "ts";
  schema.results = "items";
  schema.doc_id = "id";
  schema.score = "s";
  schema.segments = "ctx";
  Decoder d(JoinMode::kImpression, {"country"}, schema);
  ASSERT_EQ(d.Results(R"({"rid": "r1", "q": "shoes", "arm": "treatment",
      "ts": "2025-11-22T10:00:00Z", "ctx": {"country": "fr"},
      "items": [{"id": "x", "s": 1}, {"id": "y"}],
      "request_id": "ignored", "results": "ignored"})"),
            "ok");
  EXPECT_EQ(d.results.request_id, "r1");
  EXPECT_EQ(d.results.query_id, "shoes");
  EXPECT_EQ(d.results.variant, "treatment");
  EXPECT_EQ(d.results.timestamp_ms, 1763805600000);
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(Strings(d.results.segment_values), std::vector<std::string>{"fr"});
  // Details use the configured names.
  EXPECT_EQ(d.Results(R"({"ts": 1, "items": ["a"]})"),
            "missing_field: missing field 'rid'");
  EXPECT_EQ(d.Results(R"({"rid": "r", "ts": 1, "items": [{"s": 1}]})"),
            "missing_field: missing field 'id' in items[0]");
  EXPECT_EQ(d.Results(R"({"rid": "r", "ts": 1,
                          "items": [{"id": "a", "s": "high"}]})"),
            "non_finite_score: items[0].s is not a finite number");
}

// A field read twice would be a guess between the two values: rejected,
// naming the key and the object. Keys compare unescaped (an escaped
// underscore still spells request_id).
TEST(DecodeDuplicateKeyTest, FieldsTheDecoderReadsAreRejected) {
  Decoder d(JoinMode::kImpression, {"locale"});
  EXPECT_EQ(d.Results(R"({"request_id": "r1", "request_id": "r2",
                          "timestamp": 1, "results": ["a"]})"),
            "duplicate_key: duplicate key 'request_id'");
  EXPECT_EQ(d.Results(R"({"request_id": "r1", "request\u005fid": "r2",
                          "timestamp": 1, "results": ["a"]})"),
            "duplicate_key: duplicate key 'request_id'");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1,
                          "results": ["a", "b"], "results": ["b"]})"),
            "duplicate_key: duplicate key 'results'");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1,
                          "timestamp": 2, "results": ["a"]})"),
            "duplicate_key: duplicate key 'timestamp'");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results":
                          ["a", {"doc_id": "b", "doc_id": "c"}]})"),
            "duplicate_key: duplicate key 'doc_id' in results[1]");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results":
                          [{"doc_id": "b", "score": 1, "score": 2}]})"),
            "duplicate_key: duplicate key 'score' in results[0]");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results":
                          [{"doc_id": "b", "team": "A", "team": "B"}]})"),
            "duplicate_key: duplicate key 'team' in results[0]");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": "de", "locale": "fr"}})"),
            "duplicate_key: duplicate key 'locale' in segments");

  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "doc_id": "a", "relevance": 1,
                            "relevance": 0, "timestamp": 1})"),
            "duplicate_key: duplicate key 'relevance'");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "judgments":
      [{"doc_id": "a", "relevance": 1},
       {"doc_id": "b", "relevance": 1, "relevance": 3}]})"),
            "duplicate_key: duplicate key 'relevance' in judgments[1]");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "judgments":
      [{"doc_id": "a", "doc_id": "b", "relevance": 1}]})"),
            "duplicate_key: duplicate key 'doc_id' in judgments[0]");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "judgments":
      [{"doc_id": "a", "relevance": 1, "kind": "x", "kind": "y"}]})"),
            "duplicate_key: duplicate key 'kind' in judgments[0]");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "doc_id": "a", "relevance": 1,
                            "kind": "x", "kind": "y", "timestamp": 1})"),
            "duplicate_key: duplicate key 'kind'");
}

// Keys the decoder skips unread change nothing it computes: they may
// repeat, at the top level, in entries and among unconfigured segment
// labels. So may a key of the other kind of event (doc_id in a results
// event), and the same key in two different objects.
TEST(DecodeDuplicateKeyTest, KeysNotReadMayRepeat) {
  Decoder d(JoinMode::kImpression, {"locale"});
  ASSERT_EQ(d.Results(R"({"request_id": "r", "extra": 1, "extra": [2],
                          "doc_id": "x", "doc_id": "y", "timestamp": 1,
                          "results": [{"doc_id": "a", "x": 1, "x": 2},
                                      {"doc_id": "b"}],
                          "segments": {"os": "ios", "os": "android",
                                       "locale": "de"}})"),
            "ok");
  EXPECT_EQ(d.results.request_id, "r");
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Strings(d.results.segment_values), std::vector<std::string>{"de"});
  // The segment seen in the previous event is no duplicate in this one.
  ASSERT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": "fr"}})"),
            "ok");
  EXPECT_EQ(Strings(d.results.segment_values), std::vector<std::string>{"fr"});
  // Nor after a rejection in the middle of the segments.
  ASSERT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": "de", "locale": "fr"}})"),
            "duplicate_key: duplicate key 'locale' in segments");
  ASSERT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                          "segments": {"locale": "it"}})"),
            "ok");
  EXPECT_EQ(Strings(d.results.segment_values), std::vector<std::string>{"it"});
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "results": 1,
                            "results": 2, "judgments":
                            [{"doc_id": "a", "relevance": 1, "x": 0, "x": 0}]})"),
            "ok");
  EXPECT_EQ(d.judgments.judgments.size(), 1u);
}

TEST(DecodeResultsTest, LongListsAndDuplicates) {
  std::string payload = R"({"request_id":"r","timestamp":1,"results":[)";
  for (int i = 0; i < 1000; ++i) {
    if (i > 0) payload += ',';
    payload += "\"doc-" + std::to_string(i) + "\"";
  }
  Decoder d;
  ASSERT_EQ(d.Results(payload + "]}"), "ok");
  EXPECT_EQ(d.results.doc_ids.size(), 1000u);
  EXPECT_EQ(d.results.doc_ids[999], "doc-999");
  EXPECT_EQ(d.Results(payload + R"(,"doc-500"]})"),
            "too_many_results: 'results' has more than 1000 entries");
  EventLimitsConfig limits = AnyTime();
  limits.max_results = 2000;
  Decoder big(JoinMode::kImpression, {}, {}, limits);
  EXPECT_EQ(big.Results(payload + R"(,"doc-500"]})"),
            "duplicate_doc: results[1000] repeats doc 'doc-500' of "
            "results[500]");
  // Lists after a rejection start afresh.
  ASSERT_EQ(big.Results(R"({"request_id":"r","timestamp":1,
                            "results":["doc-500","doc-1"]})"),
            "ok");
}

// Lists under 16 docs are checked for repeats by a scan, longer ones by an
// index built at the 16th doc: a repeat is found, and named with its first
// place, on either side of the switch.
TEST(DecodeResultsTest, DuplicatesAroundTheIndexThreshold) {
  Decoder d;
  const auto list = [](int n, const std::string& extra) {
    std::string payload = R"({"request_id":"r","timestamp":1,"results":[)";
    for (int i = 0; i < n; ++i) {
      payload += "\"d" + std::to_string(i) + "\",";
    }
    return payload + extra + "]}";
  };
  // 15 distinct docs, then d14 again: the scan's last place (results[15]).
  EXPECT_EQ(d.Results(list(15, R"("d14")")),
            "duplicate_doc: results[15] repeats doc 'd14' of results[14]");
  // 16 distinct docs, then d0 (the index's first key) at results[16].
  EXPECT_EQ(d.Results(list(16, R"("d0")")),
            "duplicate_doc: results[16] repeats doc 'd0' of results[0]");
  // 20 distinct docs, then d17 (inserted after the index was built).
  EXPECT_EQ(d.Results(list(20, R"("d17")")),
            "duplicate_doc: results[20] repeats doc 'd17' of results[17]");
  // Same length, same last byte, other bytes: distinct.
  ASSERT_EQ(d.Results(list(3, R"("x2")")), "ok");
  EXPECT_EQ(d.results.doc_ids.size(), 4u);
  // The index of a long list does not leak into the next lists (its d18).
  ASSERT_EQ(d.Results(list(20, R"("e0")")), "ok");
  ASSERT_EQ(d.Results(list(2, R"("d5")")), "ok");
  ASSERT_EQ(d.Results(list(17, R"("d18")")), "ok");
}

TEST(DecodeResultsTest, ViewsPointIntoTheDecoderNotThePayload) {
  Decoder d;
  std::string payload =
      R"({"request_id":"r1","timestamp":1,"results":["a",7]})";
  ASSERT_EQ(d.Results(payload), "ok");
  payload.assign(payload.size(), 'z');
  EXPECT_EQ(d.results.request_id, "r1");
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"a", "7"}));
}

TEST(DecodeResultsTest, MovedDecoderKeepsViewsAndWorks) {
  const FakeClock clock(kWallNow);
  EventDecoder first(SchemaConfig(), AnyTime(), JoinMode::kImpression, {},
                     &clock);
  ResultsEvent event;
  ASSERT_TRUE(first
                  .DecodeResults(R"({"request_id": "r\u00e9", "timestamp": 1,
                                     "results": ["a", 7]})",
                                 kNoFallback, &event)
                  .ok());
  EventDecoder second(std::move(first));
  EXPECT_EQ(event.request_id, "r\xc3\xa9");
  EXPECT_EQ(Strings(event.doc_ids), (std::vector<std::string>{"a", "7"}));
  EXPECT_TRUE(second
                  .DecodeResults(R"({"request_id": "r", "timestamp": 1,
                                     "results": ["a", "b", "a"]})",
                                 kNoFallback, &event)
                  .reason == RejectReason::kDuplicateDoc);
}

TEST(DecodeResultsTest, RejectionLeavesNoEvent) {
  Decoder d(JoinMode::kImpression, {"locale"});
  ASSERT_EQ(d.Results(R"({"request_id": "r", "query_id": "q", "variant": "B",
                          "timestamp": 1, "results": ["a", "b"],
                          "segments": {"locale": "de"}})"),
            "ok");
  // Fails after request_id and two docs were read.
  EXPECT_EQ(d.Results(R"({"request_id": "r2", "timestamp": 1,
                          "results": ["a", "b", {"doc_id": "c", "score": "x"}]})"),
            "non_finite_score: results[2].score is not a finite number");
  EXPECT_TRUE(d.results.request_id.empty());
  EXPECT_TRUE(d.results.query_id.empty());
  EXPECT_TRUE(d.results.variant.empty());
  EXPECT_EQ(d.results.timestamp_ms, 0);
  EXPECT_TRUE(d.results.doc_ids.empty());
  EXPECT_TRUE(d.results.segment_values.empty());

  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "doc_id": "a",
                            "relevance": 1, "timestamp": 1})"),
            "ok");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "judgments":
      [{"doc_id": "a", "relevance": 1}, {"doc_id": "b", "relevance": 0.5}]})"),
            "non_integer_relevance: judgments[1].relevance is not an integer");
  EXPECT_TRUE(d.judgments.request_id.empty());
  EXPECT_EQ(d.judgments.timestamp_ms, 0);
  EXPECT_TRUE(d.judgments.judgments.empty());
}

// ---- Timestamps -------------------------------------------------------------

TEST(DecodeTimestampTest, NumbersStringsAndFallback) {
  Decoder d;
  const auto with_ts = [](std::string ts) {
    return R"({"request_id": "r", "results": ["a"], "timestamp": )" + ts + "}";
  };
  ASSERT_EQ(d.Results(with_ts("1763805600123")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1763805600123);
  ASSERT_EQ(d.Results(with_ts("0")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 0);
  ASSERT_EQ(d.Results(with_ts("1763805600123.9")), "ok");  // Truncated.
  EXPECT_EQ(d.results.timestamp_ms, 1763805600123);
  ASSERT_EQ(d.Results(with_ts("1.7638056e12")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1763805600000);
  ASSERT_EQ(d.Results(with_ts(R"("2025-11-22T10:00:00.123+01:00")")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1763802000123);

  // Present: the fallback is not used.
  ASSERT_EQ(d.Results(with_ts("5"), 99), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 5);
  // Absent: the fallback is.
  const std::string no_ts = R"({"request_id": "r", "results": ["a"]})";
  ASSERT_EQ(d.Results(no_ts, 1763805600999), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1763805600999);
  EXPECT_EQ(d.Results(no_ts), "missing_field: missing field 'timestamp'");
  EXPECT_EQ(d.Results(no_ts, -1), "missing_field: missing field 'timestamp'");
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "doc_id": "a",
                            "relevance": 1})",
                        42),
            "ok");
  EXPECT_EQ(d.judgments.timestamp_ms, 42);

  const std::string bad =
      "bad_timestamp: 'timestamp' is not epoch milliseconds >= 0 nor an ISO "
      "8601 date-time";
  for (const char* ts :
       {"-1", "-0.5", "1e999", "9223372036854775808", "1e19", "true", "null",
        "[]", "{}", R"("1763805600123")", R"("yesterday")",
        R"("1969-12-31T23:59:59Z")", R"("2025-02-29T00:00:00Z")"}) {
    EXPECT_EQ(d.Results(with_ts(ts)), bad) << ts;
  }
}

// ---- Event-time bounds -----------------------------------------------------

std::string ResultsAt(std::string_view ts) {
  return R"({"request_id": "r", "query_id": "q", "variant": "B",
             "results": ["a", "b"], "segments": {"locale": "de"},
             "timestamp": )" +
         std::string(ts) + "}";
}

std::string JudgmentAt(std::string_view ts) {
  return R"({"request_id": "r", "doc_id": "a", "relevance": 1,
             "timestamp": )" +
         std::string(ts) + "}";
}

// Seconds ahead below are (ts - kWallNow) / 1000, in years of 31557600 s
// (365.25 days) to three digits:
//  9999-12-31T23:59:59Z is 253402300799000 ms
//    (date -u -d 9999-12-31T23:59:59Z +%s -> 253402300799);
//    253402300799000 - 1767225600000 = 251635075199000 ms -> 2.51635e+11 s
//    -> 7973.99 years.
//  9223372036854775807 - 1767225600000 = 9223371269629175807 ms
//    -> 9.22337e+15 s -> 2.92271e+08 years.
TEST(DecodeTimeBoundsTest, FarFutureIsRejected) {
  Decoder d;
  const std::string year_9999 =
      "future_timestamp: 'timestamp' 9999-12-31T23:59:59Z is 7.97e+03 years "
      "ahead of the wall clock (events.max_future_skew 5m)";
  const std::string int64_max =
      "future_timestamp: 'timestamp' 9223372036854775807 is 2.92e+08 years "
      "ahead of the wall clock (events.max_future_skew 5m)";
  EXPECT_EQ(d.Results(ResultsAt(R"("9999-12-31T23:59:59Z")")), year_9999);
  EXPECT_EQ(d.Judgments(JudgmentAt(R"("9999-12-31T23:59:59Z")")), year_9999);
  EXPECT_EQ(d.Results(ResultsAt("9223372036854775807")), int64_max);
  EXPECT_EQ(d.Judgments(JudgmentAt("9223372036854775807")), int64_max);
  // The same as a float: 9.2e18 truncates to 9200000000000000000 ms;
  // 9200000000000000000 - 1767225600000 = 9199998232774400000 ms, 9.2e+15
  // s, 2.91529e+08 years.
  EXPECT_EQ(
      d.Results(ResultsAt("9.2e18")),
      "future_timestamp: 'timestamp' 9200000000000000000 is 2.92e+08 years "
      "ahead of the wall clock (events.max_future_skew 5m)");
}

// kWallNow + 5m = 1767225900000 = 2026-01-01T00:05:00Z.
TEST(DecodeTimeBoundsTest, SkewBoundIsInclusive) {
  Decoder d;
  ASSERT_EQ(d.Results(ResultsAt("1767225900000")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1767225900000);
  ASSERT_EQ(d.Results(ResultsAt(R"("2026-01-01T01:05:00+01:00")")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1767225900000);
  const std::string one_ms_over =
      "future_timestamp: 'timestamp' 2026-01-01T00:05:00.001Z is 300.001 s "
      "ahead of the wall clock (events.max_future_skew 5m)";
  EXPECT_EQ(d.Results(ResultsAt("1767225900001")), one_ms_over);
  EXPECT_EQ(d.Judgments(JudgmentAt("1767225900001")), one_ms_over);
  EXPECT_EQ(d.Results(ResultsAt(R"("2026-01-01T00:05:00.001Z")")), one_ms_over);
  // Times at or before the clock are fine however old.
  ASSERT_EQ(d.Results(ResultsAt("1767225600000")), "ok");
  ASSERT_EQ(d.Results(ResultsAt("0")), "ok");
  // The bound moves with the clock.
  d.clock.Advance(1);
  ASSERT_EQ(d.Results(ResultsAt("1767225900001")), "ok");
  EXPECT_EQ(d.Results(ResultsAt("1767225900002")),
            "future_timestamp: 'timestamp' 2026-01-01T00:05:00.002Z is "
            "300.001 s ahead of the wall clock (events.max_future_skew 5m)");
}

TEST(DecodeTimeBoundsTest, ZeroSkewAcceptsUpToNow) {
  EventLimitsConfig limits;
  limits.max_future_skew = Duration(0);
  Decoder d(JoinMode::kImpression, {}, {}, limits);
  ASSERT_EQ(d.Judgments(JudgmentAt("1767225600000")), "ok");
  EXPECT_EQ(d.Judgments(JudgmentAt("1767225600001")),
            "future_timestamp: 'timestamp' 2026-01-01T00:00:00.001Z is 0.001 s "
            "ahead of the wall clock (events.max_future_skew 0s)");
}

// now + skew saturates instead of overflowing (UBSan would trap).
TEST(DecodeTimeBoundsTest, BoundSaturatesNearTheEndOfTime) {
  Decoder d;
  d.clock.Set(std::numeric_limits<int64_t>::max() - 10);
  ASSERT_EQ(d.Results(ResultsAt("9223372036854775807")), "ok");
  EXPECT_EQ(d.results.timestamp_ms, std::numeric_limits<int64_t>::max());
}

TEST(DecodeTimeBoundsTest, KafkaTimestampIsCheckedToo) {
  EventLimitsConfig limits;
  // date -u -d 2020-01-01T00:00:00Z +%s -> 1577836800
  limits.min_timestamp_ms = 1577836800000;
  Decoder d(JoinMode::kImpression, {}, {}, limits);
  const std::string no_ts = R"({"request_id": "r", "results": ["a"]})";
  const std::string judgment_no_ts =
      R"({"request_id": "r", "doc_id": "a", "relevance": 1})";
  ASSERT_EQ(d.Results(no_ts, 1767225900000), "ok");
  EXPECT_EQ(d.results.timestamp_ms, 1767225900000);
  EXPECT_EQ(d.Results(no_ts, 1767225900001),
            "future_timestamp: the Kafka timestamp 2026-01-01T00:05:00.001Z is "
            "300.001 s ahead of the wall clock (events.max_future_skew 5m)");
  EXPECT_EQ(d.Judgments(judgment_no_ts, std::numeric_limits<int64_t>::max()),
            "future_timestamp: the Kafka timestamp 9223372036854775807 is "
            "2.92e+08 years ahead of the wall clock (events.max_future_skew "
            "5m)");
  ASSERT_EQ(d.Judgments(judgment_no_ts, 1577836800000), "ok");
  EXPECT_EQ(d.Judgments(judgment_no_ts, 1577836799999),
            "past_timestamp: the Kafka timestamp 2019-12-31T23:59:59.999Z is "
            "before events.min_timestamp 2020-01-01T00:00:00Z");
  // A present field wins over the fallback and is what is checked.
  EXPECT_EQ(d.Results(ResultsAt("1577836799999"), 1767225600000),
            "past_timestamp: 'timestamp' 2019-12-31T23:59:59.999Z is before "
            "events.min_timestamp 2020-01-01T00:00:00Z");
  ASSERT_EQ(d.Results(ResultsAt("1767225600000"), 1577836799999), "ok");
}

TEST(DecodeTimeBoundsTest, BeforeMinTimestampIsRejected) {
  EventLimitsConfig limits;
  limits.min_timestamp_ms = 1577836800000;  // 2020-01-01T00:00:00Z.
  Decoder d(JoinMode::kImpression, {}, {}, limits);
  ASSERT_EQ(d.Results(ResultsAt("1577836800000")), "ok");  // Inclusive.
  ASSERT_EQ(d.Results(ResultsAt(R"("2020-01-01T00:00:00Z")")), "ok");
  // date -u -d 2019-12-31T23:59:59Z +%s -> 1577836799
  EXPECT_EQ(d.Results(ResultsAt(R"("2019-12-31T23:59:59Z")")),
            "past_timestamp: 'timestamp' 2019-12-31T23:59:59Z is before "
            "events.min_timestamp 2020-01-01T00:00:00Z");
  EXPECT_EQ(d.Judgments(JudgmentAt("0")),
            "past_timestamp: 'timestamp' 1970-01-01T00:00:00Z is before "
            "events.min_timestamp 2020-01-01T00:00:00Z");
  // A negative time stays malformed rather than early.
  EXPECT_EQ(d.Judgments(JudgmentAt("-1")),
            "bad_timestamp: 'timestamp' is not epoch milliseconds >= 0 nor an "
            "ISO 8601 date-time");
}

// The default events.min_timestamp, 2010-01-01T00:00:00Z
// (date -u -d 2010-01-01 +%s -> 1262304000), with the clock at kWallNow
// (2026-01-01T00:00:00Z).
TEST(DecodeTimeBoundsTest, DefaultFloorRejects1970And2001NotBackfills) {
  Decoder d(JoinMode::kImpression, {}, {}, EventLimitsConfig());
  ASSERT_EQ(d.Results(ResultsAt("1262304000000")), "ok");  // Inclusive.
  EXPECT_EQ(d.Results(ResultsAt("1262303999999")),
            "past_timestamp: 'timestamp' 2009-12-31T23:59:59.999Z is before "
            "events.min_timestamp 2010-01-01T00:00:00Z");
  // A week and a month (30 days) before kWallNow: 1767225600000 - 604800000 =
  // 1766620800000 (date -u -d @1766620800 -> 2025-12-25T00:00:00Z) and
  // 1767225600000 - 2592000000 = 1764633600000 (2025-12-02T00:00:00Z).
  ASSERT_EQ(d.Results(ResultsAt("1766620800000")), "ok");
  ASSERT_EQ(d.Judgments(JudgmentAt("1764633600000")), "ok");
  ASSERT_EQ(d.Results(ResultsAt(R"("2025-12-02T00:00:00Z")")), "ok");
  EXPECT_EQ(d.Judgments(JudgmentAt("0")),
            "past_timestamp: 'timestamp' 1970-01-01T00:00:00Z is before "
            "events.min_timestamp 2010-01-01T00:00:00Z");
  EXPECT_EQ(d.Results(ResultsAt(R"("2001-06-01T00:00:00Z")")),
            "past_timestamp: 'timestamp' 2001-06-01T00:00:00Z is before "
            "events.min_timestamp 2010-01-01T00:00:00Z");
}

// A ten-digit number (1e9 to 1e10 - 1) below the floor reads as January to
// April 1970 in milliseconds but as 2001 to 2286 in seconds: the detail
// asks. As milliseconds: date -u -d @1764000 -> 1970-01-21T10:00:00Z; as
// seconds: date -u -d @1764000000 -> 2025-11-24T16:00:00Z.
TEST(DecodeTimeBoundsTest, SecondsForMillisecondsAreNamed) {
  Decoder d(JoinMode::kImpression, {}, {}, EventLimitsConfig());
  const std::string seconds =
      "past_timestamp: 'timestamp' 1764000000 is 1970-01-21T10:00:00Z: "
      "seconds where milliseconds are expected? (as seconds it is "
      "2025-11-24T16:00:00Z; events.min_timestamp 2010-01-01T00:00:00Z)";
  EXPECT_EQ(d.Results(ResultsAt("1764000000")), seconds);
  EXPECT_EQ(d.Judgments(JudgmentAt("1764000000")), seconds);
  EXPECT_EQ(d.Results(ResultsAt("1764000000.75")), seconds);  // Truncated.
  EXPECT_EQ(d.Results(R"({"request_id": "r", "results": ["a"]})", 1764000000),
            "past_timestamp: the Kafka timestamp 1764000000 is "
            "1970-01-21T10:00:00Z: seconds where milliseconds are expected? "
            "(as seconds it is 2025-11-24T16:00:00Z; events.min_timestamp "
            "2010-01-01T00:00:00Z)");
  // The ends of ten digits. date -u -d @1000000 -> 1970-01-12T13:46:40Z,
  // date -u -d @1000000000 -> 2001-09-09T01:46:40Z,
  // date -u -d @9999999.999 -> 1970-04-26T17:46:39.999Z,
  // date -u -d @9999999999 -> 2286-11-20T17:46:39Z.
  EXPECT_EQ(d.Results(ResultsAt("1000000000")),
            "past_timestamp: 'timestamp' 1000000000 is 1970-01-12T13:46:40Z: "
            "seconds where milliseconds are expected? (as seconds it is "
            "2001-09-09T01:46:40Z; events.min_timestamp "
            "2010-01-01T00:00:00Z)");
  EXPECT_EQ(d.Results(ResultsAt("9999999999")),
            "past_timestamp: 'timestamp' 9999999999 is "
            "1970-04-26T17:46:39.999Z: seconds where milliseconds are "
            "expected? (as seconds it is 2286-11-20T17:46:39Z; "
            "events.min_timestamp 2010-01-01T00:00:00Z)");
  // Nine and eleven digits: no such hint (date -u -d @999999.999 ->
  // 1970-01-12T13:46:39.999Z, date -u -d @10000000 -> 1970-04-26T17:46:40Z).
  EXPECT_EQ(d.Results(ResultsAt("999999999")),
            "past_timestamp: 'timestamp' 1970-01-12T13:46:39.999Z is before "
            "events.min_timestamp 2010-01-01T00:00:00Z");
  EXPECT_EQ(d.Results(ResultsAt("10000000000")),
            "past_timestamp: 'timestamp' 1970-04-26T17:46:40Z is before "
            "events.min_timestamp 2010-01-01T00:00:00Z");
  // A date-time written out is in no wrong unit.
  EXPECT_EQ(d.Results(ResultsAt(R"("1970-01-21T10:00:00Z")")),
            "past_timestamp: 'timestamp' 1970-01-21T10:00:00Z is before "
            "events.min_timestamp 2010-01-01T00:00:00Z");
  // Above a floor set lower, the same number is an (old) valid time.
  EventLimitsConfig any = AnyTime();
  Decoder old(JoinMode::kImpression, {}, {}, any);
  ASSERT_EQ(old.Results(ResultsAt("1764000000")), "ok");
  EXPECT_EQ(old.results.timestamp_ms, 1764000000);
}

TEST(DecodeTimeBoundsTest, RejectionLeavesNoEvent) {
  Decoder d(JoinMode::kImpression, {"locale"});
  ASSERT_EQ(d.Results(ResultsAt("1")), "ok");
  ASSERT_EQ(d.results.segment_values.size(), 1u);
  EXPECT_NE(d.Results(ResultsAt(R"("9999-12-31T23:59:59Z")")), "ok");
  EXPECT_TRUE(d.results.request_id.empty());
  EXPECT_TRUE(d.results.query_id.empty());
  EXPECT_TRUE(d.results.variant.empty());
  EXPECT_EQ(d.results.timestamp_ms, 0);
  EXPECT_TRUE(d.results.doc_ids.empty());
  EXPECT_TRUE(d.results.segment_values.empty());

  ASSERT_EQ(d.Judgments(JudgmentAt("1")), "ok");
  EXPECT_NE(d.Judgments(JudgmentAt("9223372036854775807")), "ok");
  EXPECT_TRUE(d.judgments.request_id.empty());
  EXPECT_EQ(d.judgments.timestamp_ms, 0);
  EXPECT_TRUE(d.judgments.judgments.empty());
}

// ---- Judgment events --------------------------------------------------------

TEST(DecodeJudgmentsTest, SingleForm) {
  Decoder d;
  ASSERT_EQ(d.Judgments(R"({"request_id": "r-81f2", "query_id": "q-123",
      "doc_id": "d7", "relevance": 2, "timestamp": 1763805612000})"),
            "ok");
  EXPECT_EQ(d.judgments.request_id, "r-81f2");
  EXPECT_EQ(d.judgments.query_id, "q-123");
  EXPECT_EQ(d.judgments.timestamp_ms, 1763805612000);
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "d7");
  EXPECT_EQ(d.judgments.judgments[0].grade, std::optional<metrics::Grade>(2));
}

TEST(DecodeJudgmentsTest, BatchForm) {
  Decoder d;
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "judgments": [
      {"doc_id": "d7", "relevance": 2}, {"relevance": 0, "doc_id": 3, "x": 1},
      {"doc_id": "d9", "relevance": null}, {"doc_id": "d7", "relevance": -1}]})"),
            "ok");
  const std::vector<Judgment>& j = d.judgments.judgments;
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0].doc_id, "d7");
  EXPECT_EQ(j[0].grade, std::optional<metrics::Grade>(2));
  EXPECT_EQ(j[1].doc_id, "3");
  EXPECT_EQ(j[1].grade, std::optional<metrics::Grade>(0));
  EXPECT_EQ(j[2].doc_id, "d9");
  EXPECT_EQ(j[2].grade, std::nullopt);
  // Repeats are allowed; the join's combine rule decides.
  EXPECT_EQ(j[3].doc_id, "d7");
  EXPECT_EQ(j[3].grade, std::optional<metrics::Grade>(-1));
}

TEST(DecodeJudgmentsTest, BatchWinsOverSingleForm) {
  Decoder d;
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1,
      "doc_id": "single", "relevance": 3,
      "judgments": [{"doc_id": "batch", "relevance": 1}]})"),
            "ok");
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "batch");
  // The ignored pair must still be well-formed.
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1,
      "judgments": [{"doc_id": "batch", "relevance": 1}], "relevance": "x"})"),
            "non_integer_relevance: 'relevance' is not an integer");
  // An empty batch is not rescued by the single pair.
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1,
      "doc_id": "single", "relevance": 3, "judgments": []})"),
            "missing_field: 'judgments' is empty");
}

TEST(DecodeJudgmentsTest, NullRelevanceDeletes) {
  Decoder d(JoinMode::kQrels);
  ASSERT_EQ(d.Judgments(R"({"query_id": "q", "doc_id": "d",
                            "relevance": null, "timestamp": 1})"),
            "ok");
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_EQ(d.judgments.judgments[0].grade, std::nullopt);
}

TEST(DecodeJudgmentsTest, RelevanceValues) {
  Decoder d;
  const auto with_rel = [](std::string rel) {
    return R"({"request_id": "r", "timestamp": 1, "doc_id": "d",
               "relevance": )" +
           rel + "}";
  };
  const auto grade = [&d] { return d.judgments.judgments.at(0).grade; };
  ASSERT_EQ(d.Judgments(with_rel("3")), "ok");
  EXPECT_EQ(grade(), std::optional<metrics::Grade>(3));
  ASSERT_EQ(d.Judgments(with_rel("2.0")), "ok");  // Integral floats accepted.
  EXPECT_EQ(grade(), std::optional<metrics::Grade>(2));
  ASSERT_EQ(d.Judgments(with_rel("1e1")), "ok");
  EXPECT_EQ(grade(), std::optional<metrics::Grade>(10));
  ASSERT_EQ(d.Judgments(with_rel("-0.0")), "ok");
  EXPECT_EQ(grade(), std::optional<metrics::Grade>(0));
  ASSERT_EQ(d.Judgments(with_rel("-2147483648")), "ok");
  EXPECT_EQ(grade(), std::optional<metrics::Grade>(-2147483648LL));

  const std::string not_integer =
      "non_integer_relevance: 'relevance' is not an integer";
  for (const char* rel : {"1.5", "1e-1", "1e999", R"("2")", "true", "false",
                          "[2]", R"({"grade": 2})"}) {
    EXPECT_EQ(d.Judgments(with_rel(rel)), not_integer) << rel;
  }
  const std::string out_of_range =
      "non_integer_relevance: 'relevance' is out of the 32-bit integer range";
  for (const char* rel :
       {"2147483648", "-2147483649", "3e9", "99999999999999999999999"}) {
    EXPECT_EQ(d.Judgments(with_rel(rel)), out_of_range) << rel;
  }
}

TEST(DecodeJudgmentsTest, DefaultRelevance) {
  const std::string single =
      R"({"request_id": "r", "timestamp": 1, "doc_id": "d"})";
  const std::string batch = R"({"request_id": "r", "timestamp": 1,
      "judgments": [{"doc_id": "a"}, {"doc_id": "b", "relevance": 0}]})";
  Decoder strict;
  EXPECT_EQ(strict.Judgments(single),
            "missing_field: missing field 'relevance' (for events without a "
            "grade, such as clicks, set schema.default_relevance to the grade "
            "they mean)");
  EXPECT_EQ(strict.Judgments(batch),
            "missing_field: missing field 'relevance' in judgments[0] (for "
            "events without a grade, such as clicks, set "
            "schema.default_relevance to the grade they mean)");

  SchemaConfig schema;
  schema.default_relevance = 1;
  Decoder clicks(JoinMode::kImpression, {}, schema);
  ASSERT_EQ(clicks.Judgments(single), "ok");
  EXPECT_EQ(clicks.judgments.judgments.at(0).grade,
            std::optional<metrics::Grade>(1));
  ASSERT_EQ(clicks.Judgments(batch), "ok");
  EXPECT_EQ(clicks.judgments.judgments.at(0).grade,
            std::optional<metrics::Grade>(1));
  EXPECT_EQ(clicks.judgments.judgments.at(1).grade,
            std::optional<metrics::Grade>(0));
}

TEST(DecodeJudgmentsTest, CustomSchemaNames) {
  SchemaConfig schema;
  schema.query_id = "qid";
  schema.doc_id = "docno";
  schema.relevance = "grade";
  schema.judgments = "labels";
  schema.timestamp = "time";
  Decoder d(JoinMode::kQrels, {}, schema);
  ASSERT_EQ(d.Judgments(R"({"qid": 301, "time": "2025-11-22T10:00:00Z",
      "labels": [{"docno": "FBIS3-1", "grade": 1}]})"),
            "ok");
  EXPECT_EQ(d.judgments.query_id, "301");
  EXPECT_EQ(d.judgments.timestamp_ms, 1763805600000);
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "FBIS3-1");
  EXPECT_EQ(d.Judgments(R"({"qid": 301, "time": 1,
      "labels": [{"docno": "a", "grade": 1}, {"grade": 1}]})"),
            "missing_field: missing field 'docno' in labels[1]");
  EXPECT_EQ(d.Judgments(R"({"qid": 301, "time": 1})"),
            "missing_field: missing field 'docno' (or 'labels')");
}

// ---- Required fields by join mode -------------------------------------------

TEST(RequiredFieldsTest, ImpressionNeedsRequestId) {
  Decoder d(JoinMode::kImpression);
  EXPECT_EQ(d.Results(R"({"query_id": "q", "timestamp": 1,
                          "results": ["a"]})"),
            "missing_field: missing field 'request_id'");
  EXPECT_EQ(d.Judgments(R"({"query_id": "q", "timestamp": 1,
                            "doc_id": "a", "relevance": 1})"),
            "missing_field: missing field 'request_id'");
  ASSERT_EQ(
      d.Results(R"({"request_id": "r", "timestamp": 1, "results": ["a"]})"),
      "ok");
  EXPECT_TRUE(d.results.query_id.empty());
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1,
                            "doc_id": "a", "relevance": 1})"),
            "ok");
  EXPECT_TRUE(d.judgments.query_id.empty());
}

TEST(RequiredFieldsTest, QrelsNeedsQueryId) {
  Decoder d(JoinMode::kQrels);
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1,
                          "results": ["a"]})"),
            "missing_field: missing field 'query_id'");
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1,
                            "doc_id": "a", "relevance": 1})"),
            "missing_field: missing field 'query_id'");
  ASSERT_EQ(d.Results(R"({"query_id": "q", "timestamp": 1, "results": ["a"]})"),
            "ok");
  EXPECT_TRUE(d.results.request_id.empty());
  ASSERT_EQ(d.Judgments(R"({"query_id": "q", "timestamp": 1,
                            "doc_id": "a", "relevance": 1})"),
            "ok");
  EXPECT_TRUE(d.judgments.request_id.empty());
}

// ---- Every reject reason ----------------------------------------------------

struct RejectCase {
  Topic topic;
  std::string payload;
  std::string outcome;  // "<reason>: <detail>".
};

// One or more minimal payloads per reason, decoded with small limits
// (RejectTest below): max_event_bytes 200, max_results 3, max_judgments 2,
// max_id_length 8, min_timestamp 1 ms; the clock at kWallNow.
std::vector<RejectCase> RejectCases() {
  constexpr Topic R = Topic::kResults;
  constexpr Topic J = Topic::kJudgments;
  return {
      // malformed_json
      RejectCase{R, "", SimdjsonMessage(simdjson::EMPTY)},
      RejectCase{R, R"({"request_id": "r", "results": )",
                 SimdjsonMessage(simdjson::INCOMPLETE_ARRAY_OR_OBJECT)},
      RejectCase{R, R"({"request_id": "r"} x)",
                 SimdjsonMessage(simdjson::INCOMPLETE_ARRAY_OR_OBJECT)},
      RejectCase{R, R"({"request_id": "r"}})",
                 SimdjsonMessage(simdjson::TRAILING_CONTENT)},
      RejectCase{R, R"({"request_id" "r"})",
                 SimdjsonMessage(simdjson::TAPE_ERROR)},
      RejectCase{R, R"({"request_id": "r",})",
                 SimdjsonMessage(simdjson::TAPE_ERROR)},
      RejectCase{R, "{\"request_id\": \"\xff\"}",
                 SimdjsonMessage(simdjson::UTF8_ERROR)},
      RejectCase{R, R"({"request_id": "r)",
                 SimdjsonMessage(simdjson::UNCLOSED_STRING)},
      RejectCase{R, R"({"request_id": "\x"})",
                 SimdjsonMessage(simdjson::STRING_ERROR)},
      RejectCase{R, R"({"timestamp": 12x})",
                 SimdjsonMessage(simdjson::NUMBER_ERROR)},
      RejectCase{R, R"({"results": [{"doc_id": "a", "score": 1.}]})",
                 SimdjsonMessage(simdjson::NUMBER_ERROR)},
      RejectCase{J, R"({"relevance": tru})",
                 SimdjsonMessage(simdjson::T_ATOM_ERROR)},
      RejectCase{R, R"(["request_id", "r"])",
                 "malformed_json: the event is not an object"},
      RejectCase{J, R"("just a string")",
                 "malformed_json: the event is not an object"},
      // too_large
      RejectCase{R, std::string(201, ' '),
                 "too_large: event is 201 bytes (max 200)"},
      // missing_field
      RejectCase{R, R"({"timestamp": 1, "results": ["a"]})",
                 "missing_field: missing field 'request_id'"},
      RejectCase{R, R"({"request_id": "r", "timestamp": 1})",
                 "missing_field: missing field 'results'"},
      RejectCase{R, R"({"request_id": "r", "results": ["a"]})",
                 "missing_field: missing field 'timestamp'"},
      RejectCase{R,
                 R"({"request_id": "r", "timestamp": 1,
                       "results": ["a", {"score": 1}]})",
                 "missing_field: missing field 'doc_id' in results[1]"},
      RejectCase{J, R"({"request_id": "r", "timestamp": 1})",
                 "missing_field: missing field 'doc_id' (or 'judgments')"},
      RejectCase{J, R"({"request_id": "r", "timestamp": 1, "relevance": 1})",
                 "missing_field: missing field 'doc_id' (or 'judgments')"},
      RejectCase{J, R"({"request_id": "r", "timestamp": 1, "doc_id": "a"})",
                 "missing_field: missing field 'relevance' (for events "
                 "without a grade, such as clicks, set "
                 "schema.default_relevance to the grade they mean)"},
      RejectCase{J,
                 R"({"request_id": "r", "timestamp": 1,
                       "judgments": [{"relevance": 1}]})",
                 "missing_field: missing field 'doc_id' in judgments[0]"},
      RejectCase{J, R"({"request_id": "r", "timestamp": 1, "judgments": []})",
                 "missing_field: 'judgments' is empty"},
      // wrong_type
      RejectCase{R, R"({"request_id": true})",
                 "wrong_type: 'request_id' is not a string or an integer"},
      RejectCase{R, R"({"request_id": null})",
                 "wrong_type: 'request_id' is not a string or an integer"},
      RejectCase{R, R"({"request_id": ["r"]})",
                 "wrong_type: 'request_id' is not a string or an integer"},
      RejectCase{R, R"({"request_id": "r", "variant": {"name": "B"}})",
                 "wrong_type: 'variant' is not a string or an integer"},
      RejectCase{R, R"({"request_id": "r", "results": "a,b"})",
                 "wrong_type: 'results' is not an array"},
      RejectCase{R, R"({"request_id": "r", "results": {"a": 1}})",
                 "wrong_type: 'results' is not an array"},
      RejectCase{
          R, R"({"request_id": "r", "results": ["a", ["b"]]})",
          "wrong_type: results[1] is not an object, a string or an integer"},
      RejectCase{
          R, R"({"request_id": "r", "results": [null]})",
          "wrong_type: results[0] is not an object, a string or an integer"},
      RejectCase{R, R"({"request_id": "r", "results": [{"doc_id": 1.5}]})",
                 "wrong_type: results[0].doc_id is not a string or an "
                 "integer"},
      RejectCase{R, R"({"request_id": "r", "segments": "de"})",
                 "wrong_type: 'segments' is not an object"},
      RejectCase{J, R"({"request_id": "r", "judgments": {"a": 1}})",
                 "wrong_type: 'judgments' is not an array"},
      RejectCase{J, R"({"request_id": "r", "judgments": ["a"]})",
                 "wrong_type: judgments[0] is not an object"},
      RejectCase{J, R"({"request_id": "r", "doc_id": false})",
                 "wrong_type: 'doc_id' is not a string or an integer"},
      // empty_id
      RejectCase{R, R"({"request_id": ""})", "empty_id: 'request_id' is empty"},
      RejectCase{R, R"({"request_id": "r", "variant": ""})",
                 "empty_id: 'variant' is empty"},
      RejectCase{R, R"({"request_id": "r", "results": ["a", ""]})",
                 "empty_id: results[1] is empty"},
      RejectCase{R, R"({"request_id": "r", "results": [{"doc_id": ""}]})",
                 "empty_id: results[0].doc_id is empty"},
      RejectCase{J, R"({"request_id": "r", "judgments": [{"doc_id": ""}]})",
                 "empty_id: judgments[0].doc_id is empty"},
      // id_too_long (max 8 here; bytes after unescaping)
      RejectCase{R, R"({"request_id": "123456789"})",
                 "id_too_long: 'request_id' is 9 bytes (max 8)"},
      RejectCase{R, R"({"request_id": "\u00e9\u00e9\u00e9\u00e9\u00e9"})",
                 "id_too_long: 'request_id' is 10 bytes (max 8)"},
      RejectCase{R, R"({"request_id": 123456789})",
                 "id_too_long: 'request_id' is 9 bytes (max 8)"},
      RejectCase{R, R"({"request_id": "r", "results": ["a", "123456789"]})",
                 "id_too_long: results[1] is 9 bytes (max 8)"},
      RejectCase{J, R"({"request_id": "r", "doc_id": "123456789"})",
                 "id_too_long: 'doc_id' is 9 bytes (max 8)"},
      // bad_timestamp
      RejectCase{R, R"({"request_id": "r", "timestamp": "2025-11-22"})",
                 "bad_timestamp: 'timestamp' is not epoch milliseconds >= "
                 "0 nor an ISO 8601 date-time"},
      RejectCase{J, R"({"request_id": "r", "timestamp": -5})",
                 "bad_timestamp: 'timestamp' is not epoch milliseconds >= "
                 "0 nor an ISO 8601 date-time"},
      // empty_results
      RejectCase{R, R"({"request_id": "r", "results": []})",
                 "empty_results: 'results' is empty"},
      // too_many_results (max 3 here)
      RejectCase{R, R"({"request_id": "r", "results": ["a","b","c","d"]})",
                 "too_many_results: 'results' has more than 3 entries"},
      // duplicate_doc
      RejectCase{R,
                 R"({"request_id": "r",
                       "results": ["a", "b", {"doc_id": "a"}]})",
                 "duplicate_doc: results[2] repeats doc 'a' of results[0]"},
      RejectCase{R, R"({"request_id": "r", "results": [7, "7"]})",
                 "duplicate_doc: results[1] repeats doc '7' of results[0]"},
      // non_finite_score
      RejectCase{R,
                 R"({"request_id": "r",
                       "results": [{"doc_id": "a", "score": "NaN"}]})",
                 "non_finite_score: results[0].score is not a finite number"},
      RejectCase{R,
                 R"({"request_id": "r",
                       "results": ["x", {"doc_id": "a", "score": 1e999}]})",
                 "non_finite_score: results[1].score is not a finite number"},
      RejectCase{R,
                 R"({"request_id": "r",
                       "results": [{"score": null, "doc_id": "a"}]})",
                 "non_finite_score: results[0].score is not a finite number"},
      RejectCase{R,
                 R"({"request_id": "r",
                       "results": [{"doc_id": "a", "score": [1]}]})",
                 "non_finite_score: results[0].score is not a finite number"},
      // non_integer_relevance
      RejectCase{J, R"({"request_id": "r", "relevance": 1.5})",
                 "non_integer_relevance: 'relevance' is not an integer"},
      RejectCase{J,
                 R"({"request_id": "r", "judgments": [
                       {"doc_id": "a", "relevance": 1},
                       {"doc_id": "b", "relevance": "high"}]})",
                 "non_integer_relevance: judgments[1].relevance is not an "
                 "integer"},
      RejectCase{J, R"({"request_id": "r", "relevance": true})",
                 "non_integer_relevance: 'relevance' is not an integer"},
      // too_many_judgments (max 2 here)
      RejectCase{J,
                 R"({"request_id": "r", "judgments": [{"doc_id": "a",
                       "relevance": 1}, {"doc_id": "b", "relevance": 1},
                       {"doc_id": "c"}]})",
                 "too_many_judgments: 'judgments' has more than 2 "
                 "entries"},
      // future_timestamp (see DecodeTimeBoundsTest for the arithmetic)
      RejectCase{J,
                 R"({"request_id": "r", "doc_id": "a", "relevance": 1,
                       "timestamp": "9999-12-31T23:59:59Z"})",
                 "future_timestamp: 'timestamp' 9999-12-31T23:59:59Z is "
                 "7.97e+03 years ahead of the wall clock "
                 "(events.max_future_skew 5m)"},
      // past_timestamp (min_timestamp 1 ms here)
      RejectCase{R, R"({"request_id": "r", "timestamp": 0, "results": ["a"]})",
                 "past_timestamp: 'timestamp' 1970-01-01T00:00:00Z is before "
                 "events.min_timestamp 1970-01-01T00:00:00.001Z"},
      // unknown_team (variant I interleaves teams A and B here)
      RejectCase{R,
                 R"({"request_id": "r", "variant": "I", "timestamp": 5,
                       "results": [{"doc_id": "a", "team": "A"},
                       {"doc_id": "b", "team": "C"}]})",
                 "unknown_team: results[1].team 'C' is not a team of "
                 "interleaving experiment 'x' ('A' or 'B')"},
      RejectCase{R,
                 R"({"request_id": "r", "variant": "I", "timestamp": 5,
                       "results": [{"doc_id": "a", "team": "A"}, "b"]})",
                 "missing_field: missing field 'team' in results[1] "
                 "(variant 'I' is interleaved: every result needs its "
                 "team)"},
      // unknown_judge (judges human and llm here, llm by default)
      RejectCase{J,
                 R"({"request_id": "r", "timestamp": 5, "doc_id": "a",
                       "relevance": 1, "judge": "gpt"})",
                 "unknown_judge: 'judge' 'gpt' is not one of judges.names "
                 "(human, llm)"},
      // duplicate_key
      RejectCase{R,
                 R"({"request_id": "r", "timestamp": 5,
                       "results": [{"doc_id": "a", "doc_id": "b"}]})",
                 "duplicate_key: duplicate key 'doc_id' in results[0]"}};
}

void PrintTo(const RejectCase& c, std::ostream* os) {
  *os << TopicName(c.topic) << " " << c.payload;
}

class RejectTest : public ::testing::TestWithParam<RejectCase> {};

TEST_P(RejectTest, ExactReasonAndDetail) {
  EventLimitsConfig limits;
  limits.max_event_bytes = 200;
  limits.max_results = 3;
  limits.max_judgments = 2;
  limits.max_id_length = 8;
  limits.min_timestamp_ms = 1;
  Decoder d(JoinMode::kImpression, {}, {}, limits,
            DecodeRules{{{"x", "I", {"A", "B"}}},
                        {},
                        config::JudgesConfig{{"human", "llm"}, "llm"}});
  const RejectCase& c = GetParam();
  EXPECT_EQ(c.topic == Topic::kResults ? d.Results(c.payload)
                                       : d.Judgments(c.payload),
            c.outcome);
}

INSTANTIATE_TEST_SUITE_P(AllReasons, RejectTest,
                         ::testing::ValuesIn(RejectCases()));

TEST(RejectCoverageTest, EveryReasonHasACase) {
  std::set<std::string> covered;
  for (const RejectCase& c : RejectCases()) {
    covered.insert(c.outcome.substr(0, c.outcome.find(':')));
  }
  for (int i = 0; i < kNumRejectReasons; ++i) {
    const std::string name(RejectReasonName(static_cast<RejectReason>(i)));
    EXPECT_TRUE(covered.count(name)) << name;
  }
}

TEST(RejectCoverageTest, IdLengthLimitDefaultsTo512) {
  Decoder d;
  EXPECT_EQ(d.Results(R"({"request_id": ")" + std::string(600, 'r') + "\"}"),
            "id_too_long: 'request_id' is 600 bytes (max 512)");
}

// ---- Robustness (also run under ASan/UBSan in CI) ---------------------------

const std::vector<std::string>& ValidEvents() {
  static const std::vector<std::string> events = {
      R"({"request_id": "r-81f2", "query_id": "q-123", "variant": "B",
          "timestamp": 1763805600123, "results": [{"doc_id": "d7",
          "score": 12.1}, {"doc_id": "d3"}], "segments": {"locale": "de"}})",
      R"({"request_id":"r\u00e9","timestamp":"2025-11-22T10:00:00.5+01:00",
          "results":["a","b",3,{"doc_id":"c","score":-1e-3,"x":[{}]}],
          "segments":{"locale":"fr","device":true,"x":{"y":[1,2]}}})",
      R"({"request_id": "r-81f2", "query_id": "q-123", "doc_id": "d7",
          "relevance": 2, "timestamp": 1763805612000})",
      R"({"request_id":"r","query_id":7,"timestamp":1.5e12,"judgments":[
          {"doc_id":"d7","relevance":2},{"doc_id":"d8","relevance":null},
          {"doc_id":9,"relevance":1.0,"extra":"\"\\\/\b\f\n\r\t"}]})",
  };
  return events;
}

// Decodes `payload` as both kinds of event, in both modes, and checks that
// the outcome is a clean success or a clean rejection.
class RobustnessChecker {
 public:
  RobustnessChecker()
      : impression_(JoinMode::kImpression, {"locale", "device"}),
        qrels_(JoinMode::kQrels, {"locale"}) {}

  void Check(std::string_view payload) {
    for (Decoder* d : {&impression_, &qrels_}) {
      CheckOutcome(d->Results(payload), payload);
      if (d->Results(payload) == "ok") {
        ASSERT_FALSE(d->results.doc_ids.empty()) << payload;
        for (std::string_view id : d->results.doc_ids) {
          ASSERT_FALSE(id.empty()) << payload;
        }
      } else {
        ASSERT_TRUE(d->results.doc_ids.empty()) << payload;
      }
      CheckOutcome(d->Judgments(payload), payload);
      if (d->Judgments(payload) == "ok") {
        ASSERT_FALSE(d->judgments.judgments.empty()) << payload;
      } else {
        ASSERT_TRUE(d->judgments.judgments.empty()) << payload;
      }
    }
  }

 private:
  static void CheckOutcome(const std::string& outcome,
                           std::string_view payload) {
    if (outcome == "ok") return;
    const size_t colon = outcome.find(": ");
    ASSERT_NE(colon, std::string::npos) << outcome;
    ASSERT_GT(outcome.size(), colon + 2) << "empty detail for " << payload;
  }

  Decoder impression_;
  Decoder qrels_;
};

TEST(RobustnessTest, ValidEventsDecode) {
  Decoder d(JoinMode::kImpression, {"locale"});
  EXPECT_EQ(d.Results(ValidEvents()[0]), "ok");
  EXPECT_EQ(d.Results(ValidEvents()[1]), "ok");
  EXPECT_EQ(d.Judgments(ValidEvents()[2]), "ok");
  EXPECT_EQ(d.Judgments(ValidEvents()[3]), "ok");
  EXPECT_EQ(d.judgments.judgments.size(), 3u);
}

TEST(RobustnessTest, EveryPrefix) {
  RobustnessChecker checker;
  for (const std::string& event : ValidEvents()) {
    for (size_t n = 0; n < event.size(); ++n) {
      const std::string prefix = event.substr(0, n);
      ASSERT_NO_FATAL_FAILURE(checker.Check(prefix));
    }
  }
  // A strict prefix of an object is never a valid event.
  Decoder d;
  const std::string& event = ValidEvents()[0];
  for (size_t n = 0; n < event.size(); ++n) {
    EXPECT_NE(d.Results(event.substr(0, n)), "ok") << n;
  }
}

TEST(RobustnessTest, RandomByteFlips) {
  RobustnessChecker checker;
  Xoshiro256 rng(20251122);
  for (int round = 0; round < 20000; ++round) {
    std::string payload = ValidEvents()[rng.Below(ValidEvents().size())];
    const size_t flips = 1 + rng.Below(4);
    for (size_t i = 0; i < flips; ++i) {
      char& c = payload[rng.Below(payload.size())];
      // Half the time a structural or quoting character, else any byte.
      static constexpr std::string_view kStructural = "{}[]:,\"\\ 0e-.nt";
      c = rng.Below(2) == 0 ? kStructural[rng.Below(kStructural.size())]
                            : static_cast<char>(rng.Next());
    }
    ASSERT_NO_FATAL_FAILURE(checker.Check(payload)) << round;
  }
}

TEST(RobustnessTest, RandomGarbage) {
  RobustnessChecker checker;
  Xoshiro256 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string payload(rng.Below(300), '\0');
    for (char& c : payload) c = static_cast<char>(rng.Next());
    ASSERT_NO_FATAL_FAILURE(checker.Check(payload)) << round;
  }
}

TEST(RobustnessTest, DeepNesting) {
  constexpr size_t kDepth = 100000;
  const std::string arrays =
      std::string(kDepth, '[') + std::string(kDepth, ']');
  std::string objects;
  for (size_t i = 0; i < kDepth; ++i) objects += R"({"a":)";
  objects += "1" + std::string(kDepth, '}');
  RobustnessChecker checker;
  for (const std::string& deep : {arrays, objects}) {
    checker.Check(deep);
    checker.Check(std::string(deep, 0, deep.size() / 2));  // Unbalanced.
    checker.Check(R"({"request_id": "r", "timestamp": 1, "x": )" + deep +
                  R"(, "results": ["a"], "doc_id": "a", "relevance": 1})");
    checker.Check(R"({"request_id": "r", "timestamp": 1, "results": [)" + deep +
                  "]}");
    checker.Check(R"({"request_id": "r", "timestamp": 1, "results": [{"s": )" +
                  deep + R"(, "doc_id": "a"}]})");
    checker.Check(R"({"request_id": "r", "timestamp": 1, "results": ["a"],
                      "segments": {"locale": )" +
                  deep + "}}");
    checker.Check(R"({"request_id": "r", "timestamp": 1, "judgments": [)" +
                  deep + "]}");
    checker.Check(R"({"request_id": )" + deep + "}");
  }
  // Unknown deep values are skipped, not rejected.
  Decoder d;
  EXPECT_EQ(d.Results(R"({"request_id": "r", "timestamp": 1, "x": )" + arrays +
                      R"(, "results": ["a"]})"),
            "ok");
}

// ---- OpenSearch User Behavior Insights (schema.preset: ubi) ----------------

// "ignored" for DecodeStatus::Ignored(), else as Outcome().
std::string UbiOutcome(const DecodeStatus& status) {
  if (status.ok() && status.ignored) return "ignored";
  return Outcome(status);
}

// A decoder of config::UbiSchema() (written out in config_loader_test.cc)
// with `changes` applied, its clock at kWallNow.
class UbiDecoder {
 public:
  explicit UbiDecoder(const std::function<void(SchemaConfig*)>& changes = {},
                      std::vector<std::string> segment_labels = {},
                      DecodeRules rules = {})
      : decoder_(Schema(changes), AnyTime(), JoinMode::kImpression,
                 std::move(segment_labels), &clock, std::move(rules)) {}

  std::string Query(std::string_view payload) {
    return UbiOutcome(decoder_.DecodeResults(payload, kNoFallback, &results));
  }
  std::string Event(std::string_view payload) {
    return UbiOutcome(
        decoder_.DecodeJudgments(payload, kNoFallback, &judgments));
  }
  int32_t rank() const { return decoder_.claimed_position(); }

  FakeClock clock{kWallNow};
  ResultsEvent results;
  JudgmentEvent judgments;

 private:
  static SchemaConfig Schema(
      const std::function<void(SchemaConfig*)>& changes) {
    SchemaConfig s = config::UbiSchema();
    if (changes) changes(&s);
    return s;
  }
  EventDecoder decoder_;
};

// The query record of the OpenSearch documentation's UBI tutorial
// (tests/data/ubi/README.md): 20 hit ids, a "+0000" offset.
TEST(DecodeUbiTest, QueryRecordFromTheOpenSearchDocs) {
  UbiDecoder d;
  ASSERT_EQ(
      d.Query(R"({"query_response_id": "117d75fb-ea76-41dc-9d1d-1d7bba548bd8",
      "user_query": "laptop", "query_id": "d194b734-70a4-41dc-b103-b26a56a277b5",
      "application": "Chorus",
      "query_response_hit_ids": ["B076YX2LML", "B07S3T59VP", "B075ZGJSL1"],
      "query_attributes": {},
      "client_id": "CLIENT-9a9968ac-664b-42d7-9a9e-96f412b5ab49",
      "timestamp": "2025-01-23T13:18:22.274+0000"})"),
      "ok");
  EXPECT_EQ(d.results.request_id, "d194b734-70a4-41dc-b103-b26a56a277b5");
  EXPECT_EQ(d.results.query_id, "laptop");
  EXPECT_EQ(
      Strings(d.results.doc_ids),
      (std::vector<std::string>{"B076YX2LML", "B07S3T59VP", "B075ZGJSL1"}));
  // date -u -d 2025-01-23T13:18:22Z +%s -> 1737638302.
  EXPECT_EQ(d.results.timestamp_ms, 1737638302274);
  EXPECT_EQ(d.results.variant, "default");  // No query_attributes.experiment.
  EXPECT_EQ(d.results.unit, "");            // schema.unit not configured.
}

TEST(DecodeUbiTest, VariantUnitAndSegmentsFromNestedPaths) {
  UbiDecoder d(
      [](SchemaConfig* s) {
        s->variant = "query_attributes.experiment.variant";
        s->segments = "query_attributes";
        s->unit = "client_id";
      },
      {"page", "locale"});
  ASSERT_EQ(d.Query(R"({"query_id": "q1", "client_id": "c-7",
      "query_attributes": {"page": 2, "experiment": {"id": "e1", "variant": "B"},
                           "locale": "de", "filter": {"x": [1]}},
      "query_response_hit_ids": ["a", "b"], "timestamp": "2024-05-16T12:34:56"})"),
            "ok");
  EXPECT_EQ(d.results.variant, "B");
  EXPECT_EQ(d.results.unit, "c-7");
  EXPECT_EQ(Strings(d.results.segment_values),
            (std::vector<std::string>{"2", "de"}));
  // No zone is UTC: date -u -d 2024-05-16T12:34:56Z +%s -> 1715862896.
  EXPECT_EQ(d.results.timestamp_ms, 1715862896000);
  // Objects on the path that are null or absent: the default variant.
  ASSERT_EQ(
      d.Query(R"({"query_id": "q2", "query_attributes": {"experiment": null},
      "query_response_hit_ids": ["a"], "timestamp": 1})"),
      "ok");
  EXPECT_EQ(d.results.variant, "default");
  EXPECT_EQ(Strings(d.results.segment_values),
            (std::vector<std::string>{"", ""}));
  EXPECT_EQ(
      d.Query(R"({"query_id": "q3", "query_attributes": {"experiment": "B"},
      "query_response_hit_ids": ["a"], "timestamp": 1})"),
      "wrong_type: 'query_attributes.experiment' is not an object");
  EXPECT_EQ(d.Query(R"({"query_id": "q3", "query_attributes": {"experiment":
      {"variant": "B", "variant": "C"}}, "query_response_hit_ids": ["a"],
      "timestamp": 1})"),
            "duplicate_key: duplicate key 'variant' in "
            "query_attributes.experiment");
  EXPECT_EQ(d.Query(R"({"query_id": "q3", "query_attributes": [],
      "query_response_hit_ids": ["a"], "timestamp": 1})"),
            "wrong_type: 'query_attributes' is not an object");
}

// The click of the UBI JavaScript collector's shape: the doc and its
// position under event_attributes, the action graded by schema.actions.
TEST(DecodeUbiTest, EventsGradedByAction) {
  UbiDecoder d;
  ASSERT_EQ(d.Event(R"({"application": "Chorus", "action_name": "add_to_cart",
      "query_id": "q1", "session_id": "s1", "client_id": "c1",
      "timestamp": "2024-05-16T12:34:56.789Z", "message_type": "INFO",
      "event_attributes": {"object": {"object_id": "B07S3T59VP",
        "object_id_field": "product", "object_detail": null},
        "position": {"ordinal": 2, "x": null}}})"),
            "ok");
  EXPECT_EQ(d.judgments.request_id, "q1");
  EXPECT_EQ(d.judgments.timestamp_ms, 1715862896789);
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "B07S3T59VP");
  EXPECT_EQ(d.judgments.judgments[0].grade, std::optional<metrics::Grade>(2));
  EXPECT_EQ(d.judgments.judgments[0].kind, "add_to_cart");
  EXPECT_EQ(d.rank(), 3);  // Ordinal 2 plus one: the join applies the base.
  // An integer object_id is its text; a relevance field is not read; no
  // position claims no rank.
  ASSERT_EQ(d.Event(R"({"action_name": "purchase", "query_id": "q1",
      "relevance": "high", "timestamp": 1724944081669,
      "event_attributes": {"object": {"object_id": 1625640}}})"),
            "ok");
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "1625640");
  EXPECT_EQ(d.judgments.judgments[0].grade, std::optional<metrics::Grade>(3));
  EXPECT_EQ(d.judgments.timestamp_ms, 1724944081669);
  EXPECT_EQ(d.rank(), 0);
}

TEST(DecodeUbiTest, OtherActionsAreIgnoredNotRejected) {
  UbiDecoder d;
  // The o19s/ubi sample event (samples/event-opensearch.json): a page_exit
  // without an object_id, an empty position.
  EXPECT_EQ(
      d.Event(R"({"action_name": "page_exit", "user_id": "1821196507152684",
      "query_id": "00112233-4455-6677-8899-aabbccddeeff",
      "session_id": "c3d22be7-6bdc-4250-91e1-fc8a92a9b1f9",
      "page_id": "/docs/latest/", "timestamp": "2024-05-16T12:34:56.789Z",
      "message_type": "INFO", "event_attributes": {"position": {},
      "object": {"idleTimeoutMs": 5000, "timeElapsedCallbacks": []}}})"),
      "ignored");
  EXPECT_TRUE(d.judgments.judgments.empty());
  EXPECT_EQ(d.judgments.request_id, "00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_EQ(d.judgments.timestamp_ms, 1715862896789);  // Still moves time.
  // An ignored event is still checked: its time and ids are bad input.
  EXPECT_EQ(d.Event(R"({"action_name": "view", "query_id": "q1",
      "timestamp": "2024-05-16"})"),
            "bad_timestamp: 'timestamp' is not epoch milliseconds >= 0 nor "
            "an ISO 8601 date-time");
  // Without a query_id (absent, or null as the Chorus shop's "search"
  // events have it) an ungraded action is still ignored; a graded one
  // is not.
  EXPECT_EQ(d.Event(R"({"action_name": "view", "timestamp": 1})"), "ignored");
  EXPECT_EQ(d.Event(R"({"action_name": "search", "query_id": null,
      "timestamp": 1, "event_attributes": null})"),
            "ignored");
  EXPECT_EQ(d.Event(R"({"action_name": "click", "query_id": null,
      "timestamp": 1, "event_attributes": {"object": {"object_id": "a"}}})"),
            "missing_field: missing field 'query_id'");
  EXPECT_EQ(d.Event(R"({"action_name": "view", "query_id": 1.5,
      "timestamp": 1})"),
            "wrong_type: 'query_id' is not a string or an integer");
  // A graded action needs its doc, and every event its action.
  EXPECT_EQ(d.Event(R"({"action_name": "click", "query_id": "q1",
      "timestamp": 1, "event_attributes": {"object": null}})"),
            "missing_field: missing field 'event_attributes.object.object_id' "
            "(or 'judgments')");
  EXPECT_EQ(d.Event(R"({"query_id": "q1", "timestamp": 1,
      "event_attributes": {"object": {"object_id": "a"}}})"),
            "missing_field: missing field 'action_name'");
}

// A position is only a claim, checked in the join: any integer is kept
// (its value plus one; 0 is none), whatever schema.position_base, so that
// no click is lost to a producer counting from another base.
TEST(DecodeUbiTest, PositionIsKeptWhateverItsValue) {
  const std::string click =
      R"({"action_name": "click", "query_id": "q1", "timestamp": 1,
          "event_attributes": {"object": {"object_id": "a"},
                               "position": {"ordinal": %}}})";
  const auto with = [&](std::string_view ordinal) {
    std::string p = click;
    p.replace(p.find('%'), 1, ordinal);
    return p;
  };
  for (const int32_t base : {config::kPositionBaseAuto, 0, 1}) {
    UbiDecoder d([&](SchemaConfig* s) { s->position_base = base; });
    ASSERT_EQ(d.Event(with("1")), "ok");
    EXPECT_EQ(d.rank(), 2);
    ASSERT_EQ(d.Event(with("0")), "ok");
    EXPECT_EQ(d.rank(), 1);
    ASSERT_EQ(d.Event(with("null")), "ok");
    EXPECT_EQ(d.rank(), 0);
    // Before the first or past any list (events.max_results, 1000 here):
    // kept at 1000, a place no served doc has from base 0.
    ASSERT_EQ(d.Event(with("-1")), "ok");
    EXPECT_EQ(d.rank(), 1000);
    ASSERT_EQ(d.Event(with("5000")), "ok");
    EXPECT_EQ(d.rank(), 1000);
    ASSERT_EQ(d.judgments.judgments.size(), 1u);
    EXPECT_EQ(d.judgments.judgments[0].grade, std::optional<metrics::Grade>(1));
    EXPECT_EQ(d.Event(with(R"("3")")),
              "wrong_type: 'event_attributes.position.ordinal' is not an "
              "integer");
    EXPECT_EQ(d.rank(), 0);  // A rejection leaves no position behind.
    EXPECT_EQ(d.Event(with("1.5")),
              "wrong_type: 'event_attributes.position.ordinal' is not an "
              "integer");
  }
}

// Every shape of OpenSearch's query records, with the preset alone
// (tests/data/ubi/README.md has the sources).
TEST(DecodeUbiTest, QueryRecordsOfEveryProducer) {
  UbiDecoder d([](SchemaConfig* s) { s->unit = "client_id"; });
  // The plugin before 2.19 (its README's record): object ids, epoch ms.
  ASSERT_EQ(d.Query(R"({"query_response_id": "e4bd", "user_query": "toner",
      "query_id": "1230", "query_response_object_ids": ["9"],
      "client_id": null, "timestamp": 1716408298072})"),
            "ok");
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"9"}));
  EXPECT_EQ(d.results.timestamp_ms, 1716408298072);
  // Its Data Prepper payload: Jackson's camelCase, the hits one level down.
  ASSERT_EQ(d.Query(R"({"timestamp": "2025-02-10T09:15:00.125+0000",
      "queryId": "dp-1", "clientId": "c-1", "userQuery": "shoes",
      "application": "shop", "queryAttributes": {"experiment": "v2"},
      "queryResponse": {"queryId": "dp-1", "queryResponseId": "r-1",
                        "queryResponseHitIds": ["a", "b"]}})"),
            "ok");
  EXPECT_EQ(d.results.request_id, "dp-1");
  EXPECT_EQ(d.results.query_id, "shoes");
  EXPECT_EQ(d.results.variant, "v2");
  EXPECT_EQ(d.results.unit, "c-1");
  EXPECT_EQ(Strings(d.results.doc_ids), (std::vector<std::string>{"a", "b"}));
  // date -u -d 2025-02-10T09:15:00Z +%s -> 1739178900.
  EXPECT_EQ(d.results.timestamp_ms, 1739178900125);
  // The data generator: no hit ids, an empty list the join fills from
  // the impressions.
  ASSERT_EQ(d.Query(R"({"application": "esci_ubi_sample", "query_id": "g1",
      "client_id": "c", "user_query": "ps4", "query_attributes": {},
      "timestamp": "2024-12-10T00:50:26.457Z"})"),
            "ok");
  EXPECT_TRUE(d.results.doc_ids.empty());
  EXPECT_EQ(d.results.query_id, "ps4");
  // An empty or null user_query (the plugin writes "" for a search without
  // one): scored under no query.
  for (const char* query : {R"("")", "null"}) {
    ASSERT_EQ(d.Query(std::string(R"({"query_id": "q", "user_query": )") +
                      query + R"(, "query_response_hit_ids": ["a"],
                      "timestamp": 1})"),
              "ok")
        << query;
    EXPECT_EQ(d.results.query_id, "");
  }
  // In qrels mode the query is the table's key: "" is no query.
  Decoder qrels(JoinMode::kQrels, {}, config::UbiSchema());
  EXPECT_EQ(qrels.Results(R"({"query_id": "q", "user_query": "",
      "query_response_hit_ids": ["a"], "timestamp": 1})"),
            "empty_id: 'user_query' is empty");
  // One field under two names is ambiguous.
  EXPECT_EQ(d.Query(R"({"query_id": "q", "queryId": "q",
      "query_response_hit_ids": ["a"], "timestamp": 1})"),
            "duplicate_key: duplicate key 'queryId'");
  EXPECT_EQ(d.Query(R"({"query_id": "q", "query_response_hit_ids": ["a"],
      "queryResponse": {"queryResponseHitIds": ["a"]}, "timestamp": 1})"),
            "duplicate_key: duplicate key 'queryResponseHitIds' in "
            "queryResponse");
  // A key set next to the preset drops the preset's other names for it.
  UbiDecoder renamed([](SchemaConfig* s) { s->results = "hits"; });
  EXPECT_EQ(renamed.Query(R"({"query_id": "q",
      "query_response_object_ids": ["a"], "timestamp": 1})"),
            "ok");  // No hits: ranked by impressions.
  EXPECT_TRUE(renamed.results.doc_ids.empty());
  // Without impression_kind a list is required, as in qrels mode.
  UbiDecoder required([](SchemaConfig* s) { s->impression_kind = ""; });
  EXPECT_EQ(required.Query(R"({"query_id": "q", "timestamp": 1})"),
            "missing_field: missing field 'query_response_hit_ids'");
}

// An interleaved variant's list needs its teams, which impressions lack.
TEST(DecodeUbiTest, InterleavedVariantNeedsItsHits) {
  UbiDecoder d([](SchemaConfig* s) { s->teams = "query_attributes.teams"; }, {},
               DecodeRules{{{"ab", "il", {"A", "B"}}}, {}});
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il"}})"),
            "missing_field: missing field 'query_response_hit_ids' (variant "
            "'il' is interleaved: every result needs its team)");
}

// Impressions (schema.impression_kind) are judgments that grade nothing:
// where a doc was shown. Without a doc they are ignored as other actions.
TEST(DecodeUbiTest, ImpressionsAreJudgmentsThatGradeNothing) {
  UbiDecoder d;
  ASSERT_EQ(d.Event(R"({"action_name": "impression", "query_id": "g1",
      "timestamp": "2024-12-10T00:50:26.457Z",
      "event_attributes": {"object": {"object_id": "B01", "object_id_field":
      "product_id"}, "position": {"ordinal": 0}}})"),
            "ok");
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_TRUE(d.judgments.judgments[0].impression);
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "B01");
  EXPECT_EQ(d.judgments.judgments[0].grade, std::optional<metrics::Grade>(0));
  EXPECT_EQ(d.judgments.judgments[0].claimed_position, 1);
  EXPECT_EQ(d.Event(R"({"action_name": "impression", "query_id": "g1",
      "timestamp": 1})"),
            "ignored");
  // A click is no impression.
  ASSERT_EQ(d.Event(R"({"action_name": "click", "query_id": "g1",
      "timestamp": 1, "event_attributes": {"object": {"object_id": "B01"}}})"),
            "ok");
  EXPECT_FALSE(d.judgments.judgments[0].impression);
}

// schema.actions is not UBI-only: batch entries are graded by their kinds
// too, and entries of other kinds are dropped.
TEST(DecodeUbiTest, ActionsGradeBatchEntries) {
  SchemaConfig schema;
  schema.actions = {{"click", 1}, {"purchase", 3}};
  Decoder d(JoinMode::kImpression, {}, schema);
  ASSERT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1, "kind": "click",
      "judgments": [{"doc_id": "a"}, {"doc_id": "b", "kind": "view"},
                    {"doc_id": "c", "kind": "purchase", "relevance": 0}]})"),
            "ok");
  const std::vector<Judgment>& j = d.judgments.judgments;
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0].doc_id, "a");
  EXPECT_EQ(j[0].grade, std::optional<metrics::Grade>(1));
  EXPECT_EQ(j[1].doc_id, "c");
  EXPECT_EQ(j[1].grade, std::optional<metrics::Grade>(3));
  EXPECT_EQ(d.Judgments(R"({"request_id": "r", "timestamp": 1,
      "judgments": [{"doc_id": "a", "kind": "click"}, {"doc_id": "b"}]})"),
            "missing_field: missing field 'kind' in judgments[1]");
}

// Dotted names outside the preset, and a flat schema whose names hold no
// dot reads exactly as before (the rest of this file).
TEST(DecodeUbiTest, NestedIdsInACustomSchema) {
  SchemaConfig schema;
  schema.request_id = "meta.request.id";
  schema.timestamp = "meta.ts";
  schema.doc_id = "item.id";
  schema.relevance = "item.grade";
  Decoder d(JoinMode::kImpression, {}, schema);
  ASSERT_EQ(d.Judgments(R"({"item": {"grade": 2, "id": "d1"}, "x": {"y": 1},
      "meta": {"ts": 5, "request": {"id": "r9"}}})"),
            "ok");
  EXPECT_EQ(d.judgments.request_id, "r9");
  EXPECT_EQ(d.judgments.timestamp_ms, 5);
  ASSERT_EQ(d.judgments.judgments.size(), 1u);
  EXPECT_EQ(d.judgments.judgments[0].doc_id, "d1");
  EXPECT_EQ(d.judgments.judgments[0].grade, std::optional<metrics::Grade>(2));
  EXPECT_EQ(d.Judgments(R"({"meta": {"ts": 5}, "item": {"id": "d1"}})"),
            "missing_field: missing field 'meta.request.id'");
  EXPECT_EQ(d.Judgments(R"({"meta": {"ts": 5, "request": {"id": ""}},
      "item": {"id": "d1", "grade": 1}})"),
            "empty_id: 'meta.request.id' is empty");
  EXPECT_EQ(d.Judgments(R"({"meta": {"ts": 5}, "meta": {"ts": 6}})"),
            "duplicate_key: duplicate key 'meta'");
  // Broken JSON inside a nested object is malformed, as anywhere.
  EXPECT_EQ(d.Judgments(R"({"meta": {"ts": 5, "request": {"id": "r9"}},
      "item": {"id": "d1", "grade": 1)"),
            SimdjsonMessage(simdjson::INCOMPLETE_ARRAY_OR_OBJECT));
}

// Interleaved UBI traffic: query_response_hit_ids are plain ids, so the
// teams come as an array parallel to them (schema.teams), read as the
// per-entry `team` field is (TeamsOfInterleavedVariantsOnly, RejectTest).
TEST(DecodeUbiTest, TeamsArrayOfInterleavedHitIds) {
  UbiDecoder d([](SchemaConfig* s) { s->teams = "query_attributes.teams"; }, {},
               DecodeRules{{{"ab", "il", {"A", "B"}}}, {}});
  // The array before or after the hits; an integer team is its text.
  ASSERT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": ["B", "A", "B"]},
      "query_response_hit_ids": ["d1", "d2", "d3"]})"),
            "ok");
  EXPECT_EQ(d.results.interleaving, 0);
  EXPECT_EQ(d.results.teams, (std::vector<uint8_t>{1, 0, 1}));
  ASSERT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_response_hit_ids": ["d1", "d2"],
      "query_attributes": {"teams": ["A", "B"], "experiment": "il"}})"),
            "ok");
  EXPECT_EQ(d.results.teams, (std::vector<uint8_t>{0, 1}));
  // Another variant: the array is not matched against the list, nor its
  // teams against an experiment's.
  ASSERT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "B", "teams": ["C"]},
      "query_response_hit_ids": ["d1", "d2", "d3"]})"),
            "ok");
  EXPECT_EQ(d.results.interleaving, -1);
  EXPECT_TRUE(d.results.teams.empty());

  // Length mismatch: fewer teams than hits, then more.
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": ["A", "B"]},
      "query_response_hit_ids": ["d1", "d2", "d3"]})"),
            "missing_field: 'query_attributes.teams' has 2 teams for 3 "
            "results in 'query_response_hit_ids' (variant 'il' is "
            "interleaved: every result needs its team)");
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": ["A", "B", "A"]},
      "query_response_hit_ids": ["d1", "d2"]})"),
            "wrong_type: 'query_attributes.teams' has 3 teams for 2 "
            "results in 'query_response_hit_ids' (one team per result)");
  // Entries that are not teams, for any variant, as `team` values.
  for (const char* entry :
       {"true", "null", "1.5", "{\"t\": \"A\"}", "[\"A\"]"}) {
    SCOPED_TRACE(entry);
    for (const char* variant : {"il", "B"}) {
      EXPECT_EQ(d.Query(std::string(R"({"query_id": "q1", "timestamp": 5,
          "query_attributes": {"experiment": ")") +
                        variant + R"(", "teams": ["A", )" + entry + R"(]},
          "query_response_hit_ids": ["d1", "d2"]})"),
                "wrong_type: query_attributes.teams[1] is not a string or an "
                "integer");
    }
  }
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": ["A", ""]},
      "query_response_hit_ids": ["d1", "d2"]})"),
            "empty_id: query_attributes.teams[1] is empty");
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": ["A", "B", "C"]},
      "query_response_hit_ids": ["d1", "d2", "d3"]})"),
            "unknown_team: query_attributes.teams[2] 'C' is not a team of "
            "interleaving experiment 'ab' ('A' or 'B')");
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": "AB"},
      "query_response_hit_ids": ["d1", "d2"]})"),
            "wrong_type: 'query_attributes.teams' is not an array");
  EXPECT_EQ(d.Query(R"({"query_id": "q1", "timestamp": 5,
      "query_attributes": {"experiment": "il", "teams": ["A"], "teams": []},
      "query_response_hit_ids": ["d1"]})"),
            "duplicate_key: duplicate key 'teams' in query_attributes");
  // Absent or null: the hits would need teams of their own.
  for (const char* teams : {"", R"(, "teams": null)"}) {
    SCOPED_TRACE(teams);
    EXPECT_EQ(d.Query(std::string(R"({"query_id": "q1", "timestamp": 5,
        "query_attributes": {"experiment": "il")") +
                      teams + R"(}, "query_response_hit_ids": ["d1"]})"),
              "missing_field: missing field 'team' in "
              "query_response_hit_ids[0] (or 'query_attributes.teams') "
              "(variant 'il' is interleaved: every result needs its team)");
  }
}

// schema.teams at the top level of a flat schema (the loop without paths).
TEST(DecodeResultsTest, TeamsArrayAtTheTopLevel) {
  SchemaConfig schema;
  schema.teams = "teams";
  EventLimitsConfig limits = AnyTime();
  limits.max_results = 2;
  Decoder d(JoinMode::kImpression, {}, schema, limits,
            DecodeRules{{{"x", "I", {"A", "7"}}}, {}});
  ASSERT_EQ(d.Results(R"({"request_id": "r", "variant": "I", "timestamp": 5,
      "teams": [7, "A"], "results": ["a", "b"]})"),
            "ok");
  EXPECT_EQ(d.results.teams, (std::vector<uint8_t>{1, 0}));
  // The array wins over entries' own team fields (as a batch of judgments
  // over the single form), which are still checked.
  ASSERT_EQ(d.Results(R"({"request_id": "r", "variant": "I", "timestamp": 5,
      "results": [{"doc_id": "a", "team": "7"}, "b"], "teams": ["A", "A"]})"),
            "ok");
  EXPECT_EQ(d.results.teams, (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ(d.Results(R"({"request_id": "r", "variant": "I", "timestamp": 5,
      "results": [{"doc_id": "a", "team": true}], "teams": ["A"]})"),
            "wrong_type: results[0].team is not a string or an integer");
  // Beyond events.max_results the array is counted, not kept.
  EXPECT_EQ(d.Results(R"({"request_id": "r", "variant": "I", "timestamp": 5,
      "teams": ["A", "A", "A", "A"], "results": ["a", "b"]})"),
            "wrong_type: 'teams' has 4 teams for 2 results in 'results' "
            "(one team per result)");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "variant": "I", "timestamp": 5,
      "teams": ["A"], "teams": ["A"], "results": ["a"]})"),
            "duplicate_key: duplicate key 'teams'");
  EXPECT_EQ(d.Results(R"({"request_id": "r", "variant": "I", "timestamp": 5,
      "teams": ["A"], "results": ["a", "b"]})"),
            "missing_field: 'teams' has 1 team for 2 results in 'results' "
            "(variant 'I' is interleaved: every result needs its team)");
}

// Read in place, a payload is read where it lies only when the padding
// simdjson reads past its end is on its last page: one that ends a page
// followed by an unmapped page is copied (read in place, the padding read
// would fault: the test would crash), one in the middle of a page is not
// (its views point into it), and both decode the same event. Under
// AddressSanitizer every payload is copied.
TEST(DecodeInPlaceTest, ReadsInPlaceOnlyWhenThePaddingIsOnTheLastPage) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  char* base = static_cast<char*>(map);
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  const std::string json =
      R"({"request_id":"r-1","timestamp":1,"results":["d1","d2"]})";
  char* at_end = base + page - json.size();  // Its last byte ends the page.
  char* in_middle = base + 64;
  std::memcpy(at_end, json.data(), json.size());
  std::memcpy(in_middle, json.data(), json.size());
  FakeClock clock(kWallNow);
  EventDecoder decoder(SchemaConfig{}, AnyTime(), JoinMode::kImpression, {},
                       &clock);
  decoder.set_read_in_place(true);
  ResultsEvent event;
  const auto points_into = [&](const char* payload) {
    return event.request_id.data() >= payload &&
           event.request_id.data() < payload + json.size();
  };
  for (char* payload : {at_end, in_middle}) {
    SCOPED_TRACE(payload == at_end ? "at the end of the page" : "mid-page");
    ASSERT_EQ(Outcome(decoder.DecodeResults(
                  std::string_view(payload, json.size()), kNoFallback, &event)),
              "ok");
    EXPECT_EQ(event.request_id, "r-1");
    EXPECT_EQ(event.timestamp_ms, 1);
    EXPECT_EQ(Strings(event.doc_ids), (std::vector<std::string>{"d1", "d2"}));
#if defined(__SANITIZE_ADDRESS__)
    EXPECT_FALSE(points_into(payload));
#else
    EXPECT_EQ(points_into(payload), payload == in_middle);
#endif
  }
  // Without set_read_in_place every payload is copied.
  EventDecoder copying(SchemaConfig{}, AnyTime(), JoinMode::kImpression, {},
                       &clock);
  ASSERT_TRUE(copying
                  .DecodeResults(std::string_view(in_middle, json.size()),
                                 kNoFallback, &event)
                  .ok());
  EXPECT_FALSE(points_into(in_middle));
  munmap(map, 2 * page);
}

}  // namespace
}  // namespace rankwatch::stream
