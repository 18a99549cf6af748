#include "daemon/cli/kafka_mock_command.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_code.h"
#include "base/file_util.h"
#include "daemon/cli/command_util.h"
#include "daemon/cli/signals.h"
#include "daemon/sim/mock_cluster.h"

namespace rankwatch::cli {

namespace {

constexpr std::string_view kKafkaMockCommand = "kafka-mock";

struct KafkaMockArgs {
  int brokers = 3;
  std::vector<std::string> topics;  // NAME:PARTITIONS
  // Created with the most partitions of `topics` (the mock cluster would
  // auto-create it with 4: durable state's changelog then disagrees with
  // its input topics); empty: none.
  std::string changelog_topic = "rankwatch-changelog";
  std::string bootstrap_file;
};

struct TopicSpec {
  std::string name;
  int partitions = 0;
};

// Kafka's own limits on topic names.
constexpr size_t kMaxTopicName = 249;
constexpr int kMaxPartitions = 100000;

bool IsTopicChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

StatusOr<TopicSpec> ParseTopicSpec(const std::string& spec) {
  const size_t colon = spec.rfind(':');
  auto invalid = [&spec](const std::string& why) {
    return Status::InvalidArgument("--topic '" + spec + "': " + why +
                                   " (expected NAME:PARTITIONS)");
  };
  if (colon == std::string::npos) return invalid("no partition count");
  TopicSpec topic;
  topic.name = spec.substr(0, colon);
  if (topic.name.empty() || topic.name.size() > kMaxTopicName ||
      topic.name == "." || topic.name == "..") {
    return invalid("bad topic name");
  }
  for (char c : topic.name) {
    if (!IsTopicChar(c)) return invalid("bad character in the topic name");
  }
  const std::string count = spec.substr(colon + 1);
  if (count.empty() || count.size() > 6 ||
      count.find_first_not_of("0123456789") != std::string::npos) {
    return invalid("bad partition count");
  }
  topic.partitions = std::stoi(count);
  if (topic.partitions < 1 || topic.partitions > kMaxPartitions) {
    return invalid("partitions must be in 1.." +
                   std::to_string(kMaxPartitions));
  }
  return topic;
}

// The changelog of a daemon in its default group, as rankwatch creates it on
// a broker that takes CreateTopics: as many partitions as the input topics
// (the most of `topics`), unless named among them or there are none.
void AddChangelogTopic(const std::string& name,
                       std::vector<TopicSpec>* topics) {
  if (name.empty() || topics->empty()) return;
  int partitions = 0;
  for (const TopicSpec& topic : *topics) {
    if (topic.name == name) return;
    partitions = std::max(partitions, topic.partitions);
  }
  topics->push_back({name, partitions});
}

int RunKafkaMock(const KafkaMockArgs& args) {
  std::vector<TopicSpec> topics;
  for (const std::string& spec : args.topics) {
    StatusOr<TopicSpec> topic = ParseTopicSpec(spec);
    if (!topic.ok())
      return Fail(kKafkaMockCommand, topic.status(), ErrorSource::kUsage);
    topics.push_back(*topic);
  }
  AddChangelogTopic(args.changelog_topic, &topics);
  IgnoreHangup();
  // SIGTERM and SIGINT are blocked before the mock starts its threads, which
  // inherit the mask, so that sigwait() below is the only taker.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  StatusOr<std::unique_ptr<sim::MockCluster>> cluster =
      sim::MockCluster::Start(args.brokers);
  if (!cluster.ok()) {
    return Fail(kKafkaMockCommand, cluster.status(), ErrorSource::kUsage);
  }
  // A topic named twice is AlreadyExists: a usage error.
  for (const TopicSpec& topic : topics) {
    const Status created =
        (*cluster)->CreateTopic(topic.name, topic.partitions);
    if (!created.ok())
      return Fail(kKafkaMockCommand, created, ErrorSource::kUsage);
  }
  const std::string& bootstrap = (*cluster)->bootstrap_servers();
  std::printf("%s\n", bootstrap.c_str());
  std::fflush(stdout);
  if (!args.bootstrap_file.empty()) {
    const Status written =
        WriteFileAtomically(args.bootstrap_file, bootstrap + "\n");
    if (!written.ok())
      return Fail(kKafkaMockCommand, written, ErrorSource::kUsage);
  }
  spdlog::info(
      "kafka mock cluster: {} broker(s) at {}, {} topic(s); "
      "SIGTERM or Ctrl-C stops it (SIGHUP is ignored)",
      args.brokers, bootstrap, topics.size());

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("kafka mock cluster: stopping on signal {}", received);
  if (!args.bootstrap_file.empty()) std::remove(args.bootstrap_file.c_str());
  cluster->reset();
  return ToInt(ExitCode::kOk);
}

}  // namespace

void AddKafkaMockCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<KafkaMockArgs>();
  CLI::App* cmd = app.add_subcommand(
      "kafka-mock",
      "Run an in-memory Kafka mock cluster on loopback until SIGTERM "
      "(librdkafka's; for local use and tests, see docs/kafka-mock.md)");
  cmd->add_option("--brokers", args->brokers, "Number of brokers")
      ->check(CLI::Range(1, sim::MockCluster::kMaxBrokers));
  cmd->add_option("--topic", args->topics,
                  "Create a topic: NAME:PARTITIONS (repeatable); other topics "
                  "are auto-created with 4 partitions")
      ->allow_extra_args(false);
  cmd->add_option(
      "--changelog-topic", args->changelog_topic,
      "With --topic: create this durable-state changelog topic with as many "
      "partitions as the largest --topic (default: rankwatch-changelog, the "
      "default group's); \"\" for none");
  cmd->add_option("--bootstrap-file", args->bootstrap_file,
                  "Write the bootstrap servers to FILE once the topics exist "
                  "(atomically); removed on exit");
  cmd->callback([args, exit_code] { *exit_code = RunKafkaMock(*args); });
}

}  // namespace rankwatch::cli
