#include "config/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>

#include "base/json_writer.h"
#include "base/rfc3339.h"

namespace rankwatch::config {

namespace {

constexpr std::string_view kDurationExpected = "a duration like 30s, 5m, 1h";
constexpr std::string_view kTimestampExpected =
    "an RFC 3339 date-time like 2025-01-01T00:00:00Z or epoch milliseconds";

std::string ChildPath(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

// yaml-cpp marks an empty value at the token after it (often on the next
// line), so errors about such a value point at its key instead.
Field MapValue(const Field& map, const YAML::Node& key,
               const YAML::Node& value) {
  const bool misplaced = value.IsNull() && value.Mark().line != key.Mark().line;
  return {value, ChildPath(map.path, Printable(key.Scalar())),
          misplaced ? key.Mark() : value.Mark()};
}

// Records the first event of each document's root node: how many documents
// there are, and whether one is an empty document made of a stray ','.
class DocumentRoots : public YAML::EventHandler {
 public:
  struct Root {
    YAML::Mark mark;
    bool null;
  };

  const std::vector<Root>& roots() const { return roots_; }

  void OnDocumentStart(const YAML::Mark&) override { at_root_ = true; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    Record(mark, true);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    Record(mark, false);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Record(mark, false);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&,
                       YAML::anchor_t, YAML::EmitterStyle::value) override {
    Record(mark, false);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Record(mark, false);
  }
  void OnMapEnd() override {}

 private:
  void Record(const YAML::Mark& mark, bool null) {
    if (at_root_) roots_.push_back({mark, null});
    at_root_ = false;
  }

  bool at_root_ = false;
  std::vector<Root> roots_;
};

bool IsInteger(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin() + (s[0] == '-' ? 1 : 0), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c));
         });
}

}  // namespace

Field ListItem(const Field& list, const YAML::Node& item, size_t index) {
  return {item, list.path + "[" + std::to_string(index) + "]",
          item.IsNull() ? list.mark : item.Mark()};
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + Printable(node.Scalar()) + "'";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

Status YamlReader::ErrorAt(const YAML::Mark& mark, std::string_view path,
                           std::string_view what) const {
  std::string message = Printable(file_name_, std::string_view::npos);
  if (!mark.is_null()) {
    message += ":" + std::to_string(mark.line + 1) + ":" +
               std::to_string(mark.column + 1);
  }
  message += ": ";
  if (!path.empty()) {
    message += path;
    message += ": ";
  }
  message += what;
  return Status::InvalidArgument(std::move(message));
}

Status YamlReader::CheckUtf8(std::string_view text) const {
  YAML::Mark mark;
  mark.pos = 0;
  mark.line = 0;
  mark.column = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      char byte[8];
      std::snprintf(byte, sizeof(byte), "0x%02x",
                    static_cast<unsigned char>(text[i]));
      return ErrorAt(mark, "",
                     std::string("not UTF-8 text (byte ") + byte +
                         "); save the configuration as UTF-8");
    }
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else {
      ++mark.column;  // Columns count characters, not bytes.
    }
    i += n;
    mark.pos = static_cast<int>(i);
  }
  return Status::Ok();
}

Status YamlReader::CheckSingleDocument(const std::string& text) const {
  std::istringstream in(text);
  YAML::Parser yaml(in);
  DocumentRoots documents;
  // Two documents are enough to know; reading on could loop (see above).
  for (int i = 0; i < 2 && yaml.HandleNextDocument(documents); ++i) {
  }
  for (const DocumentRoots::Root& root : documents.roots()) {
    const size_t pos = static_cast<size_t>(root.mark.pos);
    if (root.null && root.mark.pos >= 0 && pos < text.size() &&
        text[pos] == ',') {
      return ErrorAt(root.mark, "", "YAML syntax error: unexpected ','");
    }
  }
  if (documents.roots().size() > 1) {
    return ErrorAt(documents.roots()[1].mark, "",
                   "expected one YAML document, found a second one");
  }
  return Status::Ok();
}

