// `rankwatch replay` end to end, as a process: the streaming pipeline must
// give trec_eval's numbers when fed the reference corpus as events, and the
// hand-computed numbers of a small impression-mode stream with bad events.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::ConformanceDir;
using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;

const std::string kDir = ConformanceDir();

CommandResult Replay(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {RankwatchBinary(), "replay"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

struct RunLine {
  double score;
  std::string docno;
};

// The reference corpus as events, built here independently of rankwatch's
// TREC reader: one results event per run query, its docs in trec_eval's
// ranking order (score descending, then docno descending by bytes), and the
// qrels as one batch of judgments per query, all before the results.
struct CorpusEvents {
  std::string results;
  std::string judgments;
  std::set<std::string> run_qids;
  std::set<std::string> qrels_qids;
};

CorpusEvents CorpusAsEvents(const std::string& dir) {
  CorpusEvents ev;
  std::map<std::string, std::vector<RunLine>> run;
  std::istringstream run_in(ReadFile(dir + "/run.txt"));
  for (std::string line; std::getline(run_in, line);) {
    std::istringstream f(line);
    std::string qid, q0, docno, rank, score;
    f >> qid >> q0 >> docno >> rank >> score;
    run[qid].push_back({std::stod(score), docno});
  }
  std::map<std::string, std::vector<std::pair<std::string, int>>> qrels;
  std::istringstream qrels_in(ReadFile(dir + "/qrels.txt"));
  for (std::string line; std::getline(qrels_in, line);) {
    std::istringstream f(line);
    std::string qid, iter, docno;
    int grade;
    f >> qid >> iter >> docno >> grade;
    qrels[qid].emplace_back(docno, grade);
  }
  for (const auto& [qid, docs] : qrels) {
    ev.qrels_qids.insert(qid);
    ev.judgments +=
        "{\"query_id\":\"" + qid + "\",\"timestamp\":1000," + "\"judgments\":[";
    for (size_t i = 0; i < docs.size(); ++i) {
      if (i > 0) ev.judgments += ',';
      ev.judgments += "{\"doc_id\":\"" + docs[i].first +
                      "\",\"relevance\":" + std::to_string(docs[i].second) +
                      "}";
    }
    ev.judgments += "]}\n";
  }
  int64_t t = 2000;
  for (auto& [qid, lines] : run) {
    ev.run_qids.insert(qid);
    std::sort(
        lines.begin(), lines.end(), [](const RunLine& a, const RunLine& b) {
          return a.score != b.score ? a.score > b.score : a.docno > b.docno;
        });
    ev.results += "{\"request_id\":\"req-" + qid + "\",\"query_id\":\"" + qid +
                  "\",\"timestamp\":" + std::to_string(t++) + ",\"results\":[";
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i > 0) ev.results += ',';
      ev.results += "\"" + lines[i].docno + "\"";
    }
    ev.results += "]}\n";
  }
  return ev;
}

// trec_eval's per-query figures at full precision: measure -> qid -> value.
std::map<std::string, std::map<std::string, double>> PerQuery(
    const std::string& file) {
  std::map<std::string, std::map<std::string, double>> values;
  std::istringstream in(ReadFile(file));
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string measure, qid, value;
    f >> measure >> qid >> value;
    if (qid != "all") values[measure][qid] = std::stod(value);
  }
  return values;
}

// The corpus's events are stamped at 1 s after the epoch: below the
// default events.min_timestamp (2010), so the floor is lowered.
constexpr char kQrelsConfig[] = R"(
join:
  mode: qrels
events:
  max_results: 1000
  min_timestamp: "1970-01-01T00:00:00Z"
metrics:
  cutoffs: [1, 3, 5, 10, 20, 100]
  measures: [precision, recall, reciprocal_rank, average_precision, ndcg,
             success, r_precision, judged]
)";

