#include "trec/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/strings.h"
#include "trec/decompress.h"

namespace rankwatch::trec {

namespace {

// A path as error messages show it: whole, control characters escaped.
std::string Shown(const std::string& path) {
  return Printable(path, std::string_view::npos);
}

Status ErrnoStatus(const std::string& path, const char* what) {
  return Status::IoError("cannot " + std::string(what) + " '" + Shown(path) +
                         "': " + std::strerror(errno));
}

}  // namespace

StatusOr<MappedFile> MappedFile::Open(const std::string& path,
                                      const ReadBounds& bounds) {
  MappedFile f;
  f.path_ = path;
  if (path.find('\0') != std::string::npos) {
    // open() would stop at the NUL and read another file.
    return Status::IoError("cannot open '" + Shown(path) +
                           "': the name holds a NUL byte");
  }
  if (path == "-") {
    // Compressed bytes on stdin pass the line bound too: a '\n' is one byte
    // in 256 of them, so a 1 MiB stretch without one does not happen.
    RW_RETURN_IF_ERROR(
        ReadAllBounded(STDIN_FILENO, "<stdin>", bounds, &f.owned_));
    f.data_ = f.owned_.data();
    f.size_ = f.owned_.size();
    RW_RETURN_IF_ERROR(f.DecompressIfCompressed("<stdin>", bounds));
    return f;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, "open");
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = ErrnoStatus(path, "stat");
    ::close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::IoError("cannot read '" + Shown(path) + "': is a directory");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                     MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      Status s = ErrnoStatus(path, "map");
      ::close(fd);
      return s;
    }
    ::madvise(p, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
    f.data_ = static_cast<const char*>(p);
    f.size_ = static_cast<size_t>(st.st_size);
    f.mapped_ = true;
    ::close(fd);
    RW_RETURN_IF_ERROR(f.DecompressIfCompressed(path, bounds));
    return f;
  }
  Status s = ReadAllBounded(fd, path, bounds, &f.owned_);
  ::close(fd);
  RW_RETURN_IF_ERROR(s);
  f.data_ = f.owned_.data();
  f.size_ = f.owned_.size();
  RW_RETURN_IF_ERROR(f.DecompressIfCompressed(path, bounds));
  return f;
}

// Plain text, the common case, costs one look at the first bytes; compressed
// input is replaced by its text, held in owned_ (a compressed stream cannot
// be mapped, and the readers want the whole text at once).
Status MappedFile::DecompressIfCompressed(std::string_view name,
                                          const ReadBounds& bounds) {
  const Compression c =
      DetectCompression(std::string_view(data_, std::min(size_, kMagicBytes)));
  if (c == Compression::kNone) return Status::Ok();
  std::string text;
  RW_RETURN_IF_ERROR(DecompressAll(
      c, data(), name,
      std::min<uint64_t>(DecompressedSizeLimit(), bounds.max_total_bytes),
      &text));
  std::string moved_path = std::move(path_);
  Reset();
  path_ = std::move(moved_path);
  owned_ = std::move(text);
  data_ = owned_.data();
  size_ = owned_.size();
  return Status::Ok();
}

MappedFile::MappedFile(MappedFile&& other) noexcept {
  *this = std::move(other);
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this == &other) return *this;
  Reset();
  path_ = std::move(other.path_);
  mapped_ = other.mapped_;
  size_ = other.size_;
  if (mapped_) {
    data_ = other.data_;
  } else {
    owned_ = std::move(other.owned_);
    data_ = owned_.data();
  }
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
  return *this;
}

MappedFile::~MappedFile() { Reset(); }

void MappedFile::Reset() {
  if (mapped_ && data_ != nullptr) {
    ::munmap(const_cast<char*>(data_), size_);
  }
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  owned_.clear();
}

void MappedFile::ReleaseRange(size_t begin, size_t end) const {
  if (!mapped_ || end > size_) return;
  static const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t first = (begin + kPage - 1) / kPage * kPage;
  const size_t last = end / kPage * kPage;
  if (last <= first) return;
  ::madvise(const_cast<char*>(data_) + first, last - first, MADV_DONTNEED);
}

}  // namespace rankwatch::trec
