#include "daemon/http/handlers.h"

#include <gtest/gtest.h>

#include <string>

namespace rankwatch::http {
namespace {

HttpRequest Known() {
  HttpRequest request;
  request.authenticated = true;  // No auth configured, or valid credentials.
  return request;
}

TEST(HealthHandlerTest, AlwaysOk) {
  const HttpResponse r = HealthHandler()(HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
}

// The code follows the probe (200 or 503, Kubernetes' success and failure
// ranges); the body is the probe's line to a known client.
TEST(ReadinessHandlerTest, CodeAndMessageFollowTheProbe) {
  Readiness answer{false, "not ready (not_assigned): no partitions"};
  int calls = 0;
  const Handler readyz = ReadinessHandler([&] {
    ++calls;
    return answer;
  });
  HttpResponse r = readyz(Known());
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready (not_assigned): no partitions\n");
  EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
  answer = {true, "ready"};
  r = readyz(Known());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\n");
  EXPECT_EQ(calls, 2);  // Asked on every request, never cached.
}

// With basic auth on, a stranger learns the code, not the reason (which
// names topics and brokers).
TEST(ReadinessHandlerTest, AStrangerGetsTheCodeOnly) {
  Readiness answer{false, "not ready (broker_unreachable): kafka-0:9092"};
  const Handler readyz = ReadinessHandler([&] { return answer; });
  HttpResponse r = readyz(HttpRequest{});
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "not ready\n");
  answer = {true, "ready"};
  r = readyz(HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\n");
}

}  // namespace
}  // namespace rankwatch::http
