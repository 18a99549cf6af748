#include "daemon/exporter/process_collector.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "daemon/exporter/metrics_handler.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::exporter {
namespace {

// Wall-clock time when this test binary's static objects were built: a
// little after the process started, measured independently of /proc.
const double kStaticInitSeconds =
    std::chrono::duration<double>(
        std::chrono::system_clock::now().time_since_epoch())
        .count();

// The value of the single-sample family `name`, with its type and HELP
// checked against the client libraries'.
struct Sample {
  bool found = false;
  double value = 0;
};

Sample Find(const std::vector<prometheus::MetricFamily>& families,
            const std::string& name, prometheus::MetricType type,
            const std::string& help) {
  for (const prometheus::MetricFamily& f : families) {
    if (f.name != name) continue;
    EXPECT_EQ(f.type, type) << name;
    EXPECT_EQ(f.help, help) << name;
    EXPECT_EQ(f.metric.size(), 1u) << name;
    if (f.metric.empty()) return {};
    const prometheus::ClientMetric& m = f.metric[0];
    return {true, type == prometheus::MetricType::Counter ? m.counter.value
                                                          : m.gauge.value};
  }
  return {};
}

std::vector<prometheus::MetricFamily> CollectNow() {
  std::vector<prometheus::MetricFamily> out;
  ProcessCollector().Collect(&out);
  return out;
}

double OpenFds() {
  const Sample s =
      Find(CollectNow(), "process_open_fds", prometheus::MetricType::Gauge,
           "Number of open file descriptors.");
  EXPECT_TRUE(s.found);
  return s.value;
}

TEST(ParseProcStatTest, CountsFieldsFromTheLastParenthesis) {
  // A command name with a space and a ')' (proc(5): fields 1-24; utime 14
  // = 250, stime 15 = 50, starttime 22 = 123456, vsize 23 = 8192000,
  // rss 24 = 300).
  const std::string line =
      "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 "
      "123456 8192000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 "
      "1 0 0 0 0 0\n";
  const std::optional<ProcStat> stat = ParseProcStat(line);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->utime_ticks, 250u);
  EXPECT_EQ(stat->stime_ticks, 50u);
  EXPECT_EQ(stat->starttime_ticks, 123456u);
  EXPECT_EQ(stat->vsize_bytes, 8192000u);
  EXPECT_EQ(stat->rss_pages, 300);
  EXPECT_FALSE(ParseProcStat("42 (x) S 1 2 3").has_value());
  EXPECT_FALSE(ParseProcStat("no parenthesis").has_value());
}

TEST(ParseProcStatTest, BootTimeAndMaxOpenFiles) {
  EXPECT_EQ(ParseBootTime("cpu  1 2 3\nintr 5\nbtime 1700000000\n"
                          "processes 7\n"),
            1700000000);
  EXPECT_FALSE(ParseBootTime("cpu 1\n").has_value());
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           "
      "Units     \n"
      "Max open files            1024                 524288               "
      "files     \n";
  EXPECT_EQ(ParseMaxOpenFiles(limits), 1024.0);
  EXPECT_EQ(ParseMaxOpenFiles("Max open files            unlimited     "
                              "       unlimited            files\n"),
            std::numeric_limits<double>::infinity());
  EXPECT_FALSE(ParseMaxOpenFiles("Max processes 5 5\n").has_value());
}

TEST(ProcessCollectorTest, OpenFdsGrowByTheDescriptorsOpened) {
  const double before = OpenFds();
  constexpr int kExtra = 7;
  std::vector<int> fds;
  for (int i = 0; i < kExtra; ++i) fds.push_back(open("/dev/null", O_RDONLY));
  for (int fd : fds) ASSERT_GE(fd, 0);
  EXPECT_EQ(OpenFds(), before + kExtra);
  for (int fd : fds) close(fd);
  EXPECT_EQ(OpenFds(), before);
}

