// Transparent decompression of TREC inputs: a qrels or run file compressed
// with gzip (RFC 1952, any number of concatenated members) or Zstandard
// (RFC 8878, any number of frames, content size known or not) is read as
// its plain text. The format is told by the first bytes (the magic), never
// by the file's name: a gzipped "run.txt" is read like "run.txt.gz", and a
// plain "run.gz" is read as plain text.
//
// The one place that decodes: MappedFile (mapped_file.h) decompresses whole
// inputs with DecompressAll, and RunChunkReader (run_file.h) streams them
// through a DecompressingReader. Plain inputs never come here, so they keep
// their zero-copy paths.
//
// Every error is one line naming the input and the format ("run.txt.gz:
// corrupt gzip data: invalid distance too far back"), and the decompressed
// size is bounded (DecompressedSizeLimit) so that a small bomb cannot make
// the reader take all memory.
//
// Functions are stateless and thread-safe; a DecompressingReader is not
// thread-safe (its owner serializes calls) and owns its decoder, not the
// file descriptor it reads.
#ifndef RANKWATCH_TREC_DECOMPRESS_H_
#define RANKWATCH_TREC_DECOMPRESS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch::trec {

enum class Compression { kNone, kGzip, kZstd };

// The bytes an input needs for DetectCompression to decide.
inline constexpr size_t kMagicBytes = 4;

// The format whose magic `head` (the first bytes of an input, at most
// kMagicBytes are looked at) starts with: gzip's 1f 8b, a Zstandard frame's
// 28 b5 2f fd or a skippable frame's 5? 2a 4d 18; kNone otherwise.
Compression DetectCompression(std::string_view head);

// "gzip", "zstd" or "plain", for messages.
std::string_view CompressionName(Compression c);

// The largest decompressed size accepted: 64 GiB or the machine's physical
// memory, whichever is smaller (the whole text is held in memory when a
// compressed file is mapped, so more than memory cannot work anyway).
uint64_t DecompressedSizeLimit();

// Replaces `out` with the decompressed `data`, compressed as `c` (not kNone).
// `name` is the input as messages show it. Errors: InvalidArgument "NAME:
// corrupt FORMAT data: ..." or "NAME: truncated FORMAT data (...)";
// ResourceExhausted "NAME: decompressed FORMAT data larger than N bytes"
// past `max_bytes`.
[[nodiscard]] Status DecompressAll(Compression c, std::string_view data,
                                   std::string_view name, uint64_t max_bytes,
                                   std::string* out);

class StreamDecoder;

// Reads a compressed file descriptor front to back as plain text, in pieces
// of the caller's size, holding only a small input buffer. Errors as
// DecompressAll's, plus IoError "cannot read 'NAME': ..." on read errors.
class DecompressingReader {
 public:
  // `fd` is read from its current offset; it must outlive the reader.
  DecompressingReader(int fd, Compression c, std::string name,
                      uint64_t max_bytes);
  ~DecompressingReader();
  DecompressingReader(const DecompressingReader&) = delete;
  DecompressingReader& operator=(const DecompressingReader&) = delete;

  // Writes up to `size` decompressed bytes to `buffer`; *got is 0 only at
  // the end of the data.
  [[nodiscard]] Status Read(char* buffer, size_t size, size_t* got);

 private:
  const int fd_;
  const Compression compression_;
  const std::string name_;
  const uint64_t max_bytes_;
  std::unique_ptr<StreamDecoder> decoder_;
  std::unique_ptr<char[]> input_;
  std::string_view pending_;  // Read from fd_, not yet decoded.
  uint64_t produced_ = 0;
  bool input_eof_ = false;
};

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_DECOMPRESS_H_
