// Writing a file so that readers never see it half written: for files that
// other processes poll for (the daemon's --port-file, the Kafka mock's
// --bootstrap-file) and outputs a reader may pick up while they are written.
//
// Stateless functions; thread-safe (concurrent writers of one path each
// write their own temporary file; the last rename wins).
#ifndef RANKWATCH_BASE_FILE_UTIL_H_
#define RANKWATCH_BASE_FILE_UTIL_H_

#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch {

// Writes `contents` to a new temporary file in the directory of `path`,
// closes it and renames it to `path`, replacing any file there; a reader
// sees either the old file (or none) or the whole new one. The file gets
// mode 0666 less the umask, like fopen's. Not fsynced: the callers need
// atomicity towards readers, not durability across a power loss.
//
// On failure returns an IoError whose one-line message names the file, the
// step and the system's reason, and removes the temporary file.
[[nodiscard]] Status WriteFileAtomically(const std::string& path,
                                         std::string_view contents);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_FILE_UTIL_H_
