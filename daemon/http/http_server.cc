#include "daemon/http/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "base/strings.h"
#include "daemon/http/connection_table.h"
#include "daemon/http/gzip.h"
#include "daemon/http/request_parser.h"
#include "daemon/http/tls.h"

namespace rankwatch::http {

namespace {

using Steady = std::chrono::steady_clock;

// Below this size gzip's framing (18 bytes) and CPU outweigh the savings.
constexpr size_t kMinGzipBytes = 256;
constexpr int kMaxThreads = 64;
// Descriptors left to the rest of the daemon (Kafka sockets, files, logs)
// when the open-file limit caps the connections.
constexpr rlim_t kFdReserve = 256;
// The I/O thread checks deadlines this often: their resolution.
constexpr int kTickMs = 50;
// After its response a connection waits this long for the client to hang
// up, reading what it still sends, before closing: closing with unread
// input makes the kernel send RST, which can destroy the response in
// flight (the "lingering close" of RFC 9112 section 9.6).
constexpr std::chrono::milliseconds kLingerTimeout(1000);
constexpr size_t kMaxLingerBytes = 65536;
constexpr size_t kReadChunk = 16384;
constexpr int kMaxEvents = 256;

bool IsHostChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
         c == '_';
}

// Checks "host:port": one port, a host of name characters or a bracketed
// IPv6 address.
Status ValidateListen(std::string_view listen) {
  const auto error = [&](std::string_view why) {
    return Status::InvalidArgument("bad HTTP listen address '" +
                                   Printable(listen) +
                                   "': " + std::string(why));
  };
  const size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) return error("expected host:port");
  const std::string_view host = listen.substr(0, colon);
  const std::string_view port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5) return error("bad port");
  int port_value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return error("bad port");
    port_value = port_value * 10 + (c - '0');
  }
  if (port_value > 65535) return error("port over 65535");
  if (host.empty()) return error("empty host");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return error("bad IPv6 host");
    for (char c : host.substr(1, host.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' &&
          c != '.') {
        return error("bad IPv6 host");
      }
    }
    return Status::Ok();
  }
  for (char c : host) {
    if (!IsHostChar(c)) {
      return error("bad host (IPv6 addresses go in brackets: [::1]:9464)");
    }
  }
  return Status::Ok();
}

std::string ErrnoText(int error) { return std::strerror(error); }

// The addresses to bind for `listen` (host:port, validated; [IPv6]:port):
// getaddrinfo's return code, `*host` the host part.
int ResolveListen(const std::string& listen, std::string* host,
                  addrinfo** found) {
  const size_t colon = listen.rfind(':');
  *host = listen.substr(0, colon == std::string::npos ? 0 : colon);
  if (host->size() >= 2 && host->front() == '[') {
    *host = host->substr(1, host->size() - 2);
  }
  const std::string port =
      colon == std::string::npos ? std::string() : listen.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  return getaddrinfo(host->c_str(), port.c_str(), &hints, found);
}

// A non-blocking listening socket on `listen` (validated).
StatusOr<int> Listen(const std::string& listen) {
  const auto unavailable = [&](const std::string& why) {
    return Status::Unavailable("cannot serve HTTP on " + listen + ": " + why);
  };
  std::string host;
  addrinfo* found = nullptr;
  const int rc = ResolveListen(listen, &host, &found);
  if (rc != 0) return unavailable(gai_strerror(rc));
  // IPv4 first: "localhost" then means 127.0.0.1, which clients try first.
  std::vector<const addrinfo*> candidates;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) candidates.push_back(a);
  }
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET6) candidates.push_back(a);
  }
  std::string why = "no address";
  int fd = -1;
  for (const addrinfo* a : candidates) {
    fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = "socket: " + ErrnoText(errno);
      continue;
    }
    // Rebinding while old connections sit in TIME_WAIT (a restart).
    const int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::listen(fd, SOMAXCONN) == 0) {
      break;
    }
    why = "cannot bind: " + ErrnoText(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) return unavailable(why);
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
}

