// UBI as OpenSearch's producers write it (issue 44), read with
// `schema.preset: ubi` and nothing else: an excerpt of search-relevance's
// published UBI file (the data generator's query records without hit ids,
// ranked by their impressions; the plugin's records with hit ids; a demo
// app's events), the plugin's pre-2.19 record from its README, and the
// plugin's Data Prepper payload. Sources and licences:
// tests/data/ubi/README.md. The excerpt's figures are checked against a
// second computation written here from the UBI documents' meaning (not by
// rankwatch); the small cases by hand.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/ubi_bulk.h"

using rankwatch::testing::RankwatchBinary;
using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::UbiDocument;

const std::string kProducers =
    std::string(SourceTree()) + "/tests/data/ubi/opensearch-producers";

constexpr char kPresetOnly[] = R"(
schema:
  preset: ubi
metrics:
  cutoffs: [10]
  measures: [ndcg, precision, reciprocal_rank]
)";

// ---- The reference computation ----------------------------------------

// Epoch ms of a UBI timestamp: a number, or "YYYY-MM-DDTHH:MM:SS.mmm"
// followed by Z or +HHMM / +HH:MM (the forms in the excerpt).
int64_t Millis(simdjson::dom::element t) {
  int64_t ms = 0;
  if (t.get(ms) == simdjson::SUCCESS) return ms;
  const std::string s = std::string(std::string_view(t));
  std::tm tm{};
  int millis = 0;
  EXPECT_EQ(
      std::sscanf(s.c_str(), "%d-%d-%dT%d:%d:%d.%d", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis),
      7)
      << s;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  int64_t offset_min = 0;
  const size_t zone = s.find_first_of("+-", 19);
  if (zone != std::string::npos) {
    const std::string digits = s.substr(zone + 1);
    const int hh = std::stoi(digits.substr(0, 2));
    const int mm = std::stoi(digits.substr(digits[2] == ':' ? 3 : 2, 2));
    offset_min = (hh * 60 + mm) * (s[zone] == '-' ? -1 : 1);
  }
  return (static_cast<int64_t>(timegm(&tm)) - offset_min * 60) * 1000 + millis;
}

struct Reference {
  // Per scored request: nDCG@10, P@10, RR.
  std::vector<std::tuple<double, double, double>> scores;
  int64_t empty_lists = 0;  // Query records with "query_response_hit_ids": [].
  int64_t ignored = 0;      // Events of no graded action, not impressions.
  int64_t ignored_impressions = 0;
  int64_t orphaned = 0;
  int64_t duplicates = 0;
  int64_t mismatches = 0;
  int64_t by_impressions = 0;
};

struct Query {
  int64_t served = 0;
  bool has_hits = false;  // The record lists its hits.
  std::vector<std::string> hits;
  bool scored = false;
};

struct Shown {
  std::string doc;
  int64_t ordinal = -1;  // -1: none.
  int64_t time = 0;
  bool graded = false;
  int grade = 0;
};

