#include "daemon/cli/demo_prometheus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "base/file_util.h"

namespace rankwatch::cli {

namespace {

std::string Errno(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// A socket connected to 127.0.0.1:port with 5 s send and receive timeouts.
StatusOr<int> Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(Errno("socket"));
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Status s = Status::Unavailable(
        Errno("connecting to 127.0.0.1:" + std::to_string(port)));
    ::close(fd);
    return s;
  }
  return fd;
}

// A port nobody listens on now: bound to port 0 and closed. Prometheus'
// --web.listen-address accepts port 0 but does not say which port it got,
// so the demo chooses (the race with another process is harmless here: a
// busy port makes Prometheus exit, which Start reports).
StatusOr<int> FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(Errno("socket"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status s = Status::IoError(Errno("choosing a free port"));
    ::close(fd);
    return s;
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

// The executable `name` on PATH, or empty.
std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool HasRules(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "rules.yml", ec) &&
         std::filesystem::is_regular_file(dir / "alerts.yml", ec);
}

}  // namespace

StatusOr<std::string> LocalHttpGet(int port, std::string_view path) {
  auto fd = Connect(port);
  if (!fd.ok()) return fd.status();
  const std::string request =
      "GET " + std::string(path) +
      " HTTP/1.0\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n =
        ::send(*fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      Status s = Status::IoError(Errno("sending to 127.0.0.1"));
      ::close(*fd);
      return s;
    }
    sent += static_cast<size_t>(n);
  }
  std::string response;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(*fd, buf, sizeof(buf), 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = Status::IoError(
          Errno("reading from 127.0.0.1:" + std::to_string(port) +
                std::string(path)));
      ::close(*fd);
      return s;
    }
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(*fd);
  const size_t body = response.find("\r\n\r\n");
  const size_t eol = response.find("\r\n");
  if (body == std::string::npos) {
    return Status::IoError("GET " + std::string(path) + ": no HTTP answer");
  }
  const std::string status_line = response.substr(0, eol);
  if (status_line.find(" 200") == std::string::npos) {
    return Status::Unavailable("GET " + std::string(path) + ": " + status_line);
  }
  return response.substr(body + 4);
}

StatusOr<std::string> FindPrometheusRulesDir(const std::string& flag_dir) {
  if (!flag_dir.empty()) {
    if (HasRules(flag_dir)) return flag_dir;
    return Status::NotFound("--prometheus-rules " + flag_dir +
                            ": no rules.yml and alerts.yml there");
  }
  std::vector<std::filesystem::path> tried;
  std::error_code ec;
  std::filesystem::path dir =
      std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; !ec && up < 4 && !dir.empty(); ++up) {
    tried.push_back(dir / "deploy/prometheus");
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  tried.emplace_back("/usr/share/rankwatch/prometheus");
#ifdef RANKWATCH_SOURCE_DIR
  tried.push_back(std::filesystem::path(RANKWATCH_SOURCE_DIR) /
                  "deploy/prometheus");
#endif
  std::string names;
  for (const auto& candidate : tried) {
    if (HasRules(candidate)) return candidate.string();
    names += (names.empty() ? "" : ", ") + candidate.string();
  }
  return Status::NotFound(
      "the shipped rules.yml and alerts.yml were not found (tried " + names +
      "); name their folder with --prometheus-rules");
}

StatusOr<std::unique_ptr<DemoPrometheus>> DemoPrometheus::Start(
    int daemon_port, const std::string& rules_dir) {
  const std::string binary = FindOnPath("prometheus");
  if (binary.empty()) {
    return Status::NotFound(
        "prometheus not found on PATH (Debian: apt-get install prometheus)");
  }
  std::unique_ptr<DemoPrometheus> p(new DemoPrometheus());
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  std::string tmpl = (tmp / "rankwatch-demo-prometheus-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Status::IoError(Errno("creating a directory for Prometheus"));
  }
  p->dir_ = tmpl;
  auto port = FreePort();
  if (!port.ok()) return port.status();
  p->port_ = *port;
  const std::string abs_rules = std::filesystem::absolute(rules_dir).string();
  const std::string config =
      "# Written by `rankwatch demo --prometheus`.\n"
      "global:\n"
      "  scrape_interval: 2s\n"
      "  evaluation_interval: 2s\n"
      "rule_files:\n"
      "  - \"" +
      abs_rules +
      "/rules.yml\"\n"
      "  - \"" +
      abs_rules +
      "/alerts.yml\"\n"
      "scrape_configs:\n"
      "  - job_name: rankwatch\n"
      "    scrape_timeout: 2s\n"
      "    static_configs:\n"
      "      - targets: [\"127.0.0.1:" +
      std::to_string(daemon_port) + "\"]\n";
  if (Status s = WriteFileAtomically(p->dir_ + "/prometheus.yml", config);
      !s.ok()) {
    return s;
  }
  const std::string log_path = p->dir_ + "/prometheus.log";
  const int log_fd =
      ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return Status::IoError(Errno("opening " + log_path));
  std::vector<std::string> args = {
      binary, "--config.file=" + p->dir_ + "/prometheus.yml",
      "--storage.tsdb.path=" + p->dir_ + "/data",
      "--web.listen-address=127.0.0.1:" + std::to_string(p->port_),
      "--log.level=warn"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return Status::IoError(Errno("fork"));
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  p->pid_ = pid;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    int wstatus = 0;
    if (::waitpid(pid, &wstatus, WNOHANG) == pid) {
      p->pid_ = -1;
      return Status::Unavailable("prometheus exited at start: " + p->LogTail());
    }
    if (LocalHttpGet(p->port_, "/-/ready").ok()) return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Status::Unavailable("prometheus not ready within 30 s: " +
                             p->LogTail());
}

DemoPrometheus::~DemoPrometheus() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int wstatus = 0;
    bool reaped = false;
    for (int i = 0; i < 50 && !reaped; ++i) {
      reaped = ::waitpid(pid_, &wstatus, WNOHANG) == pid_;
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &wstatus, 0);
    }
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string DemoPrometheus::LogTail() const {
  std::ifstream in(dir_ + "/prometheus.log");
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "(no log)" : last;
}

}  // namespace rankwatch::cli
