#include "daemon/cli/command_util.h"

#include <cstdio>

namespace rankwatch::cli {

int Fail(std::string_view command, std::string_view message, ExitCode code) {
  std::fprintf(stderr, "rankwatch %.*s: %.*s\n",
               static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
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
