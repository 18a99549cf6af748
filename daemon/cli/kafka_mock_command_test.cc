// `rankwatch kafka-mock` as a process (moved from daemon/sim's mock
// cluster test: the subcommand's tests sit beside it).
#include "daemon/cli/kafka_mock_command.h"

#include <librdkafka/rdkafkacpp.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/sim/kafka_test_util.h"
#include "gtest/gtest.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch::cli {
namespace {

namespace testutil = sim::testutil;
using std::chrono::seconds;

std::string Value(int i) { return "message-" + std::to_string(i); }

TEST(KafkaMockCommandTest, ServesUntilSigtermThenRemovesItsFile) {
  rankwatch::testing::TempDir dir;
  const std::string bootstrap_file = dir.path() + "/bootstrap";
  const std::string out = dir.path() + "/out";
  rankwatch::testing::ChildProcess mock(
      {RankwatchBinary(), "kafka-mock", "--brokers", "2", "--topic", "a:3",
       "--topic", "b:1", "--bootstrap-file", bootstrap_file},
      out, dir.path() + "/err");
  ASSERT_TRUE(mock.started());
  ASSERT_TRUE(rankwatch::testing::WaitFor(
      [&] { return std::filesystem::exists(bootstrap_file); }, seconds(10)))
      << rankwatch::testing::ReadFile(dir.path() + "/err");
  std::string bootstrap = rankwatch::testing::ReadFile(bootstrap_file);
  ASSERT_FALSE(bootstrap.empty());
  ASSERT_EQ(bootstrap.back(), '\n');
  bootstrap.pop_back();
  EXPECT_EQ(rankwatch::testing::ReadFile(out), bootstrap + "\n");

  testutil::CountingDeliveryReport report;
  std::unique_ptr<RdKafka::Producer> producer =
      testutil::MakeProducer(bootstrap, &report);
  ASSERT_NE(producer, nullptr);
  for (int i = 0; i < 300; ++i) {
    testutil::ProduceOne(producer.get(), "a", std::to_string(i), Value(i));
  }
  ASSERT_EQ(producer->flush(10000), RdKafka::ERR_NO_ERROR);
  EXPECT_EQ(report.delivered, 300);
  const std::vector<testutil::ConsumedMessage> read =
      testutil::ConsumeAll(bootstrap, "a", 3, 300, seconds(10));
  EXPECT_EQ(read.size(), 300u);
  std::set<int32_t> partitions;
  for (const auto& m : read) partitions.insert(m.partition);
  EXPECT_EQ(partitions.size(), 3u);  // The topic was created with 3.
  producer.reset();

  mock.Signal(SIGTERM);
  EXPECT_EQ(mock.Wait(seconds(5)), std::optional<int>(0));
  EXPECT_FALSE(std::filesystem::exists(bootstrap_file));
}

// Issue 40: a daemon with durable state in the default group finds its
// changelog with the input topics' partition count (the mock cluster's
// automatic creation would give it 4); --changelog-topic names another.
TEST(KafkaMockCommandTest, CreatesTheDefaultChangelogWithTheInputsPartitions) {
  rankwatch::testing::TempDir dir;
  const std::string bootstrap_file = dir.path() + "/bootstrap";
  rankwatch::testing::ChildProcess mock(
      {RankwatchBinary(), "kafka-mock", "--brokers", "1", "--topic",
       "results:12", "--topic", "judgments:6", "--changelog-topic", "g-state",
       "--bootstrap-file", bootstrap_file},
      dir.path() + "/out", dir.path() + "/err");
  ASSERT_TRUE(mock.started());
  ASSERT_TRUE(rankwatch::testing::WaitFor(
      [&] { return std::filesystem::exists(bootstrap_file); }, seconds(10)))
      << rankwatch::testing::ReadFile(dir.path() + "/err");
  std::string bootstrap = rankwatch::testing::ReadFile(bootstrap_file);
  bootstrap.pop_back();
  testutil::CountingDeliveryReport report;
  std::unique_ptr<RdKafka::Producer> producer =
      testutil::MakeProducer(bootstrap, &report);
  ASSERT_NE(producer, nullptr);
  RdKafka::Metadata* raw = nullptr;
  ASSERT_EQ(producer->metadata(true, nullptr, &raw, 5000),
            RdKafka::ERR_NO_ERROR);
  std::unique_ptr<RdKafka::Metadata> md(raw);
  std::map<std::string, size_t> partitions;
  for (const RdKafka::TopicMetadata* t : *md->topics()) {
    partitions[t->topic()] = t->partitions()->size();
  }
  EXPECT_EQ(partitions,
            (std::map<std::string, size_t>{
                {"g-state", 12}, {"judgments", 6}, {"results", 12}}));
  producer.reset();
  mock.Signal(SIGTERM);
  EXPECT_EQ(mock.Wait(seconds(5)), std::optional<int>(0));
}

// `kill -HUP "$(pidof rankwatch)"`, meant for the daemon, reaches every
// rankwatch process: the mock cluster beside it must not die (SIGHUP's
// default action, exit 129).
TEST(KafkaMockCommandTest, SurvivesSighup) {
  rankwatch::testing::TempDir dir;
  const std::string bootstrap_file = dir.path() + "/bootstrap";
  const std::string err = dir.path() + "/err";
  rankwatch::testing::ChildProcess mock(
      {RankwatchBinary(), "kafka-mock", "--brokers", "1", "--bootstrap-file",
       bootstrap_file},
      dir.path() + "/out", err);
  ASSERT_TRUE(mock.started());
  // The file is written after SIGHUP is ignored.
  ASSERT_TRUE(rankwatch::testing::WaitFor(
      [&] { return std::filesystem::exists(bootstrap_file); }, seconds(10)))
      << rankwatch::testing::ReadFile(err);
  mock.Signal(SIGHUP);
  mock.Signal(SIGHUP);
  EXPECT_EQ(mock.Wait(std::chrono::milliseconds(500)), std::nullopt)
      << rankwatch::testing::ReadFile(err);
  EXPECT_TRUE(mock.Running());
  mock.Signal(SIGTERM);
  EXPECT_EQ(mock.Wait(seconds(5)), std::optional<int>(0))
      << rankwatch::testing::ReadFile(err);
  EXPECT_FALSE(std::filesystem::exists(bootstrap_file));
}

TEST(KafkaMockCommandTest, RejectsABadTopicSpec) {
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand(
          {RankwatchBinary(), "kafka-mock", "--topic", "results"}, seconds(10));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("NAME:PARTITIONS"), std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace rankwatch::cli
