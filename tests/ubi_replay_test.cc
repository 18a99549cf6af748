// OpenSearch User Behavior Insights read as it is (issue 30): the UBI
// specification's sample documents and the OpenSearch documentation's, in
// tests/data/ubi (see its README for sources and licences), checked against
// the specification's JSON schemas and replayed through `rankwatch replay`
// with `schema.preset: ubi`, against measures worked out by hand below.
#include <simdjson.h>

#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;
using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;

const std::string kData = std::string(SourceTree()) + "/tests/data/ubi";

// Prints, per document, "<name> valid" or "<name> invalid: <messages>"
// (sorted, joined by "; "): draft 2020-12, formats not asserted.
constexpr char kValidate[] = R"(
import json, sys
import jsonschema
d = sys.argv[1]
def load(p): return json.load(open(d + '/' + p))
event = load('o19s-ubi/schema/1.3.0/event.schema.json')
query = load('o19s-ubi/schema/1.3.0/query.request.schema.json')
docs = [
  ('o19s-query', query, load('o19s-ubi/samples/query-opensearch.json')['ext']['ubi']),
  ('o19s-event', event, load('o19s-ubi/samples/event-opensearch.json')),
  ('docs-query', query, load('opensearch-docs/tutorial-query.json')[0]),
  ('docs-event', event, load('opensearch-docs/tutorial-event.json')[0]),
]
for i, line in enumerate(open(d + '/replay/queries.jsonl')):
  docs.append(('queries.jsonl:%d' % (i + 1), query, json.loads(line)))
for i, line in enumerate(open(d + '/replay/events.jsonl')):
  docs.append(('events.jsonl:%d' % (i + 1), event, json.loads(line)))
for name, schema, doc in docs:
  errors = sorted(e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(doc))
  print(name + (' invalid: ' + '; '.join(errors) if errors else ' valid'))
)";

