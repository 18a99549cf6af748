#include "trec/decompress.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/strings.h"

namespace rankwatch::trec {

namespace {

constexpr uint64_t kMaxDecompressedBytes = uint64_t{64} << 30;
// zlib counts in uInt (32 bits): larger spans are fed in pieces.
constexpr size_t kMaxZlibSpan = size_t{1} << 30;
constexpr size_t kReadBufferBytes = size_t{1} << 18;

std::string Shown(std::string_view name) {
  return Printable(name, std::string_view::npos);
}

Status Corrupt(std::string_view name, Compression c, std::string_view why) {
  return Status::InvalidArgument(Shown(name) + ": corrupt " +
                                 std::string(CompressionName(c)) +
                                 " data: " + std::string(why));
}

Status TooLarge(std::string_view name, Compression c, uint64_t max_bytes) {
  return Status::ResourceExhausted(
      Shown(name) + ": decompressed " + std::string(CompressionName(c)) +
      " data larger than " + std::to_string(max_bytes) +
      " bytes (the limit: 64 GiB or the machine's memory)");
}

}  // namespace

// One decompression stream: Decode consumes input and produces output as
// far as both allow; Finish says whether the input ended at a boundary.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Consumes from the front of `*in`; *produced bytes written to `out`.
  virtual Status Decode(std::string_view* in, char* out, size_t size,
                        size_t* produced) = 0;
  // Called at the end of the input: an error unless the last member or
  // frame was complete.
  virtual Status Finish() const = 0;
};

namespace {

// zlib's inflate, with the gzip header detected (windowBits 15 + 32). A
// member's end is not the input's end: `gzip -c a >> b` makes concatenated
// members, which gunzip reads as one text, so the stream is reset and goes
// on while input remains.
class GzipDecoder : public StreamDecoder {
 public:
  explicit GzipDecoder(std::string name) : name_(std::move(name)) {}
  ~GzipDecoder() override {
    if (initialized_) inflateEnd(&z_);
  }

  Status Init() {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) {
      return Status::Internal(Shown(name_) + ": cannot start zlib's inflate");
    }
    initialized_ = true;
    return Status::Ok();
  }

  Status Decode(std::string_view* in, char* out, size_t size,
                size_t* produced) override {
    *produced = 0;
    while (*produced < size) {
      if (member_done_) {
        if (in->empty()) return Status::Ok();
        if (inflateReset(&z_) != Z_OK) return Corrupt(name_, kC, "reset");
        member_done_ = false;
      }
      const size_t in_span = std::min(in->size(), kMaxZlibSpan);
      const size_t out_span = std::min(size - *produced, kMaxZlibSpan);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in->data()));
      z_.avail_in = static_cast<uInt>(in_span);
      z_.next_out = reinterpret_cast<Bytef*>(out + *produced);
      z_.avail_out = static_cast<uInt>(out_span);
      const int rc = inflate(&z_, Z_NO_FLUSH);
      in->remove_prefix(in_span - z_.avail_in);
      *produced += out_span - z_.avail_out;
      started_ = true;
      switch (rc) {
        case Z_STREAM_END:
          member_done_ = true;
          continue;
        case Z_OK:
          continue;
        case Z_BUF_ERROR:  // No progress: more input is needed.
          return Status::Ok();
        case Z_NEED_DICT:
          return Corrupt(name_, kC, "a preset dictionary is needed");
        case Z_MEM_ERROR:
          return Status::ResourceExhausted(Shown(name_) +
                                           ": out of memory in inflate");
        default:
          return Corrupt(name_, kC, z_.msg != nullptr ? z_.msg : "error");
      }
    }
    return Status::Ok();
  }

  Status Finish() const override {
    if (started_ && !member_done_) {
      return Status::InvalidArgument(
          Shown(name_) + ": truncated gzip data (unexpected end of file)");
    }
    return Status::Ok();
  }

 private:
  static constexpr Compression kC = Compression::kGzip;
  const std::string name_;
  z_stream z_{};
  bool initialized_ = false;
  bool started_ = false;
  bool member_done_ = false;
};

