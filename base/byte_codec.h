// ByteWriter and ByteReader: the binary encoding of the state rankwatch
// keeps outside the process (the partition checkpoints of its changelog
// topic). Little-endian fixed-width integers and IEEE doubles, unsigned
// LEB128 varints for counts and lengths, length-prefixed strings.
//
// The reader never trusts its input: every read is bounds-checked, a
// length larger than what is left fails, and the first failure sticks
// (later reads return zero values), so a decoder reads a whole record and
// checks ok() once. A corrupt or truncated record is an error with the
// offset where it went wrong, never a crash or a huge allocation.
//
// Neither is thread-safe; a writer owns its buffer, a reader borrows its
// input, which must outlive it.
#ifndef RANKWATCH_BASE_BYTE_CODEC_H_
#define RANKWATCH_BASE_BYTE_CODEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rankwatch {

class ByteWriter {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit ByteWriter(std::string* out) : out_(out) {}

  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void Bool(bool v) { U8(v ? 1 : 0); }
  void Fixed32(uint32_t v);
  void Fixed64(uint64_t v);
  void I64(int64_t v) { Fixed64(static_cast<uint64_t>(v)); }
  void Double(double v);
  void Varint(uint64_t v);
  void String(std::string_view s);
  // Bytes as they are: what another writer already encoded.
  void Raw(std::string_view s) { out_->append(s); }

 private:
  std::string* out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  uint8_t U8();
  bool Bool() { return U8() != 0; }
  uint32_t Fixed32();
  uint64_t Fixed64();
  int64_t I64() { return static_cast<int64_t>(Fixed64()); }
  double Double();
  uint64_t Varint();
  // A count of items that each take at least `min_item_bytes` bytes: fails
  // (and returns 0) when the rest of the input cannot hold that many, so
  // that a corrupt count never makes the caller reserve gigabytes.
  uint64_t Count(size_t min_item_bytes = 1);
  // A view into the input, valid while the input lives.
  std::string_view String();
  // A String() that must be valid UTF-8 of at most `max_bytes` bytes (an
  // id or a label, bound as a live event's is); fails naming `what`.
  std::string_view Text(size_t max_bytes, std::string_view what);

  // Fails the reader with `what` (a decoder's own consistency check).
  void Fail(std::string_view what);
  bool ok() const { return error_.empty(); }
  bool at_end() const { return pos_ == in_.size(); }
  size_t remaining() const { return in_.size() - pos_; }
  // OK, or InvalidArgument naming the offset of the first failure.
  Status status() const;

 private:
  bool Need(size_t n, std::string_view what);

  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_BYTE_CODEC_H_