// Raises the soft open-file limit to the hard one; returns the soft limit.
rlim_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      spdlog::info("http: raised the open-file limit from {} to {}", before,
                   limit.rlim_cur);
    } else {
      spdlog::warn("http: cannot raise the open-file limit from {}: {}", before,
                   ErrnoText(errno));
      limit.rlim_cur = before;
    }
  }
  return limit.rlim_cur;
}

// The address of a client, without its port: the key of its connection cap.
std::string ClientAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr,
              text, sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6,
              &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text,
              sizeof(text));
  }
  return text;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "";  // Optional (RFC 9112 section 4).
  }
}

// An IMF-fixdate (RFC 9110 section 5.6.7).
std::string HttpDate() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[40];
  const size_t n =
      std::strftime(text, sizeof(text), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(text, n);
}

bool HasLineBreak(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

// The bytes of `response`, with "Connection: close"; no body for HEAD.
std::string FormatResponse(const HttpResponse& response, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " ";
  out += ReasonPhrase(response.status);
  out += "\r\nDate: " + HttpDate();
  out += "\r\nContent-Type: " + response.content_type;
  out += "\r\nContent-Length: " + std::to_string(response.body.size());
  out += "\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) {
    // A handler's header must not split the response.
    if (HasLineBreak(name) || HasLineBreak(value)) {
      spdlog::error("http: dropped a response header with a line break: {}",
                    Printable(name));
      continue;
    }
    out += name + ": " + value + "\r\n";
  }
  out += "\r\n";
  if (!head_only) out += response.body;
  return out;
}

std::string FormatError(int status, std::string_view reason) {
  return FormatResponse(HttpResponse::Text(status, std::string(reason) + "\n"),
                        false);
}

void Wake(int event_fd) {
  const uint64_t one = 1;
  (void)!write(event_fd, &one, sizeof(one));
}

}  // namespace

Status CheckListenAddress(const std::string& listen) {
  std::string host;
  addrinfo* found = nullptr;
  const int rc = ResolveListen(listen, &host, &found);
  if (rc != 0) {
    return Status::InvalidArgument("cannot resolve '" +
                                   Printable(host, std::string_view::npos) +
                                   "': " + gai_strerror(rc));
  }
  freeaddrinfo(found);
  return Status::Ok();
}

// The bounded pool of threads that run handlers. Owned by the server;
// thread-safe.
class HttpServer::WorkerPool {
 public:
  WorkerPool(const HttpServer* server, int wake_fd)
      : server_(server), wake_fd_(wake_fd) {}
  ~WorkerPool() { Stop(); }

  Status Start(int threads) {
    try {
      for (int i = 0; i < threads; ++i)
        threads_.emplace_back([this] { Run(); });
    } catch (const std::system_error& e) {
      Stop();
      return Status::Internal(std::string("cannot start HTTP workers: ") +
                              e.what());
    }
    return Status::Ok();
  }

  void Submit(int fd, HttpRequest request) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back({fd, std::move(request)});
    }
    cv_.notify_one();
  }

  // Finished responses (fd, bytes), oldest first.
  std::vector<std::pair<int, std::string>> TakeDone() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(done_, {});
  }

  // Drops the jobs not started; returns their connections.
  std::vector<int> DropQueued() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int> fds;
    for (const Job& job : queue_) fds.push_back(job.fd);
    queue_.clear();
    return fds;
  }

  // Whether no handler runs and no response waits to be taken.
  bool Quiet() {
    std::lock_guard<std::mutex> lock(mu_);
    return running_ == 0 && queue_.empty() && done_.empty();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  struct Job {
    int fd;
    HttpRequest request;
  };

  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Stopping.
      Job job = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
      lock.unlock();
      std::string bytes = server_->Respond(job.request);
      lock.lock();
      // Published and counted under one lock: Quiet() never sees neither.
      done_.emplace_back(job.fd, std::move(bytes));
      --running_;
      Wake(wake_fd_);
    }
  }

  const HttpServer* server_;
  const int wake_fd_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::vector<std::pair<int, std::string>> done_;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// The I/O thread's state: the listening socket, every connection and its
