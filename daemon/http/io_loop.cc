#include "daemon/http/io_loop.h"

#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/strings.h"
#include "daemon/http/connection_table.h"
#include "daemon/http/request_parser.h"
#include "daemon/http/response_format.h"

namespace rankwatch::http {

namespace {

// The I/O thread checks deadlines this often: their resolution.
constexpr int kTickMs = 50;
// After its response a connection waits this long for the client to hang
// up, reading what it still sends, before closing: closing with unread
// input makes the kernel send RST, which can destroy the response in
// flight (the "lingering close" of RFC 9112 section 9.6).
constexpr int64_t kLingerTimeoutMs = 1000;
constexpr size_t kMaxLingerBytes = 65536;
constexpr size_t kReadChunk = 16384;
constexpr int kMaxEvents = 256;
// The TLS files are checked for a change this often (stat(2) of two or
// three files: cheap on the I/O thread).
constexpr int64_t kTlsCheckMs = 5000;
// When the bytes held for responses fall below kTrimBelowBytes after
// having been above kTrimAboveBytes, free heap pages go back to the system
// (malloc_trim, well under a millisecond): glibc's worker-thread arenas
// keep the freed renderings of a burst otherwise (measured: 24 MiB kept
// after 1,000 stalled readers of a 2 MB /metrics left).
constexpr uint64_t kTrimBelowBytes = 64 * 1024;
constexpr uint64_t kTrimAboveBytes = 1024 * 1024;

}  // namespace

// The loop's state; IoLoop's methods forward to it.
class IoLoop::Impl {
 public:
  Impl(int listen_fd, int epoll_fd, int wake_fd, const HttpLimits& limits,
       WorkerPool* pool, TlsContext* tls, const Clock* clock,
       std::atomic<uint64_t>* held)
      : held_(held),
        listen_fd_(listen_fd),
        epoll_fd_(epoll_fd),
        wake_fd_(wake_fd),
        limits_(limits),
        pool_(pool),
        tls_(tls),
        clock_(clock),
        now_(clock->MonotonicMillis()),
        next_sweep_(now_),
        next_tls_check_(now_ + kTlsCheckMs),
        table_(limits.max_connections, limits.max_connections_per_client) {}
  ~Impl() {
    for (const auto& [fd, connection] : connections_) close(fd);
    if (listen_fd_ >= 0) close(listen_fd_);
    close(epoll_fd_);
    close(wake_fd_);
  }

  void RequestStop() {
    stop_ = true;
    Wake(wake_fd_);
  }

  uint64_t tls_handshake_errors() const { return tls_errors_.load(); }
  uint64_t overloads(Overload reason) const {
    return overloads_[static_cast<size_t>(reason)].load();
  }
  uint64_t tls_reloads() const { return tls_reloads_.load(); }
  uint64_t tls_reload_errors() const { return tls_reload_errors_.load(); }
  void CountTlsReload(bool ok) { ++(ok ? tls_reloads_ : tls_reload_errors_); }

  void Run() {
    // OpenSSL writes with write(2), not send(2) with MSG_NOSIGNAL: a client
    // gone mid-response would raise SIGPIPE and end the process. Blocked in
    // this thread, the signal stays pending on it, harmlessly, and write
    // fails with EPIPE.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    epoll_event events[kMaxEvents];
    while (!stop_) {
      const int n = epoll_wait(epoll_fd_, events, kMaxEvents, kTickMs);
      now_ = clock_->MonotonicMillis();
      for (int i = 0; i < n; ++i) OnEvent(events[i]);
      TakeResponses();
      if (now_ >= next_sweep_) Sweep();
    }
    Shutdown();
  }

