#include "base/bounded_read.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

// Reads `text` through a pipe (a writer thread feeds it) with `bounds`.
Status ReadThroughPipe(const std::string& text, const ReadBounds& bounds,
                       std::string* out) {
  // The reader may stop early: the writer then gets EPIPE, not a signal.
  ::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;  // The reader stopped early and closed its end.
      done += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  Status s = ReadAllBounded(fds[0], "in", bounds, out);
  ::close(fds[0]);
  writer.join();
  return s;
}

TEST(ReadAllBoundedTest, ReadsLinesWithinTheBound) {
  ReadBounds bounds;
  bounds.max_line_bytes = 3;
  std::string out;
  // Lines of 3, 0 and 3 bytes (the last without '\n'): all fit.
  ASSERT_TRUE(ReadThroughPipe("abc\n\nxyz", bounds, &out).ok());
  EXPECT_EQ(out, "abc\n\nxyz");
}

TEST(ReadAllBoundedTest, StopsAtTheFirstLongLine) {
  ReadBounds bounds;
  bounds.max_line_bytes = 3;
  bounds.line_bound_name = "the test bound";
  std::string out;
  // Line 3 has 4 bytes.
  const Status s = ReadThroughPipe("abc\nab\nabcd\nabcdefgh\n", bounds, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "in:3: line longer than 3 bytes (the test bound)");
  // A last line without '\n' counts too, as soon as it is over.
  out.clear();
  EXPECT_EQ(ReadThroughPipe("ab\nabcd", bounds, &out).message(),
            "in:2: line longer than 3 bytes (the test bound)");
}

TEST(ReadAllBoundedTest, LongLineAcrossReadsIsFound) {
  // 200,000 bytes without '\n' come in several reads of at most 64 KiB.
  ReadBounds bounds;
  bounds.max_line_bytes = 100'000;
  std::string out;
  const Status s = ReadThroughPipe(std::string(200'000, 'x'), bounds, &out);
  EXPECT_EQ(s.message(),
            "in:1: line longer than 100000 bytes (the line limit)");
  // It stopped within one read of the bound: 100,001 bytes plus at most one
  // 64 KiB read.
  EXPECT_LE(out.size(), 100'001u + 65'536u);
}

TEST(ReadAllBoundedTest, StopsPastTheTotal) {
  ReadBounds bounds;
  bounds.max_total_bytes = 10;
  std::string out;
  EXPECT_TRUE(ReadThroughPipe("0123456789", bounds, &out).ok());
  out.clear();
  EXPECT_EQ(ReadThroughPipe("0123456789\n", bounds, &out).message(),
            "in: larger than 10 bytes");
}

TEST(ReadAllBoundedTest, DevZeroStopsAtTheBound) {
  // /dev/zero never ends and has no '\n': without a bound it grows memory
  // until the process dies.
  const int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ReadBounds bounds;
  bounds.max_line_bytes = 1 << 20;
  std::string out;
  const Status s = ReadAllBounded(fd, "/dev/zero", bounds, &out);
  ::close(fd);
  EXPECT_EQ(s.message(),
            "/dev/zero:1: line longer than 1048576 bytes (the line limit)");
}

TEST(ReadAllBoundedTest, NameIsEscaped) {
  ReadBounds bounds;
  bounds.max_line_bytes = 0;
  EXPECT_EQ(LineTooLong(std::string_view("a\nb\0c", 5), 7, bounds).message(),
            "a\\nb\\x00c:7: line longer than 0 bytes (the line limit)");
}

TEST(LongLineTest, FindsTheFirstLineOverTheBound) {
  EXPECT_EQ(LongLine("", 0), 0u);
  EXPECT_EQ(LongLine("\n\n", 0), 0u);
  EXPECT_EQ(LongLine("ab\nabc\nabcd", 3), 3u);  // Last line, no '\n'.
  EXPECT_EQ(LongLine("ab\nabcd\nabcd\n", 3), 2u);
  EXPECT_EQ(LongLine("abc\nabc\n", 3), 0u);
}

}  // namespace
}  // namespace rankwatch