// deadline. Run() is the thread; RequestStop() may be called from any
// thread, everything else only from Run().
class HttpServer::IoLoop {
 public:
  // `tls` (null for plain HTTP) must outlive the loop.
  IoLoop(int listen_fd, int epoll_fd, int wake_fd, const HttpLimits& limits,
         WorkerPool* pool, const TlsContext* tls)
      : listen_fd_(listen_fd),
        epoll_fd_(epoll_fd),
        wake_fd_(wake_fd),
        limits_(limits),
        pool_(pool),
        tls_(tls),
        table_(limits.max_connections, limits.max_connections_per_client) {}
  ~IoLoop() {
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
      now_ = Steady::now();
      for (int i = 0; i < n; ++i) OnEvent(events[i]);
      TakeResponses();
      if (now_ >= next_sweep_) Sweep();
    }
    Shutdown();
  }

 private:
  struct Connection {
    Steady::time_point deadline;
    Steady::time_point first_byte;
    std::string in;          // The request head so far.
    uint64_t body_left = 0;  // Body bytes still to discard.
    HttpRequest request;     // Parsed, while its body arrives.
    std::string out;         // The response.
    size_t sent = 0;
    size_t lingered = 0;  // Bytes discarded while draining.
    // HTTPS only: the session, made at the first handshake byte (idle
    // connections cost no TLS memory), and the events it waits for.
    TlsSession ssl;
    bool handshake_done = false;
    uint32_t events = EPOLLIN;
  };

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
        Close(victim);
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
          spdlog::warn("http: cannot accept: {}", ErrnoText(errno));
          PauseListening(true);
        }
        return;  // EAGAIN, or the client gave up (ECONNABORTED).
      }
      Admit(fd, ClientAddress(address));
    }
  }

  void Admit(int fd, const std::string& client) {
    if (table_.ClientFull(client)) {
      const int victim = table_.VictimForClient(client);
      if (victim < 0) {
        close(fd);  // All of this client's connections are busy.
        return;
      }
      Close(victim);
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      close(fd);
      return;
    }
    table_.Add(fd, client);
    connections_[fd].deadline = now_ + limits_.idle_timeout;
  }

  void Close(int fd) {
    table_.Remove(fd);
    connections_.erase(fd);
    close(fd);  // Also leaves the epoll set.
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
    c.first_byte = now_;
    c.deadline = now_ + limits_.header_timeout;
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
    c.body_left = length;
    c.deadline = c.first_byte + limits_.request_timeout;
    const size_t extra = c.in.size() - end;
    c.in.clear();
    ConsumeBody(fd, extra);
  }

  // Counts `n` body bytes (beyond the body: a pipelined request, ignored);
  // hands the request to a worker once the body is in.
  void ConsumeBody(int fd, size_t n) {
    Connection& c = connections_[fd];
    c.body_left -= std::min<uint64_t>(c.body_left, n);
    if (c.body_left > 0) return;
    table_.SetPhase(fd, Phase::kBusy);
    // Out of the set, not just unwatched: a hang-up is reported whatever
    // the events asked for, and would wake the loop until the handler ends.
    (void)epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    pool_->Submit(fd, std::move(c.request));
    c.request = HttpRequest();
  }

  void Reject(int fd, int status, std::string_view reason) {
    StartWriting(fd, FormatError(status, reason));
  }

  void TakeResponses() {
    for (auto& [fd, bytes] : pool_->TakeDone()) {
      StartWriting(fd, std::move(bytes));
    }
  }

  void StartWriting(int fd, std::string bytes) {
    Connection& c = connections_[fd];
    c.out = std::move(bytes);
    c.sent = 0;
    c.deadline = now_ + limits_.write_timeout;
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
    while (c.sent < c.out.size()) {
      const ssize_t n = send(fd, c.out.data() + c.sent, c.out.size() - c.sent,
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
    while (c.sent < c.out.size()) {
      size_t n = 0;
      switch (TlsWrite(c.ssl.get(), c.out.data() + c.sent,
                       c.out.size() - c.sent, &n)) {
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
    c.out = std::string();
    (void)shutdown(fd, SHUT_WR);
    c.deadline = now_ + kLingerTimeout;
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
  // accept error.
  void Sweep() {
    next_sweep_ = now_ + std::chrono::milliseconds(kTickMs);
    std::vector<int> expired;
    for (const auto& [fd, c] : connections_) {
      if (table_.phase(fd) != Phase::kBusy && now_ >= c.deadline) {
        expired.push_back(fd);
      }
    }
    for (int fd : expired) {
      const Connection& c = connections_[fd];
      if (c.ssl != nullptr && !c.handshake_done) {
        ++tls_errors_;  // Too slow a handshake.
      } else if (table_.phase(fd) == Phase::kReading) {
        // One try: a legitimate slow client learns why.
        SendOnce(fd, FormatError(408, "bad request: not received in time"));
      }
      Close(fd);
    }
    if (listen_paused_ && !table_.Full()) PauseListening(false);
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
        SendOnce(fd, bytes);
        Close(fd);
      }
      if (pool_->Quiet()) break;
      epoll_event event{};
      (void)epoll_wait(epoll_fd_, &event, 1, kTickMs);
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof(count));
    }
  }

  int listen_fd_;
  const int epoll_fd_;
  const int wake_fd_;
  const HttpLimits limits_;
  WorkerPool* const pool_;
  const TlsContext* const tls_;
  std::atomic<uint64_t> tls_errors_{0};
  std::atomic<bool> stop_{false};
  bool listen_paused_ = false;
  Steady::time_point now_ = Steady::now();
  Steady::time_point next_sweep_ = now_;
  ConnectionTable table_;
  std::unordered_map<int, Connection> connections_;
};

HttpServer::HttpServer() = default;

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads) {
  return Start(listen, threads, HttpLimits());
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads, const HttpLimits& limits) {
  return Start(listen, threads, limits, HttpSecurity());
}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, int threads, const HttpLimits& limits,
    const HttpSecurity& security) {
  RW_RETURN_IF_ERROR(ValidateListen(listen));
  std::unique_ptr<TlsContext> tls;
  if (!security.tls_cert_file.empty() || !security.tls_key_file.empty()) {
    StatusOr<std::unique_ptr<TlsContext>> context =
        TlsContext::Create(security.tls_cert_file, security.tls_key_file);
    if (!context.ok()) return context.status();
    tls = std::move(context).value();
  }
  if (threads < 1 || threads > kMaxThreads) {
    return Status::InvalidArgument("HTTP worker threads must be in 1.." +
                                   std::to_string(kMaxThreads) + ", not " +
                                   std::to_string(threads));
  }
  if (limits.max_connections < 1 || limits.max_connections_per_client < 1) {
    return Status::InvalidArgument("HTTP connection limits must be positive");
  }
  HttpLimits effective = limits;
  const rlim_t files = RaiseFileLimit();
  const rlim_t fit = files > 2 * kFdReserve ? files - kFdReserve : files / 2;
  if (effective.max_connections > fit) {
    spdlog::warn("http: open-file limit {} allows {} connections, not {}",
                 files, fit, effective.max_connections);
    effective.max_connections = static_cast<size_t>(fit);
  }

  StatusOr<int> listen_fd = Listen(listen);
  if (!listen_fd.ok()) return listen_fd.status();
  const int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  const int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = *listen_fd;
  bool ok = epoll_fd >= 0 && wake_fd >= 0 &&
            epoll_ctl(epoll_fd, EPOLL_CTL_ADD, *listen_fd, &event) == 0;
  event.data.fd = wake_fd;
  ok = ok && epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &event) == 0;
  if (!ok) {
    const Status error = Status::Internal("cannot serve HTTP on " + listen +
                                          ": epoll: " + ErrnoText(errno));
    close(*listen_fd);
    if (epoll_fd >= 0) close(epoll_fd);
    if (wake_fd >= 0) close(wake_fd);
    return error;
  }

  std::unique_ptr<HttpServer> server(new HttpServer());
  server->port_ = BoundPort(*listen_fd);
  server->tls_ = tls != nullptr;
  server->tls_context_ = std::move(tls);
  if (!security.basic_auth_username.empty()) {
    server->auth_.emplace(security.basic_auth_username,
                          security.basic_auth_password);
    if (!server->tls_) {
      spdlog::warn(
          "http: basic authentication without TLS sends the password in "
          "clear text");
    }
  }
  server->workers_ = std::make_unique<WorkerPool>(server.get(), wake_fd);
  server->io_ = std::make_unique<IoLoop>(*listen_fd, epoll_fd, wake_fd,
                                         effective, server->workers_.get(),
                                         server->tls_context_.get());
  RW_RETURN_IF_ERROR(server->workers_->Start(threads));
  try {
    server->io_thread_ = std::thread([io = server->io_.get()] { io->Run(); });
  } catch (const std::system_error& e) {
    return Status::Internal(std::string("cannot start the HTTP thread: ") +
                            e.what());
  }
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (io_thread_.joinable()) {
    io_->RequestStop();
    io_thread_.join();  // Returns once no handler runs.
  }
  if (workers_ != nullptr) workers_->Stop();
}

