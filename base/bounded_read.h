// Reading input whose size the reader does not control (a pipe, stdin, a
// character device such as /dev/zero) with a bound on each line and on the
// whole, so that no input can make a reader grow its memory without end:
// the read stops with a one-line error naming the input, the line and the
// bound. Regular files are usually mapped instead; their readers check the
// same per-line bound with LongLine() and report it with LineTooLong(), so
// that a line over the bound is the same error whatever kind of file holds
// it.
//
// Stateless functions; thread-safe (each call reads its own descriptor).
#ifndef RANKWATCH_BASE_BOUNDED_READ_H_
#define RANKWATCH_BASE_BOUNDED_READ_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch {

struct ReadBounds {
  // Bytes in one line, without its '\n'.
  size_t max_line_bytes = std::numeric_limits<size_t>::max();
  // Bytes in the whole input.
  size_t max_total_bytes = std::numeric_limits<size_t>::max();
  // What sets max_line_bytes, for the message (e.g.
  // "events.max_event_bytes").
  std::string_view line_bound_name = "the line limit";
};

// Appends everything `fd` holds until its end to `out`. Errors (`name`, the
// input as given, is escaped with Printable()):
//   InvalidArgument "NAME:LINE: line longer than N bytes (BOUND)" as soon as
//     the line being read exceeds max_line_bytes, without reading on;
//   InvalidArgument "NAME: larger than N bytes" past max_total_bytes;
//   IoError "cannot read 'NAME': <strerror>" on a read error.
[[nodiscard]] Status ReadAllBounded(int fd, std::string_view name,
                                    const ReadBounds& bounds, std::string* out);

// Where `text` first holds a line longer than `max_line_bytes`: its 1-based
// line number, or 0 when every line fits.
uint64_t LongLine(std::string_view text, size_t max_line_bytes);

// The error for line `line` of `name` being over the bound.
Status LineTooLong(std::string_view name, uint64_t line,
                   const ReadBounds& bounds);

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_BOUNDED_READ_H_
