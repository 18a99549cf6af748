#include "trec/run_file.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_seed.h"

namespace rankwatch::trec {
namespace {

MappedFile OpenOk(const std::string& path) {
  StatusOr<MappedFile> f = MappedFile::Open(path, LineBounds());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

std::vector<RunEntry> Entries(const MappedFile& f, const RunIndex& index,
                              std::string_view qid) {
  std::vector<RunEntry> out;
  const RunQuery* q = index.FindQuery(qid);
  EXPECT_NE(q, nullptr) << qid;
  if (q == nullptr) return out;
  Status s = ParseRunQuery(f.data(), *q, f.path(), &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(RunFileTest, IndexesInterleavedQueries) {
  testing::TempDir dir;
  MappedFile f = OpenOk(dir.Write("run.txt",
                                  "q1 Q0 a 1 3.0 r\n"
                                  "q1 Q0 b 2 +1 r extra fields ignored\n"
                                  "\n"
                                  "# comment\n"
                                  "q2 Q0 c 1 -2.5e-1 r\n"
                                  "q1 Q0 d 3 1e0 r"));  // No final newline.
  RunIndex index = RunIndex::Build(f, 1);
  ASSERT_EQ(index.queries().size(), 2u);
  EXPECT_EQ(index.queries()[0].qid, "q1");
  EXPECT_EQ(index.queries()[0].blocks.size(), 2u);
  std::vector<RunEntry> q1 = Entries(f, index, "q1");
  ASSERT_EQ(q1.size(), 3u);
  EXPECT_EQ(q1[0].doc(), "a");
  EXPECT_EQ(q1[1].score, 1.0);
  EXPECT_EQ(q1[2].doc(), "d");
  EXPECT_EQ(q1[2].score, 1.0);
  EXPECT_EQ(q1[2].line, 6u);
  std::vector<RunEntry> q2 = Entries(f, index, "q2");
  ASSERT_EQ(q2.size(), 1u);
  EXPECT_EQ(q2[0].score, -0.25);
  EXPECT_EQ(q2[0].line, 5u);
}

TEST(RunFileTest, ErrorsNameFileAndLine) {
  testing::TempDir dir;
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0\n",
       ":2: expected 6 fields (qid iter docno rank score run_id), found 5"},
      {"q1 Q0 a 1 high r\n", ":1: score 'high' is not a finite number"},
      {"q1 Q0 a 1 nan r\n", ":1: score 'nan' is not a finite number"},
      {"q1 Q0 a 1 1.0x r\n", ":1: score '1.0x' is not a finite number"},
      {"q1 Q0 a 1 +-1 r\n", ":1: score '+-1' is not a finite number"},
  };
  for (const Case& c : cases) {
    const std::string path = dir.Write("bad.txt", c.text);
    MappedFile f = OpenOk(path);
    RunIndex index = RunIndex::Build(f, 1);
    std::vector<RunEntry> out;
    Status s = ParseRunQuery(f.data(), index.queries()[0], f.path(), &out);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.message(), path + c.message);
  }
}

// A file big enough to be scanned in parallel chunks gives the same queries
// and entries as a sequential scan.
TEST(RunFileTest, ParallelScanMatchesSequential) {
  testing::TempDir dir;
  std::string text;
  for (int line = 0; text.size() < (6u << 20); ++line) {
    const int q = (line / 7) % 13;  // Runs of 7 lines, qids recurring.
    // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "q" + ....
    text += 'q';
    text += std::to_string(q);
    text += " Q0 doc" + std::to_string(line) + ' ' + std::to_string(line) +
            ' ' + std::to_string(line * 0.5) + " r\n";
  }
  MappedFile f = OpenOk(dir.Write("big.txt", text));
  RunIndex one = RunIndex::Build(f, 1);
  RunIndex four = RunIndex::Build(f, 4);
  ASSERT_EQ(one.queries().size(), 13u);
  ASSERT_EQ(four.queries().size(), 13u);
  for (const RunQuery& q : one.queries()) {
    std::vector<RunEntry> a = Entries(f, one, q.qid);
    std::vector<RunEntry> b = Entries(f, four, q.qid);
    ASSERT_EQ(a.size(), b.size()) << q.qid;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].doc(), b[i].doc());
      EXPECT_EQ(a[i].line, b[i].line);
      EXPECT_EQ(a[i].score, b[i].score);
    }
  }
}

