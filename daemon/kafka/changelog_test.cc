#include "daemon/kafka/changelog.h"

#include <string>
#include <vector>

#include "daemon/kafka/kafka_test_cluster.h"
#include "gtest/gtest.h"

namespace rankwatch::kafka {
namespace {

TEST(CheckpointRecordTest, RoundTripsHeaderAndState) {
  std::string bytes;
  EncodeCheckpointRecord({7, {1234, -1}, "state bytes"}, &bytes);
  StatusOr<CheckpointRecord> r = DecodeCheckpointRecord(bytes);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->partition, 7);
  EXPECT_EQ(r->offsets[0], 1234);
  EXPECT_EQ(r->offsets[1], -1);
  EXPECT_EQ(r->state, "state bytes");
}

TEST(CheckpointRecordTest, ForeignOrNewerRecordsAreErrors) {
  EXPECT_EQ(DecodeCheckpointRecord("hello, world").status().message(),
            "not a rankwatch checkpoint record");
  std::string bytes;
  EncodeCheckpointRecord({0, {0, 0}, ""}, &bytes);
  bytes[4] = 2;  // The version field (little-endian) says 2.
  EXPECT_EQ(DecodeCheckpointRecord(bytes).status().message(),
            "checkpoint record version 2, this rankwatch reads version 1");
  // Cut inside the header: an error, not a crash.
  EXPECT_FALSE(
      DecodeCheckpointRecord(std::string_view(bytes).substr(0, 10)).ok());
}

class ChangelogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = testing::StartCluster({{"results", 4}, {"judgments", 4}});
    ASSERT_NE(cluster_, nullptr);
    kafka_.bootstrap_servers = cluster_->bootstrap_servers();
    kafka_.group_id = "g";
    StatusOr<std::unique_ptr<Changelog>> c = Changelog::Create(kafka_);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    changelog_ = std::move(c).value();
    const Status prepared = changelog_->Prepare(4, 10'000);
    ASSERT_TRUE(prepared.ok()) << prepared.ToString();
  }

  std::unique_ptr<sim::MockCluster> cluster_;
  config::KafkaConfig kafka_;
  std::unique_ptr<Changelog> changelog_;
};

TEST_F(ChangelogTest, NewestCheckpointPerPartitionFromThePointerOn) {
  EXPECT_EQ(changelog_->topic(), "g-changelog");
  ASSERT_GT(changelog_->partitions(), 0);
  std::vector<Changelog::Written> first;
  ASSERT_TRUE(
      changelog_
          ->Write({{0, "p0 v1"}, {1, "p1 v1"}, {5, "p5 v1"}}, 10'000, &first)
          .ok());
  std::vector<Changelog::Written> second;
  ASSERT_TRUE(
      changelog_->Write({{0, "p0 v2"}, {5, "p5 v2"}}, 10'000, &second).ok());
  // Records of partition p land in changelog partition p mod its count.
  EXPECT_EQ(first[2].partition, changelog_->PartitionOf(5));
  EXPECT_EQ(second[0].offset, first[0].offset + 1 +
                                  (changelog_->PartitionOf(1) == 0 ? 1 : 0) +
                                  (changelog_->PartitionOf(5) == 0 ? 1 : 0));

  auto read = [&](int32_t p, int64_t from) {
    StatusOr<std::optional<std::string>> r =
        changelog_->ReadLatest(p, from, 10'000);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->has_value() ? **r : std::string("<none>");
  };
  EXPECT_EQ(read(0, -1), "p0 v2");
  EXPECT_EQ(read(0, first[0].offset), "p0 v2");
  EXPECT_EQ(read(1, first[1].offset), "p1 v1");
  EXPECT_EQ(read(5, -1), "p5 v2");
  EXPECT_EQ(read(2, -1), "<none>");  // Never checkpointed.
  // A pointer past the end: the topic was deleted and created again.
  EXPECT_EQ(read(0, second[0].offset + 100), "<none>");
}

}  // namespace
}  // namespace rankwatch::kafka
