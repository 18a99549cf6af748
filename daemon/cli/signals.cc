#include "daemon/cli/signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

namespace rankwatch::cli {

namespace {

std::atomic<bool>* g_stop = nullptr;
std::atomic<bool>* g_reload = nullptr;
std::atomic<int> g_signals{0};

// Async-signal-safe: lock-free atomics and _exit only.
void OnSignal(int sig) {
  if (g_signals.fetch_add(1) > 0) _exit(128 + sig);
  if (g_stop != nullptr) g_stop->store(true);
}

void OnHangup(int) {
  if (g_reload != nullptr) g_reload->store(true);
}

}  // namespace

void InstallReloadHandler(std::atomic<bool>* reload) {
  g_reload = reload;
  struct sigaction sa = {};
  sa.sa_handler = OnHangup;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART: a read or write the signal interrupts resumes.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGHUP, &sa, nullptr);
}

void IgnoreHangup() {
  struct sigaction sa = {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGHUP, &sa, nullptr);
}

void InstallStopHandlers(std::atomic<bool>* stop) {
  static_assert(std::atomic<bool>::is_always_lock_free);
  g_stop = stop;
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
}

void StartShutdownWatchdog(const std::atomic<bool>* stop,
                           std::chrono::milliseconds grace) {
  std::thread([stop, grace] {
    while (!stop->load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(grace);
    static const char kMsg[] =
        "rankwatch: shutdown did not finish in time; exiting\n";
    ssize_t ignored = ::write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
    (void)ignored;
    _exit(0);
  }).detach();
}

}  // namespace rankwatch::cli