TEST(RunFileTest, RanksByScoreThenDocnoDescending) {
  const char* docs[] = {"a", "b", "B", "c"};
  RunEntry a{1.0, docs[0], 1, 0, 1}, b{1.0, docs[1], 1, 0, 2},
      big_b{1.0, docs[2], 1, 0, 3}, c{2.0, docs[3], 1, 0, 4};
  EXPECT_TRUE(RanksBefore(c, a));      // Higher score first.
  EXPECT_TRUE(RanksBefore(b, a));      // Tie: "b" > "a" by bytes.
  EXPECT_TRUE(RanksBefore(b, big_b));  // 'b' (0x62) > 'B' (0x42).
  EXPECT_FALSE(RanksBefore(a, a));
}

// Random run-like lines with every kind of whitespace, high bytes and
// missing fields: ScanRunLine splits them as Tokenize does. Texts up to 300
// bytes, so that lines are split both by the 64-byte window (at least 64
// bytes left, the line ending within them) and a byte at a time (near the
// end, or longer lines). Seed 12345.
TEST(RunFileTest, ScanRunLineMatchesTokenize) {
  const char kAlphabet[] = " \t\v\f\r\n!#+-.019AZaz\x80\xff";
  uint64_t state = 12345;
  auto next = [&state] { return SplitMix64(&state); };
  int windowed = 0;  // Lines that the window path can split.
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text(next() % 300, ' ');
    for (char& c : text) c = kAlphabet[next() % (sizeof(kAlphabet) - 1)];
    // Every tenth text: few line breaks, so that lines outgrow the window.
    if (iteration % 10 == 0) std::replace(text.begin(), text.end(), '\n', ' ');
    const char* p = text.data();
    const char* const end = p + text.size();
    while (p < end) {
      const char* eol = std::find(p, end, '\n');
      std::string_view tok[8];
      const int n = Tokenize(std::string_view(p, eol - p), tok, 8);
      RunLineKind kind;
      RunLineFields f;
      const char* next_line = ScanRunLine(p, end, &kind, &f);
      ASSERT_EQ(next_line, eol == end ? end : eol + 1) << text;
      if (end - p >= 64 && eol - p < 64) ++windowed;
      if (n == 0 || tok[0].front() == '#') {
        EXPECT_EQ(kind, RunLineKind::kSkip) << text;
      } else if (n < 6) {
        EXPECT_EQ(kind, RunLineKind::kTooShort) << text;
      } else {
        ASSERT_EQ(kind, RunLineKind::kData) << text;
        EXPECT_EQ(f.qid, tok[0]);
        EXPECT_EQ(f.docno, tok[2]);
        EXPECT_EQ(f.score, tok[4]);
        EXPECT_EQ(f.run_id, tok[5]);
        // A padded score has its bytes within the text.
        if (f.score_padded) {
          EXPECT_LE(f.score.data() + kScorePadBytes, end) << text;
        }
      }
      p = next_line;
    }
  }
  EXPECT_GT(windowed, 20000);
}

