// Shutdown on SIGTERM and SIGINT: the first signal asks the process to stop
// (sets the flag the main loop polls); a second one exits at once. SIGHUP
// asks for a configuration reload (sets another flag); it never stops the
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

// After `stop` becomes true, exits the process with status 0 if it is still
// running `grace` later (a peer that does not answer must not hold a
// shutdown forever). Runs on a detached thread.
void StartShutdownWatchdog(const std::atomic<bool>* stop,
                           std::chrono::milliseconds grace);

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_SIGNALS_H_
