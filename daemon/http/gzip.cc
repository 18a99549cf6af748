#include "daemon/http/gzip.h"

#include <zlib.h>

#include <charconv>
#include <limits>
#include <optional>

#include "base/strings.h"

namespace rankwatch::http {

namespace {

// zlib's windowBits for a gzip wrapper instead of a zlib one.
constexpr int kGzipWindowBits = 15 + 16;
constexpr int kMemLevel = 8;  // zlib's default.

// The q-value among a coding's parameters ("q=0.5"), 1 when absent, and
// nullopt when malformed (the element is then ignored).
std::optional<double> QValue(std::string_view params) {
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view param = TrimBlanks(params.substr(0, semi));
    params = semi == std::string_view::npos ? std::string_view()
                                            : params.substr(semi + 1);
    if (param.size() < 2 || (param[0] != 'q' && param[0] != 'Q') ||
        param[1] != '=') {
      continue;
    }
    const std::string_view number = TrimBlanks(param.substr(2));
    double q = 0;
    const auto [end, ec] =
        std::from_chars(number.data(), number.data() + number.size(), q);
    if (ec != std::errc() || end != number.data() + number.size() || q < 0 ||
        q > 1) {
      return std::nullopt;
    }
    return q;
  }
  return 1.0;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  std::optional<double> gzip_q;
  std::optional<double> star_q;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    const std::string_view element = accept_encoding.substr(0, comma);
    accept_encoding = comma == std::string_view::npos
                          ? std::string_view()
                          : accept_encoding.substr(comma + 1);
    const size_t semi = element.find(';');
    const std::string_view coding = TrimBlanks(element.substr(0, semi));
    const std::optional<double> q =
        QValue(semi == std::string_view::npos ? std::string_view()
                                              : element.substr(semi + 1));
    if (!q.has_value()) continue;
    if (EqualsIgnoreCase(coding, "gzip") ||
        EqualsIgnoreCase(coding, "x-gzip")) {
      gzip_q = q;
    } else if (coding == "*") {
      star_q = q;
    }
  }
  if (gzip_q.has_value()) return *gzip_q > 0;
  return star_q.has_value() && *star_q > 0;
}

StatusOr<std::string> GzipCompress(std::string_view data) {
  if (data.size() > std::numeric_limits<uInt>::max()) {
    return Status::OutOfRange("gzip: body too large for one deflate call");
  }
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, kGzipWindowBits,
                   kMemLevel, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Status::Internal("gzip: deflateInit2 failed");
  }
  std::string out;
  out.resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  // zlib's interface is not const-correct; it does not write to the input.
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  // deflateBound() guarantees one Z_FINISH call completes.
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) {
    return Status::Internal("gzip: deflate failed (" + std::to_string(rc) +
                            ")");
  }
  return out;
}

}  // namespace rankwatch::http