// Random lines as in ScanRunLineMatchesTokenize: LineSplitter splits each
// line that ends within the 64 bytes at its start, with 128 bytes of the text
// left, as Tokenize does (the first `max` tokens, the count up to max + 1),
// and leaves the others. Lines are taken in order, as the qrels reader takes
// them, so that the masks carry over from one 64-byte block to the next.
// Seed 777.
TEST(RunFileTest, LineSplitterMatchesTokenize) {
  if (!kHasScanWindow) GTEST_SKIP() << "no ScanWindow on this target";
  const char kAlphabet[] = " \t\v\f\r\n!#+-.019AZaz\x80\xff";
  uint64_t state = 777;
  auto next = [&state] { return SplitMix64(&state); };
  int split = 0;
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text(next() % 400, ' ');
    for (char& c : text) c = kAlphabet[next() % (sizeof(kAlphabet) - 1)];
    if (iteration % 10 == 0) std::replace(text.begin(), text.end(), '\n', ' ');
    const int max = 1 + static_cast<int>(next() % 5);
    LineSplitter splitter(text);
    const char* const end = text.data() + text.size();
    for (const char* p = text.data(); p < end;) {
      const char* eol = std::find(p, end, '\n');
      std::string_view want[8];
      const int n = Tokenize(std::string_view(p, eol - p), want, 8);
      std::string_view got[8];
      int count = -1;
      const char* next_line = splitter.Split(p, got, max, &count);
      if (end - p < 128 || eol - p >= 64) {
        EXPECT_EQ(next_line, nullptr) << text;
      } else {
        ++split;
        ASSERT_EQ(next_line, eol + 1) << text;
        ASSERT_EQ(count, std::min(n, max + 1)) << text;
        for (int i = 0; i < std::min(n, max); ++i) EXPECT_EQ(got[i], want[i]);
      }
      p = eol == end ? end : eol + 1;
    }
  }
  EXPECT_GT(split, 20000);
}

// ParseInteger's short-token path gives what from_chars gives (after the
// '+' that trec_eval's atoi takes): tokens of digits, signs and other bytes,
// 1 to 12 long, into 32- and 64-bit integers. Seed 4242.
TEST(RunFileTest, IntegersParseAsFromChars) {
  const char kAlphabet[] = "0123456789000000000+- x.";
  uint64_t state = 4242;
  auto next = [&state] { return SplitMix64(&state); };
  const auto expect = [](std::string_view s, auto* value) {
    if (!s.empty() && s.front() == '+') {
      s.remove_prefix(1);
      if (!s.empty() && s.front() == '-') return false;
    }
    const auto [ptr, ec] =
        std::from_chars(s.data(), s.data() + s.size(), *value);
    return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
  };
  for (int iteration = 0; iteration < 200000; ++iteration) {
    std::string s(1 + next() % 12, ' ');
    for (char& c : s) c = kAlphabet[next() % (sizeof(kAlphabet) - 1)];
    int32_t want32 = 0, got32 = 0;
    int64_t want64 = 0, got64 = 0;
    ASSERT_EQ(ParseInteger(s, &got32), expect(s, &want32)) << s;
    if (expect(s, &want32)) {
      EXPECT_EQ(got32, want32) << s;
    }
    ASSERT_EQ(ParseInteger(s, &got64), expect(s, &want64)) << s;
    if (expect(s, &want64)) {
      EXPECT_EQ(got64, want64) << s;
    }
  }
  int32_t v = 0;
  EXPECT_TRUE(ParseInteger("999999999", &v));
  EXPECT_EQ(v, 999999999);
  EXPECT_TRUE(ParseInteger("+7", &v));
  EXPECT_EQ(v, 7);
  EXPECT_FALSE(ParseInteger("2147483648", &v));
  uint8_t small = 0;
  EXPECT_FALSE(ParseInteger("256", &small));
}