 private:
  struct Connection {
    int64_t deadline_ms = 0;    // Monotonic.
    int64_t first_byte_ms = 0;  // Monotonic.
    std::string client;         // Its address.
    std::string key;            // Its caps' key (ClientKey).
    std::string in;             // The request head so far.
    uint64_t body_left = 0;     // Body bytes still to discard.
    HttpRequest request;        // Parsed, while its body arrives.
    SharedBytes out;            // The response (maybe shared).
    size_t sent = 0;
    size_t lingered = 0;  // Bytes discarded while draining.
    // HTTPS only: the session, made at the first handshake byte (idle
    // connections cost no TLS memory), and the events it waits for.
    TlsSession ssl;
    bool handshake_done = false;
    uint32_t events = EPOLLIN;
  };
  // A client's full TLS handshakes: a token bucket.
  struct HandshakeBucket {
    double tokens = 0;
    int64_t last_ms = 0;
  };

  void Count(Overload reason) { ++overloads_[static_cast<size_t>(reason)]; }

  void OnEvent(const epoll_event& event) {
    if (event.data.fd == wake_fd_) {
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof(count));
    } else if (event.data.fd == listen_fd_) {
      AcceptAll();
    } else if (connections_.count(event.data.fd) != 0) {
      OnConnection(event.data.fd, event.events);
    }
  }

