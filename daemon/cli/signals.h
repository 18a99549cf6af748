// Shutdown on SIGTERM and SIGINT: the first signal asks the process to stop
// (sets the flag the main loop polls); a second one exits at once. SIGHUP
// asks for a configuration reload (sets another flag) in the daemon and is
// ignored by the tools that run beside it; it never stops a rankwatch
// process.
#ifndef RANKWATCH_DAEMON_CLI_SIGNALS_H_
#define RANKWATCH_DAEMON_CLI_SIGNALS_H_

#include <atomic>
#include <chrono>

namespace rankwatch::cli {

// Installs the handlers. `stop` must outlive the process's use of it.
void InstallStopHandlers(std::atomic<bool>* stop);

// Installs the SIGHUP handler: each SIGHUP sets `reload` (several before
// the daemon looks fold into one reload). `reload` must outlive the
// process's use of it.
void InstallReloadHandler(std::atomic<bool>* reload);

// Ignores SIGHUP, for the commands with nothing to reload (kafka-mock,
// produce-synthetic): a `kill -HUP` meant for the daemon, sent to every
// process named rankwatch (`pidof rankwatch`), must not stop the cluster
// and the traffic it runs on (the default action exits with 129).
void IgnoreHangup();

// After `stop` becomes true, exits the process with status 0 if it is still
// running `grace` later (a peer that does not answer must not hold a
// shutdown forever). Runs on a detached thread.
void StartShutdownWatchdog(const std::atomic<bool>* stop,
                           std::chrono::milliseconds grace);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_SIGNALS_H_
