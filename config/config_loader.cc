#include "config/config_loader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config/rfc3339.h"

namespace rankwatch::config {

namespace {

// Anything larger is not a configuration file (and reading /dev/zero must
// end).
constexpr size_t kMaxConfigBytes = size_t{16} << 20;

constexpr std::string_view kDurationExpected = "a duration like 30s, 5m, 1h";
constexpr std::string_view kTimestampExpected =
    "an RFC 3339 date-time like 2025-01-01T00:00:00Z or epoch milliseconds";

// Labels that rankwatch puts on its own series; a segment label may not
// reuse them, or its series would collide.
constexpr std::array<std::string_view, 11> kReservedLabels = {
    "variant",   "k",          "window",   "le",      "topic", "reason",
    "partition", "experiment", "baseline", "measure", "label"};

constexpr std::array<std::string_view, 6> kLogLevels = {
    "trace", "debug", "info", "warn", "error", "off"};

constexpr std::array<JoinMode, 2> kJoinModes = {JoinMode::kImpression,
                                                JoinMode::kQrels};
constexpr std::array<CombineRule, 2> kCombineRules = {CombineRule::kMax,
                                                      CombineRule::kLast};
constexpr std::array<metrics::Gain, 2> kGains = {metrics::Gain::kLinear,
                                                 metrics::Gain::kExponential};
constexpr std::array<metrics::RecallDenominator, 2> kRecallDenominators = {
    metrics::RecallDenominator::kRelevant,
    metrics::RecallDenominator::kMinCutoffRelevant};
constexpr std::array<metrics::ApDenominator, 3> kApDenominators = {
    metrics::ApDenominator::kRelevant,
    metrics::ApDenominator::kMinCutoffRelevant,
    metrics::ApDenominator::kRetrievedRelevant};
constexpr std::array<metrics::ZeroRelevantPolicy, 2> kZeroRelevantPolicies = {
    metrics::ZeroRelevantPolicy::kScoreZero,
    metrics::ZeroRelevantPolicy::kSkip};

// librdkafka properties that have their own key here; setting both would
// leave it unclear which one wins.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3>
    kManagedProperties = {{
        {"bootstrap.servers", "kafka.bootstrap_servers"},
        {"metadata.broker.list", "kafka.bootstrap_servers"},
        {"group.id", "kafka.group_id"},
    }};

// Duration units, longest first: compound durations list them in this
// order.
struct DurationUnit {
  std::string_view suffix;
  int64_t ms;
};
constexpr std::array<DurationUnit, 5> kDurationUnits = {{
    {"d", 86'400'000},
    {"h", 3'600'000},
    {"m", 60'000},
    {"s", 1'000},
    {"ms", 1},
}};

// ---------------------------------------------------------------------------
// Text helpers.

// `text` made fit for a one-line message: control characters escaped, long
// text cut.
std::string Printable(std::string_view text) {
  constexpr size_t kMaxShown = 60;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out;
}

template <typename Range, typename NameFn>
std::string JoinNames(const Range& items, NameFn name) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += ", ";
    out += name(item);
  }
  return out;
}

// Edit distance counting a swap of neighbours as one edit (optimal string
// alignment): "jion" is one typo away from "join".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The known key closest to `key`, when close enough to be a likely typo.
std::optional<std::string_view> ClosestKey(
    std::string_view key, std::span<const std::string_view> known) {
  const size_t max_distance = std::max<size_t>(1, key.size() / 3);
  std::optional<std::string_view> best;
  size_t best_distance = max_distance + 1;
  for (std::string_view candidate : known) {
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*.
bool IsLabelName(std::string_view name) { return IsEnvName(name); }

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<int>(c)));
  return out;
}

// Expands ${NAME}, ${NAME:-default} and $$ in `text` into `*out`. The error
// message names what is wrong, without a position.
Status ExpandEnv(std::string_view text, const EnvLookup& env,
                 std::string* out) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$') {
      out->push_back(text[i]);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '$') {
      out->push_back('$');
      ++i;
      continue;
    }
    // A lone '$' is refused rather than kept: `$NAME` (shell style) would
    // otherwise pass through silently as a literal.
    if (i + 1 >= text.size() || text[i + 1] != '{') {
      return Status::InvalidArgument(
          "'$' must start ${NAME} or ${NAME:-default} (write '$$' for a "
          "literal '$')");
    }
    const size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return Status::InvalidArgument(
          "unterminated '${' (write '$$' for a literal '$')");
    }
    const std::string_view inner = text.substr(i + 2, close - i - 2);
    const size_t separator = inner.find(":-");
    const std::string_view name = inner.substr(0, separator);
    if (!IsEnvName(name)) {
      return Status::InvalidArgument("invalid environment variable name '" +
                                     Printable(name) + "'");
    }
    std::optional<std::string> value =
        env ? env(std::string(name)) : std::nullopt;
    if (separator != std::string_view::npos && (!value || value->empty())) {
      value = std::string(inner.substr(separator + 2));
    }
    if (!value) {
      return Status::InvalidArgument("environment variable " +
                                     std::string(name) + " is not set");
    }
    out->append(*value);
    i = close;
  }
  return Status::Ok();
}

enum class DurationError { kNone, kMalformed, kTooLarge };

