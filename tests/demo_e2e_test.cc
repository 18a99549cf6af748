// `rankwatch demo` as a newcomer runs it (issue 14): the real binary, its
// in-process Kafka mock cluster and traffic generator, read from its
// stdout. With a regression injected into B, the terminal must say that B
// is worse than A on ndcg@10 within 60 s of the regression's start, and
// print its periodic table. With --prometheus, Debian's Prometheus must
// answer at the printed URL with the shipped rule groups loaded, and stop
// with the demo.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/testing/http_client.h"
#include "tests/testing/paths.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/temp_dir.h"

using rankwatch::testing::RankwatchBinary;

namespace rankwatch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ChildProcess;
using testing::ReadFile;
using testing::TempDir;
using testing::WaitFor;

class DemoE2eTest : public ::testing::Test {
 protected:
  void Start(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {RankwatchBinary(), "demo", "--listen",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    demo_ = std::make_unique<ChildProcess>(argv, out_path(), err_path());
    start_ = std::chrono::steady_clock::now();
  }
  std::string out_path() const { return dir_.path() + "/demo.out"; }
  std::string err_path() const { return dir_.path() + "/demo.err"; }
  std::string Out() const { return ReadFile(out_path()); }
  std::string Log() const {
    return "stdout:\n" + Out() + "\nstderr:\n" + ReadFile(err_path());
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start_)
        .count();
  }
  // Ctrl-C: the demo stops cleanly with exit 0.
  void Stop() {
    demo_->Signal(SIGINT);
    EXPECT_EQ(demo_->Wait(seconds(30)), 0) << Log();
  }

  TempDir dir_;
  std::unique_ptr<ChildProcess> demo_;
  std::chrono::steady_clock::time_point start_;
};

TEST_F(DemoE2eTest, SaysWithinAMinuteThatBRegressed) {
  Start({"--regress-variant", "B", "--regress-after", "20s", "--duration",
         "75s"});
  const std::string kLine = "B is now worse than A on ndcg@10: ";
  // The regression starts 20 s into the traffic; 60 s later at the latest.
  const bool told = WaitFor(
      [&] { return Out().find(kLine) != std::string::npos; }, seconds(80));
  const double at = Elapsed();
  ASSERT_TRUE(told) << Log();
  std::printf("told after %.1f s\n", at);
  const std::string out = Out();
  // The line carries the difference and its interval, all negative, and
  // names the two queries that carry the regression most (B's noise grows
  // on every query, so the largest contributions are losses):
  // "-0.044 [-0.020, -0.007] (ranker-v2); most on queries q-0003 (-0.31),
  // q-0001 (-0.12)".
  const size_t pos = out.find(kLine) + kLine.size();
  const std::string rest = out.substr(pos, out.find('\n', pos) - pos);
  EXPECT_EQ(rest.substr(0, 1), "-") << rest;
  EXPECT_NE(rest.find(" [-"), std::string::npos) << rest;
  EXPECT_NE(rest.find(", -"), std::string::npos) << rest;
  const std::string kQueries = "] (ranker-v2); most on queries q-";
  const size_t queries = rest.find(kQueries);
  ASSERT_NE(queries, std::string::npos) << rest;
  const std::string named = rest.substr(queries + kQueries.size() - 2);
  // "q-0003 (-0.31), q-0001 (-0.12)": two queries, both with a loss.
  EXPECT_EQ(std::count(named.begin(), named.end(), '('), 2) << named;
  EXPECT_NE(named.find(" (-"), std::string::npos) << named;
  EXPECT_NE(named.find("), q-"), std::string::npos) << named;
  EXPECT_NE(named.find(" (-", named.find("), q-")), std::string::npos) << named;
  EXPECT_TRUE(named.ends_with(")")) << named;
  // The periodic table: a header every 10 s, variants and the experiment.
  EXPECT_NE(out.find("\n-- 10s: "), std::string::npos) << out;
  EXPECT_NE(out.find(" events/s --\n"), std::string::npos) << out;
  EXPECT_NE(out.find("since start, mean [95% interval]"), std::string::npos);
  EXPECT_NE(out.find("\n  A        "), std::string::npos) << out;
  EXPECT_NE(out.find("ranker-v2   B vs A"), std::string::npos) << out;
  // The guide says when a --duration demo ends (issue 25, item 7).
  EXPECT_NE(out.find("It stops 40 s after 75s of traffic (the last join "
                     "window must close), with a final summary"),
            std::string::npos)
      << out;
  Stop();
  // Stopped, it says so and prints the figures of its last look, not
  // nothing (before, it ended silently).
  const std::string end = Out().substr(out.size());
  EXPECT_NE(end.find("\nrankwatch demo: stopped after "), std::string::npos)
      << end;
  EXPECT_NE(end.find(" s (stop requested).\nFinal figures (last look, "),
            std::string::npos)
      << end;
  EXPECT_NE(end.find("ranker-v2   B vs A"), std::string::npos) << end;
}

TEST_F(DemoE2eTest, PrometheusRunsWithTheShippedRules) {
  Start({"--prometheus", "--duration", "60s"});
  const std::string kUrl = "Prometheus: http://127.0.0.1:";
  ASSERT_TRUE(WaitFor([&] { return Out().find(kUrl) != std::string::npos; },
                      seconds(60)))
      << Log();
  const std::string out = Out();
  const int port = std::atoi(out.c_str() + out.find(kUrl) + kUrl.size());
  ASSERT_GT(port, 0) << out;
  EXPECT_NE(out.find("http://127.0.0.1:" + std::to_string(port) + "/alerts"),
            std::string::npos)
      << out;
  auto ready = testing::HttpGet("127.0.0.1", port, "/-/ready");
  ASSERT_TRUE(ready.ok()) << ready.status().message();
  EXPECT_EQ(ready->status, 200);
  auto rules = testing::HttpGet("127.0.0.1", port, "/api/v1/rules");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_EQ(rules->status, 200);
  // The groups of deploy/prometheus/rules.yml and alerts.yml.
  for (const char* group : {"rankwatch_quality", "rankwatch_ab",
                            "rankwatch_pipeline", "rankwatch_alerts"}) {
    EXPECT_NE(rules->body.find(std::string("\"name\":\"") + group + "\""),
              std::string::npos)
        << group << " in " << rules->body.substr(0, 500);
  }
  Stop();
  // Prometheus stopped with the demo.
  EXPECT_FALSE(
      testing::HttpGet("127.0.0.1", port, "/-/ready", {}, milliseconds(2000))
          .ok());
}

TEST_F(DemoE2eTest, PrometheusRulesFolderMissingIsOneLine) {
  Start({"--prometheus", "--prometheus-rules", dir_.path() + "/nowhere"});
  EXPECT_EQ(demo_->Wait(seconds(30)), 2) << Log();
  const std::string err = ReadFile(err_path());
  EXPECT_NE(err.find("no rules.yml and alerts.yml there"), std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace rankwatch
