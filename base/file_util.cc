#include "base/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rankwatch {

namespace {

// Unique per process and call, so that threads and processes writing the
// same path never share a temporary file.
std::string TemporaryPath(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

Status ErrnoError(const std::string& what, const std::string& path, int error) {
  return Status::IoError("cannot " + what + " '" + path +
                         "': " + std::strerror(error));
}

// Writes all of `contents` to `fd`, resuming after short writes and
// signals; returns 0 or the errno of the failed write.
int WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    contents.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  const std::string tmp = TemporaryPath(path);
  // O_EXCL: never write through a file (or link) someone else put there.
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return ErrnoError("create", tmp, errno);
  const int write_error = WriteAll(fd, contents);
  // close() reports deferred write errors (NFS, quotas): check it too.
  const int close_error = ::close(fd) == 0 ? 0 : errno;
  if (write_error != 0 || close_error != 0) {
    ::unlink(tmp.c_str());
    return ErrnoError("write", tmp,
                      write_error != 0 ? write_error : close_error);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_error = errno;
    ::unlink(tmp.c_str());
    return Status::IoError("cannot rename '" + tmp + "' to '" + path +
                           "': " + std::strerror(rename_error));
  }
  return Status::Ok();
}

}  // namespace rankwatch