DurationError ParseDurationMs(std::string_view text, int64_t* out) {
  if (text.empty()) return DurationError::kMalformed;
  const int64_t max_ms = kMaxDuration.count();
  int64_t total = 0;
  size_t next_unit = 0;  // Units must come in decreasing order.
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
      ++i;
    if (i == start) return DurationError::kMalformed;
    int64_t value = 0;
    const auto [end, ec] =
        std::from_chars(text.data() + start, text.data() + i, value);
    if (ec == std::errc::result_out_of_range) return DurationError::kTooLarge;
    if (ec != std::errc() || end != text.data() + i) {
      return DurationError::kMalformed;
    }
    const std::string_view rest = text.substr(i);
    // "ms" before "m", so that 5ms is not read as 5m followed by "s".
    size_t unit = kDurationUnits.size();
    if (rest.starts_with("ms")) {
      unit = kDurationUnits.size() - 1;
    } else {
      for (size_t u = 0; u + 1 < kDurationUnits.size(); ++u) {
        if (rest.starts_with(kDurationUnits[u].suffix)) unit = u;
      }
    }
    if (unit == kDurationUnits.size() || unit < next_unit) {
      return DurationError::kMalformed;
    }
    next_unit = unit + 1;
    i += kDurationUnits[unit].suffix.size();
    if (value > (max_ms - total) / kDurationUnits[unit].ms) {
      return DurationError::kTooLarge;
    }
    total += value * kDurationUnits[unit].ms;
  }
  *out = total;
  return DurationError::kNone;
}

// Shortest decimal text that reads back as the same double.
std::string FormatNumber(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : "nan";
}

// What a node is, for "expected X, got Y".
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

// ---------------------------------------------------------------------------
// Reading the YAML tree.

// A node being read, with what is needed to report on it.
struct Field {
  YAML::Node node;
  std::string path;  // "join.window", "metrics.measures[2]"; "" = the root.
  YAML::Mark mark;   // Where errors point.
};

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

Field ListItem(const Field& list, const YAML::Node& item, size_t index) {
  return {item, list.path + "[" + std::to_string(index) + "]",
          item.IsNull() ? list.mark : item.Mark()};
}

// Reads one document into a Config. Stops at the first error. Holds
// references to its arguments; use once.
class Parser {
 public:
  Parser(const std::string& file_name, const EnvLookup& env)
      : file_name_(file_name), env_(env) {}

  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  Status Parse(const YAML::Node& root, Config* config);

  Status ErrorAt(const YAML::Mark& mark, std::string_view path,
                 std::string_view what) const;

 private:
  using Reader = std::function<Status(const Field&)>;
  struct Key {
    std::string_view name;
    Reader read;
  };
  using PairVisitor =
      std::function<Status(const Field& key, const Field& value)>;
  using ItemVisitor = std::function<Status(const Field& item)>;

  Status Error(const Field& f, std::string_view what) const {
    return ErrorAt(f.mark, f.path, what);
  }

  // Structure.
  Status ReadMap(const Field& f, std::initializer_list<Key> keys);
  Status ForEachPair(const Field& f, const PairVisitor& visit);
  Status ForEachItem(const Field& f, const ItemVisitor& visit);

  // Scalars. Every value goes through Text(), which substitutes the
  // environment.
  StatusOr<std::string> Text(const Field& f, std::string_view expected);
  Status ReadString(const Field& f, std::string* out);
  Status ReadName(const Field& f, std::string* out);
  Status ReadInt(const Field& f, int64_t min, int64_t max, int64_t* out);
  template <typename T>
  Status ReadInt(const Field& f, int64_t min, T* out);
  Status ReadNumber(const Field& f, double* out);
  Status ReadDuration(const Field& f, bool positive, Duration* out);
  Status ReadTimestamp(const Field& f, int64_t* out_ms);
  template <typename E, size_t N, typename NameFn>
  Status ReadChoice(const Field& f, std::string_view kind,
                    const std::array<E, N>& choices, NameFn name, E* out);
  Status ReadNameList(const Field& f, std::string_view kind,
                      std::vector<std::string>* out);

  // Readers for ReadMap tables.
  Reader StringInto(std::string* out);
  Reader NameInto(std::string* out);
  template <typename T>
  Reader IntInto(int64_t min, T* out);
  Reader DurationInto(bool positive, Duration* out);

  // Sections.
  Status ReadSchema(const Field& f, SchemaConfig* c);
  Status ReadJoin(const Field& f, JoinConfig* c);
  Status ReadEvents(const Field& f, EventLimitsConfig* c);
  Status ReadMetrics(const Field& f, MetricsConfig* c);
  Status ReadCutoffs(const Field& f, std::vector<int32_t>* out);
  Status ReadMeasures(const Field& f, std::vector<metrics::Measure>* out);
  Status ReadAggregation(const Field& f, AggregationConfig* c);
  Status ReadWindows(const Field& f, std::vector<Duration>* out,
                     std::vector<Field>* fields);
  Status ReadSegmentLabels(const Field& f, std::vector<std::string>* out);
  Status ReadDeadLetter(const Field& f, DeadLetterConfig* c);
  Status ReadKafka(const Field& f, KafkaConfig* c);
  Status ReadProperties(const Field& f,
                        std::map<std::string, std::string>* out);
  Status ReadHttp(const Field& f, HttpConfig* c);
  Status ReadListen(const Field& f, std::string* out);
  Status ReadExperiments(const Field& f, std::vector<ExperimentConfig>* out);
  Status ReadExperiment(const Field& f, ExperimentConfig* out);
  Status ReadStatistics(const Field& f, StatisticsConfig* c);
  Status ReadLogging(const Field& f, LoggingConfig* c);
  Status CheckExperimentVariants(const Config& config) const;

  const std::string& file_name_;
  const EnvLookup& env_;
  // Every experiment's baseline and treatment fields with their values,
  // checked against aggregation.variants once the whole file is read.
  std::vector<std::pair<Field, std::string>> experiment_variants_;
};

