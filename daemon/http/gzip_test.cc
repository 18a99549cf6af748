#include "daemon/http/gzip.h"

#include <string>

#include "daemon/http/gunzip_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::http {
namespace {

TEST(AcceptsGzipTest, PlainListsAndCase) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("GZIP"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip"));
  EXPECT_TRUE(AcceptsGzip("br,gzip,deflate"));
  EXPECT_TRUE(AcceptsGzip("  deflate ,  gzip  "));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("deflate, br"));
  EXPECT_FALSE(AcceptsGzip("gzipped"));
}

TEST(AcceptsGzipTest, QValues) {
  EXPECT_TRUE(AcceptsGzip("gzip;q=1.0"));
  EXPECT_TRUE(AcceptsGzip("gzip; q=0.5, identity;q=1"));
  EXPECT_TRUE(AcceptsGzip("gzip;Q=0.001"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=bad"));  // Malformed: ignored.
  EXPECT_FALSE(AcceptsGzip("gzip;q=2"));
}

TEST(AcceptsGzipTest, Wildcard) {
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("identity, *;q=0.1"));
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  // An explicit gzip entry overrides the wildcard, either way.
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));
  EXPECT_TRUE(AcceptsGzip("*;q=0, gzip"));
}

TEST(GzipCompressTest, RoundTrips) {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += "rankwatch_ndcg_bucket{variant=\"A\",k=\"10\",le=\"0.5\"} " +
            std::to_string(i) + "\n";
  }
  StatusOr<std::string> compressed = GzipCompress(text);
  ASSERT_TRUE(compressed.ok()) << compressed.status().ToString();
  ASSERT_GE(compressed->size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);  // Magic.
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  EXPECT_LT(compressed->size(), text.size() / 5);
  EXPECT_EQ(GunzipForTest(*compressed), std::optional<std::string>(text));
}

TEST(GzipCompressTest, EmptyInput) {
  StatusOr<std::string> compressed = GzipCompress("");
  ASSERT_TRUE(compressed.ok());
  EXPECT_EQ(GunzipForTest(*compressed), std::optional<std::string>(""));
}

}  // namespace
}  // namespace rankwatch::http