HttpStats HttpServer::stats() const {
  HttpStats stats;
  stats.tls_handshake_errors = io_->tls_handshake_errors();
  stats.unauthorized_requests = unauthorized_.load();
  return stats;
}

void HttpServer::Handle(const std::string& path, Handler handler) {
  Handle(path, {"GET", "HEAD"}, std::move(handler));
}

void HttpServer::Handle(const std::string& path,
                        std::vector<std::string> methods, Handler handler) {
  std::unique_lock<std::shared_mutex> lock(handlers_mu_);
  handlers_[path] = Route{std::move(methods), std::move(handler)};
}

std::string HttpServer::Respond(const HttpRequest& request) const {
  // Nothing may escape a worker thread.
  try {
    HttpResponse response;
    if (auth_.has_value() && !auth_->Allows(request)) {
      ++unauthorized_;
      response = BasicAuth::Challenge();
    } else {
      response = Dispatch(request);
    }
    MaybeCompress(request, &response);
    return FormatResponse(response, request.method == "HEAD");
  } catch (const std::exception& e) {
    spdlog::error("http: {}", e.what());
  } catch (...) {
    spdlog::error("http: unknown exception");
  }
  return FormatError(500, "internal error");
}

HttpResponse HttpServer::Dispatch(const HttpRequest& request) const {
  Handler handler;
  {
    std::shared_lock<std::shared_mutex> lock(handlers_mu_);
    const auto it = handlers_.find(request.path);
    if (it == handlers_.end()) return HttpResponse::Text(404, "not found\n");
    const std::vector<std::string>& methods = it->second.methods;
    if (std::find(methods.begin(), methods.end(), request.method) ==
        methods.end()) {
      HttpResponse r = HttpResponse::Text(405, "method not allowed\n");
      std::string allow;
      for (const std::string& method : methods) {
        allow += (allow.empty() ? "" : ", ") + method;
      }
      r.headers.emplace_back("Allow", allow);
      return r;
    }
    // A copy, so that Handle() may replace it while it runs.
    handler = it->second.handler;
  }
  try {
    return handler(request);
  } catch (const std::exception& e) {
    spdlog::error("http: handler of {} failed: {}", request.path, e.what());
  } catch (...) {
    spdlog::error("http: handler of {} failed", request.path);
  }
  return HttpResponse::Text(500, "internal error\n");
}

void HttpServer::MaybeCompress(const HttpRequest& request,
                               HttpResponse* response) {
  if (response->body.size() < kMinGzipBytes) return;
  // The representation depends on Accept-Encoding: caches must know.
  response->headers.emplace_back("Vary", "Accept-Encoding");
  const std::optional<std::string_view> accept =
      request.Header("Accept-Encoding");
  if (!accept.has_value() || !AcceptsGzip(*accept)) return;
  StatusOr<std::string> compressed = GzipCompress(response->body);
  if (!compressed.ok()) {
    // Still correct uncompressed.
    spdlog::warn("http: {}", compressed.status().message());
    return;
  }
  response->body = std::move(compressed).value();
  response->headers.emplace_back("Content-Encoding", "gzip");
}

}  // namespace rankwatch::http
