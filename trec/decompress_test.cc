#include "trec/decompress.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "trec/batch_eval.h"
#include "trec/mapped_file.h"
#include "trec/run_file.h"
#include "trec/text_scan.h"

namespace rankwatch::trec {
namespace {

// Compressed here with zlib's deflate (gzip wrapper: windowBits 15 + 16)
// and libzstd, independently of the decoder under test.
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// One frame with its content size in the header.
std::string Zstd(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t n =
      ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

// One frame without a content size, as `zstd` writes into a pipe.
std::string ZstdStreamed(const std::string& text) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::string out(ZSTD_compressBound(text.size()) + 64, '\0');
  ZSTD_inBuffer in{text.data(), text.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  EXPECT_EQ(ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end), 0u);
  ZSTD_freeCCtx(cctx);
  out.resize(o.pos);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()),
            ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

// A run of `queries` x `docs` lines, deterministic (seed printed by the
// test names: fixed 13).
std::string RunText(int queries, int docs) {
  uint64_t seed = 13;
  std::string text;
  for (int q = 1; q <= queries; ++q) {
    for (int d = 0; d < docs; ++d) {
      text += std::to_string(q) + " Q0 D" +
              std::to_string(SplitMix64(&seed) % 100000) + " " +
              std::to_string(d + 1) + " " + std::to_string(docs - d) + " r\n";
    }
  }
  return text;
}

Status Decompress(Compression c, const std::string& data, std::string* out,
                  uint64_t max_bytes = UINT64_MAX) {
  return DecompressAll(c, data, "run.txt.gz", max_bytes, out);
}

TEST(DecompressTest, DetectsByMagicOnly) {
  EXPECT_EQ(DetectCompression("\x1f\x8b\x08\x00"), Compression::kGzip);
  EXPECT_EQ(DetectCompression("\x1f\x8b"), Compression::kGzip);
  EXPECT_EQ(DetectCompression("\x28\xb5\x2f\xfd"), Compression::kZstd);
  EXPECT_EQ(DetectCompression("\x5a\x2a\x4d\x18"), Compression::kZstd);
  EXPECT_EQ(DetectCompression("\x28\xb5\x2f"), Compression::kNone);
  EXPECT_EQ(DetectCompression("\x1f"), Compression::kNone);
  EXPECT_EQ(DetectCompression(""), Compression::kNone);
  EXPECT_EQ(DetectCompression("q1 Q0 a 1 1 r\n"), Compression::kNone);
  EXPECT_EQ(DetectCompression(Gzip("x")), Compression::kGzip);
  EXPECT_EQ(DetectCompression(Zstd("x")), Compression::kZstd);
}

TEST(DecompressTest, LimitIsAtMost64GiB) {
  EXPECT_LE(DecompressedSizeLimit(), uint64_t{64} << 30);
  EXPECT_GT(DecompressedSizeLimit(), uint64_t{1} << 20);
}

TEST(DecompressTest, RoundTripsEveryShape) {
  const std::string text = RunText(50, 400);  // 20,000 lines, ~0.5 MB.
  std::string out;
  ASSERT_TRUE(Decompress(Compression::kGzip, Gzip(text), &out).ok());
  EXPECT_EQ(out, text);
  // Two members, as `gzip -c a >> b` makes: one text.
  const std::string half = text.substr(0, text.size() / 2);
  const std::string rest = text.substr(text.size() / 2);
  ASSERT_TRUE(
      Decompress(Compression::kGzip, Gzip(half) + Gzip(rest), &out).ok());
  EXPECT_EQ(out, text);
  ASSERT_TRUE(Decompress(Compression::kZstd, Zstd(text), &out).ok());
  EXPECT_EQ(out, text);
  ASSERT_TRUE(Decompress(Compression::kZstd, ZstdStreamed(text), &out).ok());
  EXPECT_EQ(out, text);
  ASSERT_TRUE(
      Decompress(Compression::kZstd, Zstd(half) + ZstdStreamed(rest), &out)
          .ok());
  EXPECT_EQ(out, text);
  // Empty text.
  ASSERT_TRUE(Decompress(Compression::kGzip, Gzip(""), &out).ok());
  EXPECT_EQ(out, "");
}

TEST(DecompressTest, TruncatedAndCorruptInputIsOneLineError) {
  const std::string text = RunText(5, 100);
  const std::string gz = Gzip(text);
  std::string out;
  Status s = Decompress(Compression::kGzip, gz.substr(0, gz.size() - 5), &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "run.txt.gz: truncated gzip data (unexpected end of file)");
  std::string bad = gz;
  bad[gz.size() / 2] = static_cast<char>(bad[gz.size() / 2] ^ 0x55);
  bad[gz.size() / 2 + 1] = static_cast<char>(bad[gz.size() / 2 + 1] ^ 0x55);
  s = Decompress(Compression::kGzip, bad, &out);
  EXPECT_EQ(s.message().rfind("run.txt.gz: corrupt gzip data: ", 0), 0u)
      << s.message();
  // Garbage after a whole member is not a second member.
  s = Decompress(Compression::kGzip, gz + "garbage", &out);
  EXPECT_EQ(s.message(),
            "run.txt.gz: corrupt gzip data: incorrect header check");
  const std::string zst = Zstd(text);
  s = Decompress(Compression::kZstd, zst.substr(0, zst.size() - 3), &out);
  EXPECT_EQ(s.message(),
            "run.txt.gz: truncated zstd data (unexpected end of file)");
  s = Decompress(Compression::kZstd, zst + "xxxxxxxx", &out);
  EXPECT_EQ(s.message().rfind("run.txt.gz: corrupt zstd data: ", 0), 0u)
      << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
}

TEST(DecompressTest, RefusesMoreThanTheLimit) {
  const std::string text(100000, 'a');  // A bomb in miniature: 1000x.
  std::string out;
  Status s = Decompress(Compression::kGzip, Gzip(text), &out, 99999);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "run.txt.gz: decompressed gzip data larger than 99999 bytes (the "
            "limit: 64 GiB or the machine's memory)");
  EXPECT_TRUE(Decompress(Compression::kGzip, Gzip(text), &out, 100000).ok());
  s = Decompress(Compression::kZstd, ZstdStreamed(text), &out, 5000);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
}

TEST(DecompressTest, ReaderStreamsInSmallPieces) {
  testing::TempDir dir;
  const std::string text = RunText(20, 500);
  for (const auto& [c, data] :
       {std::pair{Compression::kGzip,
                  Gzip(text.substr(0, 1000)) + Gzip(text.substr(1000))},
        std::pair{Compression::kZstd, ZstdStreamed(text)}}) {
    const std::string path = dir.Write("run", data);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    DecompressingReader reader(fd, c, path, UINT64_MAX);
    std::string out;
    char piece[777];
    for (;;) {
      size_t got = 0;
      ASSERT_TRUE(reader.Read(piece, sizeof(piece), &got).ok());
      if (got == 0) break;
      out.append(piece, got);
    }
    ::close(fd);
    EXPECT_EQ(out, text);
  }
}

TEST(DecompressTest, MappedFileReadsCompressedNamedAsPlain) {
  testing::TempDir dir;
  const std::string text = RunText(3, 10);
  const std::string path = dir.Write("run.txt", Gzip(text));  // Not .gz.
  StatusOr<MappedFile> f = MappedFile::Open(path, LineBounds());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->data(), text);
  // Moving keeps the owned text valid.
  MappedFile moved = std::move(f).value();
  EXPECT_EQ(moved.data(), text);
  // A plain file named .gz is plain.
  const std::string plain = dir.Write("plain.gz", text);
  f = MappedFile::Open(plain, LineBounds());
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data(), text);
  const std::string truncated = Gzip(text);
  const std::string bad =
      dir.Write("bad.txt", truncated.substr(0, truncated.size() / 2));
  f = MappedFile::Open(bad, LineBounds());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(),
            bad + ": truncated gzip data (unexpected end of file)");
}

