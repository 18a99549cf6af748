#include "daemon/http/request_parser.h"

#include <string>

#include "gtest/gtest.h"

namespace rankwatch::http {
namespace {

StatusOr<HttpRequest> Parse(const std::string& head) {
  return ParseRequestHead(head);
}

// The error message of a head that must be refused with `code`.
std::string Refusal(const std::string& head,
                    StatusCode code = StatusCode::kInvalidArgument) {
  StatusOr<HttpRequest> r = Parse(head);
  EXPECT_FALSE(r.ok()) << head;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  return r.status().message();
}

TEST(FindHeadEndTest, EndsAtTheFirstEmptyLine) {
  EXPECT_EQ(FindHeadEnd(""), 0u);
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\n"), 0u);
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n\r"), 0u);
  // 14 + 2 + 7 + 2 + 2 = 27 bytes.
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"), 27u);
  // Bare LF ends it too, so that the parser refuses it at once.
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\n\nrest"), 16u);
  EXPECT_EQ(FindHeadEnd("GET / HTTP/1.1\n\r\n"), 17u);
}

TEST(ParseRequestHeadTest, GetWithHeaders) {
  StatusOr<HttpRequest> r = Parse(
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\n"
      "Accept-Encoding:  gzip \t\r\nX-Empty:\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->path, "/metrics");
  ASSERT_EQ(r->headers.size(), 3u);
  EXPECT_EQ(r->headers[0].first, "Host");
  EXPECT_EQ(r->headers[0].second, "127.0.0.1:9464");
  EXPECT_EQ(r->Header("accept-encoding"), "gzip");
  EXPECT_EQ(r->Header("X-EMPTY"), "");
  EXPECT_EQ(r->Header("Missing"), std::nullopt);
  EXPECT_EQ(ContentLength(*r), 0u);
}

TEST(ParseRequestHeadTest, PathIsKeptWithoutQueryOrFragment) {
  const auto path = [](const std::string& target) {
    StatusOr<HttpRequest> r =
        ParseRequestHead("GET " + target + " HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(r.ok()) << target << ": " << r.status().ToString();
    return r.ok() ? r->path : "";
  };
  // A '%' in the query is not the path's: dropped with the query.
  EXPECT_EQ(path("/healthz?verbose=1&x=%zz"), "/healthz");
  EXPECT_EQ(path("/a+b"), "/a+b");  // '+' means space only in queries.
  EXPECT_EQ(path("/x#frag"), "/x");
  EXPECT_EQ(path("http://host:9464/metrics?x"), "/metrics");
  EXPECT_EQ(path("HTTP://host"), "/");
  EXPECT_EQ(path("http://host?q"), "/");
}

TEST(ParseRequestHeadTest, Http10NeedsNoHost) {
  StatusOr<HttpRequest> r = Parse("HEAD / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "HEAD");
  EXPECT_TRUE(r->headers.empty());
}

TEST(ParseRequestHeadTest, ContentLength) {
  StatusOr<HttpRequest> r = Parse(
      "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 42\r\n"
      "content-length: 42\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ContentLength(*r), 42u);
  EXPECT_NE(Refusal("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
                    "Content-Length: 2\r\n\r\n")
                .find("conflicting Content-Length"),
            std::string::npos);
  for (const char* bad :
       {"-1", "1,1", "0x10", "", "1 2", "1234567890123456789"}) {
    EXPECT_NE(Refusal(std::string("POST /x HTTP/1.1\r\nHost: h\r\n"
                                  "Content-Length: ") +
                      bad + "\r\n\r\n")
                  .find("bad Content-Length"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(Refusal("POST /x HTTP/1.1\r\nHost: h\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n")
                .find("transfer coding"),
            std::string::npos);
}

TEST(ParseRequestHeadTest, RefusesMalformedRequestLines) {
  const struct {
    const char* head;
    const char* reason;
  } cases[] = {
      {"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", "empty request line"},
      {"GET / HTTP/1.1\nHost: h\r\n\r\n", "not ended by CRLF"},
      {"GET / HTTP/1.1\r\nHost: h\n\n", "not ended by CRLF"},
      {"GET /\rx HTTP/1.1\r\nHost: h\r\n\r\n", "stray CR"},
      {"GET / HTTP/1.1\r\nHost: h\r\n", "incomplete"},
      {"GET /\r\n\r\n", "not 'METHOD target HTTP/1.x'"},
      {"GET  / HTTP/1.1\r\n\r\n", "not 'METHOD target HTTP/1.x'"},
      {"GET / HTTP/1.1 \r\n\r\n", "not 'METHOD target HTTP/1.x'"},
      {"GET / x HTTP/1.1\r\n\r\n", "not 'METHOD target HTTP/1.x'"},
      {"G(T / HTTP/1.1\r\nHost: h\r\n\r\n", "bad method"},
      {"GETGETGETGETGETGETGET / HTTP/1.1\r\nHost: h\r\n\r\n", "bad method"},
      {"GET / http/1.1\r\n\r\n", "bad HTTP version"},
      {"GET / HTTP/1.1x\r\n\r\n", "bad HTTP version"},
      {"GET / HTTP/2.0\r\n\r\n", "unsupported HTTP version"},
      {"GET * HTTP/1.1\r\nHost: h\r\n\r\n", "must start with '/'"},
      {"GET metrics HTTP/1.1\r\nHost: h\r\n\r\n", "must start with '/'"},
      // Percent-encoding is refused, well formed or not: "/-%2Freload"
      // must not reach /-/reload past a proxy's rules on the raw path.
      {"GET /-%2Freload HTTP/1.1\r\nHost: h\r\n\r\n", "percent-encoded path"},
      {"GET /a%2Fb%20c HTTP/1.1\r\nHost: h\r\n\r\n", "percent-encoded path"},
      {"GET /a%2 HTTP/1.1\r\nHost: h\r\n\r\n", "percent-encoded path"},
      {"GET /a%00 HTTP/1.1\r\nHost: h\r\n\r\n", "percent-encoded path"},
      {"GET http://h/%6detrics HTTP/1.1\r\nHost: h\r\n\r\n",
       "percent-encoded path"},
      {"GET /\x7f HTTP/1.1\r\nHost: h\r\n\r\n", "bad character"},
  };
  for (const auto& c : cases) {
    EXPECT_NE(Refusal(c.head).find(c.reason), std::string::npos)
        << c.head << " -> " << Refusal(c.head);
  }
}

TEST(ParseRequestHeadTest, RefusesMalformedHeaders) {
  const struct {
    const char* fields;
    const char* reason;
  } cases[] = {
      {"Host : h\r\n", "bad header name"},
      {"Host: h\r\nNo colon\r\n", "header without ':'"},
      {": v\r\nHost: h\r\n", "bad header name"},
      {"Host: h\r\nX-A: 1\r\n 2\r\n", "obsolete line folding"},
      {"Host: h\r\nX-A: a\x01z\r\n", "control character in header"},
      {"Host: h\r\nHost: h\r\n", "more than one Host"},
      {"X-A: 1\r\n", "HTTP/1.1 without Host"},
  };
  for (const auto& c : cases) {
    const std::string head =
        std::string("GET / HTTP/1.1\r\n") + c.fields + "\r\n";
    EXPECT_NE(Refusal(head).find(c.reason), std::string::npos)
        << c.fields << " -> " << Refusal(head);
  }
  // A NUL byte in a value.
  constexpr char kNul[] = "GET / HTTP/1.1\r\nHost: h\0x\r\n\r\n";
  const std::string nul(kNul, sizeof(kNul) - 1);
  EXPECT_NE(Refusal(nul).find("control character"), std::string::npos);
}

TEST(ParseRequestHeadTest, AtMost64Fields) {
  std::string head = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 1; i < 64; ++i) head += "X-" + std::to_string(i) + ": v\r\n";
  ASSERT_TRUE(Parse(head + "\r\n").ok());  // 64 fields.
  head += "X-64: v\r\n";
  EXPECT_NE(Refusal(head + "\r\n", StatusCode::kResourceExhausted)
                .find("more than 64 header fields"),
            std::string::npos);
}

TEST(ParseRequestHeadTest, ErrorsEchoInputPrintably) {
  const std::string message = Refusal("G\x1b[2J / HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(message.find("bad method 'G\\x1b[2J'"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace rankwatch::http
