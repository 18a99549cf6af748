// TempDir: a fresh directory under $TMPDIR for one test, removed with its
// contents on destruction.
#ifndef RANKWATCH_TESTS_TESTING_TEMP_DIR_H_
#define RANKWATCH_TESTS_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace rankwatch::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "rankwatch-test-XXXXXX")
            .string();
    path_ = ::mkdtemp(tmpl.data()) != nullptr ? tmpl : std::string();
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }

  // Writes `contents` to `name` inside the directory; returns the full path.
  std::string Write(std::string_view name, std::string_view contents) const {
    std::string file = path_ + "/" + std::string(name);
    std::ofstream out(file, std::ios::binary);
    out << contents;
    return file;
  }

 private:
  std::string path_;
};

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_TEMP_DIR_H_