// Zstandard's streaming decoder, which reads frames of unknown content size
// (`zstd` writing to a pipe) and goes on across concatenated frames itself.
class ZstdDecoder : public StreamDecoder {
 public:
  explicit ZstdDecoder(std::string name) : name_(std::move(name)) {}
  ~ZstdDecoder() override { ZSTD_freeDStream(ds_); }

  Status Init() {
    ds_ = ZSTD_createDStream();
    if (ds_ == nullptr) {
      return Status::ResourceExhausted(Shown(name_) +
                                       ": cannot start the zstd decoder");
    }
    return Status::Ok();
  }

  Status Decode(std::string_view* in, char* out, size_t size,
                size_t* produced) override {
    ZSTD_inBuffer input{in->data(), in->size(), 0};
    ZSTD_outBuffer output{out, size, 0};
    // Until the output is full or the input spent and nothing is left to
    // flush (a call that fills the output may have more to flush).
    while (output.pos < output.size) {
      const size_t before_in = input.pos;
      const size_t before_out = output.pos;
      const size_t rc = ZSTD_decompressStream(ds_, &output, &input);
      if (ZSTD_isError(rc)) {
        return Corrupt(name_, Compression::kZstd, ZSTD_getErrorName(rc));
      }
      if (input.pos == before_in && output.pos == before_out) break;
      last_ = rc;
      started_ = true;
    }
    in->remove_prefix(input.pos);
    *produced = output.pos;
    return Status::Ok();
  }

  Status Finish() const override {
    // ZSTD_decompressStream returns 0 exactly when a frame is complete and
    // flushed.
    if (started_ && last_ != 0) {
      return Status::InvalidArgument(
          Shown(name_) + ": truncated zstd data (unexpected end of file)");
    }
    return Status::Ok();
  }

 private:
  const std::string name_;
  ZSTD_DStream* ds_ = nullptr;
  size_t last_ = 0;
  bool started_ = false;
};

StatusOr<std::unique_ptr<StreamDecoder>> MakeDecoder(Compression c,
                                                     std::string_view name) {
  switch (c) {
    case Compression::kGzip: {
      auto d = std::make_unique<GzipDecoder>(std::string(name));
      RW_RETURN_IF_ERROR(d->Init());
      return std::unique_ptr<StreamDecoder>(std::move(d));
    }
    case Compression::kZstd: {
      auto d = std::make_unique<ZstdDecoder>(std::string(name));
      RW_RETURN_IF_ERROR(d->Init());
      return std::unique_ptr<StreamDecoder>(std::move(d));
    }
    case Compression::kNone:
      break;
  }
  return Status::Internal(Shown(name) + ": not compressed");
}

// A first guess at the decompressed size, so that the output rarely grows:
// gzip's trailer holds the last member's size mod 2^32, a zstd frame header
// usually its content size. Wrong guesses only cost a reallocation.
uint64_t SizeHint(Compression c, std::string_view data) {
  uint64_t hint = 0;
  if (c == Compression::kGzip && data.size() >= 18) {
    const auto* t =
        reinterpret_cast<const unsigned char*>(data.data() + data.size() - 4);
    hint = uint64_t{t[0]} | uint64_t{t[1]} << 8 | uint64_t{t[2]} << 16 |
           uint64_t{t[3]} << 24;
  } else if (c == Compression::kZstd) {
    const unsigned long long n =  // NOLINT(runtime/int): zstd's type.
        ZSTD_getFrameContentSize(data.data(), data.size());
    if (n != ZSTD_CONTENTSIZE_UNKNOWN && n != ZSTD_CONTENTSIZE_ERROR) hint = n;
  }
  // Text compresses 3-10x. Below that the trailer was for a later member or
  // wrapped; far above it the header may be garbage (a truncated or corrupt
  // file), which must not allocate gigabytes up front: growth handles the
  // rare real case.
  const uint64_t n = data.size();
  return std::clamp<uint64_t>(hint, std::max<uint64_t>(4 * n, 4096),
                              std::max<uint64_t>(64 * n, 4096));
}

}  // namespace