TEST(ProcessCollectorTest, MaxFdsIsTheSoftLimit) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  const Sample s =
      Find(CollectNow(), "process_max_fds", prometheus::MetricType::Gauge,
           "Maximum number of open file descriptors.");
  ASSERT_TRUE(s.found);
  const double expected = limit.rlim_cur == RLIM_INFINITY
                              ? std::numeric_limits<double>::infinity()
                              : static_cast<double>(limit.rlim_cur);
  EXPECT_EQ(s.value, expected);
}

TEST(ProcessCollectorTest, StartTimeIsJustBeforeStaticInitialization) {
  const Sample s = Find(
      CollectNow(), "process_start_time_seconds", prometheus::MetricType::Gauge,
      "Start time of the process since unix epoch in seconds.");
  ASSERT_TRUE(s.found);
  // Start time has the resolution of a clock tick (10 ms) on a boot time
  // of whole seconds: allow 1 s after; ASan's start-up may take a few
  // seconds before.
  EXPECT_LE(s.value, kStaticInitSeconds + 1.0);
  EXPECT_GE(s.value, kStaticInitSeconds - 10.0);
}

double CpuSeconds(const rusage& r) {
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

double CpuSecondsNow() {
  rusage r{};
  EXPECT_EQ(getrusage(RUSAGE_SELF, &r), 0);
  return CpuSeconds(r);
}

TEST(ProcessCollectorTest, CpuSecondsMatchGetrusage) {
  // Burn 0.2 s of CPU (a busy machine may take longer in wall time) so
  // that the figure is not just start-up.
  const double start = CpuSecondsNow();
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  volatile uint64_t x = 1;
  while (CpuSecondsNow() < start + 0.2 &&
         std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 100000; ++i) x = x * 6364136223846793005u + 1;
  }
  const double before = CpuSecondsNow();
  const Sample s = Find(CollectNow(), "process_cpu_seconds_total",
                        prometheus::MetricType::Counter,
                        "Total user and system CPU time spent in seconds.");
  const double after = CpuSecondsNow();
  ASSERT_TRUE(s.found);
  EXPECT_GE(before, start + 0.2);
  // /proc counts whole clock ticks (10 ms each, for user and system).
  EXPECT_GE(s.value, before - 0.03);
  EXPECT_LE(s.value, after + 0.03);
}

// statm (proc(5)): size and resident, in pages; read here independently.
std::pair<double, double> Statm() {
  std::ifstream in("/proc/self/statm");
  double size = 0, resident = 0;
  in >> size >> resident;
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return {size * page, resident * page};
}

TEST(ProcessCollectorTest, MemoryMatchesStatmAndGrowsWhenTouched) {
  const prometheus::MetricType gauge = prometheus::MetricType::Gauge;
  const auto [size_before, resident_before] = Statm();
  std::vector<prometheus::MetricFamily> families = CollectNow();
  const Sample vsize = Find(families, "process_virtual_memory_bytes", gauge,
                            "Virtual memory size in bytes.");
  const Sample rss = Find(families, "process_resident_memory_bytes", gauge,
                          "Resident memory size in bytes.");
  ASSERT_TRUE(vsize.found);
  ASSERT_TRUE(rss.found);
  EXPECT_NEAR(vsize.value, size_before, size_before * 0.01);
  EXPECT_NEAR(rss.value, resident_before, resident_before * 0.05);

  // 64 MiB touched page by page becomes resident.
  constexpr size_t kBytes = 64u << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);
  const Sample grown = Find(CollectNow(), "process_resident_memory_bytes",
                            gauge, "Resident memory size in bytes.");
  EXPECT_GE(grown.value, rss.value + 60.0 * (1 << 20));
  EXPECT_EQ(block[kBytes - 1], 1);
}

TEST(ProcessCollectorTest, PromtoolAcceptsTheOutput) {
#ifndef RANKWATCH_PROMTOOL
  GTEST_SKIP() << "promtool not found at configure time";
#else
  const std::string text = SerializeText(CollectNow());
  const rankwatch::testing::CommandResult result =
      rankwatch::testing::RunCommand({RANKWATCH_PROMTOOL, "check", "metrics"},
                                     std::chrono::seconds(60), text);
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
#endif
}

}  // namespace
}  // namespace rankwatch::exporter