Status Parser::ErrorAt(const YAML::Mark& mark, std::string_view path,
                       std::string_view what) const {
  std::string message = file_name_;
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

Status Parser::ForEachPair(const Field& f, const PairVisitor& visit) {
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

Status Parser::ReadMap(const Field& f, std::initializer_list<Key> keys) {
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

Status Parser::ForEachItem(const Field& f, const ItemVisitor& visit) {
  if (!f.node.IsSequence()) {
    return Error(f, "expected a list, got " + Describe(f.node));
  }
  for (size_t i = 0; i < f.node.size(); ++i) {
    RW_RETURN_IF_ERROR(visit(ListItem(f, f.node[i], i)));
  }
  return Status::Ok();
}

StatusOr<std::string> Parser::Text(const Field& f, std::string_view expected) {
  if (!f.node.IsScalar()) {
    return Error(
        f, "expected " + std::string(expected) + ", got " + Describe(f.node));
  }
  std::string out;
  const Status expanded = ExpandEnv(f.node.Scalar(), env_, &out);
  if (!expanded.ok()) return Error(f, expanded.message());
  return out;
}

Status Parser::ReadString(const Field& f, std::string* out) {
  StatusOr<std::string> text = Text(f, "a string");
  if (!text.ok()) return text.status();
  *out = std::move(*text);
  return Status::Ok();
}

Status Parser::ReadName(const Field& f, std::string* out) {
  StatusOr<std::string> text = Text(f, "a string");
  if (!text.ok()) return text.status();
  if (text->empty()) return Error(f, "must not be empty");
  *out = std::move(*text);
  return Status::Ok();
}

Status Parser::ReadInt(const Field& f, int64_t min, int64_t max, int64_t* out) {
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

template <typename T>
Status Parser::ReadInt(const Field& f, int64_t min, T* out) {
  int64_t value = 0;
  RW_RETURN_IF_ERROR(ReadInt(f, min, std::numeric_limits<T>::max(), &value));
  *out = static_cast<T>(value);
  return Status::Ok();
}

Status Parser::ReadNumber(const Field& f, double* out) {
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

Status Parser::ReadDuration(const Field& f, bool positive, Duration* out) {
  StatusOr<std::string> text = Text(f, kDurationExpected);
  if (!text.ok()) return text.status();
  int64_t ms = 0;
  switch (ParseDurationMs(*text, &ms)) {
    case DurationError::kNone:
      break;
    case DurationError::kMalformed:
      return Error(f, "expected " + std::string(kDurationExpected));
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
Status Parser::ReadTimestamp(const Field& f, int64_t* out_ms) {
  StatusOr<std::string> text = Text(f, kTimestampExpected);
  if (!text.ok()) return text.status();
  const std::string& s = *text;
  int64_t ms = 0;
  const bool digits =
      !s.empty() &&
      std::all_of(s.begin() + (s[0] == '-' ? 1 : 0), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
  if (digits) {
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

template <typename E, size_t N, typename NameFn>
Status Parser::ReadChoice(const Field& f, std::string_view kind,
                          const std::array<E, N>& choices, NameFn name,
                          E* out) {
  const std::string names =
      JoinNames(choices, [&](const E& c) { return std::string(name(c)); });
  StatusOr<std::string> text = Text(f, "a name (one of: " + names + ")");
  if (!text.ok()) return text.status();
  for (const E& choice : choices) {
    if (name(choice) == *text) {
      *out = choice;
      return Status::Ok();
    }
  }
  return Error(f, "unknown " + std::string(kind) + " '" + Printable(*text) +
                      "' (expected one of: " + names + ")");
}

Status Parser::ReadNameList(const Field& f, std::string_view kind,
                            std::vector<std::string>* out) {
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

Parser::Reader Parser::StringInto(std::string* out) {
  return [this, out](const Field& f) { return ReadString(f, out); };
}

Parser::Reader Parser::NameInto(std::string* out) {
  return [this, out](const Field& f) { return ReadName(f, out); };
}

template <typename T>
Parser::Reader Parser::IntInto(int64_t min, T* out) {
  return [this, min, out](const Field& f) { return ReadInt(f, min, out); };
}

Parser::Reader Parser::DurationInto(bool positive, Duration* out) {
  return [this, positive, out](const Field& f) {
    return ReadDuration(f, positive, out);
  };
}

// ---------------------------------------------------------------------------
// Sections.

Status Parser::Parse(const YAML::Node& root, Config* config) {
  const Field f = {root, "", root.Mark()};
  if (root.IsNull()) return Status::Ok();  // An empty file: all defaults.
  // A section left empty (every key commented out) keeps its defaults.
  const auto section = [](auto read) {
    return [read](const Field& v) {
      return v.node.IsNull() ? Status::Ok() : read(v);
    };
  };
  Config& c = *config;
  RW_RETURN_IF_ERROR(ReadMap(
      f,
      {
          {"schema",
           section([&](const Field& v) { return ReadSchema(v, &c.schema); })},
          {"join",
           section([&](const Field& v) { return ReadJoin(v, &c.join); })},
          {"events",
           section([&](const Field& v) { return ReadEvents(v, &c.events); })},
          {"metrics",
           section([&](const Field& v) { return ReadMetrics(v, &c.metrics); })},
          {"aggregation", section([&](const Field& v) {
             return ReadAggregation(v, &c.aggregation);
           })},
          {"dead_letter", section([&](const Field& v) {
             return ReadDeadLetter(v, &c.dead_letter);
           })},
          {"kafka",
           section([&](const Field& v) { return ReadKafka(v, &c.kafka); })},
          {"http",
           section([&](const Field& v) { return ReadHttp(v, &c.http); })},
          {"experiments", section([&](const Field& v) {
             return ReadExperiments(v, &c.experiments);
           })},
          {"statistics", section([&](const Field& v) {
             return ReadStatistics(v, &c.statistics);
           })},
          {"logging",
           section([&](const Field& v) { return ReadLogging(v, &c.logging); })},
      }));
  return CheckExperimentVariants(c);
}

Status Parser::ReadSchema(const Field& f, SchemaConfig* c) {
  return ReadMap(f, {
                        {"request_id", NameInto(&c->request_id)},
                        {"query_id", NameInto(&c->query_id)},
                        {"variant", NameInto(&c->variant)},
                        {"timestamp", NameInto(&c->timestamp)},
                        {"results", NameInto(&c->results)},
                        {"doc_id", NameInto(&c->doc_id)},
                        {"score", NameInto(&c->score)},
                        {"segments", NameInto(&c->segments)},
                        {"relevance", NameInto(&c->relevance)},
                        {"judgments", NameInto(&c->judgments)},
                        {"default_variant", NameInto(&c->default_variant)},
                        {"default_relevance",
                         [&](const Field& v) {
                           // null is a value here: "no default, the field is
                           // required".
                           if (v.node.IsNull()) {
                             c->default_relevance.reset();
                             return Status::Ok();
                           }
                           int32_t grade = 0;
                           RW_RETURN_IF_ERROR(ReadInt(
                               v, std::numeric_limits<int32_t>::min(), &grade));
                           c->default_relevance = grade;
                           return Status::Ok();
                         }},
                    });
}

Status Parser::ReadJoin(const Field& f, JoinConfig* c) {
  std::optional<Field> qrels_file;
  RW_RETURN_IF_ERROR(ReadMap(
      f, {
             {"mode",
              [&](const Field& v) {
                return ReadChoice(v, "join mode", kJoinModes, JoinModeName,
                                  &c->mode);
              }},
             {"window", DurationInto(true, &c->window)},
             {"early_tolerance", DurationInto(false, &c->early_tolerance)},
             {"allowed_lateness", DurationInto(false, &c->allowed_lateness)},
             {"idle_timeout", DurationInto(true, &c->idle_timeout)},
             {"combine",
              [&](const Field& v) {
                return ReadChoice(v, "combine rule", kCombineRules,
                                  CombineRuleName, &c->combine);
              }},
             {"qrels_delay", DurationInto(false, &c->qrels_delay)},
             {"qrels_file",
              [&](const Field& v) {
                qrels_file = v;
                return ReadString(v, &c->qrels_file);
              }},
             {"max_pending_requests", IntInto(1, &c->max_pending_requests)},
             {"max_judgments_per_request",
              IntInto(1, &c->max_judgments_per_request)},
             {"max_table_entries", IntInto(1, &c->max_table_entries)},
         }));
  // Only the qrels join has a table to preload; ignoring the file silently
  // would lose its judgments.
  if (qrels_file && !c->qrels_file.empty() && c->mode != JoinMode::kQrels) {
    return Error(*qrels_file, "is only read when join.mode is qrels (it is " +
                                  std::string(JoinModeName(c->mode)) + ")");
  }
  return Status::Ok();
}

Status Parser::ReadEvents(const Field& f, EventLimitsConfig* c) {
  return ReadMap(
      f, {
             {"max_results", IntInto(1, &c->max_results)},
             {"max_id_length", IntInto(1, &c->max_id_length)},
             {"max_judgments", IntInto(1, &c->max_judgments)},
             {"max_event_bytes", IntInto(1, &c->max_event_bytes)},
             {"max_future_skew", DurationInto(false, &c->max_future_skew)},
             {"min_timestamp",
              [&](const Field& v) {
                return ReadTimestamp(v, &c->min_timestamp_ms);
              }},
         });
}

Status Parser::ReadMetrics(const Field& f, MetricsConfig* c) {
  metrics::Definitions& d = c->definitions;
  std::optional<Field> cutoffs;
  RW_RETURN_IF_ERROR(ReadMap(
      f,
      {
          {"cutoffs",
           [&](const Field& v) {
             cutoffs = v;
             return ReadCutoffs(v, &c->cutoffs);
           }},
          {"measures",
           [&](const Field& v) { return ReadMeasures(v, &c->measures); }},
          {"relevance_threshold", IntInto(0, &d.relevance_threshold)},
          {"gain",
           [&](const Field& v) {
             return ReadChoice(v, "gain", kGains, metrics::GainName, &d.gain);
           }},
          {"recall_denominator",
           [&](const Field& v) {
             return ReadChoice(v, "recall denominator", kRecallDenominators,
                               metrics::RecallDenominatorName,
                               &d.recall_denominator);
           }},
          {"ap_denominator",
           [&](const Field& v) {
             return ReadChoice(v, "AP denominator", kApDenominators,
                               metrics::ApDenominatorName, &d.ap_denominator);
           }},
          {"zero_relevant",
           [&](const Field& v) {
             return ReadChoice(v, "zero-relevant policy", kZeroRelevantPolicies,
                               metrics::ZeroRelevantPolicyName,
                               &d.zero_relevant);
           }},
      }));
  if (cutoffs && c->cutoffs.empty()) {
    for (metrics::Measure m : c->measures) {
      if (metrics::HasCutoffVariant(m)) {
        return Error(*cutoffs, "must not be empty: " +
                                   std::string(metrics::MeasureName(m)) +
                                   " is computed at cutoffs");
      }
    }
  }
  return Status::Ok();
}

Status Parser::ReadCutoffs(const Field& f, std::vector<int32_t>* out) {
  out->clear();
  RW_RETURN_IF_ERROR(ForEachItem(f, [&](const Field& item) {
    int32_t k = 0;
    RW_RETURN_IF_ERROR(ReadInt(item, 1, &k));
    if (std::find(out->begin(), out->end(), k) != out->end()) {
      return Error(item, "duplicate cutoff " + std::to_string(k));
    }
    out->push_back(k);
    return Status::Ok();
  }));
  // The order carries no meaning; sorted is what the engine works with.
  std::sort(out->begin(), out->end());
  return Status::Ok();
}

Status Parser::ReadMeasures(const Field& f,
                            std::vector<metrics::Measure>* out) {
  out->clear();
  RW_RETURN_IF_ERROR(ForEachItem(f, [&](const Field& item) {
    metrics::Measure m = metrics::Measure::kPrecision;
    RW_RETURN_IF_ERROR(ReadChoice(item, "measure", metrics::kAllMeasures,
                                  metrics::MeasureName, &m));
    if (std::find(out->begin(), out->end(), m) != out->end()) {
      return Error(item, "duplicate measure '" +
                             std::string(metrics::MeasureName(m)) + "'");
    }
    out->push_back(m);
    return Status::Ok();
  }));
  if (out->empty()) return Error(f, "must not be empty");
  return Status::Ok();
}

Status Parser::ReadAggregation(const Field& f, AggregationConfig* c) {
  std::vector<Field> windows;
  std::vector<Field> segment_value_labels;
  RW_RETURN_IF_ERROR(ReadMap(
      f,
      {
          {"windows",
           [&](const Field& v) {
             return ReadWindows(v, &c->windows, &windows);
           }},
          {"bucket", DurationInto(true, &c->bucket)},
          {"segments",
           [&](const Field& v) { return ReadSegmentLabels(v, &c->segments); }},
          {"variants",
           [&](const Field& v) {
             return ReadNameList(v, "variant", &c->variants);
           }},
          {"max_variants", IntInto(1, &c->max_variants)},
          {"segment_values",
           [&](const Field& v) {
             c->segment_values.clear();
             return ForEachPair(v, [&](const Field& key, const Field& value) {
               segment_value_labels.push_back(key);
               return ReadNameList(value, "value",
                                   &c->segment_values[key.node.Scalar()]);
             });
           }},
          {"max_segment_values", IntInto(1, &c->max_segment_values)},
      }));
  // Checked once the whole section is read: keys may come in any order.
  for (size_t i = 0; i < windows.size(); ++i) {
    if (c->windows[i].count() % c->bucket.count() != 0) {
      return Error(windows[i],
                   FormatDuration(c->windows[i]) +
                       " is not a multiple of aggregation.bucket (" +
                       FormatDuration(c->bucket) + ")");
    }
  }
  for (const Field& label : segment_value_labels) {
    const std::string& name = label.node.Scalar();
    if (std::find(c->segments.begin(), c->segments.end(), name) ==
        c->segments.end()) {
      return Error(label, "label '" + Printable(name) +
                              "' is not listed in aggregation.segments");
    }
  }
  return Status::Ok();
}

Status Parser::ReadWindows(const Field& f, std::vector<Duration>* out,
                           std::vector<Field>* fields) {
  out->clear();
  fields->clear();
  return ForEachItem(f, [&](const Field& item) {
    Duration window{};
    RW_RETURN_IF_ERROR(ReadDuration(item, true, &window));
    if (std::find(out->begin(), out->end(), window) != out->end()) {
      return Error(item, "duplicate window " + FormatDuration(window));
    }
    out->push_back(window);
    fields->push_back(item);
    return Status::Ok();
  });
}

Status Parser::ReadSegmentLabels(const Field& f,
                                 std::vector<std::string>* out) {
  out->clear();
  return ForEachItem(f, [&](const Field& item) {
    std::string label;
    RW_RETURN_IF_ERROR(ReadName(item, &label));
    if (!IsLabelName(label)) {
      return Error(item, "'" + Printable(label) +
                             "' is not a valid Prometheus label name "
                             "([a-zA-Z_][a-zA-Z0-9_]*)");
    }
    if (label.starts_with("__")) {
      return Error(item,
                   "label names starting with '__' are reserved by "
                   "Prometheus");
    }
    if (std::find(kReservedLabels.begin(), kReservedLabels.end(), label) !=
        kReservedLabels.end()) {
      return Error(
          item,
          "'" + label + "' is a label rankwatch sets itself (reserved: " +
              JoinNames(kReservedLabels,
                        [](std::string_view n) { return std::string(n); }) +
              ")");
    }
    if (std::find(out->begin(), out->end(), label) != out->end()) {
      return Error(item, "duplicate segment '" + label + "'");
    }
    out->push_back(std::move(label));
    return Status::Ok();
  });
}

Status Parser::ReadDeadLetter(const Field& f, DeadLetterConfig* c) {
  return ReadMap(f, {
                        {"file", StringInto(&c->file)},
                        {"topic", StringInto(&c->topic)},
                    });
}

Status Parser::ReadKafka(const Field& f, KafkaConfig* c) {
  return ReadMap(
      f,
      {
          {"bootstrap_servers", NameInto(&c->bootstrap_servers)},
          {"group_id", NameInto(&c->group_id)},
          {"results_topic", NameInto(&c->results_topic)},
          {"judgments_topic", NameInto(&c->judgments_topic)},
          {"commit_interval", DurationInto(true, &c->commit_interval)},
          {"properties",
           [&](const Field& v) { return ReadProperties(v, &c->properties); }},
      });
}

Status Parser::ReadProperties(const Field& f,
                              std::map<std::string, std::string>* out) {
  out->clear();
  return ForEachPair(f, [&](const Field& key, const Field& value) {
    const std::string& name = key.node.Scalar();
    if (name.empty()) return Error(key, "empty property name");
    for (const auto& [managed, instead] : kManagedProperties) {
      if (name == managed) {
        return Error(key, "set " + std::string(instead) + " instead");
      }
    }
    // Booleans and numbers are kept as written: librdkafka takes text.
    StatusOr<std::string> text = Text(value, "a scalar value");
    if (!text.ok()) return text.status();
    (*out)[name] = std::move(*text);
    return Status::Ok();
  });
}

Status Parser::ReadHttp(const Field& f, HttpConfig* c) {
  return ReadMap(
      f,
      {
          {"listen", [&](const Field& v) { return ReadListen(v, &c->listen); }},
      });
}

Status Parser::ReadListen(const Field& f, std::string* out) {
  StatusOr<std::string> text = Text(f, "host:port");
  if (!text.ok()) return text.status();
  const std::string& s = *text;
  const std::string expected =
      "expected host:port like 127.0.0.1:9464, "
      "0.0.0.0:9464 or [::1]:9464, got '" +
      Printable(s) + "'";
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return Error(f, expected);
  const std::string_view host = std::string_view(s).substr(0, colon);
  const std::string_view port = std::string_view(s).substr(colon + 1);
  int value = -1;
  const auto [stop, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || port.size() > 5 || ec != std::errc() ||
      stop != port.data() + port.size() || value < 0 || value > 65535) {
    return Error(
        f, "port '" + Printable(port) + "' is not a number from 0 to 65535");
  }
  if (host.front() == '[') {
    const bool v6 = host.size() > 2 && host.back() == ']' &&
                    std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
                      return std::isxdigit(static_cast<unsigned char>(c)) ||
                             c == ':' || c == '.';
                    });
    if (!v6) return Error(f, expected);
  } else if (host.find(':') != std::string_view::npos) {
    return Error(f, "an IPv6 host must be in brackets, like [::1]:9464");
  } else if (!std::all_of(host.begin(), host.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                      c == '-' || c == '_';
             })) {
    return Error(f, expected);
  }
  *out = s;
  return Status::Ok();
}

Status Parser::ReadExperiments(const Field& f,
                               std::vector<ExperimentConfig>* out) {
  out->clear();
  std::map<std::string, YAML::Mark> names;
  return ForEachItem(f, [&](const Field& item) {
    ExperimentConfig e;
    RW_RETURN_IF_ERROR(ReadExperiment(item, &e));
    const auto [it, inserted] = names.emplace(e.name, item.mark);
    if (!inserted) {
      return ErrorAt(item.node["name"].Mark(), item.path + ".name",
                     "duplicate experiment name '" + Printable(e.name) +
                         "' (first on line " +
                         std::to_string(it->second.line + 1) + ")");
    }
    out->push_back(std::move(e));
    return Status::Ok();
  });
}

Status Parser::ReadExperiment(const Field& f, ExperimentConfig* out) {
  std::optional<Field> baseline;
  std::vector<Field> treatments;
  bool has_name = false;
  RW_RETURN_IF_ERROR(
      ReadMap(f, {
                     {"name",
                      [&](const Field& v) {
                        has_name = true;
                        return ReadName(v, &out->name);
                      }},
                     {"baseline",
                      [&](const Field& v) {
                        baseline = v;
                        return ReadName(v, &out->baseline);
                      }},
                     {"treatments",
                      [&](const Field& v) {
                        RW_RETURN_IF_ERROR(
                            ReadNameList(v, "treatment", &out->treatments));
                        for (size_t i = 0; i < v.node.size(); ++i) {
                          treatments.push_back(ListItem(v, v.node[i], i));
                        }
                        if (out->treatments.empty()) {
                          return Error(v, "must not be empty");
                        }
                        return Status::Ok();
                      }},
                 }));
  if (!has_name) return Error(f, "missing key 'name'");
  if (!baseline) return Error(f, "missing key 'baseline'");
  if (treatments.empty()) return Error(f, "missing key 'treatments'");
  for (size_t i = 0; i < treatments.size(); ++i) {
    if (out->treatments[i] == out->baseline) {
      return Error(treatments[i], "treatment '" + Printable(out->baseline) +
                                      "' is the baseline");
    }
  }
  experiment_variants_.emplace_back(*baseline, out->baseline);
  for (size_t i = 0; i < treatments.size(); ++i) {
    experiment_variants_.emplace_back(treatments[i], out->treatments[i]);
  }
  return Status::Ok();
}

// With a variant allow-list, any other variant folds into "other" and could
// never be compared.
Status Parser::CheckExperimentVariants(const Config& config) const {
  const std::vector<std::string>& allowed = config.aggregation.variants;
  if (allowed.empty()) return Status::Ok();
  for (const auto& [field, variant] : experiment_variants_) {
    if (std::find(allowed.begin(), allowed.end(), variant) == allowed.end()) {
      return Error(field, "variant '" + Printable(variant) +
                              "' is not listed in aggregation.variants");
    }
  }
  return Status::Ok();
}

Status Parser::ReadStatistics(const Field& f, StatisticsConfig* c) {
  return ReadMap(
      f, {
             {"level",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(ReadNumber(v, &c->level));
                if (c->level <= 0 || c->level >= 1) {
                  return Error(v, "must be between 0 and 1 (exclusive), got " +
                                      FormatNumber(c->level));
                }
                return Status::Ok();
              }},
             {"mixture_sd",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(ReadNumber(v, &c->mixture_sd));
                if (c->mixture_sd <= 0) {
                  return Error(
                      v, "must be > 0, got " + FormatNumber(c->mixture_sd));
                }
                return Status::Ok();
              }},
         });
}

Status Parser::ReadLogging(const Field& f, LoggingConfig* c) {
  return ReadMap(f, {
                        {"level",
                         [&](const Field& v) {
                           std::string_view level;
                           RW_RETURN_IF_ERROR(ReadChoice(
                               v, "log level", kLogLevels,
                               [](std::string_view n) { return n; }, &level));
                           c->level = std::string(level);
                           return Status::Ok();
                         }},
                        {"max_rejects_logged_per_second",
                         IntInto(0, &c->max_rejects_logged_per_second)},
                    });
}

// ---------------------------------------------------------------------------
// Counting documents.

// Records the first event of each document's root node. Used instead of
// YAML::LoadAll, which in yaml-cpp 0.7 never returns on a stray ',' at the
// top level (the parser yields an empty document without consuming it,
// forever), while YAML::Load silently drops whatever follows the first
// document.
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

// Fails unless `text` holds at most one YAML document. Throws what yaml-cpp
// throws on a syntax error.
Status CheckSingleDocument(const std::string& text, const Parser& parser) {
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
      return parser.ErrorAt(root.mark, "", "YAML syntax error: unexpected ','");
    }
  }
  if (documents.roots().size() > 1) {
    return parser.ErrorAt(documents.roots()[1].mark, "",
                          "expected one YAML document, found a second one");
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Writing the effective configuration.

// A YAML double-quoted scalar. With `escape_dollar`, '$' is doubled so that
// environment substitution on reload gives `text` back (keys are not
// substituted, values are).
std::string Quote(std::string_view text, bool escape_dollar) {
  std::string out = "\"";
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '$' && escape_dollar) {
      out += "$$";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

std::string QuoteValue(std::string_view text) { return Quote(text, true); }

template <typename Range, typename Format>
std::string FlowList(const Range& items, Format format) {
  return "[" + JoinNames(items, format) + "]";
}

std::string QuotedList(const std::vector<std::string>& items) {
  return FlowList(items, [](const std::string& s) { return QuoteValue(s); });
}

// Appends "<indent>key: value\n".
void Line(std::string* out, int indent, std::string_view key,
          std::string_view value) {
  out->append(static_cast<size_t>(indent), ' ');
  out->append(key);
  out->append(":");
  if (!value.empty()) {
    out->append(" ");
    out->append(value);
  }
  out->append("\n");
}

void WriteSchema(const SchemaConfig& c, std::string* out) {
  Line(out, 0, "schema", "");
  Line(out, 2, "request_id", QuoteValue(c.request_id));
  Line(out, 2, "query_id", QuoteValue(c.query_id));
  Line(out, 2, "variant", QuoteValue(c.variant));
  Line(out, 2, "timestamp", QuoteValue(c.timestamp));
  Line(out, 2, "results", QuoteValue(c.results));
  Line(out, 2, "doc_id", QuoteValue(c.doc_id));
  Line(out, 2, "score", QuoteValue(c.score));
  Line(out, 2, "segments", QuoteValue(c.segments));
  Line(out, 2, "relevance", QuoteValue(c.relevance));
  Line(out, 2, "judgments", QuoteValue(c.judgments));
  Line(out, 2, "default_variant", QuoteValue(c.default_variant));
  Line(out, 2, "default_relevance",
       c.default_relevance ? std::to_string(*c.default_relevance) : "null");
}

void WriteJoin(const JoinConfig& c, std::string* out) {
  Line(out, 0, "join", "");
  Line(out, 2, "mode", JoinModeName(c.mode));
  Line(out, 2, "window", FormatDuration(c.window));
  Line(out, 2, "early_tolerance", FormatDuration(c.early_tolerance));
  Line(out, 2, "allowed_lateness", FormatDuration(c.allowed_lateness));
  Line(out, 2, "idle_timeout", FormatDuration(c.idle_timeout));
  Line(out, 2, "combine", CombineRuleName(c.combine));
  Line(out, 2, "qrels_delay", FormatDuration(c.qrels_delay));
  Line(out, 2, "qrels_file", QuoteValue(c.qrels_file));
  Line(out, 2, "max_pending_requests", std::to_string(c.max_pending_requests));
  Line(out, 2, "max_judgments_per_request",
       std::to_string(c.max_judgments_per_request));
  Line(out, 2, "max_table_entries", std::to_string(c.max_table_entries));
}

void WriteEvents(const EventLimitsConfig& c, std::string* out) {
  Line(out, 0, "events", "");
  Line(out, 2, "max_results", std::to_string(c.max_results));
  Line(out, 2, "max_id_length", std::to_string(c.max_id_length));
  Line(out, 2, "max_judgments", std::to_string(c.max_judgments));
  Line(out, 2, "max_event_bytes", std::to_string(c.max_event_bytes));
  Line(out, 2, "max_future_skew", FormatDuration(c.max_future_skew));
  Line(out, 2, "min_timestamp",
       QuoteValue(FormatRfc3339Millis(c.min_timestamp_ms)));
}

void WriteMetrics(const MetricsConfig& c, std::string* out) {
  const metrics::Definitions& d = c.definitions;
  Line(out, 0, "metrics", "");
  Line(out, 2, "cutoffs",
       FlowList(c.cutoffs, [](int32_t k) { return std::to_string(k); }));
  Line(out, 2, "measures", FlowList(c.measures, [](metrics::Measure m) {
         return std::string(metrics::MeasureName(m));
       }));
  Line(out, 2, "relevance_threshold", std::to_string(d.relevance_threshold));
  Line(out, 2, "gain", metrics::GainName(d.gain));
  Line(out, 2, "recall_denominator",
       metrics::RecallDenominatorName(d.recall_denominator));
  Line(out, 2, "ap_denominator", metrics::ApDenominatorName(d.ap_denominator));
  Line(out, 2, "zero_relevant",
       metrics::ZeroRelevantPolicyName(d.zero_relevant));
}

void WriteAggregation(const AggregationConfig& c, std::string* out) {
  Line(out, 0, "aggregation", "");
  Line(out, 2, "windows", FlowList(c.windows, FormatDuration));
  Line(out, 2, "bucket", FormatDuration(c.bucket));
  Line(out, 2, "segments", QuotedList(c.segments));
  Line(out, 2, "variants", QuotedList(c.variants));
  Line(out, 2, "max_variants", std::to_string(c.max_variants));
  Line(out, 2, "segment_values", c.segment_values.empty() ? "{}" : "");
  for (const auto& [label, values] : c.segment_values) {
    Line(out, 4, Quote(label, false), QuotedList(values));
  }
  Line(out, 2, "max_segment_values", std::to_string(c.max_segment_values));
}

void WriteKafka(const KafkaConfig& c, std::string* out) {
  Line(out, 0, "kafka", "");
  Line(out, 2, "bootstrap_servers", QuoteValue(c.bootstrap_servers));
  Line(out, 2, "group_id", QuoteValue(c.group_id));
  Line(out, 2, "results_topic", QuoteValue(c.results_topic));
  Line(out, 2, "judgments_topic", QuoteValue(c.judgments_topic));
  Line(out, 2, "commit_interval", FormatDuration(c.commit_interval));
  Line(out, 2, "properties", c.properties.empty() ? "{}" : "");
  for (const auto& [name, value] : c.properties) {
    Line(out, 4, Quote(name, false),
         QuoteValue(IsSecretProperty(name) ? kMaskedSecret : value));
  }
}

void WriteExperiments(const std::vector<ExperimentConfig>& experiments,
                      std::string* out) {
  Line(out, 0, "experiments", experiments.empty() ? "[]" : "");
  for (const ExperimentConfig& e : experiments) {
    Line(out, 2, "- name", QuoteValue(e.name));
    Line(out, 4, "baseline", QuoteValue(e.baseline));
    Line(out, 4, "treatments", QuotedList(e.treatments));
  }
}

}  // namespace

std::optional<std::string> SystemEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

StatusOr<Config> ParseConfig(std::string_view yaml,
                             const std::string& file_name, EnvLookup env) {
  Parser parser(file_name, env);
  const std::string text(yaml);
  // yaml-cpp reports errors by throwing; nothing thrown leaves this
  // function.
  try {
    RW_RETURN_IF_ERROR(CheckSingleDocument(text, parser));
    Config config;
    RW_RETURN_IF_ERROR(parser.Parse(YAML::Load(text), &config));
    return config;
  } catch (const YAML::Exception& e) {
    return parser.ErrorAt(e.mark, "", "YAML syntax error: " + e.msg);
  } catch (const std::exception& e) {
    return Status::Internal(file_name + ": " + e.what());
  }
}

StatusOr<Config> LoadConfigFile(const std::string& path, EnvLookup env) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(
      std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    return Status::IoError("cannot open " + path + ": " + std::strerror(errno));
  }
  std::string text;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), file.get())) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxConfigBytes) {
      return Status::InvalidArgument(path +
                                     ": larger than 16 MiB; not a "
                                     "configuration file?");
    }
  }
  if (std::ferror(file.get())) {
    return Status::IoError("cannot read " + path + ": " + std::strerror(errno));
  }
  return ParseConfig(text, path, std::move(env));
}

