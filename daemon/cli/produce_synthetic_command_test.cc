// `rankwatch produce-synthetic` as a process against an in-process mock
// cluster (moved from daemon/sim's producer test: the subcommand's tests
// sit beside it).
#include "daemon/cli/produce_synthetic_command.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "daemon/sim/kafka_test_util.h"
#include "daemon/sim/mock_cluster.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

namespace testutil = sim::testutil;
using std::chrono::seconds;

constexpr int kPartitions = 4;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + what.size())) {
    ++n;
  }
  return n;
}

// A one-broker mock cluster with the results and judgments topics.
struct Fixture {
  std::unique_ptr<sim::MockCluster> cluster;

  Fixture() {
    StatusOr<std::unique_ptr<sim::MockCluster>> started =
        sim::MockCluster::Start(1);
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (!started.ok()) return;
    cluster = std::move(started).value();
    EXPECT_TRUE(cluster->CreateTopic("results", kPartitions).ok());
    EXPECT_TRUE(cluster->CreateTopic("judgments", kPartitions).ok());
  }
};

TEST(ProduceSyntheticCommandTest, ProducesAndPrintsASummary) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand(
          {RankwatchBinary(), "produce-synthetic", "--bootstrap",
           f.cluster->bootstrap_servers(), "--fast", "--requests", "500",
           "--seed", "7", "--variants", "A,B:0.5", "--regress-variant", "B",
           "--regress-after", "1s", "-X", "linger.ms=1"},
          seconds(30));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("requests=500 results=500 judgments=", 0), 0u)
      << result.out;
  EXPECT_NE(result.out.find("delivery_errors=0 undelivered=0"),
            std::string::npos);
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      f.cluster->bootstrap_servers(), "results", kPartitions, 500, seconds(10));
  ASSERT_EQ(results.size(), 500u);
  std::set<std::string> variants;
  for (const auto& m : results) {
    EXPECT_EQ(m.key.rfind("req-7-", 0), 0u);
    variants.insert(m.value.substr(m.value.find("\"variant\":") + 10, 3));
  }
  EXPECT_EQ(variants, (std::set<std::string>{"\"A\"", "\"B\""}));
}

// --interleave B: about half of the results events are the interleaved
// variant A-vs-B, each of their 10 results tagged with team A or B (5 each:
// team draft alternates within each pair of picks); the others keep their
// scores and no team. Judgments say whether they are a click or a purchase.
TEST(ProduceSyntheticCommandTest, InterleavesTheChallenger) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand(
          {RankwatchBinary(), "produce-synthetic", "--bootstrap",
           f.cluster->bootstrap_servers(), "--fast", "--requests", "400",
           "--seed", "3", "--interleave", "B", "--status-interval", "0s", "-X",
           "linger.ms=1"},
          seconds(30));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      f.cluster->bootstrap_servers(), "results", kPartitions, 400, seconds(10));
  ASSERT_EQ(results.size(), 400u);
  int interleaved = 0;
  for (const auto& m : results) {
    const size_t teams_a = Count(m.value, "\"team\":\"A\"");
    const size_t teams_b = Count(m.value, "\"team\":\"B\"");
    if (m.value.find("\"variant\":\"A-vs-B\"") == std::string::npos) {
      EXPECT_EQ(teams_a + teams_b, 0u) << m.value;
      EXPECT_EQ(Count(m.value, "\"score\":"), 10u);
      continue;
    }
    ++interleaved;
    EXPECT_EQ(teams_a, 5u) << m.value;
    EXPECT_EQ(teams_b, 5u) << m.value;
  }
  // A binomial(400, 0.5) count, +-4 s.e. (= 40).
  EXPECT_NEAR(interleaved, 200, 40);
  const std::vector<testutil::ConsumedMessage> judgments = testutil::ConsumeAll(
      f.cluster->bootstrap_servers(), "judgments", kPartitions, 1, seconds(10));
  ASSERT_FALSE(judgments.empty());
  for (const auto& m : judgments) {
    EXPECT_TRUE(m.value.find("\"kind\":\"click\"") != std::string::npos ||
                m.value.find("\"kind\":\"purchase\"") != std::string::npos)
        << m.value;
  }
}

