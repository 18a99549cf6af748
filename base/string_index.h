// StringIndex: an open-addressing hash index from borrowed string keys to
// 32-bit values, built for the hot paths that look up doc ids (qrels lookups,
// duplicate detection). Keys are not copied: the caller keeps the bytes alive
// for as long as the index refers to them. Clear() is O(1) (a generation
// counter), so one index can be reused for every query without re-zeroing.
//
// Not thread-safe; one per thread.
#ifndef RANKWATCH_BASE_STRING_INDEX_H_
#define RANKWATCH_BASE_STRING_INDEX_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace rankwatch {

namespace internal {

// Unaligned little-endian loads.
inline uint64_t LoadLittle64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  if constexpr (std::endian::native == std::endian::big) {
    w = __builtin_bswap64(w);
  }
  return w;
}
inline uint64_t LoadLittle32(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  if constexpr (std::endian::native == std::endian::big) {
    w = __builtin_bswap32(w);
  }
  return w;
}

// The n (1..7) bytes at p as a little-endian word, as memcpy(&w, p, n) into
// a zeroed w gives on a little-endian machine, but without a variable-length
// copy (a library call). `long_key` says that the 8 bytes ending at p + n
// are all part of the key, so that one load can fetch them.
inline uint64_t LoadTail(const char* p, size_t n, bool long_key) {
  if (long_key) return LoadLittle64(p + n - 8) >> (8 * (8 - n));
  if (n >= 4) {  // Two overlapping loads.
    return LoadLittle32(p) | (LoadLittle32(p + n - 4) << (8 * (n - 4)));
  }
  // 1 to 3 bytes: the first, middle and last (some coincide).
  const auto byte = [p](size_t i) {
    return static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  };
  return byte(0) | byte(n / 2) | byte(n - 1);
}

}  // namespace internal

// A fast 64-bit hash for short identifiers (8 bytes per step, multiply and
// xor-shift mixing). Not cryptographic; adequate for hash tables.
inline uint64_t HashBytes(std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = 0xCBF29CE484222325ull ^ (n * kMul);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    h = (h ^ internal::LoadTail(p, n, s.size() >= 8)) * kMul;
  }
  h ^= h >> 32;
  h *= 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return h;
}

// Whether `a` and `b` hold the same bytes, as `a == b`, without a call to
// memcmp for strings of up to 16 bytes: two overlapping loads of each
// string and one compare. The hot paths compare short names (JSON keys
// against the schema's, request and doc ids, label values): memcmp's call
// and size dispatch were 5.6% of BM_PipelineEvents (perf, issue 45), for
// about a dozen compares per event. Reads only the bytes of `a` and `b`.
// Forced inline: out of line (GCC's choice at many call sites) it cost as
// much as the memcmp calls it replaces.
[[gnu::always_inline]] inline bool BytesEqual(std::string_view a,
                                              std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8) {
    const uint64_t head = internal::LoadLittle64(x) ^ internal::LoadLittle64(y);
    const uint64_t tail =
        internal::LoadLittle64(x + n - 8) ^ internal::LoadLittle64(y + n - 8);
    if ((head | tail) != 0) return false;
    return n <= 16 || std::memcmp(x + 8, y + 8, n - 16) == 0;
  }
  if (n >= 4) {
    return ((internal::LoadLittle32(x) ^ internal::LoadLittle32(y)) |
            (internal::LoadLittle32(x + n - 4) ^
             internal::LoadLittle32(y + n - 4))) == 0;
  }
  // 0 to 3 bytes: the first, middle and last (some the same byte).
  return n == 0 ||
         (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

class StringIndex {
 public:
  StringIndex() = default;

  // Forgets all keys and makes room for `expected` keys without rehashing.
  void Clear(size_t expected = 0);

  // Inserts key -> value unless the key is present. Returns the value already
  // stored for the key, or nullptr if it was inserted.
  const uint32_t* Insert(std::string_view key, uint64_t hash, uint32_t value);
  const uint32_t* Insert(std::string_view key, uint32_t value) {
    return Insert(key, HashBytes(key), value);
  }

  const uint32_t* Find(std::string_view key, uint64_t hash) const;
  const uint32_t* Find(std::string_view key) const {
    return Find(key, HashBytes(key));
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash;
    const char* data;
    uint32_t length;
    uint32_t value;
    uint32_t generation;  // Live iff equal to generation_.
  };

  void Grow();
  bool Live(const Slot& s) const { return s.generation == generation_; }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  uint32_t generation_ = 1;
};

}  // namespace rankwatch

#endif  // RANKWATCH_BASE_STRING_INDEX_H_
