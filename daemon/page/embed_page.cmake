# Writes OUTPUT, a C++ file defining rankwatch::page::kPageHtml with the
# bytes of INPUT (the status page) as a raw string literal.
file(READ "${INPUT}" content)
string(FIND "${content}" ")rwpage\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the delimiter )rwpage\"")
endif()
file(WRITE "${OUTPUT}" "// Generated from daemon/page/page.html by embed_page.cmake.
#include \"daemon/page/handlers.h\"

namespace rankwatch::page {
const std::string_view kPageHtml = R\"rwpage(${content})rwpage\";
}  // namespace rankwatch::page
")
