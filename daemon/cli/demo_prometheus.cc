#include "daemon/cli/demo_prometheus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <vector>

#include "base/file_util.h"

namespace rankwatch::cli {

namespace {

std::string Errno(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
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

// What Prometheus logs (level info) right after /-/ready starts to answer
// 200 (web.Handler.SetReady, then this line, in its main.go).
constexpr std::string_view kReadyMessage =
    "msg=\"Server is ready to receive web requests.\"";

bool LogSaysReady(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(kReadyMessage) != std::string::npos) return true;
  }
  return false;
}

bool HasRules(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_regular_file(dir / "rules.yml", ec) &&
         std::filesystem::is_regular_file(dir / "alerts.yml", ec);
}

}  // namespace

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
      // Info: the line that says it is ready (kReadyMessage).
      "--log.level=info"};
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
    if (LogSaysReady(log_path)) return p;
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
  std::string last_error;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    // Its info lines go on after an error (stopping its managers).
    if (line.find(" level=error ") != std::string::npos) last_error = line;
  }
  if (!last_error.empty()) return last_error;
  return last.empty() ? "(no log)" : last;
}

}  // namespace rankwatch::cli