// What the schemas say, read off them by hand: event.schema.json requires
// event_attributes.position, which must hold an ordinal or xy (oneOf), and
// object.object_id when object is there; timestamps are strings. Its
// action_name is a oneOf of a string in the list of common actions and any
// string, so a common action (click, purchase...) matches both branches
// and fails under a draft 2020-12 validator, while a name of one's own
// (page_exit, product_hover) passes: a defect of the schema (anyOf is
// meant), which rankwatch does not share.
TEST(UbiSamplesTest, SchemasSayWhatTheReadmeSays) {
  if (RunCommand({"/usr/bin/env", "python3", "-c", "import jsonschema"})
          .exit_code != 0) {
    GTEST_SKIP() << "python3 with jsonschema is not installed";
  }
  const CommandResult res =
      RunCommand({"/usr/bin/env", "python3", "-c", kValidate, kData});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  std::vector<std::string> lines;
  std::istringstream in(res.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::vector<std::string> exact = {
      "o19s-query valid",
      "o19s-event invalid: 'object_id' is a required property; {} is not "
      "valid under any of the given schemas",
      "docs-query valid",
      "docs-event invalid: 'position' is a required property; "
      "1724944081669 is not of type 'string'",
      "queries.jsonl:1 valid",
      "queries.jsonl:2 valid",
      "events.jsonl:1 invalid: 'object_id' is a required property; {} is "
      "not valid under any of the given schemas",
      "events.jsonl:2 invalid: 'position' is a required property; "
      "1724944081669 is not of type 'string'",
  };
  // Lines 3 to 8 of events.jsonl: only the action_name oneOf fails.
  const std::vector<std::string> actions = {
      "impression", "click", "add_to_cart", "click", "click", "purchase"};
  ASSERT_EQ(lines.size(), exact.size() + actions.size()) << res.out;
  for (size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(lines[i], exact[i]);
  for (size_t i = 0; i < actions.size(); ++i) {
    const std::string prefix = "events.jsonl:" + std::to_string(i + 3) +
                               " invalid: '" + actions[i] +
                               "' is valid under each of ";
    const std::string& line = lines[exact.size() + i];
    EXPECT_EQ(line.substr(0, prefix.size()), prefix) << line;
    EXPECT_EQ(line.find(';'), std::string::npos) << line;  // One error.
  }
}

constexpr char kConfig[] = R"(
schema:
  preset: ubi
  unit: client_id
metrics:
  cutoffs: [1, 3, 5]
  measures: [precision, reciprocal_rank, ndcg]
)";

// Two bad documents, one line each, appended to the sample streams.
constexpr char kBadQuery[] =
    R"({"query_id":"bad-q","query_response_hit_ids":["x"],"timestamp":"2025-01-23"})";
constexpr char kBadEvent[] =
    R"({"action_name":"click","query_id":"d194b734-70a4-41dc-b103-b26a56a277b5","timestamp":"2025-01-23T13:19:30Z","event_attributes":{"object":{"object_id":"B07KN5JP3H"},"position":{"ordinal":"5"}}})";

// By hand, from replay/*.jsonl (linear gain, relevance threshold 1,
// 30 minute window; nDCG discounts rank r by log2(r + 1)):
//
// Query d194b734 (no query_attributes.experiment: variant "default"),
// served at 13:18:22.274Z, 20 hits. Events: page_exit (another query) and
// product_hover and impression (no grade: ignored); click on B075ZGJSL1
// (rank 3, grade 1) then add_to_cart on it (grade 2; join.combine max: 2);
// click on B07FMGGRGG (rank 4, grade 1; its ordinal says 2). Relevant
// ranks 3 (grade 2) and 4 (grade 1), R = 2:
//   P_1 = 0, P_3 = 1/3, P_5 = 2/5, recip_rank = 1/3
//   DCG = 2/log2(4) + 1/log2(5); ideal 2/log2(2) + 1/log2(3)
//   ndcg_cut_1 = 0, ndcg_cut_3 = (2/log2(4)) / ideal, ndcg = DCG / ideal
// Query 5e3b2a1c (variant "B"), 3 hits: click on B07S3T59VP (rank 1,
// grade 1), purchase of B07KN5JP3H (rank 3, grade 3). R = 2:
//   P_1 = 1, P_3 = 2/3, P_5 = 2/5, recip_rank = 1
//   DCG = 1/log2(2) + 3/log2(4); ideal 3/log2(2) + 1/log2(3)
//   ndcg_cut_1 = (1/1) / (3/1), ndcg_cut_3 = ndcg = DCG / ideal
TEST(UbiReplayTest, SamplesGiveHandWorkedMeasures) {
  testing::TempDir dir;
  const std::string config = dir.Write("config.yaml", kConfig);
  const std::string queries =
      dir.Write("queries.jsonl",
                ReadFile(kData + "/replay/queries.jsonl") + kBadQuery + "\n");
  const std::string events =
      dir.Write("events.jsonl",
                ReadFile(kData + "/replay/events.jsonl") + kBadEvent + "\n");
  const std::string dead = dir.path() + "/dead.jsonl";
  const CommandResult res = RunCommand(
      {RankwatchBinary(), "replay", "--config", config, "--results", queries,
       "--judgments", events, "--format", "json", "--dead-letter", dead});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(res.out)).get(doc),
            simdjson::SUCCESS)
      << res.out;
  const auto mean = [&](std::string_view variant, std::string_view measure) {
    simdjson::dom::element m = doc["variants"][variant]["measures"][measure];
    EXPECT_EQ(int64_t(m["count"]), 1) << variant << " " << measure;
    return double(m["mean"]);
  };
  const double ideal_a = 2 / std::log2(2) + 1 / std::log2(3);
  EXPECT_EQ(int64_t(doc["variants"]["default"]["requests"]), 1);
  EXPECT_DOUBLE_EQ(mean("default", "P_1"), 0.0);
  EXPECT_DOUBLE_EQ(mean("default", "P_3"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(mean("default", "P_5"), 2.0 / 5);
  EXPECT_DOUBLE_EQ(mean("default", "recip_rank"), 1.0 / 3);
  EXPECT_DOUBLE_EQ(mean("default", "ndcg_cut_1"), 0.0);
  EXPECT_NEAR(mean("default", "ndcg_cut_3"), (2 / std::log2(4)) / ideal_a,
              1e-12);
  EXPECT_NEAR(mean("default", "ndcg"),
              (2 / std::log2(4) + 1 / std::log2(5)) / ideal_a, 1e-12);
  const double ideal_b = 3 / std::log2(2) + 1 / std::log2(3);
  EXPECT_EQ(int64_t(doc["variants"]["B"]["requests"]), 1);
  EXPECT_DOUBLE_EQ(mean("B", "P_1"), 1.0);
  EXPECT_DOUBLE_EQ(mean("B", "P_3"), 2.0 / 3);
  EXPECT_DOUBLE_EQ(mean("B", "P_5"), 2.0 / 5);
  EXPECT_DOUBLE_EQ(mean("B", "recip_rank"), 1.0);
  EXPECT_NEAR(mean("B", "ndcg_cut_1"), 1.0 / 3, 1e-12);
  EXPECT_NEAR(mean("B", "ndcg_cut_3"),
              (1 / std::log2(2) + 3 / std::log2(4)) / ideal_b, 1e-12);
  EXPECT_NEAR(mean("B", "ndcg"),
              (1 / std::log2(2) + 3 / std::log2(4)) / ideal_b, 1e-12);

  simdjson::dom::element counts = doc["events"];
  EXPECT_EQ(int64_t(counts["results"]), 3);
  EXPECT_EQ(int64_t(counts["judgments"]), 9);
  EXPECT_EQ(int64_t(counts["finalized"]), 2);
  EXPECT_EQ(int64_t(counts["rejected"]["bad_timestamp"]), 1);
  EXPECT_EQ(int64_t(counts["rejected"]["wrong_type"]), 1);
  // The ignored actions (page_exit, product_hover: 2) and the impression
  // of a query whose record lists its hits (1) are neither rejected nor
  // orphaned clicks. Of the five graded events one claims a position other
  // than its doc's served rank (B07FMGGRGG: ordinal 2, served 4th; no
  // event of the query claims ordinal 0, so they count from 1): the
  // join's count of such events is 1.
  EXPECT_EQ(int64_t(counts["orphaned_judgments"]), 0);
  EXPECT_EQ(int64_t(counts["late"]), 0);
  EXPECT_EQ(int64_t(counts["ignored"]), 2);
  EXPECT_EQ(int64_t(counts["ignored_impressions"]), 1);
  EXPECT_EQ(int64_t(counts["position_mismatches"]), 1);

  // The two bad documents, and only they, are dead letters: one line
  // each, with the reason and the original payload.
  std::istringstream lines(ReadFile(dead));
  std::multiset<std::string> letters;
  for (std::string line; std::getline(lines, line);) {
    simdjson::dom::element d;
    ASSERT_EQ(parser.parse(simdjson::padded_string(line)).get(d),
              simdjson::SUCCESS)
        << line;
    letters.insert(std::string(std::string_view(d["reason"])) + " " +
                   std::string(std::string_view(d["payload"])));
  }
  EXPECT_EQ(letters, (std::multiset<std::string>{
                         std::string("bad_timestamp ") + kBadQuery,
                         std::string("wrong_type ") + kBadEvent}));
  // Each rejection is one log line that names the field.
  EXPECT_NE(res.err.find("'event_attributes.position.ordinal' is not an "
                         "integer"),
            std::string::npos)
      << res.err;
}

// Interleaved UBI traffic: the search client puts each hit's team in
// query_attributes.teams (schema.teams), parallel to query_response_hit_ids.
constexpr char kInterleavingConfig[] = R"(
schema:
  preset: ubi
  teams: query_attributes.teams
interleaving:
  - name: v2_vs_v1
    variant: il
    teams: [v1, v2]
)";