// --covariate pre.clicks: every results event carries a number under
// {"pre": {"clicks": x}}; without the flag none does (the test above).
TEST(ProduceSyntheticCommandTest, EmitsTheCovariate) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand(
          {RankwatchBinary(), "produce-synthetic", "--bootstrap",
           f.cluster->bootstrap_servers(), "--fast", "--requests", "100",
           "--seed", "3", "--covariate", "pre.clicks", "--covariate-noise-sd",
           "0.5", "--status-interval", "0s", "-X", "linger.ms=1"},
          seconds(30));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      f.cluster->bootstrap_servers(), "results", kPartitions, 100, seconds(10));
  ASSERT_EQ(results.size(), 100u);
  for (const auto& m : results) {
    constexpr std::string_view kKey = "\"pre\":{\"clicks\":";
    const size_t at = m.value.find(kKey);
    ASSERT_NE(at, std::string::npos) << m.value;
    const char* number = m.value.c_str() + at + kKey.size();
    char* end = nullptr;
    const double x = std::strtod(number, &end);
    EXPECT_NE(end, number) << m.value;
    EXPECT_TRUE(std::isfinite(x)) << m.value;
  }
  const rankwatch::testing::CommandResult bad = rankwatch::testing::RunCommand(
      {RankwatchBinary(), "produce-synthetic", "--bootstrap",
       f.cluster->bootstrap_servers(), "--requests", "1", "--covariate",
       "pre..clicks"},
      seconds(30));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

// --multileave A,B,C: about half of the results events are the multileaved
// variant A-vs-B-vs-C, each of their 10 results tagged with team A, B or C.
// Team-draft multileaving gives each round (3 picks) one doc per team, so
// the first 9 ranks hold 3 of each and rank 10 one more: 4, 3, 3 in some
// order.
TEST(ProduceSyntheticCommandTest, MultileavesTheVariants) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand(
          {RankwatchBinary(), "produce-synthetic", "--bootstrap",
           f.cluster->bootstrap_servers(), "--fast", "--requests", "400",
           "--seed", "3", "--variants", "A,B:0.85,C:0.7", "--multileave",
           "A,B,C", "--status-interval", "0s", "-X", "linger.ms=1"},
          seconds(30));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<testutil::ConsumedMessage> results = testutil::ConsumeAll(
      f.cluster->bootstrap_servers(), "results", kPartitions, 400, seconds(10));
  ASSERT_EQ(results.size(), 400u);
  int multileaved = 0;
  for (const auto& m : results) {
    std::vector<size_t> teams;
    for (const char* team : {"A", "B", "C"}) {
      teams.push_back(Count(m.value, "\"team\":\"" + std::string(team) + "\""));
    }
    if (m.value.find("\"variant\":\"A-vs-B-vs-C\"") == std::string::npos) {
      EXPECT_EQ(teams[0] + teams[1] + teams[2], 0u) << m.value;
      continue;
    }
    ++multileaved;
    std::sort(teams.begin(), teams.end());
    EXPECT_EQ(teams, (std::vector<size_t>{3, 3, 4})) << m.value;
  }
  // A binomial(400, 0.5) count, +-4 s.e. (= 40).
  EXPECT_NEAR(multileaved, 200, 40);
}

TEST(ProduceSyntheticCommandTest, SigtermStopsAnUnboundedRun) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  rankwatch::testing::TempDir dir;
  const std::string out = dir.path() + "/out";
  rankwatch::testing::ChildProcess producer(
      {RankwatchBinary(), "produce-synthetic", "--bootstrap",
       f.cluster->bootstrap_servers(), "--rate", "200", "--status-interval",
       "0s"},
      out, dir.path() + "/err");
  ASSERT_TRUE(producer.started());
  rankwatch::testing::SleepFor(std::chrono::milliseconds(700));
  producer.Signal(SIGTERM);
  EXPECT_EQ(producer.Wait(seconds(10)), std::optional<int>(0))
      << rankwatch::testing::ReadFile(dir.path() + "/err");
  const std::string summary = rankwatch::testing::ReadFile(out);
  EXPECT_EQ(summary.rfind("requests=", 0), 0u) << summary;
  EXPECT_NE(summary.find("delivery_errors=0 undelivered=0"), std::string::npos);
}

// The count `key=N` of produce-synthetic's summary line, or -1.
int64_t SummaryCount(const std::string& summary, const std::string& key) {
  const std::string line = " " + summary;
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return -1;
  return std::strtoll(line.c_str() + at + key.size() + 2, nullptr, 10);
}