TEST(DecompressTest, ChunkReaderStreamsCompressedRunAndRefusesReadBack) {
  testing::TempDir dir;
  const std::string text = RunText(30, 100);
  const std::string path = dir.Write("run.zst", Zstd(text));
  std::unique_ptr<RunChunkReader> reader = RunChunkReader::Open(path, 4096);
  ASSERT_NE(reader, nullptr);
  std::vector<char> buffer;
  RunChunk chunk;
  std::string all;
  while (reader->Next(&buffer, &chunk)) {
    EXPECT_EQ(chunk.offset, all.size());
    all += chunk.text;
  }
  ASSERT_TRUE(reader->status().ok()) << reader->status().ToString();
  EXPECT_EQ(all, text);
  std::string part;
  EXPECT_FALSE(reader->ReadRange(0, 10, &part).ok());
}

// The evaluation of compressed files prints the bytes of the plain ones,
// grouped (streamed) and with a query split in two groups (which falls back
// to the mapped path).
TEST(DecompressTest, EvaluationIsIdenticalToPlain) {
  testing::TempDir dir;
  const std::string qrels = "1 0 D1 1\n1 0 D2 2\n2 0 D3 1\n3 0 D4 1\n";
  const std::string grouped =
      "1 Q0 D1 1 3 r\n1 Q0 D9 2 2 r\n1 Q0 D2 3 1 r\n2 Q0 D3 1 5 r\n"
      "3 Q0 D8 1 2 r\n3 Q0 D4 2 1 r\n";
  const std::string split =
      "1 Q0 D1 1 3 r\n2 Q0 D3 1 5 r\n1 Q0 D9 2 2 r\n1 Q0 D2 3 1 r\n"
      "3 Q0 D4 2 1 r\n3 Q0 D8 1 2 r\n";
  EvalOptions options;
  const std::vector<std::string> no_measures;  // trec_eval's default set.
  StatusOr<MeasureSelection> measures = MeasureSelection::Parse(no_measures);
  ASSERT_TRUE(measures.ok());
  options.measures = *measures;
  options.per_query = true;
  auto text = [&](const std::string& q, const std::string& r) {
    StatusOr<EvalReport> report = EvaluateFiles(q, r, options);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    std::string out;
    if (report.ok()) WriteTrecText(*report, &out);
    return out;
  };
  for (const std::string& run : {grouped, split}) {
    const std::string want =
        text(dir.Write("q.txt", qrels), dir.Write("r.txt", run));
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(
        text(dir.Write("q.gz", Gzip(qrels)), dir.Write("r.gz", Gzip(run))),
        want);
    EXPECT_EQ(text(dir.Write("q.zst", ZstdStreamed(qrels)),
                   dir.Write("r.zst", Zstd(run))),
              want);
  }
}

}  // namespace
}  // namespace rankwatch::trec