// What the UBI documents mean, computed apart from rankwatch: a search is
// the earliest query record of its query_id that has a list (hit ids, or
// none at all: then its impressions in ordinal order, a doc once); its
// events count within [served - 5 s, served + 30 min]; a doc's grade is
// the highest of its click (1), add_to_cart (2), purchase (3); nDCG@10 with
// linear gain over the judged docs' ideal order, P@10 and RR with grade >=
// 1 relevant. An event's ordinal is checked against its doc's rank, from 0
// when some event of the search says 0, else from 1.
Reference Score(const std::vector<UbiDocument>& docs) {
  const std::map<std::string, int> grades = {
      {"click", 1}, {"add_to_cart", 2}, {"purchase", 3}};
  simdjson::dom::parser parser;
  Reference ref;
  std::map<std::string, Query> queries;
  for (const UbiDocument& d : docs) {
    if (!d.query) continue;
    simdjson::dom::element doc = parser.parse(d.json);
    Query q;
    q.served = Millis(doc["timestamp"]);
    simdjson::dom::array hits;
    if (doc["query_response_hit_ids"].get(hits) == simdjson::SUCCESS) {
      q.has_hits = true;
      for (simdjson::dom::element h : hits) {
        q.hits.emplace_back(std::string_view(h));
      }
      if (q.hits.empty()) {
        ++ref.empty_lists;
        continue;
      }
    }
    auto [it, inserted] = queries.emplace(d.query_id, q);
    if (!inserted) {
      ++ref.duplicates;
      if (q.served < it->second.served) it->second = q;
    }
  }
  std::map<std::string, std::vector<Shown>> shown;
  for (const UbiDocument& d : docs) {
    if (d.query) continue;
    simdjson::dom::element doc = parser.parse(d.json);
    const std::string action =
        std::string(std::string_view(doc["action_name"]));
    const bool graded = grades.count(action) > 0;
    Shown s;
    std::string_view id;
    if (doc["event_attributes"]["object"]["object_id"].get(id) ==
        simdjson::SUCCESS) {
      s.doc = id;
    }
    if ((!graded && action != "impression") || s.doc.empty()) {
      ++ref.ignored;
      continue;
    }
    s.graded = graded;
    s.grade = graded ? grades.at(action) : 0;
    s.time = Millis(doc["timestamp"]);
    int64_t ordinal;
    if (doc["event_attributes"]["position"]["ordinal"].get(ordinal) ==
        simdjson::SUCCESS) {
      s.ordinal = ordinal;
    }
    shown[d.query_id].push_back(s);
  }
  for (auto& [id, events] : shown) {
    const auto q = queries.find(id);
    if (q == queries.end()) {
      ref.orphaned += static_cast<int64_t>(events.size());
      continue;
    }
    const int64_t served = q->second.served;
    std::vector<Shown> in;
    for (const Shown& s : events) {
      if (s.time < served - 5000 || s.time > served + 1'800'000) {
        ++ref.orphaned;
      } else {
        in.push_back(s);
      }
    }
    std::vector<std::string> list = q->second.hits;
    if (!q->second.has_hits) {
      std::vector<Shown> impressions;
      for (const Shown& s : in) {
        if (!s.graded) impressions.push_back(s);
      }
      std::sort(impressions.begin(), impressions.end(),
                [](const Shown& a, const Shown& b) {
                  const auto key = [](const Shown& s) {
                    return std::tuple(s.ordinal < 0 ? INT64_MAX : s.ordinal,
                                      s.time, s.doc);
                  };
                  return key(a) < key(b);
                });
      for (const Shown& s : impressions) {
        if (std::find(list.begin(), list.end(), s.doc) == list.end()) {
          list.push_back(s.doc);
        }
      }
      if (list.empty()) {
        ref.orphaned += static_cast<int64_t>(in.size());
        continue;
      }
      ++ref.by_impressions;
    }
    const bool zero = std::any_of(
        in.begin(), in.end(), [](const Shown& s) { return s.ordinal == 0; });
    std::map<std::string, int> grade;
    for (const Shown& s : in) {
      if (!s.graded) {
        if (q->second.has_hits) ++ref.ignored_impressions;
        continue;
      }
      grade[s.doc] = std::max(grade[s.doc], s.grade);
      if (s.ordinal >= 0) {
        const auto at = std::find(list.begin(), list.end(), s.doc);
        const int64_t rank = at == list.end() ? 0 : at - list.begin() + 1;
        if (rank != s.ordinal + (zero ? 1 : 0)) ++ref.mismatches;
      }
    }
    q->second.scored = true;
    double dcg = 0, rr = 0;
    int relevant_top = 0;
    for (size_t r = 0; r < list.size(); ++r) {
      const auto g = grade.find(list[r]);
      const int gain = g == grade.end() ? 0 : g->second;
      if (r < 10) dcg += gain / std::log2(r + 2.0);
      if (gain >= 1 && r < 10) ++relevant_top;
      if (gain >= 1 && rr == 0) rr = 1.0 / static_cast<double>(r + 1);
    }
    std::vector<int> ideal;
    for (const auto& [doc, g] : grade) {
      if (g > 0) ideal.push_back(g);
    }
    std::sort(ideal.rbegin(), ideal.rend());
    double idcg = 0;
    for (size_t r = 0; r < ideal.size() && r < 10; ++r) {
      idcg += ideal[r] / std::log2(r + 2.0);
    }
    ref.scores.emplace_back(idcg > 0 ? dcg / idcg : 0.0, relevant_top / 10.0,
                            rr);
  }
  // Searches without any event: scored, nothing relevant.
  for (const auto& [id, q] : queries) {
    if (!q.scored && shown.count(id) == 0) {
      if (!q.has_hits) continue;  // No impressions: no list.
      ref.scores.emplace_back(0.0, 0.0, 0.0);
    }
  }
  return ref;
}

