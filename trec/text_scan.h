// Helpers to scan whitespace-separated TREC text (qrels and run files)
// without allocating: tokens are views into the input.
#ifndef RANKWATCH_TREC_TEXT_SCAN_H_
#define RANKWATCH_TREC_TEXT_SCAN_H_

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/bounded_read.h"
#include "base/strings.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rankwatch::trec {

// The longest line of a qrels or run file that is read, without its '\n'.
// Real lines are about 100 bytes (trec_eval itself reads docnos of at most
// a few hundred); the bound makes a file without line breaks (/dev/zero, a
// binary file given by mistake) an error on its first line instead of a
// reader that grows its memory until the machine runs out.
inline constexpr size_t kMaxLineBytes = size_t{1} << 20;

// A file name as messages show it: whole, control characters escaped
// (Printable, base/strings.h), so that an error stays one line.
inline std::string ShownPath(std::string_view path) {
  return Printable(path, std::string_view::npos);
}

inline ReadBounds LineBounds() {
  ReadBounds bounds;
  bounds.max_line_bytes = kMaxLineBytes;
  bounds.line_bound_name = "the limit for a TREC line";
  return bounds;
}

// Cuts `data` into `chunks` parts of about equal size for threads to scan:
// the chunks + 1 offsets of their starts and the end, each start just after
// a '\n' so that no line is split (a part may be empty).
inline std::vector<size_t> ChunkBoundaries(std::string_view data, int chunks) {
  std::vector<size_t> bounds = {0};
  for (int i = 1; i < chunks; ++i) {
    size_t b =
        data.size() / static_cast<size_t>(chunks) * static_cast<size_t>(i);
    b = std::max(b, bounds.back());
    const size_t nl = data.find('\n', b);
    b = nl == std::string_view::npos ? data.size() : nl + 1;
    bounds.push_back(b);
  }
  bounds.push_back(data.size());
  return bounds;
}

// The C locale's isspace(), as trec_eval uses it, without the locale lookup.
inline bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

namespace internal {

// Bit 7 of byte i of the result is set if byte i of `w` is whitespace (' ' or
// '\t'..'\r'), eight bytes at once. Exact for the lowest flagged byte, which
// is all FindSpace needs: a byte just above a ' ' may be flagged too.
inline uint64_t SpaceBytes(uint64_t w) {
  constexpr uint64_t kOnes = ~uint64_t{0} / 255;
  constexpr uint64_t kHigh = kOnes * 128;
  const uint64_t x = w ^ (kOnes * ' ');
  const uint64_t blank = (x - kOnes) & ~x & kHigh;  // Zero bytes of x.
  // 8 < byte < 14, bytes >= 128 excluded ("hasbetween", Bit Twiddling Hacks).
  const uint64_t low = w & (kOnes * 127);
  const uint64_t control =
      (kOnes * (127 + 14) - low) & ~w & (low + kOnes * (127 - 8)) & kHigh;
  return blank | control;
}

}  // namespace internal

// The first whitespace byte in [p, end), or `end`. Tokens are scanned a word
// at a time: this is the inner loop of reading run and qrels files.
inline const char* FindSpace(const char* p, const char* end) {
  if constexpr (std::endian::native == std::endian::little) {
    while (end - p >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      const uint64_t spaces = internal::SpaceBytes(w);
      if (spaces != 0) return p + std::countr_zero(spaces) / 8;
      p += 8;
    }
  }
  while (p < end && !IsSpace(*p)) ++p;
  return p;
}

// Whether ScanWindow is available: on x86-64 (SSE2 is part of it). Other
// targets scan a byte or a word at a time.
#if defined(__SSE2__)
inline constexpr bool kHasScanWindow = true;
#else
inline constexpr bool kHasScanWindow = false;
#endif

// The whitespace bytes (IsSpace, '\n' included) and the '\n' bytes among
// the kScanWindowBytes bytes at p, one bit per byte (bit i for p[i]).
struct WindowMasks {
  uint64_t space = 0;
  uint64_t newline = 0;
};
inline constexpr size_t kScanWindowBytes = 64;

