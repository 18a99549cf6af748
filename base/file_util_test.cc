#include "base/file_util.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch {
namespace {

// A fresh directory for one test, removed with its contents afterwards.
class FileUtilTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "rankwatch-file-XXXXXX")
            .string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  }

  // The names in the directory, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string dir_;
};

TEST_F(FileUtilTest, WritesTheContents) {
  const std::string path = dir_ + "/port";
  ASSERT_TRUE(WriteFileAtomically(path, "9464\n").ok());
  EXPECT_EQ(Read(path), "9464\n");
  // Binary-safe, and an empty file is a file.
  const std::string binary("a\0b\xff", 4);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/bin", binary).ok());
  EXPECT_EQ(Read(dir_ + "/bin"), binary);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/empty", "").ok());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/empty"));
  EXPECT_EQ(Read(dir_ + "/empty"), "");
  EXPECT_EQ(Names(), (std::vector<std::string>{"bin", "empty", "port"}));
}

TEST_F(FileUtilTest, ReplacesAnExistingFile) {
  const std::string path = dir_ + "/bootstrap";
  ASSERT_TRUE(WriteFileAtomically(path, "127.0.0.1:1,127.0.0.1:2\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "127.0.0.1:3\n").ok());
  EXPECT_EQ(Read(path), "127.0.0.1:3\n");  // Not a longer file's tail.
  EXPECT_EQ(Names(), std::vector<std::string>{"bootstrap"});
}

TEST_F(FileUtilTest, ReportsAMissingDirectoryOnOneLine) {
  const std::string path = dir_ + "/missing/port";
  const Status s = WriteFileAtomically(path, "1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message().rfind("cannot create '" + path + ".tmp.", 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find("No such file or directory"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
}

TEST_F(FileUtilTest, ReportsADirectoryThatIsAFile) {
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/file", "x").ok());
  const Status s = WriteFileAtomically(dir_ + "/file/port", "1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("Not a directory"), std::string::npos)
      << s.message();
}

TEST_F(FileUtilTest, ReportsAnUnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes to any directory";
  const std::string locked = dir_ + "/locked";
  std::filesystem::create_directory(locked);
  std::filesystem::permissions(locked, std::filesystem::perms::owner_read |
                                           std::filesystem::perms::owner_exec);
  const Status s = WriteFileAtomically(locked + "/port", "1\n");
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message().rfind("cannot create '" + locked + "/port.tmp.", 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find("Permission denied"), std::string::npos)
      << s.message();
}

TEST_F(FileUtilTest, FailedRenameLeavesNoTemporaryFile) {
  // A non-empty directory where the file should go: rename() fails.
  const std::string path = dir_ + "/taken";
  std::filesystem::create_directories(path + "/inside");
  const Status s = WriteFileAtomically(path, "1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message().rfind("cannot rename '" + path + ".tmp.", 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find("' to '" + path + "': "), std::string::npos)
      << s.message();
  EXPECT_EQ(Names(), std::vector<std::string>{"taken"});
}

TEST_F(FileUtilTest, FailedWriteLeavesNoTemporaryFile) {
  // A file size limit of 10 bytes makes the write of 100 fail with EFBIG
  // (SIGXFSZ ignored) after the temporary file exists.
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 10;
  struct sigaction ignore = {}, old_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const Status s = WriteFileAtomically(dir_ + "/big", std::string(100, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::sigaction(SIGXFSZ, &old_action, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message().rfind("cannot write '" + dir_ + "/big.tmp.", 0), 0u)
      << s.message();
  EXPECT_NE(s.message().find("File too large"), std::string::npos)
      << s.message();
  EXPECT_TRUE(Names().empty());
}

}  // namespace
}  // namespace rankwatch
