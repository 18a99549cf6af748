// Where the tests find what the build configured: the rankwatch binary, the
// source tree, the reference corpus and the folder for test artifacts.
//
// Only paths.cc is compiled with these paths (-D from CMake), so that no
// other test object depends on where the clone or its build folder is: a
// second clone on the same machine then reuses every other object from
// ccache. Each function returns a string literal that lives for the
// program; thread-safe.
#ifndef RANKWATCH_TESTS_TESTING_PATHS_H_
#define RANKWATCH_TESTS_TESTING_PATHS_H_

namespace rankwatch::testing {

// The rankwatch binary of this build (build/rankwatch).
const char* RankwatchBinary();

// The root of the source tree this build was configured from.
const char* SourceTree();

// The trec_eval reference corpus, read in place (../shared/conformance).
const char* ConformanceDir();

// The build's Testing folder, where tests leave artifacts (screenshots).
const char* ArtifactDir();

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_PATHS_H_
