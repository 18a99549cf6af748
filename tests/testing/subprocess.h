// Running real processes from tests: one-shot commands with captured output
// (RunCommand) and long-running children such as the daemon or a broker
// (ChildProcess), which are always killed and reaped on destruction so that a
// failing test leaves nothing behind.
#ifndef RANKWATCH_TESTS_TESTING_SUBPROCESS_H_
#define RANKWATCH_TESTS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rankwatch::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal or timed out.
  bool timed_out = false;
  std::string out;
  std::string err;
};

// Runs argv[0] (a path) with `argv`, feeding `input` on stdin, and waits up to
// `timeout` (the child is killed after that).
CommandResult RunCommand(
    const std::vector<std::string>& argv,
    std::chrono::milliseconds timeout = std::chrono::seconds(120),
    const std::string& input = "");

// A child process with stdout and stderr redirected to files. Not copyable;
// the destructor sends SIGKILL if it is still running and reaps it.
class ChildProcess {
 public:
  // `env` entries ("K=V") are added to the current environment.
  ChildProcess(const std::vector<std::string>& argv,
               const std::string& stdout_path, const std::string& stderr_path,
               const std::vector<std::string>& env = {});
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  void Signal(int sig) const;
  // Waits for exit up to `timeout`; returns the exit status (exit code, or
  // 128 + signal number) or nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool Running();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// TCP ports on which process `pid` listens (IPv4 and IPv6), found through
// /proc: how a test learns the port of a server it started on port 0 that
// does not report it (Prometheus).
std::vector<int> ListeningTcpPorts(pid_t pid);

// Reads a whole file ("" if missing).
std::string ReadFile(const std::string& path);

void SleepFor(std::chrono::milliseconds d);

// Polls `predicate` every 20 ms until it returns true or `timeout` passes.
template <typename Predicate>
bool WaitFor(Predicate predicate, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    SleepFor(std::chrono::milliseconds(20));
  }
  return predicate();
}

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_SUBPROCESS_H_
