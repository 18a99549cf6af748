#include "daemon/cli/command_util.h"

#include <cstdio>
#include <string>

#include "base/strings.h"

namespace rankwatch::cli {

int Fail(std::string_view command, std::string_view message, ExitCode code) {
  // Every error is one line, whatever input it echoes: control characters
  // (a NUL, a line break from a library's message) are escaped here, the
  // one place every command's error goes through.
  const std::string line = Printable(message, std::string_view::npos);
  std::fprintf(stderr, "rankwatch %.*s: %s\n", static_cast<int>(command.size()),
               command.data(), line.c_str());
  return ToInt(code);
}

int Fail(std::string_view command, const Status& status, ErrorSource source) {
  return Fail(command, status.message(), ExitCodeFor(status.code(), source));
}

Status WriteStdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
      std::fflush(stdout) != 0) {
    return Status::IoError("cannot write the output");
  }
  return Status::Ok();
}

}  // namespace rankwatch::cli
