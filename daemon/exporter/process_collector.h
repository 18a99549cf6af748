// The process_* metrics every Prometheus client library exports (the
// "process collector" of client_golang and client_python), with their
// names, types and HELP texts, so that dashboards and alerts written for
// any exporter work on rankwatch too:
//
//   process_cpu_seconds_total       counter  utime + stime of /proc/self/stat
//   process_resident_memory_bytes   gauge    rss pages x page size
//   process_virtual_memory_bytes    gauge    vsize
//   process_open_fds                gauge    entries of /proc/self/fd
//   process_max_fds                 gauge    soft "Max open files" limit
//   process_start_time_seconds      gauge    btime + starttime / CLK_TCK
//
// Linux only: read from /proc at scrape time. A family whose source cannot
// be read is left out (as the client libraries do), never reported as 0.
//
// Stateless; Collect() may run on any thread, concurrently with itself:
// not guarded(), it runs outside the daemon's lock.
#ifndef RANKWATCH_DAEMON_EXPORTER_PROCESS_COLLECTOR_H_
#define RANKWATCH_DAEMON_EXPORTER_PROCESS_COLLECTOR_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "daemon/exporter/probe.h"

namespace rankwatch::exporter {

// The fields of /proc/<pid>/stat the collector uses, in the units of the
// file (proc(5)): clock ticks, bytes and pages.
struct ProcStat {
  uint64_t utime_ticks = 0;      // Field 14.
  uint64_t stime_ticks = 0;      // Field 15.
  uint64_t starttime_ticks = 0;  // Field 22: since boot.
  uint64_t vsize_bytes = 0;      // Field 23.
  int64_t rss_pages = 0;         // Field 24.
};

// Parses the one line of /proc/<pid>/stat. The command name (field 2) is
// in parentheses and may itself hold spaces and ')': fields are counted
// from the last ')'. nullopt when the line is malformed.
std::optional<ProcStat> ParseProcStat(std::string_view line);

// The "btime" line of /proc/stat: the boot time in seconds since the epoch.
std::optional<int64_t> ParseBootTime(std::string_view proc_stat);

// The soft limit of the "Max open files" line of /proc/<pid>/limits;
// +infinity for "unlimited".
std::optional<double> ParseMaxOpenFiles(std::string_view limits);

// The number of open file descriptors of this process: the entries of
// /proc/self/fd, less the one that lists them.
std::optional<int64_t> CountOpenFds();

class ProcessCollector : public Collector {
 public:
  bool guarded() const override { return false; }
  void Collect(std::vector<prometheus::MetricFamily>* out) const override;
};

}  // namespace rankwatch::exporter

#endif  // RANKWATCH_DAEMON_EXPORTER_PROCESS_COLLECTOR_H_