// ParsePaddedScore reads every token as ParseScore does: the same verdict
// and the same double, bit for bit (-0.0 included). Tokens of digits, signs,
// points, exponents and junk, up to 20 bytes, followed by junk that must
// not be read as theirs. Seed 4242.
TEST(RunFileTest, PaddedScoresParseAsParseScore) {
  const char kAlphabet[] = "0123456789012345678901234567890123456789.-+e x";
  uint64_t state = 4242;
  auto next = [&state] { return SplitMix64(&state); };
  int simple = 0;  // Tokens of ParseSimpleDecimal's forms.
  for (int iteration = 0; iteration < 300000; ++iteration) {
    std::string token;
    const size_t length = 1 + next() % 20;
    if (next() % 2 == 0) {
      // The common form: [-]digits[.digits].
      if (next() % 4 == 0) token += '-';
      const size_t integer = 1 + next() % 10;
      const size_t fraction = next() % 10;
      for (size_t i = 0; i < integer; ++i) token += kAlphabet[next() % 10];
      if (fraction > 0) token += '.';
      for (size_t i = 0; i < fraction; ++i) token += kAlphabet[next() % 10];
    } else {
      for (size_t i = 0; i < length; ++i) {
        token += kAlphabet[next() % (sizeof(kAlphabet) - 1)];
      }
    }
    // The token, then digits and points that would change it if read.
    std::string buffer = token + std::string(kScorePadBytes, '7');
    buffer[token.size()] = static_cast<char>(next() % 2 == 0 ? '.' : '9');
    double want = 0;
    double got = 0;
    const bool valid = ParseScore(token, &want);
    ASSERT_EQ(
        ParsePaddedScore(std::string_view(buffer.data(), token.size()), &got),
        valid)
        << token;
    if (!valid) continue;
    EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want))
        << token;
    double value = 0;
    if (ParseSimpleDecimal(token, &value)) ++simple;
  }
  EXPECT_GT(simple, 100000);
  // By hand: the bench's form, a negative score, a plain integer, -0.
  std::string padded(64, '5');
  auto parse = [&padded](std::string_view token) {
    padded.replace(0, token.size(), token);
    padded[token.size()] = ' ';
    double v = 1;
    EXPECT_TRUE(
        ParsePaddedScore(std::string_view(padded).substr(0, token.size()), &v));
    return v;
  };
  EXPECT_EQ(parse("8.912345"), 8.912345);
  EXPECT_EQ(parse("-12.25"), -12.25);
  EXPECT_EQ(parse("17"), 17.0);
  EXPECT_EQ(parse("12345678.1234567"), 12345678.1234567);  // 15 digits.
  EXPECT_TRUE(std::signbit(parse("-0.0")));
}

// The fast path for plain decimals gives the very double from_chars gives.
TEST(RunFileTest, ScoresParseExactlyAsFromChars) {
  const char kDigits[] = "0123456789";
  uint64_t state = 99;
  auto next = [&state] { return SplitMix64(&state); };
  for (int iteration = 0; iteration < 200000; ++iteration) {
    std::string s = next() % 4 == 0 ? "-" : "";
    const int integer_digits = 1 + static_cast<int>(next() % 9);
    const int fraction_digits = static_cast<int>(next() % 10);
    for (int i = 0; i < integer_digits; ++i) s += kDigits[next() % 10];
    if (fraction_digits > 0 || next() % 8 == 0) s += '.';
    for (int i = 0; i < fraction_digits; ++i) s += kDigits[next() % 10];
    double expected = 0;
    const auto [ptr, ec] =
        std::from_chars(s.data(), s.data() + s.size(), expected);
    const bool valid = ec == std::errc() && ptr == s.data() + s.size();
    double got = 0;
    ASSERT_EQ(ParseScore(s, &got), valid) << s;
    if (valid) {
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(expected))
          << s;
    }
  }
  double v;
  EXPECT_TRUE(ParseScore("+0.1", &v));
  EXPECT_EQ(v, 0.1);
  // Issue 15: a score that underflows is 0 (or subnormal), as atof gives
  // trec_eval; one that overflows is still not a finite number.
  EXPECT_TRUE(ParseScore("1e-400", &v));
  EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(ParseScore("-1e-400", &v));
  EXPECT_EQ(v, 0.0);
  EXPECT_TRUE(ParseScore("4e-320", &v));  // Subnormal: kept.
  EXPECT_GT(v, 0.0);
  EXPECT_LT(v, 1e-300);
  EXPECT_FALSE(ParseScore("1e400", &v));
  EXPECT_TRUE(ParseScore("1e-3", &v));
  EXPECT_EQ(v, 0.001);
  EXPECT_TRUE(ParseScore("123456789.1234567", &v));  // 16 digits.
  EXPECT_EQ(v, 123456789.1234567);
}

std::vector<RunChunk> AllChunks(RunChunkReader* reader,
                                std::vector<std::vector<char>>* buffers) {
  std::vector<RunChunk> chunks;
  for (;;) {
    buffers->emplace_back();
    RunChunk chunk;
    if (!reader->Next(&buffers->back(), &chunk)) break;
    chunks.push_back(chunk);
  }
  return chunks;
}

