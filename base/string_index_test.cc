#include "base/string_index.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

TEST(StringIndexTest, InsertFindAndDuplicates) {
  StringIndex index;
  index.Clear(4);
  EXPECT_EQ(index.Insert("d1", 1), nullptr);
  EXPECT_EQ(index.Insert("d2", 2), nullptr);
  const uint32_t* dup = index.Insert("d1", 3);
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(*dup, 1u);
  ASSERT_NE(index.Find("d2"), nullptr);
  EXPECT_EQ(*index.Find("d2"), 2u);
  EXPECT_EQ(index.Find("d3"), nullptr);
  EXPECT_EQ(index.size(), 2u);
}

TEST(StringIndexTest, GrowsAndClears) {
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back("doc-" + std::to_string(i));
  StringIndex index;
  for (uint32_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(index.Insert(keys[i], i), nullptr);
  }
  for (uint32_t i = 0; i < keys.size(); ++i) {
    ASSERT_NE(index.Find(keys[i]), nullptr);
    EXPECT_EQ(*index.Find(keys[i]), i);
  }
  index.Clear();
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.Find(keys[7]), nullptr);
  EXPECT_EQ(index.Insert(keys[7], 9), nullptr);
  EXPECT_EQ(*index.Find(keys[7]), 9u);
}

TEST(StringIndexTest, EmptyKeyAndPrefixesAreDistinct) {
  StringIndex index;
  EXPECT_EQ(index.Insert("", 1), nullptr);
  EXPECT_EQ(index.Insert("a", 2), nullptr);
  const uint32_t* prefix = index.Insert(std::string_view("ab", 1), 3);
  ASSERT_NE(prefix, nullptr);  // "a" again, via a view into a longer string.
  EXPECT_EQ(*prefix, 2u);
  EXPECT_EQ(*index.Find(""), 1u);
  EXPECT_EQ(index.Find("ab"), nullptr);
  EXPECT_NE(HashBytes("abcdefgh1"), HashBytes("abcdefgh2"));
}

}  // namespace
}  // namespace rankwatch
