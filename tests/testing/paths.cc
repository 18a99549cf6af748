#include "tests/testing/paths.h"

namespace rankwatch::testing {

const char* RankwatchBinary() { return RANKWATCH_BINARY; }

const char* SourceTree() { return RANKWATCH_SOURCE_DIR; }

const char* ConformanceDir() { return RANKWATCH_CONFORMANCE_DIR; }

const char* ArtifactDir() { return RANKWATCH_TESTING_DIR; }

}  // namespace rankwatch::testing