// Whatever the chunk size, chunks cover the file in order and never split
// a group of consecutive lines with one qid.
TEST(RunFileTest, ChunksHoldWholeGroups) {
  testing::TempDir dir;
  const std::string text =
      "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\n# note\n\nq2 Q0 c 1 1 r\n"
      "q2 Q0 d 2 0 r\nq2 Q0 e 3 0 r\n  q3 Q0 f 1 1 r\nq1 Q0 g 1 1 r";
  const std::string path = dir.Write("run.txt", text);
  // SIZE_MAX: one range, whose size must not overflow.
  for (size_t size : {size_t{1}, size_t{2}, size_t{5}, size_t{13}, size_t{30},
                      size_t{64}, size_t{1000}, SIZE_MAX}) {
    std::unique_ptr<RunChunkReader> reader = RunChunkReader::Open(path, size);
    ASSERT_NE(reader, nullptr);
    std::vector<std::vector<char>> buffers;
    std::string joined;
    for (const RunChunk& chunk : AllChunks(reader.get(), &buffers)) {
      EXPECT_EQ(chunk.offset, joined.size()) << size;
      joined += chunk.text;
      // A cut falls before the first line of a new qid (or a blank or
      // comment line).
      const size_t end = joined.size();
      if (end < text.size()) {
        ASSERT_EQ(text[end - 1], '\n') << size;
        const std::string before = text.substr(0, end - 1);
        const std::string last_line = before.substr(before.rfind('\n') + 1);
        std::string_view tok_a[1], tok_b[1];
        const size_t next_eol = text.find('\n', end);
        Tokenize(last_line, tok_a, 1);
        Tokenize(std::string_view(text).substr(end, next_eol - end), tok_b, 1);
        EXPECT_NE(tok_a[0], tok_b[0]) << size << " at " << end;
      }
    }
    EXPECT_TRUE(reader->status().ok());
    EXPECT_EQ(joined, text) << size;
    std::string range;
    ASSERT_TRUE(reader->ReadRange(14, 27, &range).ok());
    EXPECT_EQ(range, "q1 Q0 b 2 2 r");
  }
}

// FindGroupCut by hand. "a 1\na 2\nb 3\n": lines start at 0, 4 and 8; b's
// line (8) is the first with a new qid.
TEST(RunFileTest, FindGroupCutFindsTheFirstNewQidAfterTheBoundary) {
  const std::string text = "a 1\na 2\nb 3\nb 4\nc 5\n";
  size_t cut = 0;
  size_t last = 0;
  // B = 1 (text[0] is byte B - 1): the line after the '\n' at 3 is a's
  // second (4); the first new qid after it is b's line at 8, after the
  // data line at 4.
  ASSERT_EQ(FindGroupCut(text, 0, false, &cut, &last), GroupCutScan::kFound);
  EXPECT_EQ(cut, 8u);
  EXPECT_EQ(last, 4u);
  // B = 4 (byte 3 is '\n'): the first line is a's at 4, then b at 8.
  ASSERT_EQ(FindGroupCut(text, 3, false, &cut, &last), GroupCutScan::kFound);
  EXPECT_EQ(cut, 8u);
  // B = 5: the first line after it is b's at 8, so the cut is c's at 16,
  // after b's last data line at 12.
  ASSERT_EQ(FindGroupCut(text, 4, false, &cut, &last), GroupCutScan::kFound);
  EXPECT_EQ(cut, 16u);
  EXPECT_EQ(last, 12u);
  // B = 13: only c's line follows: no new qid before the end, which is the
  // cut at the end of the file, for every later boundary too.
  ASSERT_EQ(FindGroupCut(text, 12, true, &cut, &last), GroupCutScan::kFound);
  EXPECT_EQ(cut, text.size());
  EXPECT_EQ(last, std::string_view::npos);
  // The same bytes before the end of the file: read on.
  EXPECT_EQ(FindGroupCut(text, 12, false, &cut, &last),
            GroupCutScan::kNeedMore);
  // A line cut short by the end of the bytes is not read as a qid.
  EXPECT_EQ(FindGroupCut("a 1\na 2\nb", 0, false, &cut, &last),
            GroupCutScan::kNeedMore);
  ASSERT_EQ(FindGroupCut("a 1\na 2\nb", 0, true, &cut, &last),
            GroupCutScan::kFound);
  EXPECT_EQ(cut, 8u);  // The last line, without its '\n'.
}

