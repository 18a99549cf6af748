#include "daemon/http/response_format.h"

#include <gtest/gtest.h>

namespace rankwatch::http {
namespace {

// 2026-11-26T00:00:00Z = 1795651200 s (`date -u -d @1795651200`).
constexpr int64_t kThursdayMs = int64_t{1795651200} * 1000;

TEST(ResponseFormatTest, EveryResponseCarriesTheFixedHeaders) {
  HttpResponse r = HttpResponse::Text(200, "ok\n");
  r.headers.emplace_back("Vary", "Accept-Encoding");
  EXPECT_EQ(FormatResponse(r, false, kThursdayMs),
            "HTTP/1.1 200 OK\r\n"
            "Date: Thu, 26 Nov 2026 00:00:00 GMT\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 3\r\n"
            "X-Content-Type-Options: nosniff\r\n"
            "Connection: close\r\n"
            "Vary: Accept-Encoding\r\n"
            "\r\n"
            "ok\n");
}

TEST(ResponseFormatTest, HeadHasTheLengthButNoBody) {
  const std::string head =
      FormatResponse(HttpResponse::Text(200, "12345"), true, kThursdayMs);
  EXPECT_NE(head.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << head;
}

TEST(ResponseFormatTest, AHeaderWithALineBreakIsDropped) {
  HttpResponse r = HttpResponse::Text(200, "");
  r.headers.emplace_back("X-Split", "a\r\nSet-Cookie: x=1");
  r.headers.emplace_back("X-Kept", "b");
  const std::string bytes = FormatResponse(r, false, kThursdayMs);
  EXPECT_EQ(bytes.find("Set-Cookie"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("X-Kept: b\r\n"), std::string::npos) << bytes;
}

TEST(ResponseFormatTest, ErrorsAreTextAnd503SaysWhenToRetry) {
  const std::string busy = FormatError(503, "busy", kThursdayMs);
  EXPECT_TRUE(busy.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_NE(busy.find("Retry-After: 1\r\n"), std::string::npos);
  EXPECT_TRUE(busy.ends_with("\r\n\r\nbusy\n"));
  const std::string forbidden = FormatError(403, "no", kThursdayMs);
  EXPECT_TRUE(forbidden.starts_with("HTTP/1.1 403 Forbidden\r\n"));
  EXPECT_EQ(forbidden.find("Retry-After"), std::string::npos);
  EXPECT_EQ(ReasonPhrase(418), "");  // Optional: left out.
  EXPECT_EQ(HttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
}

}  // namespace
}  // namespace rankwatch::http