double Mean(const std::vector<std::tuple<double, double, double>>& v, int i) {
  double sum = 0;
  for (const auto& t : v) {
    sum += i == 0 ? std::get<0>(t) : i == 1 ? std::get<1>(t) : std::get<2>(t);
  }
  return sum / static_cast<double>(v.size());
}

// ---- Running rankwatch ---------------------------------------------------

struct Replayed {
  CommandResult command;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
};

void Replay(const testing::TempDir& dir, const std::string& config,
            const std::string& queries, const std::string& events,
            Replayed* out) {
  out->command =
      RunCommand({RankwatchBinary(), "replay", "--config",
                  dir.Write("config.yaml", config), "--results",
                  dir.Write("queries.jsonl", queries), "--judgments",
                  dir.Write("events.jsonl", events), "--format", "json"});
  ASSERT_EQ(out->command.exit_code, 0) << out->command.err;
  ASSERT_EQ(out->parser.parse(simdjson::padded_string(out->command.out))
                .get(out->doc),
            simdjson::SUCCESS)
      << out->command.out;
}

double MeanOf(const Replayed& r, std::string_view variant,
              std::string_view measure) {
  return double(r.doc["variants"][variant]["measures"][measure]["mean"]);
}

// The excerpt of search-relevance's file (generator, plugin, demo app
// mixed) with the preset alone: every search scored as the reference
// computation scores it, and nothing lost to missing_field or wrong_type;
// the only rejections are the plugin's aggregation-only searches with
// empty hit lists.
TEST(UbiProducersTest, SearchRelevanceExcerptMatchesReference) {
  const std::vector<UbiDocument> docs =
      testing::ReadUbiBulk(kProducers + "/search-relevance-excerpt.ndjson");
  ASSERT_EQ(docs.size(), 218u);
  const Reference ref = Score(docs);
  // The excerpt's make-up (its README): 10 generator searches ranked by
  // impressions and 5 plugin query ids with hits.
  ASSERT_EQ(ref.by_impressions, 10);
  ASSERT_EQ(ref.scores.size(), 15u);

  testing::TempDir dir;
  Replayed r;
  ASSERT_NO_FATAL_FAILURE(Replay(dir, kPresetOnly,
                                 testing::UbiLines(docs, true),
                                 testing::UbiLines(docs, false), &r));
  simdjson::dom::element events = r.doc["events"];
  EXPECT_EQ(int64_t(events["finalized"]), 15) << r.command.out;
  EXPECT_EQ(int64_t(events["ranked_by_impressions"]), ref.by_impressions);
  EXPECT_EQ(int64_t(events["unranked_requests"]), 0);
  simdjson::dom::object rejected = events["rejected"];
  EXPECT_EQ(rejected.size(), 1u) << r.command.out;
  EXPECT_EQ(int64_t(rejected["empty_results"]), ref.empty_lists);
  EXPECT_EQ(int64_t(events["ignored"]), ref.ignored);
  EXPECT_EQ(int64_t(events["ignored_impressions"]), ref.ignored_impressions);
  EXPECT_EQ(int64_t(events["orphaned_judgments"]), ref.orphaned);
  EXPECT_EQ(int64_t(events["duplicate_results"]), ref.duplicates);
  EXPECT_EQ(int64_t(events["position_mismatches"]), ref.mismatches);
  EXPECT_EQ(int64_t(events["late"]), 0);

  EXPECT_EQ(int64_t(r.doc["variants"]["default"]["requests"]), 15);
  EXPECT_NEAR(MeanOf(r, "default", "ndcg_cut_10"), Mean(ref.scores, 0), 1e-12);
  EXPECT_NEAR(MeanOf(r, "default", "P_10"), Mean(ref.scores, 1), 1e-12);
  EXPECT_NEAR(MeanOf(r, "default", "recip_rank"), Mean(ref.scores, 2), 1e-12);
  // The table shows what was set aside, and the log how many rejections
  // its rate limit left out (5 logged, 5 a second).
  const CommandResult table = RunCommand(
      {RankwatchBinary(), "replay", "--config", dir.path() + "/config.yaml",
       "--results", dir.path() + "/queries.jsonl", "--judgments",
       dir.path() + "/events.jsonl"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find(" rejected=" + std::to_string(ref.empty_lists) +
                           " (empty_results " +
                           std::to_string(ref.empty_lists) + ")\n"),
            std::string::npos)
      << table.out;
  for (const std::string& count :
       {" ignored=" + std::to_string(ref.ignored) + " ",
        " orphaned_judgments=" + std::to_string(ref.orphaned) + " ",
        " ignored_impressions=" + std::to_string(ref.ignored_impressions) +
            "\n"}) {
    EXPECT_NE(table.out.find(count), std::string::npos) << count << table.out;
  }
  EXPECT_NE(table.err.find(std::to_string(ref.empty_lists - 5) +
                           " more rejected events not logged"),
            std::string::npos)
      << table.err;
}

// config/ubi.yaml as shipped, on data without experiments (the excerpt):
// every search scored under "default", no experiment reported.
TEST(UbiProducersTest, ShippedConfigOnDataWithoutExperiments) {
  const std::vector<UbiDocument> docs =
      testing::ReadUbiBulk(kProducers + "/search-relevance-excerpt.ndjson");
  testing::TempDir dir;
  const CommandResult res = RunCommand(
      {RankwatchBinary(), "replay", "--config",
       std::string(SourceTree()) + "/config/ubi.yaml", "--results",
       dir.Write("q.jsonl", testing::UbiLines(docs, true)), "--judgments",
       dir.Write("e.jsonl", testing::UbiLines(docs, false))});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("default      ndcg_cut_10              15 "),
            std::string::npos)
      << res.out;
  EXPECT_EQ(res.out.find("experiment "), std::string::npos) << res.out;
  EXPECT_EQ(res.out.find("no_data"), std::string::npos) << res.out;
}

