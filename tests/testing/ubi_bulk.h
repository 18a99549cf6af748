// ReadUbiBulk: the documents of an OpenSearch bulk file of UBI data (an
// `{"index": {"_index": ...}}` line, then the document), as OpenSearch's
// projects publish them (tests/data/ubi/opensearch-producers), for the
// tests that feed them to rankwatch: each document verbatim, whether it is
// a query record (index ubi_queries) or an event, and its query_id.
//
// Header-only; plain functions, no state.
#ifndef RANKWATCH_TESTS_TESTING_UBI_BULK_H_
#define RANKWATCH_TESTS_TESTING_UBI_BULK_H_

#include <simdjson.h>

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::testing {

struct UbiDocument {
  bool query = false;    // Of index ubi_queries; else ubi_events.
  std::string json;      // The document's line, verbatim.
  std::string query_id;  // "" when null or absent.
};

inline std::vector<UbiDocument> ReadUbiBulk(const std::string& path) {
  std::vector<UbiDocument> out;
  std::istringstream in(ReadFile(path));
  simdjson::dom::parser parser;
  for (std::string action, line;
       std::getline(in, action) && std::getline(in, line);) {
    simdjson::dom::element a;
    std::string_view index;
    EXPECT_EQ(parser.parse(simdjson::padded_string(action)).get(a),
              simdjson::SUCCESS)
        << action;
    EXPECT_EQ(a["index"]["_index"].get(index), simdjson::SUCCESS) << action;
    UbiDocument d;
    d.query = index == "ubi_queries";
    d.json = line;
    simdjson::dom::element doc;
    EXPECT_EQ(parser.parse(simdjson::padded_string(line)).get(doc),
              simdjson::SUCCESS)
        << line;
    std::string_view id;
    if (doc["query_id"].get(id) == simdjson::SUCCESS) d.query_id = id;
    out.push_back(std::move(d));
  }
  return out;
}

// The documents of one kind as JSON lines.
inline std::string UbiLines(const std::vector<UbiDocument>& docs, bool query) {
  std::string out;
  for (const UbiDocument& d : docs) {
    if (d.query == query) out += d.json + "\n";
  }
  return out;
}

}  // namespace rankwatch::testing

#endif  // RANKWATCH_TESTS_TESTING_UBI_BULK_H_