// Eight query records: q1 to q5 interleaved (experiment "il"), q6 of
// variant "B" (no teams: not interleaved), q7 and q8 interleaved but
// broken (one team short; a team "v3").
constexpr char kInterleavedQueries[] =
    R"({"query_id":"q1","user_query":"laptop","client_id":"c1","query_attributes":{"experiment":"il","teams":["v1","v2","v2","v1"]},"query_response_hit_ids":["d1","d2","d3","d4"],"timestamp":"2025-01-23T13:00:00.000+0000"}
{"query_id":"q2","user_query":"mouse","client_id":"c2","query_attributes":{"experiment":"il","teams":["v2","v1","v1","v2"]},"query_response_hit_ids":["d5","d6","d7","d8"],"timestamp":"2025-01-23T13:00:01.000+0000"}
{"query_id":"q3","user_query":"laptop","client_id":"c3","query_response_hit_ids":["d1","d2"],"query_attributes":{"teams":["v1","v2"],"experiment":"il"},"timestamp":"2025-01-23T13:00:02.000+0000"}
{"query_id":"q4","user_query":"tablet","client_id":"c4","query_attributes":{"experiment":"il","teams":["v2","v1","v2"]},"query_response_hit_ids":["d1","d2","d3"],"timestamp":"2025-01-23T13:00:03Z"}
{"query_id":"q5","user_query":"pen","client_id":"c5","query_attributes":{"experiment":"il","teams":["v1","v2"]},"query_response_hit_ids":["a","b"],"timestamp":"2025-01-23T13:00:04Z"}
{"query_id":"q6","user_query":"pen","client_id":"c6","query_attributes":{"experiment":"B"},"query_response_hit_ids":["a","b"],"timestamp":"2025-01-23T13:00:05Z"}
{"query_id":"q7","user_query":"pen","client_id":"c7","query_attributes":{"experiment":"il","teams":["v1"]},"query_response_hit_ids":["a","b"],"timestamp":"2025-01-23T13:00:06Z"}
{"query_id":"q8","user_query":"pen","client_id":"c8","query_attributes":{"experiment":"il","teams":["v1","v3"]},"query_response_hit_ids":["a","b"],"timestamp":"2025-01-23T13:00:07Z"}
)";