  // Sets the events `fd` is watched for; `op` EPOLL_CTL_MOD, or ADD for a
  // connection coming back from a worker.
  void Watch(int fd, uint32_t events, int op = EPOLL_CTL_MOD) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    (void)epoll_ctl(epoll_fd_, op, fd, &event);
  }

  void PauseListening(bool paused) {
    if (paused == listen_paused_) return;
    listen_paused_ = paused;
    Watch(listen_fd_, paused ? 0u : static_cast<uint32_t>(EPOLLIN));
  }

  // Accepts what is pending, making room by shedding (never more than
  // max_connections descriptors).
  void AcceptAll() {
    for (int i = 0; i < kMaxEvents; ++i) {
      if (table_.Full()) {
        // Shed only for a connection known to wait: the readiness that
        // called us vouches for one; epoll reports again if more wait.
        if (i > 0) return;
        const int victim = table_.VictimForTotal();
        if (victim < 0) {
          // Every connection is busy: the kernel's backlog waits.
          PauseListening(true);
          return;
        }
        Shed(victim);
      }
      sockaddr_storage address{};
      socklen_t length = sizeof(address);
      const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&address),
                             &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
          // Level-triggered: retrying now would spin. The next sweep
          // listens again.
          spdlog::warn("http: cannot accept: {}", std::strerror(errno));
          PauseListening(true);
        }
        return;  // EAGAIN, or the client gave up (ECONNABORTED).
      }
      Admit(fd, ClientAddress(address), ClientKey(address));
    }
  }

  // Whether `key` may start one more full TLS handshake now.
  bool TakeHandshake(const std::string& key) {
    const double rate = limits_.tls_handshakes_per_second_per_client;
    HandshakeBucket& b = handshakes_[key];
    if (b.last_ms == 0) {
      b.tokens = rate;
    } else {
      b.tokens = std::min(
          rate, b.tokens + rate * static_cast<double>(now_ - b.last_ms) / 1000);
    }
    b.last_ms = now_;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  void Admit(int fd, std::string client, std::string key) {
    if (tls_ != nullptr && !TakeHandshake(key)) {
      Count(Overload::kTlsHandshakeRate);
      Reset(fd);
      return;
    }
    if (table_.ClientFull(key)) {
      const int victim = table_.VictimForClient(key);
      if (victim < 0) {
        Reset(fd);  // All of this client's connections are busy.
        return;
      }
      Shed(victim);
    }
    if (limits_.send_buffer_bytes > 0) {
      (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &limits_.send_buffer_bytes,
                       sizeof(limits_.send_buffer_bytes));
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      close(fd);
      return;
    }
    table_.Add(fd, key);
    Connection& c = connections_[fd];
    c.deadline_ms = now_ + limits_.idle_timeout.count();
    c.client = std::move(client);
    c.key = std::move(key);
  }

  // Closes `fd` with a reset: whatever it had not sent leaves the kernel at
  // once, instead of lingering outside the connection cap.
  static void Reset(int fd) {
    const linger reset{1, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    close(fd);
  }

  // Closes a connection to make room for a new one. A draining
  // connection's response may still sit in the kernel's send buffer (the
  // client has not read it all): a reset would discard its tail (a flood
  // test saw a scrape cut at 175,616 of 204,853 bytes), a plain close lets
  // the kernel deliver it. Others are reset, which frees their kernel state
  // at once.
  void Shed(int victim) {
    Close(victim, /*reset=*/table_.phase(victim) != Phase::kDraining);
  }

  void Close(int fd, bool reset = false) {
    table_.Remove(fd);
    connections_.erase(fd);
    if (reset) {
      Reset(fd);  // Also leaves the epoll set.
    } else {
      close(fd);
    }
    PauseListening(false);
  }

  void OnConnection(int fd, uint32_t events) {
    switch (table_.phase(fd)) {
      case Phase::kIdle:
      case Phase::kReading:
        Read(fd);
        return;
      case Phase::kWriting:
        if ((events & (EPOLLERR | EPOLLHUP)) != 0) {
          Close(fd);
        } else {
          Write(fd);
        }
        return;
      case Phase::kDraining:
        Drain(fd);
        return;
      case Phase::kBusy:
        return;  // Not watched.
    }
  }

  void Read(int fd) {
    if (tls_ != nullptr) {
      ReadTls(fd);
      return;
    }
    char buffer[kReadChunk];
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      Close(fd);  // Gone before its request was complete.
      return;
    }
    if (n < 0) return;
    StartReading(fd);
    Received(fd, std::string_view(buffer, static_cast<size_t>(n)));
  }

  // The first byte (of the request head, or of the TLS handshake) starts
  // the header deadline.
  void StartReading(int fd) {
    if (table_.phase(fd) != Phase::kIdle) return;
    Connection& c = connections_[fd];
    table_.SetPhase(fd, Phase::kReading);
    c.first_byte_ms = now_;
    c.deadline_ms = now_ + limits_.header_timeout.count();
  }

  // Plain bytes of the request.
  void Received(int fd, std::string_view data) {
    Connection& c = connections_[fd];
    if (!c.request.method.empty()) {
      ConsumeBody(fd, data.size());
      return;
    }
    c.in.append(data);
    ReadHead(fd);
  }

  // Waits for `events` on a TLS connection (as OpenSSL asks).
  void WatchTls(int fd, uint32_t events) {
    Connection& c = connections_[fd];
    if (c.events == events) return;
    c.events = events;
    Watch(fd, events);
  }

  // The handshake, then the request, through TLS.
  void ReadTls(int fd) {
    Connection& c = connections_[fd];
    StartReading(fd);
    if (c.ssl == nullptr) {
      c.ssl = tls_->NewSession(fd);
      if (c.ssl == nullptr) {
        spdlog::warn("http: cannot start a TLS session: out of memory");
        Close(fd);
        return;
      }
    }
    if (!c.handshake_done && !Handshake(fd)) return;
    char buffer[kReadChunk];
    // OpenSSL may hold decrypted bytes of records already taken from the
    // socket, which epoll does not report: read until it wants more.
    while (connections_.count(fd) != 0 && table_.phase(fd) == Phase::kReading) {
      size_t n = 0;
      switch (TlsRead(c.ssl.get(), buffer, sizeof(buffer), &n)) {
        case TlsResult::kDone:
          Received(fd, std::string_view(buffer, n));
          continue;
        case TlsResult::kWantRead:
          WatchTls(fd, EPOLLIN);
          return;
        case TlsResult::kWantWrite:
          WatchTls(fd, EPOLLOUT);
          return;
        case TlsResult::kPlainHttp:
        case TlsResult::kClosed:
        case TlsResult::kError:
          Close(fd);  // Gone before its request was complete.
          return;
      }
    }
  }

  // One step of the TLS handshake; true once it is complete.
  bool Handshake(int fd) {
    Connection& c = connections_[fd];
    switch (TlsHandshake(c.ssl.get())) {
      case TlsResult::kDone:
        c.handshake_done = true;
        WatchTls(fd, EPOLLIN);
        return true;
      case TlsResult::kWantRead:
        WatchTls(fd, EPOLLIN);
        return false;
      case TlsResult::kWantWrite:
        WatchTls(fd, EPOLLOUT);
        return false;
      case TlsResult::kPlainHttp:
        // A plain request to the HTTPS port: told so in plain HTTP.
        ++tls_errors_;
        c.ssl.reset();
        TlsLastError();
        Reject(fd, 400, "bad request: this port speaks HTTPS");
        return false;
      case TlsResult::kClosed:
        Close(fd);
        return false;
      case TlsResult::kError:
        ++tls_errors_;
        // Debug only: a hostile client must not be able to flood the log.
        spdlog::debug("http: TLS handshake failed: {}", TlsLastError());
        Close(fd);
        return false;
    }
    return false;
  }

  void ReadHead(int fd) {
    Connection& c = connections_[fd];
    const size_t end = FindHeadEnd(c.in);
    if (end == 0 || end > limits_.max_head_bytes) {
      if (end == 0 && c.in.size() <= limits_.max_head_bytes) return;
      const size_t line_end = c.in.find('\n');
      if (line_end == std::string::npos || line_end > limits_.max_head_bytes) {
        Reject(fd, 400, "bad request: request line too long");
      } else {
        Reject(fd, 431,
               "bad request: head over " +
                   std::to_string(limits_.max_head_bytes) + " bytes");
      }
      return;
    }
    StatusOr<HttpRequest> request =
        ParseRequestHead(std::string_view(c.in).substr(0, end));
    if (!request.ok()) {
      const bool too_many =
          request.status().code() == StatusCode::kResourceExhausted;
      Reject(fd, too_many ? 431 : 400, request.status().message());
      return;
    }
    const uint64_t length = ContentLength(*request);
    if (length > limits_.max_body_bytes) {
      Reject(fd, 413,
             "bad request: body over " +
                 std::to_string(limits_.max_body_bytes) + " bytes");
      return;
    }
    c.request = std::move(request).value();
    c.request.client = c.client;
    c.body_left = length;
    c.deadline_ms = c.first_byte_ms + limits_.request_timeout.count();
    const size_t extra = c.in.size() - end;
    c.in.clear();
    // A client that asked to be told before it sends its body (curl does
    // for POST bodies over 1 KiB) would otherwise wait a second for
    // nothing (RFC 9110 section 10.1.1).
    const std::optional<std::string_view> expect = c.request.Header("Expect");
    if (expect.has_value() && EqualsIgnoreCase(*expect, "100-continue") &&
        c.body_left > extra) {
      SendOnce(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    }
    ConsumeBody(fd, extra);
  }

  // Counts `n` body bytes (beyond the body: a pipelined request, ignored);
  // hands the request to a worker once the body is in.
  void ConsumeBody(int fd, size_t n) {
    Connection& c = connections_[fd];
    c.body_left -= std::min<uint64_t>(c.body_left, n);
    if (c.body_left > 0) return;
    std::optional<Overload> refused =
        pool_->Submit(fd, std::move(c.request), c.key);
    c.request = HttpRequest();
    if (refused.has_value()) {
      Count(*refused);
      Reject(fd, 503, "busy: too many requests waiting");
      return;
    }
    table_.SetPhase(fd, Phase::kBusy);
    // Out of the set, not just unwatched: a hang-up is reported whatever
    // the events asked for, and would wake the loop until the handler ends.
    (void)epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  }

  void Reject(int fd, int status, std::string_view reason) {
    StartWriting(fd,
                 std::make_shared<const ResponseBytes>(
                     FormatError(status, reason, clock_->NowMillis()), held_));
  }

  void TakeResponses() {
    for (auto& [fd, bytes] : pool_->TakeDone()) {
      StartWriting(fd, std::move(bytes));
    }
  }

  void StartWriting(int fd, SharedBytes bytes) {
    Connection& c = connections_[fd];
    c.out = std::move(bytes);
    c.sent = 0;
    c.deadline_ms = now_ + limits_.write_timeout.count();
    const bool from_worker = table_.phase(fd) == Phase::kBusy;
    table_.SetPhase(fd, Phase::kWriting);
    c.events = EPOLLOUT;
    Watch(fd, EPOLLOUT, from_worker ? EPOLL_CTL_ADD : EPOLL_CTL_MOD);
    Write(fd);
  }

  void Write(int fd) {
    Connection& c = connections_[fd];
    if (c.ssl != nullptr) {
      WriteTls(fd);
      return;
    }
    const std::string& out = c.out->bytes();
    while (c.sent < out.size()) {
      const ssize_t n = send(fd, out.data() + c.sent, out.size() - c.sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return;  // EPOLLOUT resumes.
        Close(fd);
        return;
      }
      c.sent += static_cast<size_t>(n);
    }
    Written(fd);
  }

  void WriteTls(int fd) {
    Connection& c = connections_[fd];
    const std::string& out = c.out->bytes();
    while (c.sent < out.size()) {
      size_t n = 0;
      switch (
          TlsWrite(c.ssl.get(), out.data() + c.sent, out.size() - c.sent, &n)) {
        case TlsResult::kDone:
          c.sent += n;
          continue;
        case TlsResult::kWantRead:
          WatchTls(fd, EPOLLIN);
          return;
        case TlsResult::kWantWrite:
          WatchTls(fd, EPOLLOUT);
          return;
        case TlsResult::kPlainHttp:
        case TlsResult::kClosed:
        case TlsResult::kError:
          Close(fd);
          return;
      }
    }
    TlsShutdown(c.ssl.get());
    Written(fd);
  }

  // The response is out: our side of the stream ends; wait for the
  // client's (reading raw bytes: a TLS client's close_notify is discarded).
  void Written(int fd) {
    Connection& c = connections_[fd];
    c.out.reset();
    (void)shutdown(fd, SHUT_WR);
    c.deadline_ms = now_ + kLingerTimeoutMs;
    table_.SetPhase(fd, Phase::kDraining);
    c.events = EPOLLIN;
    Watch(fd, EPOLLIN);
  }

  void Drain(int fd) {
    Connection& c = connections_[fd];
    char buffer[kReadChunk];
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n > 0) c.lingered += static_cast<size_t>(n);
    if (n <= 0 || c.lingered > kMaxLingerBytes) Close(fd);
  }

  // Closes the connections past their deadline; listens again after an
  // accept error; forgets clients whose handshake bucket is full again;
  // re-reads changed TLS files; gives freed response memory back.
  void Sweep() {
    next_sweep_ = now_ + kTickMs;
    std::vector<int> expired;
    for (const auto& [fd, c] : connections_) {
      if (table_.phase(fd) != Phase::kBusy && now_ >= c.deadline_ms) {
        expired.push_back(fd);
      }
    }
    for (int fd : expired) {
      const Connection& c = connections_[fd];
      const Phase phase = table_.phase(fd);
      if (c.ssl != nullptr && !c.handshake_done) {
        ++tls_errors_;  // Too slow a handshake.
      } else if (phase == Phase::kReading) {
        // One try: a legitimate slow client learns why.
        SendOnce(fd, FormatError(408, "bad request: not received in time",
                                 clock_->NowMillis()));
      }
      // A response the client did not take is dropped from the kernel too.
      Close(fd, /*reset=*/phase == Phase::kWriting);
    }
    if (listen_paused_ && !table_.Full()) PauseListening(false);
    const double rate = limits_.tls_handshakes_per_second_per_client;
    for (auto it = handshakes_.begin(); it != handshakes_.end();) {
      const double refill =
          rate * static_cast<double>(now_ - it->second.last_ms) / 1000;
      it = it->second.tokens + refill >= rate ? handshakes_.erase(it)
                                              : std::next(it);
    }
    if (tls_ != nullptr && now_ >= next_tls_check_) {
      next_tls_check_ = now_ + kTlsCheckMs;
      StatusOr<bool> reloaded = tls_->ReloadIfChanged();
      if (!reloaded.ok()) {
        CountTlsReload(false);
        spdlog::error(
            "http: the TLS files changed but cannot be used, "
            "serving the previous certificate: {}",
            reloaded.status().message());
      } else if (*reloaded) {
        CountTlsReload(true);
        spdlog::info("http: TLS certificate reloaded (files changed)");
      }
    }
    const uint64_t held = held_->load();
    if (held > kTrimAboveBytes) trim_pending_ = true;
    if (trim_pending_ && held < kTrimBelowBytes) {
      trim_pending_ = false;
      malloc_trim(0);
    }
  }

  // One non-blocking try at sending `bytes` (through TLS if established).
  void SendOnce(int fd, const std::string& bytes) {
    Connection& c = connections_[fd];
    if (c.ssl == nullptr) {
      (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else if (c.handshake_done) {
      size_t n = 0;
      (void)TlsWrite(c.ssl.get(), bytes.data(), bytes.size(), &n);
    }
  }

  // Stops listening, closes every connection, and gives the responses of
  // the handlers still running one write before closing theirs.
  void Shutdown() {
    close(listen_fd_);
    listen_fd_ = -1;
    std::vector<int> idle;
    for (const auto& [fd, c] : connections_) {
      if (table_.phase(fd) != Phase::kBusy) idle.push_back(fd);
    }
    for (int fd : idle) Close(fd);
    for (int fd : pool_->DropQueued()) Close(fd);
    while (true) {
      for (auto& [fd, bytes] : pool_->TakeDone()) {
        SendOnce(fd, bytes->bytes());
        Close(fd);
      }
      if (pool_->Quiet()) break;
      epoll_event event{};
      (void)epoll_wait(epoll_fd_, &event, 1, kTickMs);
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof(count));
    }
  }

  std::atomic<uint64_t>* const held_;
  int listen_fd_;
  const int epoll_fd_;
  const int wake_fd_;
  const HttpLimits limits_;
  WorkerPool* const pool_;
  TlsContext* const tls_;
  const Clock* const clock_;
  std::atomic<uint64_t> tls_errors_{0};
  std::array<std::atomic<uint64_t>, kNumOverloads> overloads_{};
  std::atomic<uint64_t> tls_reloads_{0};
  std::atomic<uint64_t> tls_reload_errors_{0};
  std::atomic<bool> stop_{false};
  bool listen_paused_ = false;
  bool trim_pending_ = false;
  int64_t now_;
  int64_t next_sweep_;
  int64_t next_tls_check_;
  ConnectionTable table_;
  std::unordered_map<int, Connection> connections_;
  std::unordered_map<std::string, HandshakeBucket> handshakes_;
};

IoLoop::IoLoop(int listen_fd, int epoll_fd, int wake_fd,
               const HttpLimits& limits, WorkerPool* pool, TlsContext* tls,
               const Clock* clock, std::atomic<uint64_t>* held)
    : impl_(std::make_unique<Impl>(listen_fd, epoll_fd, wake_fd, limits, pool,
                                   tls, clock, held)) {}

IoLoop::~IoLoop() = default;

void IoLoop::Run() { impl_->Run(); }
void IoLoop::RequestStop() { impl_->RequestStop(); }
uint64_t IoLoop::tls_handshake_errors() const {
  return impl_->tls_handshake_errors();
}
uint64_t IoLoop::overloads(Overload reason) const {
  return impl_->overloads(reason);
}
uint64_t IoLoop::tls_reloads() const { return impl_->tls_reloads(); }
uint64_t IoLoop::tls_reload_errors() const {
  return impl_->tls_reload_errors();
}
void IoLoop::CountTlsReload(bool ok) { impl_->CountTlsReload(ok); }

}  // namespace rankwatch::http