// Two clicks of the plugin's README query (hit "9") and one on a doc it
// did not serve; by hand: the list ["9"] with "9" at grade 2 (the cart)
// and "7" judged 1 but not served: P@10 = 1/10, RR = 1, nDCG@10 =
// (2/log2 2) / (2/log2 2 + 1/log2 3).
constexpr char kReadmeEvents[] =
    R"({"action_name":"click","query_id":"12300d16cb-b6f1-4012-93ebcc49cac90426","timestamp":1716408300000,"event_attributes":{"object":{"object_id":"9"},"position":{"ordinal":1}}}
{"action_name":"add_to_cart","query_id":"12300d16cb-b6f1-4012-93ebcc49cac90426","timestamp":"2024-05-22T20:05:10.000Z","event_attributes":{"object":{"object_id":"9"},"position":{"ordinal":1}}}
{"action_name":"click","query_id":"12300d16cb-b6f1-4012-93ebcc49cac90426","timestamp":1716408320000,"event_attributes":{"object":{"object_id":"7"},"position":{"ordinal":2}}}
)";

// The plugin before 2.19 (query_response_object_ids, epoch-ms time): its
// README's record as it is, and the same record with an ISO time.
TEST(UbiProducersTest, PluginBefore219ReadmeRecord) {
  std::string record =
      testing::ReadFile(kProducers + "/plugin-readme-query.json");
  record.erase(std::remove(record.begin(), record.end(), '\n'), record.end());
  for (const std::string& line : {record, [&] {
                                    std::string iso = record;
                                    const std::string epoch = "1716408298072";
                                    iso.replace(iso.find(epoch), epoch.size(),
                                                "\"2024-05-22T20:04:58.072Z\"");
                                    return iso;
                                  }()}) {
    testing::TempDir dir;
    Replayed r;
    ASSERT_NO_FATAL_FAILURE(
        Replay(dir, kPresetOnly, line + "\n", kReadmeEvents, &r));
    EXPECT_EQ(int64_t(r.doc["events"]["finalized"]), 1) << r.command.out;
    EXPECT_EQ(r.doc["events"]["rejected"].get_object().size(), 0u);
    EXPECT_DOUBLE_EQ(MeanOf(r, "default", "P_10"), 0.1);
    EXPECT_DOUBLE_EQ(MeanOf(r, "default", "recip_rank"), 1.0);
    EXPECT_NEAR(MeanOf(r, "default", "ndcg_cut_10"), 2 / (2 + 1 / std::log2(3)),
                1e-12);
    // "7" was not served at ordinal 2: one mismatch; "9" at 1 is rank 1.
    EXPECT_EQ(int64_t(r.doc["events"]["position_mismatches"]), 1);
  }
}

