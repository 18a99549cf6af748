#include "base/bounded_read.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/strings.h"

namespace rankwatch {

namespace {

// Names and paths are shown whole (a cut path is no help), escaped.
std::string Name(std::string_view name) {
  return Printable(name, std::string_view::npos);
}

}  // namespace

Status LineTooLong(std::string_view name, uint64_t line,
                   const ReadBounds& bounds) {
  return Status::InvalidArgument(
      Name(name) + ":" + std::to_string(line) + ": line longer than " +
      std::to_string(bounds.max_line_bytes) + " bytes (" +
      std::string(bounds.line_bound_name) + ")");
}

uint64_t LongLine(std::string_view text, size_t max_line_bytes) {
  uint64_t line = 1;
  size_t pos = 0;
  for (;;) {
    const size_t eol = text.find('\n', pos);
    const size_t end = eol == std::string_view::npos ? text.size() : eol;
    if (end - pos > max_line_bytes) return line;
    if (eol == std::string_view::npos) return 0;
    pos = eol + 1;
    ++line;
  }
}

Status ReadAllBounded(int fd, std::string_view name, const ReadBounds& bounds,
                      std::string* out) {
  // Line number and start (in *out) of the line being read.
  uint64_t line = 1;
  size_t line_start = out->size();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) return Status::Ok();
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::IoError("cannot read '" + Name(name) +
                             "': " + std::strerror(errno));
    }
    const size_t scanned = out->size();
    if (static_cast<size_t>(n) > bounds.max_total_bytes - scanned) {
      return Status::InvalidArgument(Name(name) + ": larger than " +
                                     std::to_string(bounds.max_total_bytes) +
                                     " bytes");
    }
    out->append(buf, static_cast<size_t>(n));
    for (size_t pos = scanned;;) {
      const void* nl = std::memchr(out->data() + pos, '\n', out->size() - pos);
      if (nl == nullptr) break;
      pos = static_cast<size_t>(static_cast<const char*>(nl) - out->data());
      if (pos - line_start > bounds.max_line_bytes) {
        return LineTooLong(name, line, bounds);
      }
      ++line;
      line_start = ++pos;
    }
    if (out->size() - line_start > bounds.max_line_bytes) {
      return LineTooLong(name, line, bounds);
    }
  }
}

}  // namespace rankwatch