// Classifies p[0, kScanWindowBytes), all of which must be readable, 16 bytes
// per instruction: the separators of a typical run or qrels line (about 35
// bytes) in a few instructions instead of a branch per byte.
inline WindowMasks ScanWindow(const char* p) {
  WindowMasks m;
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(' ');
  const __m128i newline = _mm_set1_epi8('\n');
  // '\t'..'\r' (9..13) plus 119 wrap to -128..-124 as signed bytes, and
  // no other byte does: one signed compare finds the control spaces.
  const __m128i shift = _mm_set1_epi8(static_cast<char>(128 - 9));
  const __m128i limit = _mm_set1_epi8(-128 + 5);
  for (int i = 0; i < 4; ++i) {
    const __m128i v =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    const __m128i control = _mm_cmplt_epi8(_mm_add_epi8(v, shift), limit);
    const __m128i blank = _mm_or_si128(_mm_cmpeq_epi8(v, space), control);
    m.space |=
        static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(blank)))
        << (16 * i);
    m.newline |= static_cast<uint64_t>(static_cast<uint16_t>(
                     _mm_movemask_epi8(_mm_cmpeq_epi8(v, newline))))
                 << (16 * i);
  }
#else
  (void)p;
#endif
  return m;
}

// The tokens of the line that starts a window and ends within it (masks
// `m`, m.newline != 0), one bit per token: `starts` at each token's first
// byte, `ends` one past its last. A token starts at a token byte after a
// space (or at the window's start) and ends at a space after a token byte:
// the '\n' at the latest, so every start has its end.
struct TokenMarks {
  uint64_t starts;
  uint64_t ends;
};
[[gnu::always_inline]] inline TokenMarks LineTokenMarks(const WindowMasks& m) {
  const uint64_t in_line = (m.newline & (~m.newline + 1)) - 1;
  const uint64_t token = ~m.space & in_line;
  return TokenMarks{token & ~(token << 1), (token << 1) & ~token};
}

// Splits the line at `p` into tokens when it ends within the
// kScanWindowBytes bytes at p, whose masks (ScanWindow) are `m`: fills
// tokens[0, min(count, max)) and sets `*count` to the number of tokens,
// counted up to max + 1 (so that "more than max" shows), and returns the
// start of the next line, just past the '\n'. Returns null, having done
// nothing, for a longer line.
[[gnu::always_inline]] inline const char* SplitMaskedLine(
    const char* p, const WindowMasks& m, std::string_view* tokens, int max,
    int* count) {
  if (m.newline == 0) return nullptr;
  auto [starts, ends] = LineTokenMarks(m);
  int n = 0;
  for (; starts != 0 && n <= max; ++n) {
    const int b = std::countr_zero(starts);
    if (n < max) {
      tokens[n] = std::string_view(
          p + b, static_cast<size_t>(std::countr_zero(ends) - b));
    }
    starts &= starts - 1;
    ends &= ends - 1;
  }
  *count = n;
  return p + std::countr_zero(m.newline) + 1;
}

// SplitMaskedLine over the lines of one text in order, classifying each
// 64-byte block of it once instead of the 64 bytes from each line's start:
// a line's masks are those of the two blocks it spans, shifted to its
// start. Qrels lines (about 17 bytes) were classified almost four times
// over before. Lines within the last 128 bytes of the text are left to the
// caller (null), as are lines SplitMaskedLine leaves.
//
// Holds a view of the text it was made with. Not thread-safe.
class LineSplitter {
 public:
  explicit LineSplitter(std::string_view text)
      : begin_(text.data()), end_(text.data() + text.size()) {}

