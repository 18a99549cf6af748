// `rankwatch demo --prometheus`: Debian's `prometheus` started beside the
// demo, scraping its daemon with the shipped recording rules and alerts
// (deploy/prometheus/rules.yml and alerts.yml), so that the alerts can be
// watched firing. The demo asks it nothing over HTTP: it is ready when
// its log says so.
//
// DemoPrometheus owns the child process and its temporary directory (config
// and TSDB); the destructor stops the process (SIGTERM, then SIGKILL after
// 5 s) and removes the directory. The child also gets SIGTERM if the demo
// dies first (PR_SET_PDEATHSIG). Not thread-safe; one owner.
#ifndef RANKWATCH_DAEMON_CLI_DEMO_PROMETHEUS_H_
#define RANKWATCH_DAEMON_CLI_DEMO_PROMETHEUS_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace rankwatch::cli {

// The folder holding rules.yml and alerts.yml: `flag_dir` when given,
// else deploy/prometheus in a parent folder of the running binary (a build
// tree inside the source tree), else /usr/share/rankwatch/prometheus, else
// the source tree the binary was built from (RANKWATCH_SOURCE_DIR when
// defined). NotFound names the places tried.
StatusOr<std::string> FindPrometheusRulesDir(const std::string& flag_dir);

class DemoPrometheus {
 public:
  // Starts `prometheus` (from PATH) on a free 127.0.0.1 port, scraping
  // 127.0.0.1:`daemon_port` as job "rankwatch" every 2 s and evaluating the
  // rules in `rules_dir` every 2 s, and waits up to 30 s until it is
  // ready (its log says "Server is ready to receive web requests.", which
  // it writes once its /-/ready answers 200). Unavailable, with the last
  // error of its log, when it exits first or is not ready in time.
  static StatusOr<std::unique_ptr<DemoPrometheus>> Start(
      int daemon_port, const std::string& rules_dir);
  ~DemoPrometheus();
  DemoPrometheus(const DemoPrometheus&) = delete;
  DemoPrometheus& operator=(const DemoPrometheus&) = delete;

  int port() const { return port_; }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/";
  }

 private:
  DemoPrometheus() = default;
  // The last lines of Prometheus' log, for an error message.
  std::string LogTail() const;

  std::string dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_DEMO_PROMETHEUS_H_
