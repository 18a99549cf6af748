#include "daemon/cli/command_util.h"

#include <charconv>
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

CLI::Validator IntegerAtLeast(int64_t min) {
  const std::string what = "must be an integer >= " + std::to_string(min);
  return CLI::Validator(
      [min, what](std::string& value) {
        int64_t v = 0;
        const char* const end = value.data() + value.size();
        const auto [p, ec] = std::from_chars(value.data(), end, v);
        return ec == std::errc() && p == end && v >= min ? std::string() : what;
      },
      "INT>=" + std::to_string(min));
}

}  // namespace rankwatch::cli
