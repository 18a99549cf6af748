// Process exit codes shared by every rankwatch subcommand.
#ifndef RANKWATCH_DAEMON_CLI_EXIT_CODES_H_
#define RANKWATCH_DAEMON_CLI_EXIT_CODES_H_

namespace rankwatch::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;  // Malformed or unreadable input.
inline constexpr int kExitUsage = 2;     // Bad flags or configuration.
inline constexpr int kExitInternal = 3;  // A bug or an unexpected failure.

}  // namespace rankwatch::cli

#endif  // RANKWATCH_DAEMON_CLI_EXIT_CODES_H_