Status YamlReader::ForEachPair(const Field& f, const PairVisitor& visit) const {
  if (!f.node.IsMap()) {
    return Error(f, "expected a map, got " + Describe(f.node));
  }
  // yaml-cpp keeps duplicate keys; refuse them rather than pick one.
  std::map<std::string, YAML::Mark> seen;
  for (const auto& pair : f.node) {
    const YAML::Node& key = pair.first;
    if (!key.IsScalar()) {
      return ErrorAt(key.Mark(), f.path,
                     "expected a key name, got " + Describe(key));
    }
    const Field value = MapValue(f, key, pair.second);
    const Field key_field = {key, value.path, key.Mark()};
    const auto [it, inserted] = seen.emplace(key.Scalar(), key.Mark());
    if (!inserted) {
      return Error(key_field, "duplicate key (first on line " +
                                  std::to_string(it->second.line + 1) + ")");
    }
    RW_RETURN_IF_ERROR(visit(key_field, value));
  }
  return Status::Ok();
}

Status YamlReader::ReadMap(const Field& f,
                           std::initializer_list<Key> keys) const {
  std::vector<std::string_view> names;
  for (const Key& k : keys) names.push_back(k.name);
  return ForEachPair(f, [&](const Field& key, const Field& value) {
    const std::string& name = key.node.Scalar();
    for (const Key& k : keys) {
      if (k.name == name) return k.read(value);
    }
    if (std::optional<std::string_view> close = ClosestKey(name, names)) {
      return Error(key,
                   "unknown key (did you mean '" + std::string(*close) + "'?)");
    }
    return Error(
        key, "unknown key (expected one of: " +
                 JoinNames(names,
                           [](std::string_view n) { return std::string(n); }) +
                 ")");
  });
}

Status YamlReader::ForEachItem(const Field& f, const ItemVisitor& visit) const {
  if (!f.node.IsSequence()) {
    return Error(f, "expected a list, got " + Describe(f.node));
  }
  for (size_t i = 0; i < f.node.size(); ++i) {
    RW_RETURN_IF_ERROR(visit(ListItem(f, f.node[i], i)));
  }
  return Status::Ok();
}

StatusOr<std::string> YamlReader::Text(const Field& f,
                                       std::string_view expected) const {
  if (!f.node.IsScalar()) {
    return Error(
        f, "expected " + std::string(expected) + ", got " + Describe(f.node));
  }
  StatusOr<std::string> expanded = ExpandEnv(f.node.Scalar(), env_);
  if (!expanded.ok()) return Error(f, expanded.status().message());
  return expanded;
}

Status YamlReader::ReadString(const Field& f, std::string* out) const {
  StatusOr<std::string> text = Text(f, "a string");
  if (!text.ok()) return text.status();
  *out = std::move(*text);
  return Status::Ok();
}

Status YamlReader::ReadName(const Field& f, std::string* out) const {
  StatusOr<std::string> text = Text(f, "a string");
  if (!text.ok()) return text.status();
  if (text->empty()) return Error(f, "must not be empty");
  *out = std::move(*text);
  return Status::Ok();
}

Status YamlReader::ReadInt(const Field& f, int64_t min, int64_t max,
                           int64_t* out) const {
  StatusOr<std::string> text = Text(f, "an integer");
  if (!text.ok()) return text.status();
  int64_t value = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    return Error(f, "integer '" + Printable(*text) + "' is out of range");
  }
  if (ec != std::errc() || stop != end || text->empty()) {
    return Error(f, "expected an integer, got '" + Printable(*text) + "'");
  }
  if (value < min) {
    return Error(f, (min == 1 ? std::string("must be > 0")
                              : "must be >= " + std::to_string(min)) +
                        ", got " + std::to_string(value));
  }
  if (value > max) {
    return Error(f, "must be <= " + std::to_string(max) + ", got " +
                        std::to_string(value));
  }
  *out = value;
  return Status::Ok();
}

Status YamlReader::ReadNumber(const Field& f, double* out) const {
  StatusOr<std::string> text = Text(f, "a number");
  if (!text.ok()) return text.status();
  double value = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const auto [stop, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || stop != end || !std::isfinite(value)) {
    return Error(f, "expected a number, got '" + Printable(*text) + "'");
  }
  *out = value;
  return Status::Ok();
}

