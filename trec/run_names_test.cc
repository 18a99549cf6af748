#include "trec/run_names.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rankwatch::trec {
namespace {

TEST(RunNamesTest, NamesAndBaselines) {
  const std::vector<std::string> paths = {"a/run.txt", "b/run.txt", "x/c", "d"};
  const std::vector<std::string> ids = {"", "", "bm25", "bm25"};
  // Shared ids fall back to the files' names, shared file names to the
  // paths (issue 43: trec_eval's results.test and results.trunc are both
  // tagged STANDARD).
  EXPECT_EQ(RunNames(ids, paths),
            (std::vector<std::string>{"a/run.txt", "b/run.txt", "c", "d"}));
  EXPECT_EQ(
      RunNames(
          std::vector<std::string>{"STANDARD", "STANDARD", "bm25"},
          std::vector<std::string>{"t/results.test", "t/results.trunc", "t/x"}),
      (std::vector<std::string>{"results.test", "results.trunc", "bm25"}));
  // The same file twice: its position.
  EXPECT_EQ(RunNames(std::vector<std::string>{"bm25", "bm25"},
                     std::vector<std::string>{"r.txt", "r.txt"}),
            (std::vector<std::string>{"r.txt#0", "r.txt#1"}));
  const std::vector<std::string> distinct = {"a", "b", "c", "d"};
  EXPECT_EQ(FindBaseline("x/c", paths, distinct), 2u);
  EXPECT_EQ(FindBaseline("b", paths, distinct), 1u);
  EXPECT_EQ(FindBaseline("3", paths, distinct), 3u);
  EXPECT_EQ(FindBaseline("4", paths, distinct), std::nullopt);
  EXPECT_EQ(FindBaseline("zz", paths, distinct), std::nullopt);
}

}  // namespace
}  // namespace rankwatch::trec