// The consistency check of the streaming core: the main corpus replayed in
// qrels mode (R = 0 queries counted, as trec_eval -c does) gives trec_eval's
// per-query values, so their means and standard deviations over the scored
// queries (those in both files) match.
void ExpectTrecEvalMeans(const std::string& json, const CorpusEvents& ev) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(json)).get(doc),
            simdjson::SUCCESS)
      << json;
  std::vector<std::string> scored;
  std::set_intersection(ev.run_qids.begin(), ev.run_qids.end(),
                        ev.qrels_qids.begin(), ev.qrels_qids.end(),
                        std::back_inserter(scored));
  ASSERT_EQ(scored.size(), 108u);
  const auto reference = PerQuery(kDir + "/main/te10.c.focused.full.txt");
  int compared = 0;
  for (const auto& [measure, by_qid] : reference) {
    if (measure.rfind("num_", 0) == 0) continue;
    double sum = 0, sum_sq = 0;
    for (const std::string& q : scored) sum += by_qid.at(q);
    const double mean = sum / static_cast<double>(scored.size());
    for (const std::string& q : scored) {
      sum_sq += (by_qid.at(q) - mean) * (by_qid.at(q) - mean);
    }
    const double stddev = std::sqrt(sum_sq / (scored.size() - 1.0));
    simdjson::dom::element m = doc["variants"]["default"]["measures"][measure];
    ASSERT_TRUE(m.is_object()) << measure;
    EXPECT_EQ(int64_t(m["count"]), 108) << measure;
    EXPECT_NEAR(double(m["mean"]), mean, 1e-9) << measure;
    EXPECT_NEAR(double(m["stddev"]), stddev, 1e-9) << measure;
    ++compared;
  }
  EXPECT_EQ(compared, 6 * 5 + 4);  // P, recall, ndcg_cut, map_cut, success
                                   // at 6 cutoffs; map, ndcg, RR, Rprec.
  // Queries only in the run have no judgments in the table.
  EXPECT_EQ(int64_t(doc["events"]["unjudged"]), 6);
  int without_relevant = 0;
  for (const std::string& q : scored) {
    without_relevant += reference.at("num_rel").at(q) == 0 ? 1 : 0;
  }
  EXPECT_GT(without_relevant, 0);
  EXPECT_EQ(int64_t(doc["events"]["without_relevant"]), without_relevant);
}

