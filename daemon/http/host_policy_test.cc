#include "daemon/http/host_policy.h"

#include <gtest/gtest.h>

namespace rankwatch::http {
namespace {

TEST(HostPolicyTest, LoopbackDefaultAllowsLocalhostAndAddressesOnly) {
  const HostPolicy policy = HostPolicy::Create("127.0.0.1", {});
  EXPECT_FALSE(policy.any());
  EXPECT_TRUE(policy.Allows(std::nullopt));  // HTTP/1.0 without Host.
  EXPECT_TRUE(policy.Allows("127.0.0.1:9464"));
  EXPECT_TRUE(policy.Allows("localhost:9464"));
  EXPECT_TRUE(policy.Allows("LocalHost."));
  EXPECT_TRUE(policy.Allows("[::1]:9464"));
  EXPECT_TRUE(policy.Allows("10.0.0.7"));  // An address cannot be rebound.
  // The DNS-rebinding case: the attacker's name resolving to 127.0.0.1.
  EXPECT_FALSE(policy.Allows("evil.example:9464"));
  EXPECT_FALSE(policy.Allows("evil.example"));
  EXPECT_FALSE(policy.Allows("localhost.evil.example"));
  EXPECT_FALSE(policy.Allows(""));
}

TEST(HostPolicyTest, LoopbackNameAndIpv6Loopback) {
  EXPECT_FALSE(HostPolicy::Create("localhost", {}).Allows("evil.example"));
  EXPECT_TRUE(HostPolicy::Create("localhost", {}).Allows("localhost"));
  EXPECT_FALSE(HostPolicy::Create("[::1]", {}).Allows("evil.example"));
  EXPECT_FALSE(HostPolicy::Create("::1", {}).Allows("evil.example"));
  EXPECT_TRUE(HostPolicy::Create("[::1]", {}).Allows("localhost"));
}

TEST(HostPolicyTest, OtherAddressesAllowAnyNameByDefault) {
  EXPECT_TRUE(HostPolicy::Create("0.0.0.0", {}).any());
  EXPECT_TRUE(HostPolicy::Create("[::]", {}).any());
  EXPECT_TRUE(HostPolicy::Create("10.1.2.3", {}).Allows("rankwatch.svc"));
}

TEST(HostPolicyTest, AConfiguredListReplacesTheDefault) {
  const HostPolicy policy =
      HostPolicy::Create("0.0.0.0", {"rankwatch.example", "Metrics.Internal."});
  EXPECT_FALSE(policy.any());
  EXPECT_TRUE(policy.Allows("rankwatch.example:9464"));
  EXPECT_TRUE(policy.Allows("RANKWATCH.example"));
  EXPECT_TRUE(policy.Allows("metrics.internal"));
  EXPECT_TRUE(policy.Allows("10.0.0.5:9464"));  // kubelet probes by address.
  EXPECT_FALSE(policy.Allows("localhost"));
  EXPECT_FALSE(policy.Allows("other.example"));
  EXPECT_TRUE(HostPolicy::Create("127.0.0.1", {"*"}).Allows("any.example"));
}

TEST(HostPolicyTest, HostWithoutPort) {
  EXPECT_EQ(HostWithoutPort("Example.COM:80"), "example.com");
  EXPECT_EQ(HostWithoutPort("[2001:DB8::1]:9464"), "2001:db8::1");
  EXPECT_EQ(HostWithoutPort("2001:db8::1"), "2001:db8::1");
  EXPECT_EQ(HostWithoutPort("host."), "host");
  EXPECT_TRUE(IsIpLiteral("2001:db8::1"));
  EXPECT_TRUE(IsIpLiteral("192.0.2.1"));
  EXPECT_FALSE(IsIpLiteral("192.0.2"));
  EXPECT_FALSE(IsIpLiteral("example"));
}

}  // namespace
}  // namespace rankwatch::http
