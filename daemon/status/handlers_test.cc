#include "daemon/status/handlers.h"

#include <memory>
#include <mutex>
#include <string>

#include "base/clock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace rankwatch::status {
namespace {

TEST(StatusHandlersTest, PageIsSelfContainedHtml) {
  const http::HttpResponse r = PageHandler()(http::HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, std::string(kPageHtml));
  EXPECT_NE(r.body.find("api/v1/summary"), std::string::npos);
  // Nothing from elsewhere: no external script, style, font or image.
  EXPECT_EQ(r.body.find("src=\"http"), std::string::npos);
  EXPECT_EQ(r.body.find("href=\"http"), std::string::npos);
  EXPECT_EQ(r.body.find("@import"), std::string::npos);
}

TEST(StatusHandlersTest, SummaryIsJsonStampedWithTheClock) {
  config::Config c;
  FakeClock clock(1'700'000'000'000);
  clock.Advance(42);
  auto p = stream::Pipeline::Create(c, &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::mutex mu;
  const http::HttpResponse r =
      SummaryHandler(&mu, p->get(), nullptr, &clock)(http::HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  simdjson::dom::parser parser;
  simdjson::dom::element d;
  ASSERT_EQ(parser.parse(r.body).get(d), simdjson::SUCCESS) << r.body;
  EXPECT_EQ(int64_t(d["generated_ms"]), 1'700'000'000'042);
  EXPECT_EQ(int64_t(d["monotonic_ms"]), 42);
  EXPECT_EQ(d["variants"].get_array().size(), 0u);
  EXPECT_TRUE(d["pipeline"]["watermark_ms"].is_null());
}

}  // namespace
}  // namespace rankwatch::status
