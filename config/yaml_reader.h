// Typed reading of a yaml-cpp tree, with errors that say where: every
// failure is an InvalidArgument whose message names the file, the 1-based
// line and column of the offending node, and its key path:
//
//   config.yaml:12:5: join.window: expected a duration like 30s, 5m, 1h
//
// Generic over what is read: the configuration's sections (config_loader.cc)
// are tables of keys and readers built from the pieces here. Every scalar
// goes through Text(), which expands ${ENV} (env_expansion.h) first.
//
// Internal to rankwatch::config: yaml-cpp is its private dependency, so
// nothing outside config/ includes this header.
#ifndef RANKWATCH_CONFIG_YAML_READER_H_
#define RANKWATCH_CONFIG_YAML_READER_H_

#include <yaml-cpp/yaml.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "base/status.h"
#include "config/env_expansion.h"
#include "config/text.h"

namespace rankwatch::config {

// A node being read, with what is needed to report on it. A plain value.
struct Field {
  YAML::Node node;
  std::string path;  // "join.window", "metrics.measures[2]"; "" = the root.
  YAML::Mark mark;   // Where errors point.
};

// Item `index` of the list `list`: path "<list>[<index>]". An empty item
// points at its list, which yaml-cpp marks more usefully.
Field ListItem(const Field& list, const YAML::Node& item, size_t index);

// What a node is, for "expected X, got Y": "a map", "a list", "'text'",
// "null" or "nothing".
std::string Describe(const YAML::Node& node);

// Reads values out of one document, formatting errors against one file
// name. Holds references to its constructor arguments, which must outlive
// it. Stateless otherwise: its methods are const and may run concurrently
// when `env` may.
class YamlReader {
 public:
  // Reads one value; the unit of the key tables of ReadMap().
  using Reader = std::function<Status(const Field&)>;
  struct Key {
    std::string_view name;
    Reader read;
  };
  using PairVisitor =
      std::function<Status(const Field& key, const Field& value)>;
  using ItemVisitor = std::function<Status(const Field& item)>;

  YamlReader(const std::string& file_name, const EnvLookup& env)
      : file_name_(file_name), env_(env) {}

  YamlReader(const YamlReader&) = delete;
  YamlReader& operator=(const YamlReader&) = delete;

  // "<file>:<line>:<col>: <path>: <what>" as an InvalidArgument; the
  // position is left out for a null mark, the path when empty.
  Status ErrorAt(const YAML::Mark& mark, std::string_view path,
                 std::string_view what) const;
  Status Error(const Field& f, std::string_view what) const {
    return ErrorAt(f.mark, f.path, what);
  }

  // Fails at the first byte of `text` that does not start a valid UTF-8
  // sequence. YAML text is Unicode, and yaml-cpp passes such bytes through
  // unchecked: printed again (check-config, the effective configuration)
  // they would not read back as the same strings.
  Status CheckUtf8(std::string_view text) const;

  // Fails unless `text` holds at most one YAML document. Needed because
  // YAML::Load silently drops whatever follows the first document, and
  // YAML::LoadAll in yaml-cpp 0.7 never returns on a stray ',' at the top
  // level. Throws what yaml-cpp throws on a syntax error.
  Status CheckSingleDocument(const std::string& text) const;

  // Structure. ReadMap() dispatches each key of the map `f` to its reader
  // in `keys`; an unknown key is an error that suggests the closest known
  // one. Duplicate keys are errors (yaml-cpp would keep both).
  Status ReadMap(const Field& f, std::initializer_list<Key> keys) const;
  Status ForEachPair(const Field& f, const PairVisitor& visit) const;
  Status ForEachItem(const Field& f, const ItemVisitor& visit) const;

  // The scalar `f` with the environment substituted; `expected` words the
  // error when `f` is not a scalar.
  StatusOr<std::string> Text(const Field& f, std::string_view expected) const;

  // Typed scalars.
  Status ReadString(const Field& f, std::string* out) const;
  Status ReadName(const Field& f, std::string* out) const;  // Non-empty.
  Status ReadInt(const Field& f, int64_t min, int64_t max, int64_t* out) const;
  // An integer in [min, the largest T].
  template <typename T>
  Status ReadInt(const Field& f, int64_t min, T* out) const;
  Status ReadNumber(const Field& f, double* out) const;  // Finite.
  // true or false (YAML 1.2's core schema: no yes/no/on/off, whose
  // meaning differs between YAML versions).
  Status ReadBool(const Field& f, bool* out) const;
  // A duration (duration.h); `positive` refuses zero.
  Status ReadDuration(const Field& f, bool positive, Duration* out) const;
  // Epoch milliseconds or an RFC 3339 date-time, in 1970..9999.
  Status ReadTimestamp(const Field& f, int64_t* out_ms) const;
  // One of `choices`, by `name(choice)`; `kind` names them in errors.
  template <typename E, size_t N, typename NameFn>
  Status ReadChoice(const Field& f, std::string_view kind,
                    const std::array<E, N>& choices, NameFn name, E* out) const;
  // A list of distinct non-empty strings; `kind` names one in errors.
  Status ReadNameList(const Field& f, std::string_view kind,
                      std::vector<std::string>* out) const;

  // Readers for ReadMap() tables.
  Reader StringInto(std::string* out) const;
  Reader NameInto(std::string* out) const;
  template <typename T>
  Reader IntInto(int64_t min, T* out) const;
  Reader DurationInto(bool positive, Duration* out) const;
  Reader BoolInto(bool* out) const;

 private:
  const std::string& file_name_;
  const EnvLookup& env_;
};

template <typename T>
Status YamlReader::ReadInt(const Field& f, int64_t min, T* out) const {
  int64_t value = 0;
  RW_RETURN_IF_ERROR(ReadInt(f, min, std::numeric_limits<T>::max(), &value));
  *out = static_cast<T>(value);
  return Status::Ok();
}

template <typename E, size_t N, typename NameFn>
Status YamlReader::ReadChoice(const Field& f, std::string_view kind,
                              const std::array<E, N>& choices, NameFn name,
                              E* out) const {
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

template <typename T>
YamlReader::Reader YamlReader::IntInto(int64_t min, T* out) const {
  return [this, min, out](const Field& f) { return ReadInt(f, min, out); };
}

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_YAML_READER_H_