  const char* Split(const char* p, std::string_view* tokens, int max,
                    int* count) {
    if constexpr (!kHasScanWindow) return nullptr;
    if (static_cast<size_t>(end_ - p) < 2 * kScanWindowBytes) return nullptr;
    const size_t offset = static_cast<size_t>(p - begin_);
    const size_t block = offset & ~(kScanWindowBytes - 1);
    if (block != block_) Load(block);
    const unsigned shift =
        static_cast<unsigned>(offset & (kScanWindowBytes - 1));
    WindowMasks m = low_;
    if (shift != 0) {
      m.space = (low_.space >> shift) | (high_.space << (64 - shift));
      m.newline = (low_.newline >> shift) | (high_.newline << (64 - shift));
    }
    return SplitMaskedLine(p, m, tokens, max, count);
  }

 private:
  // Classifies the block at `block` and the next, reusing the one classified
  // last time when the lines moved on by one block.
  void Load(size_t block) {
    low_ = block_ != kNone && block == block_ + kScanWindowBytes
               ? high_
               : ScanWindow(begin_ + block);
    high_ = ScanWindow(begin_ + block + kScanWindowBytes);
    block_ = block;
  }

  static constexpr size_t kNone = ~size_t{0};
  const char* const begin_;
  const char* const end_;
  size_t block_ = kNone;
  WindowMasks low_;
  WindowMasks high_;
};

// Splits `line` (without its '\n') into whitespace-separated tokens. Fills at
// most `max` entries of `tokens` and returns the total number of tokens.
inline int Tokenize(std::string_view line, std::string_view* tokens, int max) {
  int n = 0;
  const char* p = line.data();
  const char* const end = p + line.size();
  while (true) {
    while (p < end && IsSpace(*p)) ++p;
    if (p == end) return n;
    const char* const start = p;
    p = FindSpace(p, end);
    if (n < max) tokens[n] = std::string_view(start, p - start);
    ++n;
  }
}

// Parses the common score forms "-12.345678" and "12" quickly: with at most
// 15 digits the digits form an exact double m and the value is m / 10^f,
// whose IEEE division is correctly rounded, so the result is exactly what
// from_chars (and strtod) give (Clinger's fast path). False for any other
// form, which is left to from_chars.
inline bool ParseSimpleDecimal(std::string_view token, double* out) {
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3, 1e4,  1e5,
                                      1e6,  1e7,  1e8,  1e9, 1e10, 1e11,
                                      1e12, 1e13, 1e14, 1e15};
  const char* p = token.data();
  const char* const end = p + token.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  uint64_t m = 0;
  int integer_digits = 0;
  int fraction_digits = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p, ++integer_digits) {
    m = m * 10 + static_cast<uint64_t>(*p - '0');
  }
  if (integer_digits == 0) return false;
  if (p < end && *p == '.') {
    for (++p; p < end && *p >= '0' && *p <= '9'; ++p, ++fraction_digits) {
      m = m * 10 + static_cast<uint64_t>(*p - '0');
    }
    if (fraction_digits == 0) return false;
  }
  // Overflowed digits (more than 19) are rejected here too.
  if (p != end || integer_digits + fraction_digits > 15) return false;
  const double value = static_cast<double>(m) / kPow10[fraction_digits];
  *out = negative ? -value : value;
  return true;
}

// Parses a finite decimal number (leading '+' or '-', exponent allowed), the
// whole token. "nan", "inf" and trailing junk are rejected.
inline bool ParseScore(std::string_view token, double* out) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return false;  // "+-1"
  }
  if (ParseSimpleDecimal(token, out)) return true;
  if (token.empty()) return false;
  const char* end = token.data() + token.size();
  auto [ptr, ec] =
      std::from_chars(token.data(), end, *out, std::chars_format::general);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    // Too small or too large for a double. trec_eval reads scores with
    // atof, which gives 0 (or a subnormal) for 1e-400: so does rankwatch.
    // Too large stays an error (not a finite number).
    char buf[64];
    if (token.size() >= sizeof(buf)) return false;
    std::memcpy(buf, token.data(), token.size());
    buf[token.size()] = '\0';
    *out = std::strtod(buf, nullptr);
    return std::isfinite(*out);
  }
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

