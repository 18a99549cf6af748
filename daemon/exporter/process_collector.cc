#include "daemon/exporter/process_collector.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "daemon/exporter/families.h"

namespace rankwatch::exporter {

namespace {

// The whole of a small /proc file (their stat size is 0, so no size
// check); nullopt when it cannot be read.
std::optional<std::string> ReadProcFile(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

// Splits off the next space-separated token of `*rest`.
std::string_view NextToken(std::string_view* rest) {
  const size_t start = rest->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *rest = {};
    return {};
  }
  const size_t end = rest->find_first_of(" \n", start);
  const std::string_view token = rest->substr(start, end - start);
  *rest =
      end == std::string_view::npos ? std::string_view() : rest->substr(end);
  return token;
}

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// What client_golang and client_python call their process metrics, with
// their HELP texts, word for word.
constexpr char kCpu[] = "process_cpu_seconds_total";
constexpr char kCpuHelp[] = "Total user and system CPU time spent in seconds.";
constexpr char kRss[] = "process_resident_memory_bytes";
constexpr char kRssHelp[] = "Resident memory size in bytes.";
constexpr char kVsize[] = "process_virtual_memory_bytes";
constexpr char kVsizeHelp[] = "Virtual memory size in bytes.";
constexpr char kOpenFds[] = "process_open_fds";
constexpr char kOpenFdsHelp[] = "Number of open file descriptors.";
constexpr char kMaxFds[] = "process_max_fds";
constexpr char kMaxFdsHelp[] = "Maximum number of open file descriptors.";
constexpr char kStart[] = "process_start_time_seconds";
constexpr char kStartHelp[] =
    "Start time of the process since unix epoch in seconds.";

void AddOne(std::vector<prometheus::MetricFamily>* out, const char* name,
            const char* help, prometheus::MetricType type, double value) {
  prometheus::MetricFamily f = MakeFamily(name, help, type);
  if (type == prometheus::MetricType::Counter) {
    AddCounter(&f, {}, value);
  } else {
    AddGauge(&f, {}, value);
  }
  out->push_back(std::move(f));
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view line) {
  const size_t paren = line.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  // Field 3 (state) is the first token after the command name.
  std::string_view rest = line.substr(paren + 1);
  ProcStat stat;
  for (int field = 3; field <= 24; ++field) {
    const std::string_view token = NextToken(&rest);
    if (token.empty()) return std::nullopt;
    bool ok = true;
    switch (field) {
      case 14:
        ok = ParseNumber(token, &stat.utime_ticks);
        break;
      case 15:
        ok = ParseNumber(token, &stat.stime_ticks);
        break;
      case 22:
        ok = ParseNumber(token, &stat.starttime_ticks);
        break;
      case 23:
        ok = ParseNumber(token, &stat.vsize_bytes);
        break;
      case 24:
        ok = ParseNumber(token, &stat.rss_pages);
        break;
      default:
        break;
    }
    if (!ok) return std::nullopt;
  }
  return stat;
}

std::optional<int64_t> ParseBootTime(std::string_view proc_stat) {
  size_t pos = 0;
  while (pos < proc_stat.size()) {
    size_t end = proc_stat.find('\n', pos);
    if (end == std::string_view::npos) end = proc_stat.size();
    std::string_view line = proc_stat.substr(pos, end - pos);
    if (NextToken(&line) == "btime") {
      int64_t seconds = 0;
      if (ParseNumber(NextToken(&line), &seconds)) return seconds;
      return std::nullopt;
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::optional<double> ParseMaxOpenFiles(std::string_view limits) {
  constexpr std::string_view kLine = "Max open files";
  const size_t at = limits.find(kLine);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = limits.substr(at + kLine.size());
  const std::string_view soft = NextToken(&rest);
  if (soft == "unlimited") return std::numeric_limits<double>::infinity();
  uint64_t value = 0;
  if (!ParseNumber(soft, &value)) return std::nullopt;
  return static_cast<double>(value);
}

std::optional<int64_t> CountOpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  const int own = dirfd(dir);
  int64_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    int fd = -1;
    if (!ParseNumber(std::string_view(entry->d_name), &fd)) continue;
    if (fd != own) ++count;
  }
  closedir(dir);
  return count;
}

void ProcessCollector::Collect(
    std::vector<prometheus::MetricFamily>* out) const {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const std::optional<std::string> stat_line = ReadProcFile("/proc/self/stat");
  const std::optional<ProcStat> stat =
      stat_line ? ParseProcStat(*stat_line) : std::nullopt;
  if (stat && ticks > 0) {
    AddOne(out, kCpu, kCpuHelp, prometheus::MetricType::Counter,
           static_cast<double>(stat->utime_ticks + stat->stime_ticks) / ticks);
    AddOne(out, kRss, kRssHelp, prometheus::MetricType::Gauge,
           static_cast<double>(stat->rss_pages) *
               static_cast<double>(sysconf(_SC_PAGESIZE)));
    AddOne(out, kVsize, kVsizeHelp, prometheus::MetricType::Gauge,
           static_cast<double>(stat->vsize_bytes));
  }
  if (const std::optional<int64_t> fds = CountOpenFds()) {
    AddOne(out, kOpenFds, kOpenFdsHelp, prometheus::MetricType::Gauge,
           static_cast<double>(*fds));
  }
  const std::optional<std::string> limits = ReadProcFile("/proc/self/limits");
  if (const std::optional<double> max =
          limits ? ParseMaxOpenFiles(*limits) : std::nullopt) {
    AddOne(out, kMaxFds, kMaxFdsHelp, prometheus::MetricType::Gauge, *max);
  }
  const std::optional<std::string> proc_stat = ReadProcFile("/proc/stat");
  const std::optional<int64_t> boot =
      proc_stat ? ParseBootTime(*proc_stat) : std::nullopt;
  if (stat && boot && ticks > 0) {
    AddOne(out, kStart, kStartHelp, prometheus::MetricType::Gauge,
           static_cast<double>(*boot) +
               static_cast<double>(stat->starttime_ticks) / ticks);
  }
}

}  // namespace rankwatch::exporter
