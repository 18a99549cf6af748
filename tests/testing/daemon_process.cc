#include "tests/testing/daemon_process.h"

#include <cstdio>
#include <vector>

#include "tests/testing/http_client.h"

namespace rankwatch::testing {

DaemonProcess::DaemonProcess(const std::string& binary, const TempDir& dir,
                             const std::string& config, const std::string& name)
    : port_file_(dir.path() + "/" + name + ".port"),
      log_(dir.path() + "/" + name + ".log") {
  std::remove(port_file_.c_str());
  child_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{binary, "run", "--config", config, "--port-file",
                               port_file_},
      dir.path() + "/" + name + ".out", log_);
}

bool DaemonProcess::WaitReady(std::chrono::milliseconds timeout) {
  return WaitFor(
      [&] {
        if (port_ == 0) {
          const std::string p = ReadFile(port_file_);
          if (p.empty()) return false;
          port_ = std::stoi(p);
        }
        auto r = HttpGet("127.0.0.1", port_, "/readyz");
        return r.ok() && r->status == 200;
      },
      timeout);
}

Scrape DaemonProcess::Metrics() {
  auto r = HttpGet("127.0.0.1", port_, "/metrics");
  if (!r.ok() || r->status != 200) return Scrape();
  return Scrape::Parse(r->body);
}

double DaemonProcess::Finalized() {
  return Metrics().Sum("rankwatch_requests_finalized_total");
}

std::string DaemonProcess::Summary() {
  const Scrape s = Metrics();
  return "consumed=" +
         std::to_string(s.Sum("rankwatch_events_consumed_total")) +
         " finalized=" +
         std::to_string(s.Sum("rankwatch_requests_finalized_total")) +
         " pending=" + std::to_string(s.Sum("rankwatch_pending_requests")) +
         " watermark=" +
         std::to_string(s.Sum("rankwatch_watermark_timestamp_seconds")) +
         " late=" + std::to_string(s.Sum("rankwatch_late_judgments_total"));
}

}  // namespace rankwatch::testing