constexpr char kInterleavedEvents[] =
    R"({"action_name":"click","query_id":"q1","timestamp":"2025-01-23T13:01:00Z","event_attributes":{"object":{"object_id":"d1"},"position":{"ordinal":1}}}
{"action_name":"click","query_id":"q1","timestamp":"2025-01-23T13:01:10Z","event_attributes":{"object":{"object_id":"d3"},"position":{"ordinal":3}}}
{"action_name":"purchase","query_id":"q1","timestamp":"2025-01-23T13:02:00Z","event_attributes":{"object":{"object_id":"d3"},"position":{"ordinal":3}}}
{"action_name":"click","query_id":"q2","timestamp":"2025-01-23T13:01:00Z","event_attributes":{"object":{"object_id":"d5"},"position":{"ordinal":1}}}
{"action_name":"add_to_cart","query_id":"q2","timestamp":"2025-01-23T13:01:30Z","event_attributes":{"object":{"object_id":"d8"},"position":{"ordinal":4}}}
{"action_name":"click","query_id":"q2","timestamp":"2025-01-23T13:01:40Z","event_attributes":{"object":{"object_id":"d6"},"position":{"ordinal":2}}}
{"action_name":"impression","query_id":"q3","timestamp":"2025-01-23T13:00:30Z","event_attributes":{"object":{"object_id":"d2"},"position":{"ordinal":2}}}
{"action_name":"click","query_id":"q3","timestamp":"2025-01-23T13:01:00Z","event_attributes":{"object":{"object_id":"d1"},"position":{"ordinal":1}}}
{"action_name":"impression","query_id":"q4","timestamp":"2025-01-23T13:00:30Z","event_attributes":{"object":{"object_id":"d1"},"position":null}}
{"action_name":"click","query_id":"q5","timestamp":"2025-01-23T13:01:00Z","event_attributes":{"object":{"object_id":"b"},"position":{"ordinal":2}}}
{"action_name":"click","query_id":"q5","timestamp":"2025-01-23T13:01:20Z","event_attributes":{"object":{"object_id":"b"},"position":{"ordinal":2}}}
{"action_name":"add_to_cart","query_id":"q5","timestamp":"2025-01-23T13:01:40Z","event_attributes":{"object":{"object_id":"b"},"position":{"ordinal":2}}}
{"action_name":"click","query_id":"q6","timestamp":"2025-01-23T13:01:00Z","event_attributes":{"object":{"object_id":"a"},"position":{"ordinal":1}}}
)";

