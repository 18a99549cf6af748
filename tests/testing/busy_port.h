// BusyPort: a TCP socket listening on a loopback port the kernel chose,
// closed on destruction: a port that binding again finds in use (the
// tests of a busy --listen address, of the daemon and the HTTP server).
#ifndef RANKWATCH_TESTS_TESTING_BUSY_PORT_H_
#define RANKWATCH_TESTS_TESTING_BUSY_PORT_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rankwatch::testing {

class BusyPort {
 public:
  BusyPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(addr);
    if (fd_ < 0 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
  }
  BusyPort(const BusyPort&) = delete;
  BusyPort& operator=(const BusyPort&) = delete;
  ~BusyPort() {
    if (fd_ >= 0) ::close(fd_);
  }

  int port() const { return port_; }  // 0 when the socket failed.

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_BUSY_PORT_H_
