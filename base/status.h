// Status and StatusOr<T>: the error values returned across library
// boundaries. rankwatch does not throw on the data path; functions that can
// fail return one of these and callers must look at it ([[nodiscard]]).
//
// A Status is either OK or carries a code and a one-line, human-readable
// message that already names what failed (file, line, key, ...), so callers
// can print it as is. Both types are value types; they are not thread-safe
// for concurrent mutation but can be copied freely between threads.
#ifndef RANKWATCH_BASE_STATUS_H_
#define RANKWATCH_BASE_STATUS_H_

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace rankwatch {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // Bad input from a user: a flag, a config key, a file.
  kNotFound,
  kAlreadyExists,
  kOutOfRange,
  kResourceExhausted,  // A configured bound was reached.
  kUnavailable,        // A peer (broker, port) cannot be reached right now.
  kIoError,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) {
    return {StatusCode::kNotFound, std::move(m)};
  }
  static Status AlreadyExists(std::string m) {
    return {StatusCode::kAlreadyExists, std::move(m)};
  }
  static Status OutOfRange(std::string m) {
    return {StatusCode::kOutOfRange, std::move(m)};
  }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status Unavailable(std::string m) {
    return {StatusCode::kUnavailable, std::move(m)};
  }
  static Status IoError(std::string m) {
    return {StatusCode::kIoError, std::move(m)};
  }
  static Status Internal(std::string m) {
    return {StatusCode::kInternal, std::move(m)};
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Explicitly discards a status whose failure the caller has handled by
  // other means (e.g. counted it).
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : rep_(std::move(status)) {  // NOLINT: implicit.
    assert(!std::get<Status>(rep_).ok());
  }
  StatusOr(T value) : rep_(std::move(value)) {}  // NOLINT: implicit.

  bool ok() const { return std::holds_alternative<T>(rep_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(rep_); }

  T& value() & { return std::get<T>(rep_); }
  const T& value() const& { return std::get<T>(rep_); }
  T&& value() && { return std::get<T>(std::move(rep_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> rep_;
};

}  // namespace rankwatch

// Returns from the enclosing function if `expr` yields a non-OK Status.
#define RW_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::rankwatch::Status rw_status_ = (expr); \
    if (!rw_status_.ok()) return rw_status_; \
  } while (false)

#endif  // RANKWATCH_BASE_STATUS_H_