// Blank and comment lines neither open nor close a group: the cut is at the
// next data line with a new qid, the comments before it staying behind.
TEST(RunFileTest, FindGroupCutSkipsBlankAndCommentLines) {
  // Lines start at 0 ("x 0"), 4 (blank), 5 ("  # a 9"), 13 ("a 1"), 17
  // ("# c"), 21 ("\ta 2"), 26 (blank), 27 ("# b") and 31 ("b 3").
  const std::string text = "x 0\n\n  # a 9\na 1\n# c\n\ta 2\n\n# b\nb 3\n";
  size_t cut = 0;
  size_t last = 0;
  // From byte 2 the first line start is 4; the first data line is a's at
  // 13, the next new qid b's at 31, after a's last data line at 21.
  ASSERT_EQ(FindGroupCut(text, 2, false, &cut, &last), GroupCutScan::kFound);
  EXPECT_EQ(cut, 31u);
  EXPECT_EQ(last, 21u);
}

TEST(RunFileTest, FindGroupCutRefusesAnEndlessLine) {
  size_t cut = 0;
  size_t last = 0;
  std::string text = "a 1\n" + std::string(kMaxLineBytes + 1, 'x');
  EXPECT_EQ(FindGroupCut(text, 0, false, &cut, &last), GroupCutScan::kLongLine);
  text = std::string(kMaxLineBytes + 2, 'x');
  EXPECT_EQ(FindGroupCut(text, 0, false, &cut, &last), GroupCutScan::kLongLine);
  text.pop_back();  // kMaxLineBytes + 1 bytes from `from`, '\n' not seen.
  text.back() = '\n';
  EXPECT_EQ(FindGroupCut(text, 0, false, &cut, &last), GroupCutScan::kNeedMore);
}

// The starts of the groups of `text`, by a plain loop over its lines: data
// lines whose qid differs from the data line before.
std::vector<size_t> GroupStarts(const std::string& text) {
  std::vector<size_t> starts;
  std::string last_qid;
  for (size_t p = 0; p < text.size();) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    std::string_view tok[1];
    if (Tokenize(std::string_view(text).substr(p, e - p), tok, 1) > 0 &&
        tok[0].front() != '#') {
      if (!last_qid.empty() && tok[0] != last_qid) starts.push_back(p);
      last_qid = std::string(tok[0]);
    }
    p = e + 1;
  }
  return starts;
}

// Random runs (groups of 1 to 300 lines, qids that come back later,
// comments, blank lines, with or without a final '\n') read by 1 or 2
// threads at once with random chunk sizes: the chunks, in offset order,
// are the file, none is empty, and each cut is a group start. Seed printed.
TEST(RunFileTest, ParallelChunksCoverTheFileAndCutAtGroups) {
  const uint64_t seed = testing::TestSeed();
  SCOPED_TRACE(testing::SeedNote(seed));
  Xoshiro256 rng(seed);
  testing::TempDir dir;
  for (int round = 0; round < 40; ++round) {
    std::string text;
    const int groups = static_cast<int>(rng.Between(0, 30));
    for (int g = 0; g < groups; ++g) {
      const std::string qid = "q" + std::to_string(rng.Below(8));
      const int lines = static_cast<int>(
          rng.Below(4) == 0 ? rng.Between(100, 300) : rng.Between(1, 20));
      for (int l = 0; l < lines; ++l) {
        switch (rng.Below(12)) {
          case 0:
            text += "\n";
            break;
          case 1:
            text += "# " + qid + " note\n";
            break;
          default:
            text += (rng.Below(4) == 0 ? " " : "") + qid + " Q0 d" +
                    std::to_string(l) + " " + std::to_string(l + 1) + " " +
                    std::to_string(rng.Below(1000)) + " run\n";
        }
      }
    }
    if (!text.empty() && rng.Below(2) == 0) text.pop_back();
    const std::string path = dir.Write("run.txt", text);
    const std::vector<size_t> starts = GroupStarts(text);
    const size_t chunk_bytes = static_cast<size_t>(rng.Between(1, 3000));
    const int threads = static_cast<int>(rng.Between(1, 2));
    SCOPED_TRACE("round " + std::to_string(round) + ", chunk " +
                 std::to_string(chunk_bytes) + ", threads " +
                 std::to_string(threads));
    std::unique_ptr<RunChunkReader> reader =
        RunChunkReader::Open(path, chunk_bytes);
    ASSERT_NE(reader, nullptr);
    std::vector<std::vector<std::pair<uint64_t, std::string>>> got(threads);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        std::vector<char> buffer;
        RunChunk chunk;
        while (reader->Next(&buffer, &chunk)) {
          got[t].emplace_back(chunk.offset, std::string(chunk.text));
        }
      });
    }
    for (std::thread& w : workers) w.join();
    ASSERT_TRUE(reader->status().ok()) << reader->status().ToString();
    std::vector<std::pair<uint64_t, std::string>> chunks;
    for (const auto& g : got) chunks.insert(chunks.end(), g.begin(), g.end());
    std::sort(chunks.begin(), chunks.end());
    std::string joined;
    for (const auto& [offset, chunk_text] : chunks) {
      EXPECT_EQ(offset, joined.size());
      EXPECT_FALSE(chunk_text.empty());
      if (offset > 0) {
        EXPECT_TRUE(std::binary_search(starts.begin(), starts.end(), offset))
            << "cut at " << offset;
      }
      joined += chunk_text;
    }
    EXPECT_EQ(joined, text);
  }
}