TEST(ReplayTest, CorpusAsEventsGivesTrecEvalMeans) {
  testing::TempDir dir;
  const CorpusEvents ev = CorpusAsEvents(kDir + "/main");
  const std::string config = dir.Write("config.yaml", kQrelsConfig);
  const CommandResult res =
      Replay({"--config", config, "--results",
              dir.Write("results.jsonl", ev.results), "--judgments",
              dir.Write("judgments.jsonl", ev.judgments), "--format", "json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  ExpectTrecEvalMeans(res.out, ev);
}

TEST(ReplayTest, PreloadedQrelsFileGivesTheSameMeans) {
  testing::TempDir dir;
  const CorpusEvents ev = CorpusAsEvents(kDir + "/main");
  const CommandResult res =
      Replay({"--config", dir.Write("config.yaml", kQrelsConfig), "--results",
              dir.Write("results.jsonl", ev.results), "--qrels",
              kDir + "/main/qrels.txt", "--format", "json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  ExpectTrecEvalMeans(res.out, ev);
}

// A small click stream, by hand. Window 1 minute; cutoffs 1 and 2.
//   r1 (A): [a, b, c], click on b        P_1 = 0, P_2 = 1/2, RR = 1/2
//   r2 (B): [x, y], clicks on x (2), y   P_1 = 1, P_2 = 1,   RR = 1
//   r3 (A): [p, q], no click             R = 0: all 0, counted
// Means: A: P_1 = 0, P_2 = 1/4, RR = 1/4 over 2 requests; B: 1, 1, 1.
// Plus a click on r1 an hour later (late), and three bad events.
TEST(ReplayTest, ImpressionStreamWithBadEvents) {
  testing::TempDir dir;
  // Event times of 0 to 1 h after the epoch: below the default
  // events.min_timestamp (2010), so the floor is lowered.
  const std::string config = dir.Write("config.yaml", R"(
join:
  window: 1m
  allowed_lateness: 0s
events:
  min_timestamp: "1970-01-01T00:00:00Z"
metrics:
  cutoffs: [1, 2]
  measures: [precision, reciprocal_rank]
)");
  const std::string results = dir.Write(
      "results.jsonl",
      R"({"request_id":"r1","variant":"A","timestamp":0,"results":["a","b","c"]}
{"request_id":"r2","variant":"B","timestamp":0,"results":[{"doc_id":"x","score":2.5},{"doc_id":"y"}]}
{"request_id":"r3","variant":"A","timestamp":10,"results":["p","q"]}
{"request_id":"r4","variant":"A","timestamp":20,"results":[]}
not json at all
)");
  const std::string judgments = dir.Write(
      "judgments.jsonl",
      R"({"request_id":"r1","doc_id":"b","relevance":1,"timestamp":1000}
{"request_id":"r2","judgments":[{"doc_id":"x","relevance":2},{"doc_id":"y","relevance":1}],"timestamp":2000}
{"request_id":"r2","doc_id":"y","relevance":"high","timestamp":2500}
{"request_id":"r1","doc_id":"a","relevance":1,"timestamp":3600000}
)");
  const std::string dead = dir.path() + "/dead.jsonl";
  const CommandResult res =
      Replay({"--config", config, "--results", results, "--judgments",
              judgments, "--format", "json", "--dead-letter", dead});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(res.out)).get(doc),
            simdjson::SUCCESS)
      << res.out;
  simdjson::dom::element a = doc["variants"]["A"];
  EXPECT_EQ(int64_t(a["requests"]), 2);
  EXPECT_EQ(int64_t(a["measures"]["P_1"]["count"]), 2);
  EXPECT_DOUBLE_EQ(double(a["measures"]["P_1"]["mean"]), 0.0);
  EXPECT_DOUBLE_EQ(double(a["measures"]["P_2"]["mean"]), 0.25);
  EXPECT_DOUBLE_EQ(double(a["measures"]["recip_rank"]["mean"]), 0.25);
  EXPECT_DOUBLE_EQ(double(a["measures"]["recip_rank_2"]["mean"]), 0.25);
  // Sample stddev of P_2 over {1/2, 0}: sqrt(((1/4)^2 * 2) / 1).
  EXPECT_DOUBLE_EQ(double(a["measures"]["P_2"]["stddev"]),
                   std::sqrt(2 * 0.0625));
  simdjson::dom::element b = doc["variants"]["B"];
  EXPECT_DOUBLE_EQ(double(b["measures"]["P_2"]["mean"]), 1.0);
  EXPECT_DOUBLE_EQ(double(b["measures"]["recip_rank"]["mean"]), 1.0);
  simdjson::dom::element events = doc["events"];
  EXPECT_EQ(int64_t(events["results"]), 5);
  EXPECT_EQ(int64_t(events["judgments"]), 4);
  EXPECT_EQ(int64_t(events["rejected"]["empty_results"]), 1);
  EXPECT_EQ(int64_t(events["rejected"]["malformed_json"]), 1);
  EXPECT_EQ(int64_t(events["rejected"]["non_integer_relevance"]), 1);
  // r1's click at 1 h lies outside its 1m window: unclaimed, not late
  // (replay feeds in event-time order, so nothing arrives late).
  EXPECT_EQ(int64_t(events["late"]), 0);
  EXPECT_EQ(int64_t(events["orphaned_judgments"]), 1);
  EXPECT_EQ(int64_t(events["without_relevant"]), 1);
  EXPECT_EQ(int64_t(events["finalized"]), 3);

  // Every rejected event is in the dead-letter file, with its reason and
  // the original payload.
  std::istringstream lines(ReadFile(dead));
  std::multiset<std::string> reasons;
  for (std::string line; std::getline(lines, line);) {
    simdjson::dom::element d;
    ASSERT_EQ(parser.parse(simdjson::padded_string(line)).get(d),
              simdjson::SUCCESS)
        << line;
    reasons.insert(std::string(std::string_view(d["reason"])));
    if (std::string_view(d["reason"]) == "malformed_json") {
      EXPECT_EQ(std::string_view(d["payload"]), "not json at all");
      EXPECT_EQ(int64_t(d["offset"]), 5);  // Line 5 of the results file.
    }
  }
  EXPECT_EQ(reasons,
            (std::multiset<std::string>{"empty_results", "malformed_json",
                                        "non_integer_relevance"}));
}

// Issue 9: files in any order (here: per-partition dumps concatenated,
// newest partition first) replay like sorted ones, and a far-future event
// is rejected and dead-lettered without moving event time: before, one
// event stamped 9999-12-31 made every later event late.
// Query movers (issue 26) by hand: an A/B experiment on P@1 (primary).
// q-good: 30 lists per arm (a query is tested from 30, issue 42), all
// clicked at rank 1 (P@1 = 1 in both); q-bad: A clicked at rank 1 in 24 of
// 30 (mean 0.8), B in 6 of 30 (0.2); q-rare: one list per arm, A clicked at
// rank 1, B at rank 2. Each arm has 61 lists. Contributions (share x
// difference):
//   q-bad  60/122 x (0.2 - 0.8) = -0.2950819672...
//   q-rare  2/122 x (0 - 1)     = -0.0163934426...  (untested: 1 list)
//   q-good 60/122 x 0           =  0
// Welch's p of q-bad (SciPy 1.17 ttest_ind(b, a, equal_var=False)):
// 4.049162311710735e-07; q-good has no variance (p 1); BH over the two:
// 8.09832462342147e-07. q-bad is significant: listed first.
TEST(ReplayTest, QueryMoversNameTheQueriesThatMoved) {
  testing::TempDir dir;
  const std::string config = dir.Write("config.yaml", R"(
join:
  window: 1m
  allowed_lateness: 0s
events:
  min_timestamp: "1970-01-01T00:00:00Z"
metrics:
  cutoffs: [1]
  measures: [precision]
experiments:
  - name: ab
    baseline: A
    treatments: [B]
    primary: [precision@1]
)");
  std::string results, judgments;
  int n = 0;
  auto list = [&](const std::string& query, const std::string& variant,
                  int clicked_rank) {
    const std::string id = "r" + std::to_string(n);
    const std::string t = std::to_string(1000 * n++);
    results += "{\"request_id\":\"" + id + "\",\"query_id\":\"" + query +
               "\",\"variant\":\"" + variant + "\",\"timestamp\":" + t +
               ",\"results\":[\"d1\",\"d2\"]}\n";
    judgments += "{\"request_id\":\"" + id + "\",\"doc_id\":\"d" +
                 std::to_string(clicked_rank) +
                 "\",\"relevance\":1,\"timestamp\":" + t + "}\n";
  };
  for (int i = 0; i < 30; ++i) {
    list("q-good", "A", 1);
    list("q-good", "B", 1);
    list("q-bad", "A", i < 24 ? 1 : 2);
    list("q-bad", "B", i < 6 ? 1 : 2);
  }
  list("q-rare", "A", 1);
  list("q-rare", "B", 2);
  const CommandResult res = Replay(
      {"--config", config, "--results", dir.Write("r.jsonl", results),
       "--judgments", dir.Write("j.jsonl", judgments), "--format", "json"});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(res.out)).get(doc),
            simdjson::SUCCESS)
      << res.out;
  simdjson::dom::array movers;
  ASSERT_EQ(
      doc["experiments"]["ab"]["treatments"]["B"]["P_1"]["query_movers"].get(
          movers),
      simdjson::SUCCESS)
      << res.out;
  ASSERT_EQ(movers.size(), 3u);
  simdjson::dom::element bad = movers.at(0);
  EXPECT_EQ(std::string_view(bad["query"]), "q-bad");
  EXPECT_EQ(int64_t(bad["baseline_count"]), 30);
  EXPECT_EQ(int64_t(bad["treatment_count"]), 30);
  EXPECT_NEAR(double(bad["baseline_mean"]), 0.8, 1e-15);
  EXPECT_NEAR(double(bad["treatment_mean"]), 0.2, 1e-15);
  EXPECT_NEAR(double(bad["difference"]), -0.6, 1e-15);
  EXPECT_NEAR(double(bad["contribution"]), -0.6 * 60 / 122, 1e-15);
  EXPECT_NEAR(double(bad["p_value"]), 4.049162311710735e-07, 1e-15);
  EXPECT_NEAR(double(bad["p_value_bh"]), 8.09832462342147e-07, 1e-15);
  EXPECT_TRUE(bool(bad["tested"]));
  EXPECT_TRUE(bool(bad["significant"]));
  simdjson::dom::element rare = movers.at(1);
  EXPECT_EQ(std::string_view(rare["query"]), "q-rare");
  EXPECT_NEAR(double(rare["contribution"]), -2.0 / 122, 1e-15);
  EXPECT_FALSE(bool(rare["tested"]));
  EXPECT_TRUE(rare["p_value"].is_null());
  EXPECT_EQ(std::string_view(movers.at(2)["query"]), "q-good");
  EXPECT_EQ(double(movers.at(2)["contribution"]), 0.0);

  // The decision (docs/statistics.md, "Decisions") beside the series: A
  // 55 of 61 lists relevant at 1, B 36 of 61; d = 36/61 - 55/61 = -19/61
  // (-34.5% of 55/61). Variances (k - k^2/n)/(n - 1): 0.0901639 and
  // 0.2459016; V = their sum / 61; the 95% mSPRT half-width (tau 0.05)
  // 0.33519256 (Python, math module; wider than Welch's 0.1473):
  // [-0.64667, +0.02372] holds 0, so keep running (the running
  // intersection can only narrow it).
  simdjson::dom::element decision;
  ASSERT_EQ(
      doc["experiments"]["ab"]["treatments"]["B"]["decision"].get(decision),
      simdjson::SUCCESS)
      << res.out;
  EXPECT_EQ(std::string_view(decision["value"]), "keep_running");
  EXPECT_EQ(std::string_view(decision["treatment"]), "B");
  simdjson::dom::element primary = decision["inputs"].at(0);
  EXPECT_EQ(std::string_view(primary["role"]), "primary");
  EXPECT_EQ(std::string_view(primary["series"]), "precision@1");
  EXPECT_EQ(std::string_view(primary["state"]), "inconclusive");
  EXPECT_NEAR(double(primary["difference"]), -19.0 / 61, 1e-15);
  EXPECT_GE(double(primary["ci_lower"]), -0.6466679669941144 - 1e-12);
  EXPECT_LE(double(primary["ci_upper"]), 0.023717147321983323 + 1e-12);
  EXPECT_EQ(int64_t(primary["baseline_count"]), 61);
  // 61 lists per arm: below the default minimum sample (issue 42), which
  // the first reason names; the series' own reason follows.
  const std::string_view minimum = decision["reasons"].at(0);
  EXPECT_EQ(minimum.substr(0, 89),
            "minimum sample not reached: baseline 61 and treatment 61 of the "
            "minimum 100 lists per arm")
      << minimum;
  EXPECT_EQ(int64_t(decision["minimum"]["min_lists"]), 100);
  EXPECT_EQ(int64_t(decision["minimum"]["baseline_lists"]), 61);
  EXPECT_FALSE(bool(decision["minimum"]["met"]));
  EXPECT_EQ(decision["effect_changes"].get_array().size(), 0u);
  const std::string_view reason = decision["reasons"].at(1);
  EXPECT_EQ(reason.substr(0, 64),
            "precision@1 shows no significant difference yet: -0.3115 (-34.5%")
      << reason;

  const CommandResult table =
      Replay({"--config", config, "--results", dir.path() + "/r.jsonl",
              "--judgments", dir.path() + "/j.jsonl"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("  decision for B: keep_running\n    - minimum "
                           "sample not reached: baseline 61 and treatment 61 "
                           "of the minimum 100 lists per arm"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("    - precision@1 shows no significant difference "
                           "yet"),
            std::string::npos)
      << table.out;
  // The series as the configuration spells it, in every line (issue 43).
  EXPECT_NE(table.out.find("queries moving B's precision@1 most"),
            std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("P_1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("    q-bad                      -0.2951  diff "
                           "-0.6000  lists 30/30  p(BH) 8.1e-07"),
            std::string::npos)
      << table.out;
}

TEST(ReplayTest, FileOrderAndFarFutureEventsChangeNothing) {
  testing::TempDir dir;
  const std::string config = dir.Write("config.yaml", R"(
join:
  window: 10s
  allowed_lateness: 0s
  early_tolerance: 1s
metrics:
  cutoffs: [1]
  measures: [precision]
)");
  // Three lists served at T + 1, 2 and 3 s (T = 1763800000000 ms); r1's doc a
  // is clicked at +5 s, r2's at +10 s (the last ms of its window), r3's at
  // +10.001 s (outside). P@1 of A: (1 + 1 + 0) / 3.
  const std::string results = dir.Write(
      "results.jsonl",
      R"({"request_id":"r3","variant":"A","timestamp":1763800003000,"results":["a"]}
{"request_id":"x","variant":"A","timestamp":"9999-12-31T23:59:59Z","results":["a"]}
{"request_id":"r1","variant":"A","timestamp":1763800001000,"results":["a"]}
{"request_id":"r2","variant":"A","timestamp":1763800002000,"results":["a"]}
)");
  const std::string judgments = dir.Write(
      "judgments.jsonl",
      R"({"request_id":"r3","doc_id":"a","relevance":1,"timestamp":1763800013001}
{"request_id":"r2","doc_id":"a","relevance":1,"timestamp":1763800012000}
{"request_id":"y","doc_id":"a","relevance":1,"timestamp":9223372036854775807}
{"request_id":"r1","doc_id":"a","relevance":1,"timestamp":1763800006000}
)");
  const std::string dead = dir.path() + "/dead.jsonl";
  const CommandResult res =
      Replay({"--config", config, "--results", results, "--judgments",
              judgments, "--format", "json", "--dead-letter", dead});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(res.out)).get(doc),
            simdjson::SUCCESS)
      << res.out;
  simdjson::dom::element a = doc["variants"]["A"];
  EXPECT_EQ(int64_t(a["requests"]), 3);
  EXPECT_DOUBLE_EQ(double(a["measures"]["P_1"]["mean"]), 2.0 / 3.0);
  simdjson::dom::element events = doc["events"];
  EXPECT_EQ(int64_t(events["rejected"]["future_timestamp"]), 2);
  EXPECT_EQ(int64_t(events["late"]), 0);
  EXPECT_EQ(int64_t(events["late_results"]), 0);
  EXPECT_EQ(int64_t(events["orphaned_judgments"]), 1);
  std::istringstream lines(ReadFile(dead));
  int64_t dead_letters = 0;
  for (std::string line; std::getline(lines, line);) {
    simdjson::dom::element d;
    ASSERT_EQ(parser.parse(simdjson::padded_string(line)).get(d),
              simdjson::SUCCESS);
    EXPECT_EQ(std::string_view(d["reason"]), "future_timestamp");
    ++dead_letters;
  }
  EXPECT_EQ(dead_letters, 2);
}