// The lines of a file, sorted.
std::vector<std::string> SortedLines(const std::string& path) {
  std::vector<std::string> lines;
  const std::string text = rankwatch::testing::ReadFile(path);
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start) + " (no newline at the end)");
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// --also-write-results/--also-write-judgments on a realtime run stopped by
// SIGTERM (as tests/status_page_test.cc stops its traffic): each file holds
// exactly the payloads the topic holds (read back from the cluster), as many
// as the summary counts; the judgments dropped at the stop (not yet due)
// are in neither.
TEST(ProduceSyntheticCommandTest, AlsoWritesWhatItProduces) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  rankwatch::testing::TempDir dir;
  const std::string results = dir.path() + "/results.jsonl";
  const std::string judgments = dir.path() + "/judgments.jsonl";
  const std::string out = dir.path() + "/out";
  rankwatch::testing::ChildProcess producer(
      {RankwatchBinary(), "produce-synthetic", "--bootstrap",
       f.cluster->bootstrap_servers(), "--rate", "200", "--seed", "5",
       "--covariate", "pre.clicks", "--status-interval", "0s",
       "--also-write-results", results, "--also-write-judgments", judgments},
      out, dir.path() + "/err");
  ASSERT_TRUE(producer.started());
  // Clicks come about 3 s after their request: some are due by then, more
  // are not.
  rankwatch::testing::SleepFor(std::chrono::milliseconds(2500));
  producer.Signal(SIGTERM);
  ASSERT_EQ(producer.Wait(seconds(20)), std::optional<int>(0))
      << rankwatch::testing::ReadFile(dir.path() + "/err");
  const std::string summary = rankwatch::testing::ReadFile(out);
  const int64_t sent_results = SummaryCount(summary, "results");
  const int64_t sent_judgments = SummaryCount(summary, "judgments");
  EXPECT_GT(sent_results, 100) << summary;
  EXPECT_GT(sent_judgments, 0) << summary;
  EXPECT_GT(SummaryCount(summary, "dropped_judgments"), 0) << summary;
  EXPECT_NE(summary.find("delivery_errors=0 undelivered=0"), std::string::npos)
      << summary;
  for (const auto& [topic, path, sent] :
       {std::tuple<std::string, std::string, int64_t>{"results", results,
                                                      sent_results},
        {"judgments", judgments, sent_judgments}}) {
    SCOPED_TRACE(topic);
    std::vector<std::string> consumed;
    for (const testutil::ConsumedMessage& m : testutil::ConsumeAll(
             f.cluster->bootstrap_servers(), topic, kPartitions,
             static_cast<size_t>(sent), seconds(10))) {
      consumed.push_back(m.value);
    }
    std::sort(consumed.begin(), consumed.end());
    EXPECT_EQ(static_cast<int64_t>(consumed.size()), sent);
    EXPECT_EQ(SortedLines(path), consumed);
  }
}

// A copy that cannot be created is a usage error before anything is
// produced, as are two copies that the topics cannot tell apart; one that
// cannot be written (a full device) fails the run with exit code 1.
TEST(ProduceSyntheticCommandTest, AlsoWriteFailsOnFilesItCannotWrite) {
  rankwatch::testing::TempDir dir;
  const std::string missing = dir.path() + "/no/such/dir/results.jsonl";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--also-write-results", missing},
        {"--also-write-judgments", missing},
        {"--judgments-topic", "results", "--also-write-results",
         dir.path() + "/r.jsonl"}}) {
    std::vector<std::string> argv = {RankwatchBinary(), "produce-synthetic",
                                     "--bootstrap",     "127.0.0.1:1",
                                     "--requests",      "1"};
    argv.insert(argv.end(), args.begin(), args.end());
    const rankwatch::testing::CommandResult result =
        rankwatch::testing::RunCommand(argv, seconds(10));
    EXPECT_EQ(result.exit_code, 2) << args[1] << ": " << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
  }
  if (!std::filesystem::exists("/dev/full")) return;
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  const rankwatch::testing::CommandResult full = rankwatch::testing::RunCommand(
      {RankwatchBinary(), "produce-synthetic", "--bootstrap",
       f.cluster->bootstrap_servers(), "--fast", "--requests", "50",
       "--status-interval", "0s", "--also-write-results", "/dev/full"},
      seconds(30));
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_NE(full.err.find("cannot write /dev/full"), std::string::npos)
      << full.err;
}

