// Test helper: inflates a gzip member with zlib, independently of
// GzipCompress, so that tests check compressed bodies against the original.
#ifndef RANKWATCH_DAEMON_HTTP_GUNZIP_TEST_UTIL_H_
#define RANKWATCH_DAEMON_HTTP_GUNZIP_TEST_UTIL_H_

#include <zlib.h>

#include <optional>
#include <string>

namespace rankwatch::http {

// The decompressed data, or nullopt when `data` is not one whole gzip
// member.
inline std::optional<std::string> GunzipForTest(const std::string& data) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return std::nullopt;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buffer[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
  }
  const bool whole = rc == Z_STREAM_END && stream.avail_in == 0;
  inflateEnd(&stream);
  if (!whole) return std::nullopt;
  return out;
}

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_GUNZIP_TEST_UTIL_H_