std::string FormatEffectiveConfig(const Config& c) {
  std::string out =
      "# rankwatch effective configuration; secrets are shown as \"****\".\n";
  WriteSchema(c.schema, &out);
  WriteJoin(c.join, &out);
  WriteEvents(c.events, &out);
  WriteMetrics(c.metrics, &out);
  WriteAggregation(c.aggregation, &out);
  Line(&out, 0, "dead_letter", "");
  Line(&out, 2, "file", QuoteValue(c.dead_letter.file));
  Line(&out, 2, "topic", QuoteValue(c.dead_letter.topic));
  WriteKafka(c.kafka, &out);
  Line(&out, 0, "http", "");
  Line(&out, 2, "listen", QuoteValue(c.http.listen));
  WriteExperiments(c.experiments, &out);
  Line(&out, 0, "statistics", "");
  Line(&out, 2, "level", FormatNumber(c.statistics.level));
  Line(&out, 2, "mixture_sd", FormatNumber(c.statistics.mixture_sd));
  Line(&out, 0, "logging", "");
  Line(&out, 2, "level", c.logging.level);
  Line(&out, 2, "max_rejects_logged_per_second",
       std::to_string(c.logging.max_rejects_logged_per_second));
  return out;
}

bool IsSecretProperty(std::string_view name) {
  const std::string lower = ToLower(name);
  for (std::string_view word : {"password", "secret", "token", "key"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return lower == "sasl.jaas.config";
}

std::optional<Duration> ParseDuration(std::string_view text) {
  int64_t ms = 0;
  if (ParseDurationMs(text, &ms) != DurationError::kNone) return std::nullopt;
  return Duration(ms);
}

std::string FormatDuration(Duration d) {
  if (d.count() == 0) return "0s";
  std::string out = d.count() < 0 ? "-" : "";
  // Unsigned, so that the magnitude of the most negative value fits.
  uint64_t rest = d.count() < 0 ? 0 - static_cast<uint64_t>(d.count())
                                : static_cast<uint64_t>(d.count());
  for (const DurationUnit& unit : kDurationUnits) {
    const uint64_t size = static_cast<uint64_t>(unit.ms);
    if (rest >= size) {
      out += std::to_string(rest / size);
      out += unit.suffix;
      rest %= size;
    }
  }
  return out;
}

}  // namespace rankwatch::config