// A SIGHUP meant for the daemon (`kill -HUP "$(pidof rankwatch)"` reaches
// every rankwatch process) neither stops nor kills the traffic.
TEST(ProduceSyntheticCommandTest, SurvivesSighup) {
  Fixture f;
  ASSERT_NE(f.cluster, nullptr);
  rankwatch::testing::TempDir dir;
  const std::string qrels = dir.path() + "/qrels";
  const std::string out = dir.path() + "/out";
  const std::string err = dir.path() + "/err";
  rankwatch::testing::ChildProcess producer(
      {RankwatchBinary(), "produce-synthetic", "--bootstrap",
       f.cluster->bootstrap_servers(), "--rate", "200", "--status-interval",
       "0s", "--write-qrels", qrels},
      out, err);
  ASSERT_TRUE(producer.started());
  // The qrels are written after SIGHUP is ignored.
  ASSERT_TRUE(rankwatch::testing::WaitFor(
      [&] { return std::filesystem::exists(qrels); }, seconds(10)))
      << rankwatch::testing::ReadFile(err);
  producer.Signal(SIGHUP);
  EXPECT_EQ(producer.Wait(std::chrono::milliseconds(500)), std::nullopt)
      << rankwatch::testing::ReadFile(err);
  EXPECT_TRUE(producer.Running());
  // Still producing, then a clean stop: SIGHUP was not taken as SIGTERM.
  EXPECT_EQ(rankwatch::testing::ReadFile(out), "");
  producer.Signal(SIGTERM);
  EXPECT_EQ(producer.Wait(seconds(10)), std::optional<int>(0))
      << rankwatch::testing::ReadFile(err);
  const std::string summary = rankwatch::testing::ReadFile(out);
  EXPECT_EQ(summary.rfind("requests=", 0), 0u) << summary;
}

TEST(ProduceSyntheticCommandTest, BadUsageExitsTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--rate", "0"},
        {"--duration", "soon"},
        {"--regress-variant", "C"},
        {"-X", "novalue"},
        {"--duration", "1s", "--requests", "5"},
        {"--interleave", "C"},
        {"--interleave", "A"},
        {"--interleave", "B", "--interleave-share", "0"},
        {"--interleave", "B", "--interleave-share", "1.5"},
        {"--multileave", "A"},
        {"--multileave", "A,C"},
        {"--multileave", "A,B,A"},
        {"--multileave", "A,B", "--interleave", "B"}}) {
    std::vector<std::string> argv = {RankwatchBinary(), "produce-synthetic",
                                     "--bootstrap", "127.0.0.1:1"};
    argv.insert(argv.end(), args.begin(), args.end());
    const rankwatch::testing::CommandResult result =
        rankwatch::testing::RunCommand(argv, seconds(10));
    EXPECT_EQ(result.exit_code, 2) << args[0] << ": " << result.err;
  }
}

// `rankwatch demo --interleave` with a name that is not a challenger
// variant: one line, exit 2, before any cluster or daemon starts (so this
// stays fast; the demo itself runs minutes and is exercised by hand).
TEST(ProduceSyntheticCommandTest, DemoRejectsAnUnknownChallenger) {
  for (const std::string name : {"C", "A"}) {
    const rankwatch::testing::CommandResult result =
        rankwatch::testing::RunCommand(
            {RankwatchBinary(), "demo", "--interleave", name, "--listen",
             "127.0.0.1:0"},
            seconds(10));
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("interleave '" + name + "'"), std::string::npos)
        << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
  }
}

// `rankwatch demo --multileave` with one ranker, or a ranker twice: one
// line, exit 2, before anything starts. (Names other than A and B are
// synthetic rankers the demo adds, so they are not errors.)
TEST(ProduceSyntheticCommandTest, DemoRejectsABadMultileave) {
  for (const std::string list : {"A", "A,B,A"}) {
    const rankwatch::testing::CommandResult result =
        rankwatch::testing::RunCommand(
            {RankwatchBinary(), "demo", "--multileave", list, "--listen",
             "127.0.0.1:0"},
            seconds(10));
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("multileave"), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
  }
}

}  // namespace
}  // namespace rankwatch::cli