// The plugin's query record as it posts it to Data Prepper (Jackson's
// camelCase serialization of QueryRequest, tests/data/ubi/README.md), the
// events as the JavaScript collector writes them (snake_case): the preset
// reads both. By hand: list [a, b, c], "experiment" "v2" in the
// attributes; a purchase of c (rank 3, grade 3): P@10 = 1/10, RR = 1/3,
// nDCG@10 = (3/log2 4) / (3/log2 2) = 1/2.
constexpr char kDataPrepperQuery[] =
    R"({"timestamp":"2025-02-10T09:15:00.125+0000","queryId":"dp-1","clientId":"c-1","userQuery":"","query":"{\"query\":{\"match_all\":{}}}","application":"shop","queryAttributes":{"experiment":"v2"},"queryResponse":{"queryId":"dp-1","queryResponseId":"r-1","queryResponseHitIds":["a","b","c"]}})";
constexpr char kDataPrepperEvents[] =
    R"({"application":"shop","action_name":"purchase","query_id":"dp-1","client_id":"c-1","timestamp":"2025-02-10T09:16:00.000Z","event_attributes":{"object":{"object_id":"c"},"position":{"ordinal":3}}}
)";

TEST(UbiProducersTest, DataPrepperPayload) {
  testing::TempDir dir;
  Replayed r;
  ASSERT_NO_FATAL_FAILURE(Replay(dir, kPresetOnly,
                                 std::string(kDataPrepperQuery) + "\n",
                                 kDataPrepperEvents, &r));
  EXPECT_EQ(int64_t(r.doc["events"]["finalized"]), 1) << r.command.out;
  EXPECT_EQ(int64_t(r.doc["variants"]["v2"]["requests"]), 1);
  EXPECT_DOUBLE_EQ(MeanOf(r, "v2", "P_10"), 0.1);
  EXPECT_DOUBLE_EQ(MeanOf(r, "v2", "recip_rank"), 1.0 / 3);
  EXPECT_NEAR(MeanOf(r, "v2", "ndcg_cut_10"), 0.5, 1e-12);
  EXPECT_EQ(int64_t(r.doc["events"]["position_mismatches"]), 0);
}

// A record with the field under both names is ambiguous: duplicate_key.
TEST(UbiProducersTest, BothNamesOfOneFieldAreADuplicateKey) {
  testing::TempDir dir;
  const CommandResult res = RunCommand(
      {RankwatchBinary(), "replay", "--config",
       dir.Write("config.yaml", kPresetOnly), "--results",
       dir.Write(
           "q.jsonl",
           R"({"query_id":"q","queryId":"q","query_response_hit_ids":["a"],"timestamp":1716408298072})"
           "\n"
           R"({"query_id":"q2","query_response_hit_ids":["a"],"query_response_object_ids":["a"],"timestamp":1716408298072})"
           "\n"
           R"({"query_id":"q3","query_response_hit_ids":["a"],"timestamp":1716408298072})"
           "\n")});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.err.find("duplicate_key"), std::string::npos) << res.err;
  EXPECT_NE(res.out.find("(duplicate_key 2)\n"), std::string::npos) << res.out;
}

}  // namespace
}  // namespace rankwatch