// Bytes that must be readable from a token's start for ParsePaddedScore:
// its 16-byte look at the token and two 8-byte loads of digits.
inline constexpr size_t kScorePadBytes = 24;

namespace internal {

// The value of the `n` (1 to 8) ASCII digits at `s`, 8 bytes readable,
// eight at once (simdjson's parse_eight_digits_unrolled): the digits are
// moved to the top of the word, the bytes below them counting as leading
// zeros.
inline uint64_t ParseDigits8(const char* s, size_t n) {
  uint64_t w;
  std::memcpy(&w, s, 8);
  const unsigned shift = static_cast<unsigned>(8 * (8 - n));
  w = (w << shift) - ((~uint64_t{0} / 255 * '0') << shift);
  w = w * 10 + (w >> 8);
  constexpr uint64_t kMask = 0x000000FF000000FF;
  constexpr uint64_t kMul1 = 100 + (uint64_t{1000000} << 32);
  constexpr uint64_t kMul2 = 1 + (uint64_t{10000} << 32);
  return (((w & kMask) * kMul1) + (((w >> 16) & kMask) * kMul2)) >> 32;
}

}  // namespace internal

// ParseScore for a token with kScorePadBytes readable bytes from its start
// (run lines read through a ScanWindow): the forms ParseSimpleDecimal takes
// with at most 8 digits on each side of the point, checked 16 bytes at a
// time and their digits read 8 at a time, with the very same result (the
// same integer m and power f, then m / 10^f); anything else goes to
// ParseScore. A digit at a time, the loops' exits at the point and at the
// end of the token vary from line to line.
inline bool ParsePaddedScore(std::string_view token, double* out) {
#if defined(__SSE2__)
  static constexpr uint64_t kScale[] = {
      1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4,
                                      1e5, 1e6, 1e7, 1e8};
  const bool negative = !token.empty() && token.front() == '-';
  const char* const p = token.data() + (negative ? 1 : 0);
  const size_t n = token.size() - (negative ? 1 : 0);
  if (n != 0 && n <= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Bytes >= 0x80 are negative, so below '0' too.
    const __m128i other = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8('0')),
                                       _mm_cmpgt_epi8(v, _mm_set1_epi8('9')));
    const uint32_t others =
        static_cast<uint32_t>(_mm_movemask_epi8(other)) & ((1u << n) - 1);
    // All digits, or digits, one '.', digits.
    const size_t point =
        others == 0 ? n : static_cast<size_t>(std::countr_zero(others));
    const size_t fraction = others == 0 ? 0 : n - point - 1;
    if ((others == 0 ||
         (others == (1u << point) && p[point] == '.' && fraction > 0)) &&
        point > 0 && point <= 8 && fraction <= 8 && point + fraction <= 15) {
      uint64_t m = internal::ParseDigits8(p, point) * kScale[fraction];
      if (fraction > 0) m += internal::ParseDigits8(p + point + 1, fraction);
      const double value = static_cast<double>(m) / kPow10[fraction];
      *out = negative ? -value : value;
      return true;
    }
  }
#endif
  return ParseScore(token, out);
}

// Parses a whole token as a base-10 integer that fits T.
template <typename T>
inline bool ParseInteger(std::string_view token, T* out) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return false;  // "+-1"
  }
  if (token.empty()) return false;
  // Grades are a digit or two: read up to 9 digits (which fit any T of 32
  // bits or more) without from_chars' call; anything else goes to it.
  if constexpr (sizeof(T) >= 4) {
    if (token.size() <= 9) {
      uint32_t value = 0;
      size_t i = 0;
      for (; i < token.size(); ++i) {
        const unsigned digit = static_cast<unsigned char>(token[i]) - '0';
        if (digit > 9) break;
        value = value * 10 + digit;
      }
      if (i == token.size() && value <= std::numeric_limits<T>::max()) {
        *out = static_cast<T>(value);
        return true;
      }
    }
  }
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace rankwatch::trec

#endif  // RANKWATCH_TREC_TEXT_SCAN_H_