// Issue 25: with the default configuration, an event time of 1970 or 2001
// and an event with a field given twice are rejected, not counted as late
// or scored; epoch seconds sent as milliseconds are named as such.
//   line 1: 1764000000 ms = 1970-01-21T10:00:00Z (date -u -d @1764000), as
//           seconds 2025-11-24T16:00:00Z (date -u -d @1764000000);
//   line 2: 2001-06-01, before the default floor 2010-01-01T00:00:00Z;
//   line 3: request_id twice;
//   line 4: 1764000000000 ms = 2025-11-24T16:00:00Z, fine.
TEST(ReplayTest, ImplausibleTimesAndRepeatedKeysAreRejectedByDefault) {
  testing::TempDir dir;
  const std::string config = dir.Write("config.yaml", "join:\n  window: 1m\n");
  const std::string results =
      dir.Write("r.jsonl",
                R"({"request_id":"r1","timestamp":1764000000,"results":["a"]}
{"request_id":"r2","timestamp":"2001-06-01T00:00:00Z","results":["a"]}
{"request_id":"r3","request_id":"r4","timestamp":1764000000000,"results":["a"]}
{"request_id":"r5","timestamp":1764000000000,"results":["a"]}
)");
  const std::string dead = dir.path() + "/dead.jsonl";
  const CommandResult res = Replay({"--config", config, "--results", results,
                                    "--format", "json", "--dead-letter", dead});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(res.out)).get(doc),
            simdjson::SUCCESS)
      << res.out;
  simdjson::dom::element events = doc["events"];
  EXPECT_EQ(int64_t(events["results"]), 4);
  EXPECT_EQ(int64_t(events["rejected"]["past_timestamp"]), 2);
  EXPECT_EQ(int64_t(events["rejected"]["duplicate_key"]), 1);
  EXPECT_EQ(int64_t(events["late"]), 0);
  std::map<int64_t, std::string> details;  // By line.
  std::istringstream lines(ReadFile(dead));
  for (std::string line; std::getline(lines, line);) {
    simdjson::dom::element d;
    ASSERT_EQ(parser.parse(simdjson::padded_string(line)).get(d),
              simdjson::SUCCESS)
        << line;
    details[int64_t(d["offset"])] = std::string(std::string_view(d["detail"]));
  }
  EXPECT_EQ(details,
            (std::map<int64_t, std::string>{
                {1,
                 "'timestamp' 1764000000 is 1970-01-21T10:00:00Z: seconds "
                 "where milliseconds are expected? (as seconds it is "
                 "2025-11-24T16:00:00Z; events.min_timestamp "
                 "2010-01-01T00:00:00Z)"},
                {2,
                 "'timestamp' 2001-06-01T00:00:00Z is before "
                 "events.min_timestamp 2010-01-01T00:00:00Z"},
                {3, "duplicate key 'request_id'"}}));
  EXPECT_NE(res.err.find("seconds where milliseconds are expected?"),
            std::string::npos)
      << res.err;
}

