#include "daemon/cli/signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

// The handlers are process-wide and the first stop signal is remembered
// for good, so each case runs in a child process of its own (a death
// test) and reports what it saw through its exit status. raise() runs the
// handler before it returns.
namespace rankwatch::cli {
namespace {

using ::testing::ExitedWithCode;
using ::testing::KilledBySignal;

class SignalsTest : public ::testing::Test {
 protected:
  // "threadsafe": the child re-runs the test binary rather than forking
  // a process that may have threads.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SignalsTest, FirstStopSignalSetsTheFlagOnly) {
  for (int sig : {SIGTERM, SIGINT}) {
    EXPECT_EXIT(
        {
          std::atomic<bool> stop{false};
          InstallStopHandlers(&stop);
          ::raise(sig);
          // Still running, with the flag set: exit 42.
          ::_exit(stop.load() ? 42 : 1);
        },
        ExitedWithCode(42), "")
        << sig;
  }
}

// A second stop signal exits at once with 128 + its number, as a shell
// reports a process killed by it: SIGTERM (15) -> 143, SIGINT (2) -> 130.
TEST_F(SignalsTest, SecondStopSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        std::atomic<bool> stop{false};
        InstallStopHandlers(&stop);
        ::raise(SIGINT);
        ::raise(SIGTERM);
        ::_exit(1);  // Not reached.
      },
      ExitedWithCode(143), "");
  EXPECT_EXIT(
      {
        std::atomic<bool> stop{false};
        InstallStopHandlers(&stop);
        ::raise(SIGTERM);
        ::raise(SIGINT);
        ::_exit(1);
      },
      ExitedWithCode(130), "");
}

// SIGHUP asks for a reload and never stops the process: two of them set
// the reload flag (folded into one), leave the stop flag alone and do not
// count as a first stop signal.
TEST_F(SignalsTest, HangupSetsReloadNotStop) {
  EXPECT_EXIT(
      {
        std::atomic<bool> stop{false};
        std::atomic<bool> reload{false};
        InstallStopHandlers(&stop);
        InstallReloadHandler(&reload);
        ::raise(SIGHUP);
        ::raise(SIGHUP);
        if (!reload.load() || stop.load()) ::_exit(1);
        reload.store(false);  // The daemon took the reload.
        ::raise(SIGHUP);
        if (!reload.load()) ::_exit(2);
        ::raise(SIGTERM);  // The first stop signal still only asks.
        ::_exit(stop.load() ? 42 : 3);
      },
      ExitedWithCode(42), "");
}

// IgnoreHangup keeps kafka-mock and produce-synthetic running through a
// `kill -HUP` meant for the daemon; without it SIGHUP kills the process.
TEST_F(SignalsTest, IgnoredHangupDoesNotStopTheTools) {
  EXPECT_EXIT(
      {
        IgnoreHangup();
        ::raise(SIGHUP);
        ::_exit(42);
      },
      ExitedWithCode(42), "");
  EXPECT_EXIT(
      {
        ::signal(SIGHUP, SIG_DFL);
        ::raise(SIGHUP);
        ::_exit(42);
      },
      KilledBySignal(SIGHUP), "");
}

// The watchdog waits for the stop flag, then gives the shutdown `grace`
// before it exits 0 with a line on stderr. The watchdog polls every 50 ms
// (real time: it takes no clock), so the child waits well beyond that.
TEST_F(SignalsTest, WatchdogExitsAGraceAfterStop) {
  EXPECT_EXIT(
      {
        static std::atomic<bool> stop{false};
        StartShutdownWatchdog(&stop, std::chrono::milliseconds(10));
        stop.store(true);
        std::this_thread::sleep_for(std::chrono::seconds(20));
        ::_exit(1);  // The watchdog did not fire.
      },
      ExitedWithCode(0), "rankwatch: shutdown did not finish in time; exiting");
}

TEST_F(SignalsTest, WatchdogWaitsForTheStopFlag) {
  EXPECT_EXIT(
      {
        static std::atomic<bool> stop{false};
        StartShutdownWatchdog(&stop, std::chrono::milliseconds(0));
        // Six polls without stop: the process is still ours.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::_exit(42);
      },
      ExitedWithCode(42), "");
}

}  // namespace
}  // namespace rankwatch::cli