// By hand (every graded action, click 1 to purchase 3, is >= the relevance
// threshold 1, so every one is a click; c_0 and c_1 count the clicked docs
// of teams v1 and v2, a doc once however often it is clicked):
//   q1: d1 (v1) clicked; d3 (v2) clicked and bought: c_0 = 1, c_1 = 1: tie
//   q2: d5 (v2) clicked, d8 (v2) carted, d6 (v1) clicked: 1 < 2: v2 wins
//   q3: d2 only an impression (not a click), d1 (v1) clicked: 1 > 0: v1
//       wins
//   q4: only an impression: no click
//   q5: b (v2) clicked twice and carted: one doc, 0 < 1: v2 wins
//   q6: variant B, not interleaved: not an impression of the experiment
//   q7: 1 team for 2 hits: missing_field; q8: "v3": unknown_team
// impressions 5, wins v1 1, wins v2 2, ties 1, no_click 1, and
// preference = (wins_v2 + ties / 2) / (wins_v1 + wins_v2 + ties) - 1/2
//            = (2 + 0.5) / 4 - 0.5 = 0.125.
TEST(UbiReplayTest, InterleavedHitIdsGiveHandWorkedOutcomes) {
  testing::TempDir dir;
  const std::string config = dir.Write("config.yaml", kInterleavingConfig);
  const std::string queries = dir.Write("queries.jsonl", kInterleavedQueries);
  const std::string events = dir.Write("events.jsonl", kInterleavedEvents);
  const CommandResult res =
      RunCommand({RankwatchBinary(), "replay", "--config", config, "--results",
                  queries, "--judgments", events, "--format", "json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(res.out)).get(doc),
            simdjson::SUCCESS)
      << res.out;
  simdjson::dom::element il = doc["interleaving"]["v2_vs_v1"];
  ASSERT_TRUE(il.is_object()) << res.out;
  EXPECT_EQ(int64_t(il["impressions"]), 5);
  EXPECT_EQ(int64_t(il["wins"]["v1"]), 1);
  EXPECT_EQ(int64_t(il["wins"]["v2"]), 2);
  EXPECT_EQ(int64_t(il["ties"]), 1);
  EXPECT_EQ(int64_t(il["no_click"]), 1);
  EXPECT_DOUBLE_EQ(double(il["preference"]), 0.125);
  EXPECT_EQ(int64_t(doc["variants"]["il"]["requests"]), 5);
  EXPECT_EQ(int64_t(doc["variants"]["B"]["requests"]), 1);

  simdjson::dom::element counts = doc["events"];
  EXPECT_EQ(int64_t(counts["results"]), 8);
  EXPECT_EQ(int64_t(counts["finalized"]), 6);
  // The two impressions, of queries whose records list their hits.
  EXPECT_EQ(int64_t(counts["ignored"]), 0);
  EXPECT_EQ(int64_t(counts["ignored_impressions"]), 2);
  EXPECT_EQ(int64_t(counts["rejected"]["missing_field"]), 1);
  EXPECT_EQ(int64_t(counts["rejected"]["unknown_team"]), 1);
  // Each rejection is one log line that names the field.
  EXPECT_NE(res.err.find("'query_attributes.teams' has 1 team for 2 results "
                         "in 'query_response_hit_ids'"),
            std::string::npos)
      << res.err;
  EXPECT_NE(res.err.find("query_attributes.teams[1] 'v3' is not a team of "
                         "interleaving experiment 'v2_vs_v1'"),
            std::string::npos)
      << res.err;
}

// The example configuration loads, with the preset's names in effect.
TEST(UbiReplayTest, ExampleConfigLoads) {
  const CommandResult res =
      RunCommand({RankwatchBinary(), "check-config",
                  std::string(SourceTree()) + "/config/ubi.yaml"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  for (const char* line :
       {"  preset: \"ubi\"\n", "  request_id: \"query_id\"\n",
        "  results: \"query_response_hit_ids\"\n",
        "  doc_id: \"event_attributes.object.object_id\"\n",
        "  variant: \"query_attributes.experiment\"\n",
        "  unit: \"client_id\"\n", "    \"add_to_cart\": 2\n"}) {
    EXPECT_NE(res.out.find(line), std::string::npos) << line << res.out;
  }
}

}  // namespace
}  // namespace rankwatch