// Issue 15: rejected events written to a full disk were lost silently
// (exit 0). Now the failure is one line on stderr and a non-zero exit.
TEST(ReplayTest, DeadLettersThatCannotBeWrittenFailTheReplay) {
  testing::TempDir dir;
  const std::string config = dir.Write("config.yaml", "join:\n  window: 1m\n");
  const std::string results =
      dir.Write("results.jsonl",
                "not json\n"
                R"({"request_id":"r1","timestamp":1000,"results":["a"]})"
                "\n");
  const CommandResult res = Replay(
      {"--config", config, "--results", results, "--dead-letter", "/dev/full"});
  EXPECT_EQ(res.exit_code, 1) << res.out;
  EXPECT_NE(res.err.find("cannot write the dead-letter file '/dev/full': No "
                         "space left on device"),
            std::string::npos)
      << res.err;
  // One line: the error is the last line of stderr (after the reject log).
  EXPECT_EQ(res.err.substr(res.err.rfind('\n', res.err.size() - 2) + 1,
                           std::string("rankwatch replay: ").size()),
            "rankwatch replay: ")
      << res.err;
}

TEST(ReplayTest, TableFormatAndErrors) {
  testing::TempDir dir;
  // Event times of 0 and 5 ms: the floor (2010 by default) is lowered.
  const std::string config = dir.Write(
      "config.yaml", "metrics:\n  cutoffs: [1]\nevents:\n  min_timestamp: 0\n");
  const std::string results = dir.Write(
      "r.jsonl", R"({"request_id":"r1","timestamp":0,"results":["a"]})");
  const std::string judgments = dir.Write(
      "j.jsonl",
      R"({"request_id":"r1","doc_id":"a","relevance":1,"timestamp":5})");
  CommandResult res = Replay(
      {"--config", config, "--results", results, "--judgments", judgments});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  // One request, its only doc relevant: P_1 = 1, stddev 0.
  char row[128];
  std::snprintf(row, sizeof(row), "%-12s %-16s %10d %10.4f %10.4f\n", "default",
                "P_1", 1, 1.0, 0.0);
  EXPECT_NE(res.out.find(row), std::string::npos) << res.out;
  res = Replay({"--config", config, "--results", dir.path() + "/missing"});
  EXPECT_EQ(res.exit_code, 1);
  EXPECT_NE(res.err.find("missing"), std::string::npos) << res.err;
  res = Replay({"--config", dir.Write("bad.yaml", "join:\n  window: 5\n"),
                "--results", results});
  EXPECT_EQ(res.exit_code, 2);
  EXPECT_NE(res.err.find("bad.yaml:2:11: join.window"), std::string::npos)
      << res.err;
}