Compression DetectCompression(std::string_view head) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 2 && b(0) == 0x1f && b(1) == 0x8b) {
    return Compression::kGzip;
  }
  if (head.size() >= 4 && b(1) == 0xb5 && b(2) == 0x2f && b(3) == 0xfd &&
      b(0) == 0x28) {
    return Compression::kZstd;
  }
  if (head.size() >= 4 && (b(0) & 0xf0) == 0x50 && b(1) == 0x2a &&
      b(2) == 0x4d && b(3) == 0x18) {
    return Compression::kZstd;  // A skippable frame, then (usually) data.
  }
  return Compression::kNone;
}

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "plain";
    case Compression::kGzip:
      return "gzip";
    case Compression::kZstd:
      return "zstd";
  }
  return "plain";
}

uint64_t DecompressedSizeLimit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);    // NOLINT(runtime/int)
  const long page_size = ::sysconf(_SC_PAGESIZE);  // NOLINT(runtime/int)
  if (pages <= 0 || page_size <= 0) return kMaxDecompressedBytes;
  return std::min(kMaxDecompressedBytes, static_cast<uint64_t>(pages) *
                                             static_cast<uint64_t>(page_size));
}

Status DecompressAll(Compression c, std::string_view data,
                     std::string_view name, uint64_t max_bytes,
                     std::string* out) {
  StatusOr<std::unique_ptr<StreamDecoder>> decoder = MakeDecoder(c, name);
  if (!decoder.ok()) return decoder.status();
  // One byte over the limit tells "exactly the limit" from "more".
  const uint64_t cap = max_bytes == UINT64_MAX ? max_bytes : max_bytes + 1;
  out->resize(static_cast<size_t>(
      std::min(SizeHint(c, data), std::max<uint64_t>(cap, 1))));
  size_t size = 0;
  for (;;) {
    if (size == out->size()) {
      if (size >= cap) return TooLarge(name, c, max_bytes);
      out->resize(static_cast<size_t>(
          std::min<uint64_t>(uint64_t{2} * out->size(), cap)));
    }
    size_t produced = 0;
    RW_RETURN_IF_ERROR((*decoder)->Decode(&data, out->data() + size,
                                          out->size() - size, &produced));
    size += produced;
    if (size > max_bytes) return TooLarge(name, c, max_bytes);
    if (produced == 0 && data.empty()) break;
  }
  RW_RETURN_IF_ERROR((*decoder)->Finish());
  out->resize(size);
  return Status::Ok();
}

DecompressingReader::DecompressingReader(int fd, Compression c,
                                         std::string name, uint64_t max_bytes)
    : fd_(fd),
      compression_(c),
      name_(std::move(name)),
      max_bytes_(max_bytes),
      input_(new char[kReadBufferBytes]) {
  if (StatusOr<std::unique_ptr<StreamDecoder>> d = MakeDecoder(c, name_);
      d.ok()) {
    decoder_ = std::move(d).value();
  }
}

DecompressingReader::~DecompressingReader() = default;

Status DecompressingReader::Read(char* buffer, size_t size, size_t* got) {
  *got = 0;
  if (decoder_ == nullptr) {
    return Status::ResourceExhausted(Shown(name_) +
                                     ": cannot start the decoder");
  }
  while (*got == 0 && size > 0) {
    if (pending_.empty() && !input_eof_) {
      const ssize_t n = ::read(fd_, input_.get(), kReadBufferBytes);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        return Status::IoError("cannot read '" + Shown(name_) +
                               "': " + std::strerror(errno));
      }
      if (n == 0) input_eof_ = true;
      pending_ = std::string_view(input_.get(), static_cast<size_t>(n));
    }
    RW_RETURN_IF_ERROR(decoder_->Decode(&pending_, buffer, size, got));
    produced_ += *got;
    if (produced_ > max_bytes_) {
      return TooLarge(name_, compression_, max_bytes_);
    }
    if (*got == 0 && pending_.empty() && input_eof_) return decoder_->Finish();
  }
  return Status::Ok();
}

}  // namespace rankwatch::trec
