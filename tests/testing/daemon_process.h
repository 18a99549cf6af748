// A `rankwatch run` process for end-to-end tests: started with
// `--port-file` so that it can bind HTTP port 0, and read back over HTTP
// (its port, /readyz, /metrics). The process is killed and reaped when the
// object goes (ChildProcess).
//
// Not thread-safe; one test thread drives it.
#ifndef RANKWATCH_TESTS_TESTING_DAEMON_PROCESS_H_
#define RANKWATCH_TESTS_TESTING_DAEMON_PROCESS_H_

#include <chrono>
#include <memory>
#include <string>

#include "tests/testing/prometheus_text.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

namespace rankwatch::testing {

class DaemonProcess {
 public:
  // Runs `binary run --config config`, its files named `name`.* in `dir`.
  DaemonProcess(const std::string& binary, const TempDir& dir,
                const std::string& config, const std::string& name);

  // Waits for the port and /readyz (the group join takes ~3 s, a rebalance
  // session.timeout.ms - 1 s).
  bool WaitReady(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // The HTTP port; 0 until WaitReady() has read it.
  int port() const { return port_; }
  // /metrics, parsed; empty when the daemon does not answer.
  Scrape Metrics();
  double Finalized();
  // The pipeline's main counters, for failure messages.
  std::string Summary();

  ChildProcess& process() { return *child_; }
  std::string log() const { return ReadFile(log_); }

 private:
  std::string port_file_;
  std::string log_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> child_;
};

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_DAEMON_PROCESS_H_