// Without --config, the defaults (issue 43: `{}` is a valid configuration):
// a results event of 2026-01-01 (after the default floor of 2010) and its
// judgment, P_5 = 1/5 (one relevant doc of the five served).
TEST(ReplayTest, WithoutAConfigTheDefaults) {
  testing::TempDir dir;
  const std::string results = dir.Write(
      "r.jsonl", R"({"request_id":"r1","timestamp":"2026-01-01T00:00:00Z",)"
                 R"("results":["a","b","c","d","e"]})");
  const std::string judgments =
      dir.Write("j.jsonl", R"({"request_id":"r1","doc_id":"a","relevance":1,)"
                           R"("timestamp":"2026-01-01T00:00:05Z"})");
  const CommandResult res =
      Replay({"--results", results, "--judgments", judgments});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  char row[128];
  std::snprintf(row, sizeof(row), "%-12s %-16s %10d %10.4f %10.4f\n", "default",
                "P_5", 1, 0.2, 0.0);
  EXPECT_NE(res.out.find(row), std::string::npos) << res.out;
}

// Issue 15: `replay --results /dev/zero` grew to 13.6 GB in 60 s. Every
// line of every input is now bounded (64 MiB, or events.max_event_bytes if
// larger): a device stops on line 1 with one line on stderr. A line over
// events.max_event_bytes alone is one rejected event, as in the daemon.
TEST(ReplayTest, LinesAreBounded) {
  testing::TempDir dir;
  // min_timestamp 0: the good event is stamped at the epoch.
  const std::string config = dir.Write(
      "config.yaml", "events:\n  max_event_bytes: 100\n  min_timestamp: 0\n");
  // /dev/zero is one endless line: the replay stops at 64 MiB into it
  // (not at 13.6 GB, as it did), on the results side and the judgments side.
  for (const char* side : {"--results", "--judgments"}) {
    CommandResult res = Replay({"--config", config, side, "/dev/zero"});
    EXPECT_EQ(res.exit_code, 1) << res.err;
    EXPECT_EQ(res.err,
              "rankwatch replay: /dev/zero:1: line longer than 67108864 bytes "
              "(replay's line limit; events.max_event_bytes rejects single "
              "events)\n");
  }
  // A regular file whose line 2 has 101 bytes (a JSON string of 99 'x'):
  // over events.max_event_bytes, that event is rejected as too_large, as
  // the daemon rejects it, and the good event before it still counts.
  const std::string results = dir.Write(
      "r.jsonl", R"({"request_id":"r1","timestamp":0,"results":["a"]})"
                 "\n\"" +
                     std::string(99, 'x') + "\"\n");
  CommandResult res =
      Replay({"--config", config, "--results", results, "--format", "json"});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("\"events\":{\"results\":2,"), std::string::npos)
      << res.out;
  EXPECT_NE(res.out.find("\"rejected\":{\"too_large\":1}"), std::string::npos)
      << res.out;
}