Status YamlReader::ReadBool(const Field& f, bool* out) const {
  StatusOr<std::string> text = Text(f, "true or false");
  if (!text.ok()) return text.status();
  if (*text == "true" || *text == "false") {
    *out = *text == "true";
    return Status::Ok();
  }
  return Error(f, "expected true or false, got '" + Printable(*text) + "'");
}

Status YamlReader::ReadDuration(const Field& f, bool positive,
                                Duration* out) const {
  StatusOr<std::string> text = Text(f, kDurationExpected);
  if (!text.ok()) return text.status();
  int64_t ms = 0;
  switch (ParseDurationMs(*text, &ms)) {
    case DurationError::kNone:
      break;
    case DurationError::kMalformed: {
      const std::string hint = MalformedDurationHint(*text);
      return Error(f, "expected " + std::string(kDurationExpected) + ", got '" +
                          Printable(*text) + "'" +
                          (hint.empty() ? "" : " (" + hint + ")"));
    }
    case DurationError::kTooLarge:
      return Error(f, "must be at most " + FormatDuration(kMaxDuration));
  }
  if (positive && ms == 0) return Error(f, "must be > 0");
  *out = Duration(ms);
  return Status::Ok();
}

// An integer is epoch milliseconds; anything else must be an RFC 3339
// date-time. Both must lie in 1970..9999, which FormatRfc3339Millis() can
// write back.
Status YamlReader::ReadTimestamp(const Field& f, int64_t* out_ms) const {
  StatusOr<std::string> text = Text(f, kTimestampExpected);
  if (!text.ok()) return text.status();
  const std::string& s = *text;
  int64_t ms = 0;
  if (IsInteger(s)) {
    const auto [stop, ec] = std::from_chars(s.data(), s.data() + s.size(), ms);
    if (ec == std::errc::result_out_of_range) {
      return Error(f, "integer '" + Printable(s) + "' is out of range");
    }
    if (ec != std::errc() || stop != s.data() + s.size()) {
      return Error(f, "expected " + std::string(kTimestampExpected) +
                          ", got '" + Printable(s) + "'");
    }
  } else if (std::optional<int64_t> parsed = ParseRfc3339Millis(s)) {
    ms = *parsed;
  } else {
    return Error(f, "expected " + std::string(kTimestampExpected) + ", got '" +
                        Printable(s) + "'");
  }
  if (ms < 0) {
    return Error(f, "must not be before 1970-01-01T00:00:00Z, got '" +
                        Printable(s) + "'");
  }
  if (ms > kMaxRfc3339Millis) {
    return Error(f, "must not be after " +
                        FormatRfc3339Millis(kMaxRfc3339Millis) + " (" +
                        std::to_string(kMaxRfc3339Millis) + "), got '" +
                        Printable(s) + "'");
  }
  *out_ms = ms;
  return Status::Ok();
}

Status YamlReader::ReadNameList(const Field& f, std::string_view kind,
                                std::vector<std::string>* out) const {
  out->clear();
  return ForEachItem(f, [&](const Field& item) {
    std::string name;
    RW_RETURN_IF_ERROR(ReadName(item, &name));
    if (std::find(out->begin(), out->end(), name) != out->end()) {
      return Error(item, "duplicate " + std::string(kind) + " '" +
                             Printable(name) + "'");
    }
    out->push_back(std::move(name));
    return Status::Ok();
  });
}

YamlReader::Reader YamlReader::StringInto(std::string* out) const {
  return [this, out](const Field& f) { return ReadString(f, out); };
}

YamlReader::Reader YamlReader::NameInto(std::string* out) const {
  return [this, out](const Field& f) { return ReadName(f, out); };
}

YamlReader::Reader YamlReader::BoolInto(bool* out) const {
  return [this, out](const Field& f) { return ReadBool(f, out); };
}

YamlReader::Reader YamlReader::DurationInto(bool positive,
                                            Duration* out) const {
  return [this, positive, out](const Field& f) {
    return ReadDuration(f, positive, out);
  };
}

}  // namespace rankwatch::config
