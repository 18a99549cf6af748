#include "base/string_index.h"

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

// Every length from 0 to 40 (each branch: 0-3, 4-7, 8-16 and memcmp's
// beyond), each string against a copy of itself in other storage (equal)
// and against copies differing in exactly one byte, at every position
// (unequal by construction), and against a string one byte longer.
TEST(BytesEqualTest, FindsADifferenceAtEveryPositionOfEveryLength) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string a;
    for (size_t i = 0; i < n; ++i) a += static_cast<char>('a' + i % 26);
    const std::string same = a;  // Another buffer, the same bytes.
    EXPECT_TRUE(BytesEqual(a, same)) << "length " << n;
    for (size_t i = 0; i < n; ++i) {
      std::string other = a;
      other[i] = static_cast<char>(other[i] ^ 0x80);  // High bit only.
      EXPECT_FALSE(BytesEqual(a, other)) << "length " << n << " at " << i;
      EXPECT_FALSE(BytesEqual(other, a)) << "length " << n << " at " << i;
    }
    EXPECT_FALSE(BytesEqual(a, a + "x")) << "length " << n;
  }
}

TEST(BytesEqualTest, ComparesEmbeddedNulBytesAndViewsInsideLongerStrings) {
  EXPECT_TRUE(
      BytesEqual(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
  EXPECT_FALSE(
      BytesEqual(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
  // Views into the middle of a buffer read none of its other bytes' values:
  // "request_id" inside two different surroundings.
  const std::string x = "{\"request_id\":1}";
  const std::string y = "xxrequest_idyy";
  EXPECT_TRUE(BytesEqual(std::string_view(x).substr(2, 10),
                         std::string_view(y).substr(2, 10)));
  EXPECT_TRUE(BytesEqual("", ""));
  EXPECT_FALSE(BytesEqual("", "a"));
}

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