// Issue 15: a config value with a NUL byte or a line break (here the qrels
// file and the dead-letter file) made an error span two lines or stop at
// the NUL. Now control characters are escaped, and a file name holding a
// NUL is refused (open() would have read a different file).
TEST(ReplayTest, ErrorsEchoingConfigValuesAreOneLine) {
  testing::TempDir dir;
  const std::string results = dir.Write(
      "r.jsonl", R"({"request_id":"r1","timestamp":0,"results":["a"]})");
  CommandResult res =
      Replay({"--config",
              dir.Write("q.yaml",
                        "join:\n  mode: qrels\n  qrels_file: \"q\\0x\\ny\"\n"),
              "--results", results});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_EQ(res.err,
            "rankwatch replay: cannot open 'q\\x00x\\ny': the name holds a "
            "NUL byte\n");
  res = Replay({"--config",
                dir.Write("q2.yaml",
                          "join:\n  mode: qrels\n  qrels_file: "
                          "\"" +
                              dir.path() + "/no\\nsuch\\e[0m\"\n"),
                "--results", results});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_EQ(res.err, "rankwatch replay: cannot open '" + dir.path() +
                         "/no\\nsuch\\x1b[0m': No such file or directory\n");
  res = Replay({"--config",
                dir.Write("d.yaml", "dead_letter:\n  file: \"" + dir.path() +
                                        "/x\\0\\n\"\n"),
                "--results", results});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_EQ(res.err, "rankwatch replay: cannot open dead-letter file '" +
                         dir.path() +
                         "/x\\x00\\n': the name holds a NUL "
                         "byte\n");
  // The configuration file's own name.
  res = Replay({"--config", dir.path() + "/c\nd", "--results", results});
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_EQ(res.err.find('\n'), res.err.size() - 1) << res.err;
  EXPECT_NE(res.err.find("/c\\nd"), std::string::npos) << res.err;
}

