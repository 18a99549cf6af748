#include "config/key_positions.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::config {
namespace {

// Lines and columns counted by hand (1-based).
constexpr char kYaml[] =
    "kafka:\n"                     // 1
    "  properties:\n"              // 2
    "    securty.protocol: SSL\n"  // 3: key at column 5, value at 23
    "join:\n"                      // 4
    "  qrels_file: /no/such\n";    // 5: value at column 15

TEST(KeyPositionsTest, FindsKeysAndValues) {
  const std::vector<std::string> property = {"kafka", "properties",
                                             "securty.protocol"};
  auto key = FindConfigKey(kYaml, property, NodePart::kKey);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->line, 3);
  EXPECT_EQ(key->column, 5);
  auto value = FindConfigKey(kYaml, property, NodePart::kValue);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->column, 23);
  const std::vector<std::string> qrels = {"join", "qrels_file"};
  auto file = FindConfigKey(kYaml, qrels, NodePart::kValue);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->line, 5);
  EXPECT_EQ(file->column, 15);
}

TEST(KeyPositionsTest, NothingForMissingKeysOrBrokenYaml) {
  const std::vector<std::string> missing = {"join", "window"};
  EXPECT_FALSE(FindConfigKey(kYaml, missing, NodePart::kKey).has_value());
  const std::vector<std::string> any = {"a"};
  EXPECT_FALSE(FindConfigKey("a: [", any, NodePart::kKey).has_value());
}

}  // namespace
}  // namespace rankwatch::config