// One group much larger than the chunks: a single chunk holds it, and the
// ranges inside it are skipped, not each scanned to its end (their cut is
// known from the first search).
TEST(RunFileTest, AGroupLargerThanManyChunksIsOneChunk) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "big Q0 d" + std::to_string(i) + " 1 1 r\n";
  }
  text += "small Q0 d 1 1 r\n";
  std::unique_ptr<RunChunkReader> reader =
      RunChunkReader::Open(dir.Write("run.txt", text), 64);
  ASSERT_NE(reader, nullptr);
  std::vector<std::vector<char>> buffers;
  const std::vector<RunChunk> chunks = AllChunks(reader.get(), &buffers);
  ASSERT_TRUE(reader->status().ok());
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].text, text.substr(0, text.size() - 17));
  EXPECT_EQ(chunks[1].text, "small Q0 d 1 1 r\n");
}

// A file that ends in 3 MiB without a line break stops the reading with an
// error naming the file, whether it is met in a search for a cut (small
// chunks) or in the last range (one chunk), instead of being read whole.
// (A long line that ends is handed out in its chunk: the scorer refuses
// it, TooLong in streaming_eval.cc.)
TEST(RunFileTest, ChunkReaderRefusesAnEndlessLine) {
  testing::TempDir dir;
  const std::string path =
      dir.Write("run.txt", "a Q0 d 1 1 r\nb Q0 d 1 1 r\n" +
                               std::string(3 * kMaxLineBytes, 'x'));
  for (size_t chunk_bytes : {size_t{16}, size_t{1} << 22}) {
    std::unique_ptr<RunChunkReader> reader =
        RunChunkReader::Open(path, chunk_bytes);
    ASSERT_NE(reader, nullptr);
    std::vector<std::vector<char>> buffers;
    AllChunks(reader.get(), &buffers);
    EXPECT_EQ(reader->status().message(),
              path + ": a line is longer than 1048576 bytes")
        << chunk_bytes;
  }
}

TEST(RunFileTest, ChunkReaderTakesRegularFilesOnly) {
  testing::TempDir dir;
  EXPECT_EQ(RunChunkReader::Open(dir.path(), 64), nullptr);
  EXPECT_EQ(RunChunkReader::Open(dir.path() + "/missing", 64), nullptr);
  EXPECT_EQ(RunChunkReader::Open("-", 64), nullptr);
  const std::string empty = dir.Write("empty.txt", "");
  std::unique_ptr<RunChunkReader> reader = RunChunkReader::Open(empty, 64);
  ASSERT_NE(reader, nullptr);
  std::vector<char> buffer;
  RunChunk chunk;
  EXPECT_FALSE(reader->Next(&buffer, &chunk));
  EXPECT_TRUE(reader->status().ok());
}

}  // namespace
}  // namespace rankwatch::trec