// Issue 25, item 1: replay is strict. Before, `--qrels` in impression mode
// was ignored (every mean 0, exit 0), no input printed a "no data" table,
// and judgments given as --results were all rejected with exit 0; rejects
// were logged as "(partition 0, offset 1)".
TEST(ReplayTest, StrictAboutFlagsInputsAndAllRejectedFiles) {
  testing::TempDir dir;
  const std::string impression = dir.Write(
      "imp.yaml", "metrics:\n  cutoffs: [1]\nevents:\n  min_timestamp: 0\n");
  const std::string results = dir.Write(
      "r.jsonl", R"({"request_id":"r1","timestamp":0,"results":["a"]})"
                 "\n");
  const std::string judgments = dir.Write(
      "j.jsonl",
      R"({"request_id":"r1","doc_id":"a","relevance":1,"timestamp":5})"
      "\n"
      R"({"request_id":"r1","doc_id":"b","relevance":0,"timestamp":6})"
      "\n");
  const std::string qrels = dir.Write("q.txt", "q1 0 a 1\n");

  // --qrels does not apply to impression mode: refused, exit 2, one line.
  CommandResult res =
      Replay({"--config", impression, "--results", results, "--qrels", qrels});
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_EQ(res.err,
            "rankwatch replay: --qrels applies to join.mode: qrels, "
            "and " +
                impression +
                " joins impressions (join.mode: impression): give "
                "judgment events with --judgments, or set "
                "join.mode: qrels\n");
  EXPECT_EQ(res.out, "");

  // No input at all: exit 2.
  res = Replay({"--config", impression});
  EXPECT_EQ(res.exit_code, 2) << res.err;
  EXPECT_EQ(res.err,
            "rankwatch replay: nothing to replay: give --results FILE and/or "
            "--judgments FILE (JSON lines)\n");

  // Judgments given as --results: both lines rejected, exit 1 with the
  // count and a hint; each reject is logged with FILE:LINE.
  res = Replay({"--config", impression, "--results", judgments});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  const std::string last =
      "rankwatch replay: " + judgments +
      ": all 2 results events rejected (first at line 1); they are judgment "
      "events: give them as --judgments\n";
  ASSERT_GE(res.err.size(), last.size()) << res.err;
  EXPECT_EQ(res.err.substr(res.err.size() - last.size()), last) << res.err;
  EXPECT_NE(res.err.find("rejected results event (" + judgments + ":1): "),
            std::string::npos)
      << res.err;
  EXPECT_NE(res.err.find("rejected results event (" + judgments + ":2): "),
            std::string::npos)
      << res.err;
  EXPECT_EQ(res.err.find("partition"), std::string::npos) << res.err;
  EXPECT_EQ(res.out, "");

  // And results given as --judgments.
  res = Replay({"--config", impression, "--judgments", results});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_NE(
      res.err.find(results + ": all 1 judgments events rejected (first at line "
                             "1); they are results events: give them as "
                             "--results\n"),
      std::string::npos)
      << res.err;

  // A file of garbage: rejected, no hint. An empty file: no events.
  res = Replay({"--config", impression, "--results",
                dir.Write("g.jsonl", "nope\n{}\n\n")});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_NE(res.err.find("g.jsonl: all 2 results events rejected (first at "
                         "line 1)\n"),
            std::string::npos)
      << res.err;
  res = Replay({"--config", impression, "--results", results, "--judgments",
                dir.Write("empty.jsonl", "\n")});
  EXPECT_EQ(res.exit_code, 1) << res.err;
  EXPECT_NE(res.err.find("empty.jsonl: no events\n"), std::string::npos)
      << res.err;

  // One good line among rejected ones is a replay: exit 0. r1's only doc
  // a is judged relevant at 5 ms: P_1 = 1.
  res = Replay({"--config", impression, "--results",
                dir.Write("mixed.jsonl", "nope\n" + ReadFile(results)),
                "--judgments", judgments, "--format", "json"});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("\"P_1\":{\"count\":1,\"mean\":1,"), std::string::npos)
      << res.out;

  // In qrels mode --qrels applies: q1's only doc a has grade 1, P_1 = 1.
  res = Replay({"--config",
                dir.Write("q.yaml",
                          "join:\n  mode: qrels\nmetrics:\n  cutoffs: [1]\n"
                          "events:\n  min_timestamp: 0\n"),
                "--results",
                dir.Write("rq.jsonl", R"({"request_id":"r1","query_id":"q1",)"
                                      R"("timestamp":0,"results":["a"]})"
                                      "\n"),
                "--qrels", dir.Write("qq.txt", "q1 0 a 1\n"), "--format",
                "json"});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.out.find("\"P_1\":{\"count\":1,\"mean\":1,"), std::string::npos)
      << res.out;
}

}  // namespace
}  // namespace rankwatch
