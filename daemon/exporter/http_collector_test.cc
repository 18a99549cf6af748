#include "daemon/exporter/http_collector.h"

#include <memory>
#include <string>
#include <vector>

#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"
#include "tests/testing/http_client.h"
#include "tests/testing/prometheus_text.h"

namespace rankwatch::exporter {
namespace {

using rankwatch::testing::Scrape;

// A server with basic auth (plain HTTP here; TLS handshakes are counted by
// the server's own tests in daemon/http/http_tls_test.cc): each request
// without the right credentials is one more 401, and the collector reads
// exactly the server's count.
TEST(HttpCollectorTest, CountsUnauthorizedRequests) {
  http::HttpSecurity security;
  security.users = {{"prom", "pw"}};
  auto server =
      http::HttpServer::Start("127.0.0.1:0", 1, http::HttpLimits(), security);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  (*server)->Handle("/x", [](const http::HttpRequest&) {
    return http::HttpResponse::Text(200, "ok\n");
  });
  const int port = (*server)->port();
  for (int i = 0; i < 3; ++i) {
    auto r = rankwatch::testing::HttpGet("127.0.0.1", port, "/x");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 401);
  }
  // base64("prom:pw") = "cHJvbTpwdw==" (RFC 4648, by hand).
  auto ok = rankwatch::testing::HttpGet(
      "127.0.0.1", port, "/x", {{"Authorization", "Basic cHJvbTpwdw=="}});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);

  std::vector<prometheus::MetricFamily> families;
  HttpCollector(server->get()).Collect(&families);
  const Scrape s = Scrape::Parse(SerializeText(families));
  EXPECT_EQ(s.Sum("rankwatch_http_unauthorized_requests_total"), 3);
  EXPECT_EQ(s.Sum("rankwatch_http_tls_handshake_errors_total"), 0);
}

}  // namespace
}  // namespace rankwatch::exporter
