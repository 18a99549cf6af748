#include "daemon/http/listen_socket.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace rankwatch::http {
namespace {

TEST(ListenSocketTest, ValidatesHostAndPort) {
  EXPECT_TRUE(ValidateListen("127.0.0.1:9464").ok());
  EXPECT_TRUE(ValidateListen("[::1]:0").ok());
  EXPECT_TRUE(ValidateListen("metrics-host.example:80").ok());
  EXPECT_EQ(ValidateListen("localhost").message(),
            "bad HTTP listen address 'localhost': expected host:port");
  EXPECT_EQ(ValidateListen("h:65536").message(),
            "bad HTTP listen address 'h:65536': port over 65535");
  EXPECT_EQ(ValidateListen("::1:80").message(),
            "bad HTTP listen address '::1:80': bad host (IPv6 addresses go "
            "in brackets: [::1]:9464)");
}

TEST(ListenSocketTest, ListenHostStripsPortAndBrackets) {
  EXPECT_EQ(ListenHost("127.0.0.1:9464"), "127.0.0.1");
  EXPECT_EQ(ListenHost("[::1]:9464"), "::1");
  EXPECT_EQ(ListenHost("localhost:0"), "localhost");
}

// Port 0 binds a free port; binding it again is Unavailable (a busy port
// is a peer's problem, not a usage error).
TEST(ListenSocketTest, BindsAFreePortAndRefusesABusyOne) {
  StatusOr<int> fd = Listen("127.0.0.1:0");
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  const int port = BoundPort(*fd);
  EXPECT_GT(port, 0);
  StatusOr<int> again = Listen("127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(again.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("cannot bind"), std::string::npos)
      << again.status().message();
  close(*fd);
  EXPECT_FALSE(CheckListenAddress("no-such-host.invalid:80").ok());
  EXPECT_TRUE(CheckListenAddress("127.0.0.1:80").ok());
}

}  // namespace
}  // namespace rankwatch::http
