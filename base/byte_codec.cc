#include "base/byte_codec.h"

#include <bit>
#include <cstring>

#include "base/json_writer.h"

namespace rankwatch {

static_assert(std::endian::native == std::endian::little,
              "the state encoding is little-endian; add byte swaps");

void ByteWriter::Fixed32(uint32_t v) {
  char bytes[sizeof(v)];
  std::memcpy(bytes, &v, sizeof(v));
  out_->append(bytes, sizeof(v));
}

void ByteWriter::Fixed64(uint64_t v) {
  char bytes[sizeof(v)];
  std::memcpy(bytes, &v, sizeof(v));
  out_->append(bytes, sizeof(v));
}

void ByteWriter::Double(double v) { Fixed64(std::bit_cast<uint64_t>(v)); }

void ByteWriter::Varint(uint64_t v) {
  while (v >= 0x80) {
    out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_->push_back(static_cast<char>(v));
}

void ByteWriter::String(std::string_view s) {
  Varint(s.size());
  out_->append(s);
}

bool ByteReader::Need(size_t n, std::string_view what) {
  if (!ok()) return false;
  if (in_.size() - pos_ >= n) return true;
  Fail(std::string(what) + " past the end of the record");
  return false;
}

void ByteReader::Fail(std::string_view what) {
  if (!ok()) return;  // The first failure is the one reported.
  error_ = "at byte " + std::to_string(pos_) + ": " + std::string(what);
  pos_ = in_.size();
}

Status ByteReader::status() const {
  return ok() ? Status::Ok() : Status::InvalidArgument(error_);
}

uint8_t ByteReader::U8() {
  if (!Need(1, "a byte")) return 0;
  return static_cast<uint8_t>(in_[pos_++]);
}

uint32_t ByteReader::Fixed32() {
  uint32_t v = 0;
  if (!Need(sizeof(v), "a 32-bit integer")) return 0;
  std::memcpy(&v, in_.data() + pos_, sizeof(v));
  pos_ += sizeof(v);
  return v;
}

uint64_t ByteReader::Fixed64() {
  uint64_t v = 0;
  if (!Need(sizeof(v), "a 64-bit integer")) return 0;
  std::memcpy(&v, in_.data() + pos_, sizeof(v));
  pos_ += sizeof(v);
  return v;
}

double ByteReader::Double() { return std::bit_cast<double>(Fixed64()); }

uint64_t ByteReader::Varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (!Need(1, "a varint")) return 0;
    const uint8_t b = static_cast<uint8_t>(in_[pos_++]);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  Fail("a varint longer than 10 bytes");
  return 0;
}

uint64_t ByteReader::Count(size_t min_item_bytes) {
  const uint64_t n = Varint();
  if (!ok()) return 0;
  if (min_item_bytes > 0 && n > remaining() / min_item_bytes) {
    Fail("a count of " + std::to_string(n) + " items larger than the record");
    return 0;
  }
  return n;
}

std::string_view ByteReader::String() {
  const uint64_t n = Varint();
  if (!ok()) return {};
  if (n > remaining()) {
    Fail("a string of " + std::to_string(n) + " bytes past the end");
    return {};
  }
  const std::string_view s = in_.substr(pos_, n);
  pos_ += n;
  return s;
}

std::string_view ByteReader::Text(size_t max_bytes, std::string_view what) {
  const std::string_view s = String();
  if (s.size() > max_bytes) {
    Fail(std::string(what) + " of " + std::to_string(s.size()) +
         " bytes, over the limit of " + std::to_string(max_bytes));
    return {};
  }
  if (!IsValidUtf8(s)) {
    Fail(std::string(what) + " that is not valid UTF-8");
    return {};
  }
  return s;
}

}  // namespace rankwatch
