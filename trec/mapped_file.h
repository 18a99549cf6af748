// MappedFile: the bytes of an input file, read-only, memory-mapped when the
// file is a regular file and read into memory otherwise (pipes, "-" for
// stdin). Large inputs are scanned once front to back; ReleaseRange() lets
// the scanner hand already-processed pages back to the kernel so that the
// resident set stays small however large the file is (the page cache keeps
// the data, so touching a released page again is cheap and correct).
//
// Input that is read rather than mapped is read with a bound on its lines
// (base/bounded_read.h): a pipe or device without line breaks (/dev/zero)
// stops with an error instead of growing memory. Mapped files take no
// memory of their own; their readers check the same bound as they scan.
//
// Input compressed with gzip or zstd, told by its first bytes and not by
// its name, is decompressed into memory (decompress.h) and read as its
// text; plain files keep the mapping, with no copy.
//
// Move-only; the view is valid for the object's lifetime. Thread-safe for
// concurrent reads and ReleaseRange() calls.
#ifndef RANKWATCH_TREC_MAPPED_FILE_H_
#define RANKWATCH_TREC_MAPPED_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "base/bounded_read.h"
#include "base/status.h"

namespace rankwatch::trec {

class MappedFile {
 public:
  // `path` "-" reads standard input. `bounds` apply to input that is read
  // (not a regular file); errors name `path`, escaped (base/strings.h).
  static StatusOr<MappedFile> Open(const std::string& path,
                                   const ReadBounds& bounds);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view data() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

  // Advises the kernel that bytes [begin, end) will not be needed soon. Only
  // whole pages inside the range are released. A no-op for unmapped input.
  void ReleaseRange(size_t begin, size_t end) const;

 private:
  MappedFile() = default;
  void Reset();
  // Replaces the contents with their decompressed text when they start
  // with a gzip or zstd magic (decompress.h). `name` is for messages.
  [[nodiscard]] Status DecompressIfCompressed(std::string_view name,
                                              const ReadBounds& bounds);

  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;  // Contents when not mapped.
};

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_MAPPED_FILE_H_
