#include "config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "config/text.h"
#include "config/yaml_reader.h"
#include "metrics/measure_names.h"

namespace rankwatch::config {

namespace {

// Unit buckets: two are the fewest that give a variance; more than 4096
// cost memory and exported series (per variant and primary series) for a
// variance estimate that is already good to a few percent at 64.
constexpr int32_t kMinUnitBuckets = 2;
constexpr int32_t kMaxUnitBuckets = 4096;

// Anything larger is not a configuration file (and reading /dev/zero must
// end).
constexpr size_t kMaxConfigBytes = size_t{16} << 20;

// Labels that rankwatch puts on its own series; a segment label may not
// reuse them, or its series would collide.
constexpr std::array<std::string_view, 11> kReservedLabels = {
    "variant",   "k",          "window",   "le",      "topic", "reason",
    "partition", "experiment", "baseline", "measure", "label"};

// Why `measure` (written `text`) cannot be an experiment's primary series:
// some lists have no value for it, and a verdict must count every list.
std::string UndefinedPrimaryError(std::string_view text,
                                  metrics::Measure measure) {
  const std::string head = "'" + Printable(text) + "' has no value for ";
  if (metrics::IsRankCorrelationMeasure(measure)) {
    return head +
           "lists with fewer than two judged docs or a single grade: it "
           "cannot be primary";
  }
  return head +
         "lists without a click: it cannot be primary (use "
         "recip_rank_first_click)";
}

constexpr std::array<LogFormat, 2> kLogFormats = {LogFormat::kText,
                                                  LogFormat::kJson};
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

// The parts of one experiment entry read as written and resolved once the
// whole file is read.
struct ExperimentFields {
  std::optional<Field> split;                          // Map variant -> weight.
  std::vector<std::pair<Field, std::string>> primary;  // "ndcg@10"...
};

// Reads one document into a Config, section by section, with the typed
// readers of YamlReader. Stops at the first error. Holds references to its
// arguments; use once. Not thread-safe.
class Parser {
 public:
  Parser(const std::string& file_name, const EnvLookup& env)
      : yaml_(file_name, env) {}

  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  Status Parse(const YAML::Node& root, Config* config);

  // The reader, for errors outside the tree (syntax, document count).
  const YamlReader& yaml() const { return yaml_; }

 private:
  // Sections.
  Status ReadSchema(const Field& f, SchemaConfig* c);
  Status ReadFieldPath(const Field& f, std::string* out) const;
  Status CheckSchemaPaths(const Field& f, const SchemaConfig& c) const;
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
  // `seen` is set to the section's field, for errors about the whole.
  Status ReadTls(const Field& f, TlsConfig* c, std::optional<Field>* seen);
  Status ReadBasicAuth(const Field& f, BasicAuthConfig* c,
                       std::optional<Field>* seen);
  Status ReadListen(const Field& f, std::string* out);
  // Records `value` (list entry `item`'s `key`) in `seen`; when it is there
  // already, an error at the key, worded by `message` from the 1-based
  // line of the first occurrence.
  Status CheckUnique(const Field& item, const std::string& key,
                     const std::string& value,
                     std::map<std::string, YAML::Mark>* seen,
                     const std::function<std::string(int)>& message) const;
  Status ReadExperiments(const Field& f, std::vector<ExperimentConfig>* out);
  Status ReadExperiment(const Field& f, ExperimentConfig* out);
  Status ReadInterleavings(const Field& f,
                           std::vector<InterleavingConfig>* out);
  Status ReadInterleaving(const Field& f, InterleavingConfig* out);
  Status ReadStatistics(const Field& f, StatisticsConfig* c);
  Status ReadLogging(const Field& f, LoggingConfig* c);
  Status CheckExperimentVariants(const Config& config) const;
  Status ResolveExperiments(Config* config) const;
  Status CheckAssignmentStrategy(const Config& config) const;
  Status CheckInterleavingMode(const Config& config) const;
  Status ResolveSplit(const ExperimentFields& fields,
                      ExperimentConfig* e) const;
  Status ResolvePrimary(const ExperimentFields& fields,
                        const MetricsConfig& metrics,
                        ExperimentConfig* e) const;

  YamlReader yaml_;
  // Every experiment's baseline and treatment fields with their values,
  // checked against aggregation.variants once the whole file is read.
  std::vector<std::pair<Field, std::string>> experiment_variants_;
  // Per experiment, the fields resolved once the whole file is read (they
  // refer to metrics: and to the experiment's own variants).
  std::vector<ExperimentFields> experiment_fields_;
  // The `interleaving:` section, checked against the join mode.
  std::optional<Field> interleaving_;
  // kafka.properties' partition.assignment.strategy, checked against the
  // join mode once the whole file is read.
  std::optional<Field> assignment_strategy_;
};

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
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
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
          {"interleaving", section([&](const Field& v) {
             return ReadInterleavings(v, &c.interleaving);
           })},
          {"statistics", section([&](const Field& v) {
             return ReadStatistics(v, &c.statistics);
           })},
          {"logging",
           section([&](const Field& v) { return ReadLogging(v, &c.logging); })},
      }));
  RW_RETURN_IF_ERROR(CheckExperimentVariants(c));
  RW_RETURN_IF_ERROR(CheckInterleavingMode(c));
  RW_RETURN_IF_ERROR(CheckAssignmentStrategy(c));
  return ResolveExperiments(&c);
}

// A schema field name: non-empty, and as a dotted path ("a.b.c") no empty
// step, which no event key could match.
Status Parser::ReadFieldPath(const Field& f, std::string* out) const {
  std::string name;
  RW_RETURN_IF_ERROR(yaml_.ReadName(f, &name));
  if (name.front() == '.' || name.back() == '.' ||
      name.find("..") != std::string::npos) {
    return yaml_.Error(f, "'" + Printable(name) +
                              "' has an empty step (a nested field is "
                              "written a.b.c)");
  }
  *out = std::move(name);
  return Status::Ok();
}

Status Parser::ReadSchema(const Field& f, SchemaConfig* c) {
  // The preset first, wherever it is written: the keys next to it override
  // its names.
  if (f.node.IsMap()) {
    const YAML::Node& map = f.node;
    if (const YAML::Node preset = map["preset"]) {
      const Field v = {preset, f.path + ".preset", preset.Mark()};
      StatusOr<std::string> name = yaml_.Text(v, "a preset name (ubi)");
      if (!name.ok()) return name.status();
      if (*name == "ubi") {
        *c = UbiSchema();
      } else if (!name->empty()) {
        return yaml_.Error(v, "unknown schema preset '" + Printable(*name) +
                                  "' (expected: ubi)");
      }
    }
  }
  const auto path = [this](std::string* out) {
    return [this, out](const Field& v) { return ReadFieldPath(v, out); };
  };
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f, {
             {"preset", [](const Field&) { return Status::Ok(); }},  // Above.
             {"request_id", path(&c->request_id)},
             {"query_id", path(&c->query_id)},
             {"variant", path(&c->variant)},
             {"timestamp", path(&c->timestamp)},
             {"results", path(&c->results)},
             {"doc_id", path(&c->doc_id)},
             {"score", yaml_.NameInto(&c->score)},
             {"segments", path(&c->segments)},
             {"relevance", path(&c->relevance)},
             {"judgments", path(&c->judgments)},
             {"default_variant", yaml_.NameInto(&c->default_variant)},
             {"unit",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(yaml_.ReadString(v, &c->unit));
                return c->unit.empty() ? Status::Ok()
                                       : ReadFieldPath(v, &c->unit);
              }},
             {"team", yaml_.NameInto(&c->team)},
             {"teams",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(yaml_.ReadString(v, &c->teams));
                return c->teams.empty() ? Status::Ok()
                                        : ReadFieldPath(v, &c->teams);
              }},
             {"kind", path(&c->kind)},
             {"default_relevance",
              [&](const Field& v) {
                // null is a value here: "no default, the field is
                // required".
                if (v.node.IsNull()) {
                  c->default_relevance.reset();
                  return Status::Ok();
                }
                int32_t grade = 0;
                RW_RETURN_IF_ERROR(yaml_.ReadInt(
                    v, std::numeric_limits<int32_t>::min(), &grade));
                c->default_relevance = grade;
                return Status::Ok();
              }},
             {"actions",
              [&](const Field& v) {
                // The map replaces the preset's: an action left out is
                // ignored, not graded as before.
                c->actions.clear();
                if (v.node.IsNull()) return Status::Ok();
                return yaml_.ForEachPair(
                    v, [&](const Field& key, const Field& value) {
                      // A key, so not substituted (as every key).
                      const std::string& action = key.node.Scalar();
                      if (action.empty()) {
                        return yaml_.Error(key, "empty action name");
                      }
                      int32_t grade = 0;
                      RW_RETURN_IF_ERROR(yaml_.ReadInt(
                          value, std::numeric_limits<int32_t>::min(), &grade));
                      c->actions[action] = grade;
                      return Status::Ok();
                    });
              }},
             {"position",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(yaml_.ReadString(v, &c->position));
                return c->position.empty() ? Status::Ok()
                                           : ReadFieldPath(v, &c->position);
              }},
             {"position_base",
              [&](const Field& v) {
                int64_t base = 0;
                RW_RETURN_IF_ERROR(yaml_.ReadInt(v, 0, 1, &base));
                c->position_base = static_cast<int32_t>(base);
                return Status::Ok();
              }},
         }));
  return CheckSchemaPaths(f, *c);
}

// A field read as a value cannot also hold another field: "variant: a" and
// "unit: a.b" would need 'a' to be both an id and an object. Only the
// segments object may hold other fields (schema.segments: query_attributes
// with schema.variant: query_attributes.experiment). The two kinds of
// events are read apart.
Status Parser::CheckSchemaPaths(const Field& f, const SchemaConfig& c) const {
  struct Named {
    std::string_view key;
    const std::string* path;
  };
  const std::vector<std::vector<Named>> kinds = {
      {{"request_id", &c.request_id},
       {"query_id", &c.query_id},
       {"variant", &c.variant},
       {"timestamp", &c.timestamp},
       {"results", &c.results},
       {"segments", &c.segments},
       {"unit", &c.unit},
       {"teams", &c.teams}},
      {{"request_id", &c.request_id},
       {"query_id", &c.query_id},
       {"timestamp", &c.timestamp},
       {"judgments", &c.judgments},
       {"doc_id", &c.doc_id},
       {"relevance", &c.relevance},
       {"kind", &c.kind},
       {"position", &c.position}},
  };
  for (const std::vector<Named>& fields : kinds) {
    for (const Named& outer : fields) {
      if (outer.path->empty() || outer.key == "segments") continue;
      for (const Named& inner : fields) {
        if (inner.path->size() > outer.path->size() &&
            inner.path->starts_with(*outer.path) &&
            (*inner.path)[outer.path->size()] == '.') {
          return yaml_.Error(
              f, "schema." + std::string(inner.key) + " '" +
                     Printable(*inner.path) + "' is inside schema." +
                     std::string(outer.key) + " '" + Printable(*outer.path) +
                     "', which is read as a value");
        }
      }
    }
  }
  return Status::Ok();
}

Status Parser::ReadJoin(const Field& f, JoinConfig* c) {
  std::optional<Field> qrels_file;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f,
      {
          {"mode",
           [&](const Field& v) {
             return yaml_.ReadChoice(v, "join mode", kJoinModes, JoinModeName,
                                     &c->mode);
           }},
          {"window", yaml_.DurationInto(true, &c->window)},
          {"early_tolerance", yaml_.DurationInto(false, &c->early_tolerance)},
          {"allowed_lateness", yaml_.DurationInto(false, &c->allowed_lateness)},
          {"idle_timeout", yaml_.DurationInto(true, &c->idle_timeout)},
          {"combine",
           [&](const Field& v) {
             return yaml_.ReadChoice(v, "combine rule", kCombineRules,
                                     CombineRuleName, &c->combine);
           }},
          {"qrels_delay", yaml_.DurationInto(false, &c->qrels_delay)},
          {"qrels_file",
           [&](const Field& v) {
             qrels_file = v;
             return yaml_.ReadString(v, &c->qrels_file);
           }},
          {"max_pending_requests", yaml_.IntInto(1, &c->max_pending_requests)},
          {"max_judgments_per_request",
           yaml_.IntInto(1, &c->max_judgments_per_request)},
          {"max_table_entries", yaml_.IntInto(1, &c->max_table_entries)},
      }));
  // Only the qrels join has a table to preload; ignoring the file silently
  // would lose its judgments.
  if (qrels_file && !c->qrels_file.empty() && c->mode != JoinMode::kQrels) {
    return yaml_.Error(*qrels_file,
                       "is only read when join.mode is qrels (it is " +
                           std::string(JoinModeName(c->mode)) + ")");
  }
  return Status::Ok();
}

Status Parser::ReadEvents(const Field& f, EventLimitsConfig* c) {
  return yaml_.ReadMap(
      f,
      {
          {"max_results", yaml_.IntInto(1, &c->max_results)},
          {"max_id_length", yaml_.IntInto(1, &c->max_id_length)},
          {"max_judgments", yaml_.IntInto(1, &c->max_judgments)},
          {"max_event_bytes", yaml_.IntInto(1, &c->max_event_bytes)},
          {"max_future_skew", yaml_.DurationInto(false, &c->max_future_skew)},
          {"min_timestamp",
           [&](const Field& v) {
             return yaml_.ReadTimestamp(v, &c->min_timestamp_ms);
           }},
      });
}

Status Parser::ReadMetrics(const Field& f, MetricsConfig* c) {
  metrics::Definitions& d = c->definitions;
  std::optional<Field> cutoffs;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f, {
             {"cutoffs",
              [&](const Field& v) {
                cutoffs = v;
                return ReadCutoffs(v, &c->cutoffs);
              }},
             {"measures",
              [&](const Field& v) { return ReadMeasures(v, &c->measures); }},
             {"relevance_threshold", yaml_.IntInto(0, &d.relevance_threshold)},
             {"click_exclude_kinds",
              [&](const Field& v) {
                return yaml_.ReadNameList(v, "judgment kind",
                                          &c->click_exclude_kinds);
              }},
             {"gain",
              [&](const Field& v) {
                return yaml_.ReadChoice(v, "gain", kGains, metrics::GainName,
                                        &d.gain);
              }},
             {"recall_denominator",
              [&](const Field& v) {
                return yaml_.ReadChoice(
                    v, "recall denominator", kRecallDenominators,
                    metrics::RecallDenominatorName, &d.recall_denominator);
              }},
             {"ap_denominator",
              [&](const Field& v) {
                return yaml_.ReadChoice(v, "AP denominator", kApDenominators,
                                        metrics::ApDenominatorName,
                                        &d.ap_denominator);
              }},
             {"zero_relevant",
              [&](const Field& v) {
                return yaml_.ReadChoice(
                    v, "zero-relevant policy", kZeroRelevantPolicies,
                    metrics::ZeroRelevantPolicyName, &d.zero_relevant);
              }},
         }));
  if (cutoffs && c->cutoffs.empty()) {
    for (metrics::Measure m : c->measures) {
      if (metrics::HasCutoffVariant(m)) {
        return yaml_.Error(*cutoffs, "must not be empty: " +
                                         std::string(metrics::MeasureName(m)) +
                                         " is computed at cutoffs");
      }
    }
  }
  return Status::Ok();
}

Status Parser::ReadCutoffs(const Field& f, std::vector<int32_t>* out) {
  out->clear();
  RW_RETURN_IF_ERROR(yaml_.ForEachItem(f, [&](const Field& item) {
    int32_t k = 0;
    RW_RETURN_IF_ERROR(yaml_.ReadInt(item, 1, &k));
    if (std::find(out->begin(), out->end(), k) != out->end()) {
      return yaml_.Error(item, "duplicate cutoff " + std::to_string(k));
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
  RW_RETURN_IF_ERROR(yaml_.ForEachItem(f, [&](const Field& item) {
    // Any spelling of the measure (ndcg, ndcg_cut, nDCG, precision, P):
    // metrics/measure_names.h.
    std::string name;
    RW_RETURN_IF_ERROR(yaml_.ReadString(item, &name));
    StatusOr<metrics::Measure> parsed = metrics::ParseMeasureFamily(name);
    if (!parsed.ok()) return yaml_.Error(item, parsed.status().message());
    const metrics::Measure m = *parsed;
    if (std::find(out->begin(), out->end(), m) != out->end()) {
      std::string what =
          "duplicate measure '" + std::string(metrics::MeasureName(m)) + "'";
      if (name != metrics::MeasureName(m)) {
        what += " (as '" + Printable(name) + "')";
      }
      return yaml_.Error(item, what);
    }
    out->push_back(m);
    return Status::Ok();
  }));
  if (out->empty()) return yaml_.Error(f, "must not be empty");
  return Status::Ok();
}

Status Parser::ReadAggregation(const Field& f, AggregationConfig* c) {
  std::vector<Field> windows;
  std::vector<Field> segment_value_labels;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f,
      {
          {"windows",
           [&](const Field& v) {
             return ReadWindows(v, &c->windows, &windows);
           }},
          {"bucket", yaml_.DurationInto(true, &c->bucket)},
          {"segments",
           [&](const Field& v) { return ReadSegmentLabels(v, &c->segments); }},
          {"variants",
           [&](const Field& v) {
             return yaml_.ReadNameList(v, "variant", &c->variants);
           }},
          {"max_variants", yaml_.IntInto(1, &c->max_variants)},
          {"segment_values",
           [&](const Field& v) {
             c->segment_values.clear();
             return yaml_.ForEachPair(
                 v, [&](const Field& key, const Field& value) {
                   segment_value_labels.push_back(key);
                   return yaml_.ReadNameList(
                       value, "value", &c->segment_values[key.node.Scalar()]);
                 });
           }},
          {"max_segment_values", yaml_.IntInto(1, &c->max_segment_values)},
      }));
  // Checked once the whole section is read: keys may come in any order.
  for (size_t i = 0; i < windows.size(); ++i) {
    if (c->windows[i].count() % c->bucket.count() != 0) {
      return yaml_.Error(windows[i],
                         FormatDuration(c->windows[i]) +
                             " is not a multiple of aggregation.bucket (" +
                             FormatDuration(c->bucket) + ")");
    }
  }
  for (const Field& label : segment_value_labels) {
    const std::string& name = label.node.Scalar();
    if (std::find(c->segments.begin(), c->segments.end(), name) ==
        c->segments.end()) {
      return yaml_.Error(label, "label '" + Printable(name) +
                                    "' is not listed in aggregation.segments");
    }
  }
  return Status::Ok();
}

Status Parser::ReadWindows(const Field& f, std::vector<Duration>* out,
                           std::vector<Field>* fields) {
  out->clear();
  fields->clear();
  return yaml_.ForEachItem(f, [&](const Field& item) {
    Duration window{};
    RW_RETURN_IF_ERROR(yaml_.ReadDuration(item, true, &window));
    if (std::find(out->begin(), out->end(), window) != out->end()) {
      return yaml_.Error(item, "duplicate window " + FormatDuration(window));
    }
    out->push_back(window);
    fields->push_back(item);
    return Status::Ok();
  });
}

Status Parser::ReadSegmentLabels(const Field& f,
                                 std::vector<std::string>* out) {
  out->clear();
  return yaml_.ForEachItem(f, [&](const Field& item) {
    std::string label;
    RW_RETURN_IF_ERROR(yaml_.ReadName(item, &label));
    if (!IsIdentifier(label)) {
      return yaml_.Error(item, "'" + Printable(label) +
                                   "' is not a valid Prometheus label name "
                                   "([a-zA-Z_][a-zA-Z0-9_]*)");
    }
    if (label.starts_with("__")) {
      return yaml_.Error(item,
                         "label names starting with '__' are reserved by "
                         "Prometheus");
    }
    if (std::find(kReservedLabels.begin(), kReservedLabels.end(), label) !=
        kReservedLabels.end()) {
      return yaml_.Error(
          item,
          "'" + label + "' is a label rankwatch sets itself (reserved: " +
              JoinNames(kReservedLabels,
                        [](std::string_view n) { return std::string(n); }) +
              ")");
    }
    if (std::find(out->begin(), out->end(), label) != out->end()) {
      return yaml_.Error(item, "duplicate segment '" + label + "'");
    }
    out->push_back(std::move(label));
    return Status::Ok();
  });
}

Status Parser::ReadDeadLetter(const Field& f, DeadLetterConfig* c) {
  return yaml_.ReadMap(f, {
                              {"file", yaml_.StringInto(&c->file)},
                              {"topic", yaml_.StringInto(&c->topic)},
                          });
}

Status Parser::ReadKafka(const Field& f, KafkaConfig* c) {
  return yaml_.ReadMap(
      f,
      {
          {"bootstrap_servers", yaml_.NameInto(&c->bootstrap_servers)},
          {"group_id", yaml_.NameInto(&c->group_id)},
          {"results_topic", yaml_.NameInto(&c->results_topic)},
          {"judgments_topic", yaml_.NameInto(&c->judgments_topic)},
          {"commit_interval", yaml_.DurationInto(true, &c->commit_interval)},
          {"not_ready_after", yaml_.DurationInto(true, &c->not_ready_after)},
          {"durable_state", yaml_.BoolInto(&c->durable_state)},
          {"changelog_topic", yaml_.StringInto(&c->changelog_topic)},
          {"checkpoint_interval",
           yaml_.DurationInto(true, &c->checkpoint_interval)},
          {"properties",
           [&](const Field& v) { return ReadProperties(v, &c->properties); }},
      });
}

Status Parser::ReadProperties(const Field& f,
                              std::map<std::string, std::string>* out) {
  out->clear();
  return yaml_.ForEachPair(f, [&](const Field& key, const Field& value) {
    const std::string& name = key.node.Scalar();
    if (name.empty()) return yaml_.Error(key, "empty property name");
    for (const auto& [managed, instead] : kManagedProperties) {
      if (name == managed) {
        return yaml_.Error(key, "set " + std::string(instead) + " instead");
      }
    }
    // Booleans and numbers are kept as written: librdkafka takes text.
    StatusOr<std::string> text = yaml_.Text(value, "a scalar value");
    if (!text.ok()) return text.status();
    if (name == "partition.assignment.strategy") assignment_strategy_ = value;
    (*out)[name] = std::move(*text);
    return Status::Ok();
  });
}

Status Parser::ReadHttp(const Field& f, HttpConfig* c) {
  std::optional<Field> tls;
  std::optional<Field> auth;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f,
      {
          {"listen", [&](const Field& v) { return ReadListen(v, &c->listen); }},
          {"enable_reload", yaml_.BoolInto(&c->enable_reload)},
          {"allowed_hosts",
           [&](const Field& v) {
             return yaml_.ReadNameList(v, "host", &c->allowed_hosts);
           }},
          {"response_budget_bytes",
           yaml_.IntInto(int64_t{1} << 20, &c->response_budget_bytes)},
          {"tls", [&](const Field& v) { return ReadTls(v, &c->tls, &tls); }},
          {"basic_auth",
           [&](const Field& v) {
             return ReadBasicAuth(v, &c->basic_auth, &auth);
           }},
      }));
  // Half a TLS setup would silently serve plain HTTP.
  if (tls && c->tls.cert_file.empty() != c->tls.key_file.empty()) {
    return yaml_.Error(*tls, "needs both cert_file and key_file");
  }
  if (auth &&
      c->basic_auth.username.empty() != c->basic_auth.password.empty()) {
    return yaml_.Error(*auth, "needs both username and password");
  }
  if (auth && c->basic_auth.username.find(':') != std::string::npos) {
    return yaml_.Error(*auth, "a user name cannot hold ':'");
  }
  if (auth && c->basic_auth.users.count(c->basic_auth.username) != 0) {
    return yaml_.Error(*auth, "user '" + Printable(c->basic_auth.username) +
                                  "' is both username and in users");
  }
  if (tls && !c->tls.enabled() &&
      (!c->tls.client_ca.empty() || !c->tls.cipher_suites.empty())) {
    return yaml_.Error(*tls, "client_ca and cipher_suites need cert_file");
  }
  return Status::Ok();
}

Status Parser::ReadTls(const Field& v, TlsConfig* c,
                       std::optional<Field>* seen) {
  *seen = v;
  if (v.node.IsNull()) return Status::Ok();
  std::optional<Field> version;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      v, {
             {"cert_file", yaml_.StringInto(&c->cert_file)},
             {"key_file", yaml_.StringInto(&c->key_file)},
             {"client_ca", yaml_.StringInto(&c->client_ca)},
             {"min_version",
              [&](const Field& f) {
                version = f;
                return yaml_.ReadString(f, &c->min_version);
              }},
             {"cipher_suites", yaml_.StringInto(&c->cipher_suites)},
         }));
  if (version && c->min_version != "1.2" && c->min_version != "1.3") {
    return yaml_.Error(*version, "expected \"1.2\" or \"1.3\", got '" +
                                     Printable(c->min_version) + "'");
  }
  return Status::Ok();
}

Status Parser::ReadBasicAuth(const Field& v, BasicAuthConfig* c,
                             std::optional<Field>* seen) {
  *seen = v;
  if (v.node.IsNull()) return Status::Ok();
  return yaml_.ReadMap(
      v, {
             {"username", yaml_.StringInto(&c->username)},
             {"password", yaml_.StringInto(&c->password)},
             {"users",
              [&](const Field& users) {
                return yaml_.ForEachPair(
                    users, [&](const Field& key, const Field& value) {
                      std::string name;
                      RW_RETURN_IF_ERROR(yaml_.ReadName(key, &name));
                      // RFC 7617: "user:pass" would split at the first ':'.
                      if (name.find(':') != std::string::npos) {
                        return yaml_.Error(key, "a user name cannot hold ':'");
                      }
                      std::string secret;
                      RW_RETURN_IF_ERROR(yaml_.ReadName(value, &secret));
                      c->users[name] = std::move(secret);
                      return Status::Ok();
                    });
              }},
         });
}

Status Parser::ReadListen(const Field& f, std::string* out) {
  StatusOr<std::string> text = yaml_.Text(f, "host:port");
  if (!text.ok()) return text.status();
  const std::string& s = *text;
  const std::string expected =
      "expected host:port like 127.0.0.1:9464, "
      "0.0.0.0:9464 or [::1]:9464, got '" +
      Printable(s) + "'";
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return yaml_.Error(f, expected);
  const std::string_view host = std::string_view(s).substr(0, colon);
  const std::string_view port = std::string_view(s).substr(colon + 1);
  int value = -1;
  const auto [stop, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || port.size() > 5 || ec != std::errc() ||
      stop != port.data() + port.size() || value < 0 || value > 65535) {
    return yaml_.Error(
        f, "port '" + Printable(port) + "' is not a number from 0 to 65535");
  }
  if (host.front() == '[') {
    const bool v6 = host.size() > 2 && host.back() == ']' &&
                    std::all_of(host.begin() + 1, host.end() - 1, [](char c) {
                      return std::isxdigit(static_cast<unsigned char>(c)) ||
                             c == ':' || c == '.';
                    });
    if (!v6) return yaml_.Error(f, expected);
  } else if (host.find(':') != std::string_view::npos) {
    return yaml_.Error(f, "an IPv6 host must be in brackets, like [::1]:9464");
  } else if (!std::all_of(host.begin(), host.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                      c == '-' || c == '_';
             })) {
    return yaml_.Error(f, expected);
  }
  *out = s;
  return Status::Ok();
}

Status Parser::CheckUnique(
    const Field& item, const std::string& key, const std::string& value,
    std::map<std::string, YAML::Mark>* seen,
    const std::function<std::string(int)>& message) const {
  const auto [first, inserted] = seen->emplace(value, item.mark);
  if (inserted) return Status::Ok();
  return yaml_.ErrorAt(item.node[key].Mark(), item.path + "." + key,
                       message(first->second.line + 1));
}

Status Parser::ReadExperiments(const Field& f,
                               std::vector<ExperimentConfig>* out) {
  out->clear();
  experiment_fields_.clear();
  std::map<std::string, YAML::Mark> names;
  return yaml_.ForEachItem(f, [&](const Field& item) {
    ExperimentConfig e;
    RW_RETURN_IF_ERROR(ReadExperiment(item, &e));
    RW_RETURN_IF_ERROR(
        CheckUnique(item, "name", e.name, &names, [&](int first_line) {
          return "duplicate experiment name '" + Printable(e.name) +
                 "' (first on line " + std::to_string(first_line) + ")";
        }));
    out->push_back(std::move(e));
    return Status::Ok();
  });
}

Status Parser::ReadExperiment(const Field& f, ExperimentConfig* out) {
  std::optional<Field> baseline;
  std::vector<Field> treatments;
  bool has_name = false;
  ExperimentFields& later = experiment_fields_.emplace_back();
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f, {
             {"name",
              [&](const Field& v) {
                has_name = true;
                return yaml_.ReadName(v, &out->name);
              }},
             {"baseline",
              [&](const Field& v) {
                baseline = v;
                return yaml_.ReadName(v, &out->baseline);
              }},
             {"treatments",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(
                    yaml_.ReadNameList(v, "treatment", &out->treatments));
                for (size_t i = 0; i < v.node.size(); ++i) {
                  treatments.push_back(ListItem(v, v.node[i], i));
                }
                if (out->treatments.empty()) {
                  return yaml_.Error(v, "must not be empty");
                }
                return Status::Ok();
              }},
             {"split",
              [&](const Field& v) {
                later.split = v;
                return Status::Ok();
              }},
             {"primary",
              [&](const Field& v) {
                later.primary.clear();
                return yaml_.ForEachItem(v, [&](const Field& item) {
                  StatusOr<std::string> text =
                      yaml_.Text(item, "a series such as ndcg@10");
                  if (!text.ok()) return text.status();
                  later.primary.emplace_back(item, std::move(*text));
                  return Status::Ok();
                });
              }},
         }));
  if (!has_name) return yaml_.Error(f, "missing key 'name'");
  if (!baseline) return yaml_.Error(f, "missing key 'baseline'");
  if (treatments.empty()) return yaml_.Error(f, "missing key 'treatments'");
  for (size_t i = 0; i < treatments.size(); ++i) {
    if (out->treatments[i] == out->baseline) {
      return yaml_.Error(
          treatments[i],
          "treatment '" + Printable(out->baseline) + "' is the baseline");
    }
  }
  experiment_variants_.emplace_back(*baseline, out->baseline);
  for (size_t i = 0; i < treatments.size(); ++i) {
    experiment_variants_.emplace_back(treatments[i], out->treatments[i]);
  }
  return Status::Ok();
}

Status Parser::ReadInterleavings(const Field& f,
                                 std::vector<InterleavingConfig>* out) {
  out->clear();
  interleaving_ = f;
  std::map<std::string, YAML::Mark> names;
  std::map<std::string, YAML::Mark> variants;
  return yaml_.ForEachItem(f, [&](const Field& item) {
    InterleavingConfig e;
    RW_RETURN_IF_ERROR(ReadInterleaving(item, &e));
    RW_RETURN_IF_ERROR(
        CheckUnique(item, "name", e.name, &names, [&](int first_line) {
          return "duplicate interleaving experiment name '" +
                 Printable(e.name) + "' (first on line " +
                 std::to_string(first_line) + ")";
        }));
    // A list is credited to one experiment's teams.
    RW_RETURN_IF_ERROR(
        CheckUnique(item, "variant", e.variant, &variants, [&](int first_line) {
          return "variant '" + Printable(e.variant) +
                 "' is already interleaved on line " +
                 std::to_string(first_line);
        }));
    out->push_back(std::move(e));
    return Status::Ok();
  });
}

Status Parser::ReadInterleaving(const Field& f, InterleavingConfig* out) {
  std::optional<Field> variant;
  std::optional<Field> teams;
  bool has_name = false;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f, {
             {"name",
              [&](const Field& v) {
                has_name = true;
                return yaml_.ReadName(v, &out->name);
              }},
             {"variant",
              [&](const Field& v) {
                variant = v;
                return yaml_.ReadName(v, &out->variant);
              }},
             {"teams",
              [&](const Field& v) {
                teams = v;
                std::vector<std::string> values;
                RW_RETURN_IF_ERROR(yaml_.ReadNameList(v, "team", &values));
                // Two teams interleave; more multileave (every pair of
                // teams is compared). The bound keeps the pairs few enough
                // for each to gather evidence (docs/statistics.md).
                if (values.size() < 2 ||
                    values.size() > kMaxInterleavingTeams) {
                  return yaml_.Error(
                      v, "must list 2 to " +
                             std::to_string(kMaxInterleavingTeams) +
                             " teams (the incumbent, then the challengers), "
                             "got " +
                             std::to_string(values.size()));
                }
                out->teams = std::move(values);
                return Status::Ok();
              }},
         }));
  if (!has_name) return yaml_.Error(f, "missing key 'name'");
  if (!variant) return yaml_.Error(f, "missing key 'variant'");
  if (!teams) return yaml_.Error(f, "missing key 'teams'");
  experiment_variants_.emplace_back(*variant, out->variant);
  return Status::Ok();
}

// Interleaving credits each request's clicks: only the impression join
// knows which request a judgment belongs to.
Status Parser::CheckInterleavingMode(const Config& config) const {
  if (!interleaving_ || config.interleaving.empty() ||
      config.join.mode == JoinMode::kImpression) {
    return Status::Ok();
  }
  return yaml_.Error(*interleaving_,
                     "needs join.mode impression (each request's own clicks), "
                     "not " +
                         std::string(JoinModeName(config.join.mode)));
}

// With a variant allow-list, any other variant folds into "other" and could
// never be compared.
Status Parser::CheckExperimentVariants(const Config& config) const {
  const std::vector<std::string>& allowed = config.aggregation.variants;
  if (allowed.empty()) return Status::Ok();
  for (const auto& [field, variant] : experiment_variants_) {
    if (std::find(allowed.begin(), allowed.end(), variant) == allowed.end()) {
      return yaml_.Error(field, "variant '" + Printable(variant) +
                                    "' is not listed in aggregation.variants");
    }
  }
  return Status::Ok();
}

// The impression join needs a request's results and judgments on one
// replica: both topics keyed by request id with equal partition counts, and
// partition n of both assigned together, which only the range assignor
// (librdkafka's default) does. roundrobin and cooperative-sticky spread
// them, and the join would silently lose most judgments.
Status Parser::CheckAssignmentStrategy(const Config& config) const {
  if (!assignment_strategy_ || config.join.mode != JoinMode::kImpression) {
    return Status::Ok();
  }
  const std::string& strategy =
      config.kafka.properties.at("partition.assignment.strategy");
  if (TrimBlanks(strategy) == "range") return Status::Ok();
  return yaml_.Error(
      *assignment_strategy_,
      "'" + Printable(strategy) +
          "' can assign partition n of the results and judgments topics to "
          "different replicas, and join.mode impression needs them together "
          "(use range, the default, or join.mode qrels)");
}

Status Parser::ResolveExperiments(Config* config) const {
  for (size_t i = 0; i < config->experiments.size(); ++i) {
    ExperimentConfig& e = config->experiments[i];
    RW_RETURN_IF_ERROR(ResolveSplit(experiment_fields_[i], &e));
    RW_RETURN_IF_ERROR(
        ResolvePrimary(experiment_fields_[i], config->metrics, &e));
  }
  return Status::Ok();
}

// `split: {A: 50, B: 50}`: one positive weight per variant of the
// experiment, every variant named (or none: equal weights).
Status Parser::ResolveSplit(const ExperimentFields& fields,
                            ExperimentConfig* e) const {
  std::vector<std::string> variants = {e->baseline};
  variants.insert(variants.end(), e->treatments.begin(), e->treatments.end());
  e->split.assign(variants.size(), 1.0);
  if (!fields.split) return Status::Ok();
  std::vector<bool> seen(variants.size(), false);
  RW_RETURN_IF_ERROR(yaml_.ForEachPair(
      *fields.split, [&](const Field& key, const Field& value) {
        const std::string& name = key.node.Scalar();
        const auto it = std::find(variants.begin(), variants.end(), name);
        if (it == variants.end()) {
          return yaml_.Error(key, "'" + Printable(name) +
                                      "' is not a variant of experiment '" +
                                      Printable(e->name) + "'");
        }
        const size_t i = static_cast<size_t>(it - variants.begin());
        RW_RETURN_IF_ERROR(yaml_.ReadNumber(value, &e->split[i]));
        if (!(e->split[i] > 0)) {
          return yaml_.Error(value,
                             "must be > 0, got " + FormatNumber(e->split[i]));
        }
        seen[i] = true;
        return Status::Ok();
      }));
  // An empty map keeps the equal split.
  const bool any = std::find(seen.begin(), seen.end(), true) != seen.end();
  for (size_t i = 0; any && i < variants.size(); ++i) {
    if (!seen[i]) {
      return yaml_.Error(*fields.split, "missing a weight for variant '" +
                                            Printable(variants[i]) + "'");
    }
  }
  return Status::Ok();
}

// `primary: [ndcg@10, average_precision]`: a series in any spelling of
// metrics/measure_names.h (ndcg@10, ndcg_cut.10, ndcg_cut_10, nDCG@10; a
// bare measure, or measure@all, for the uncut series).
Status Parser::ResolvePrimary(const ExperimentFields& fields,
                              const MetricsConfig& metrics,
                              ExperimentConfig* e) const {
  e->primary.clear();
  if (fields.primary.empty()) {
    e->primary = DefaultPrimary(metrics);
    return Status::Ok();
  }
  for (const auto& [field, text] : fields.primary) {
    StatusOr<metrics::MeasureRef> parsed = metrics::ParseMeasureName(text);
    if (!parsed.ok()) return yaml_.Error(field, parsed.status().message());
    if (!parsed->measure) {
      return yaml_.Error(field, "'" + Printable(text) +
                                    "' is computed by `rankwatch eval` "
                                    "only, not by the daemon's engine");
    }
    const SeriesRef ref{*parsed->measure, parsed->cutoff.value_or(0)};
    if (!metrics::IsQualityMeasure(ref.measure)) {
      return yaml_.Error(field, "'" + Printable(text) +
                                    "' measures judgment coverage, not "
                                    "ranking quality: it cannot be primary");
    }
    if (!metrics::DefinedForEveryList(ref.measure)) {
      return yaml_.Error(field, UndefinedPrimaryError(text, ref.measure));
    }
    if (!IsConfiguredSeries(metrics, ref)) {
      return yaml_.Error(field, "'" + Printable(text) +
                                    "' is not computed (see metrics.measures "
                                    "and metrics.cutoffs)");
    }
    if (std::find(e->primary.begin(), e->primary.end(), ref) !=
        e->primary.end()) {
      return yaml_.Error(field, "duplicate '" + Printable(text) + "'");
    }
    e->primary.push_back(ref);
  }
  return Status::Ok();
}

Status Parser::ReadStatistics(const Field& f, StatisticsConfig* c) {
  return yaml_.ReadMap(
      f,
      {
          {"level",
           [&](const Field& v) {
             RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &c->level));
             if (c->level <= 0 || c->level >= 1) {
               return yaml_.Error(v,
                                  "must be between 0 and 1 (exclusive), got " +
                                      FormatNumber(c->level));
             }
             return Status::Ok();
           }},
          {"mixture_sd",
           [&](const Field& v) {
             RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &c->mixture_sd));
             if (c->mixture_sd <= 0) {
               return yaml_.Error(
                   v, "must be > 0, got " + FormatNumber(c->mixture_sd));
             }
             return Status::Ok();
           }},
          {"unit_buckets",
           [&](const Field& v) {
             int64_t buckets = 0;
             RW_RETURN_IF_ERROR(
                 yaml_.ReadInt(v, kMinUnitBuckets, kMaxUnitBuckets, &buckets));
             c->unit_buckets = static_cast<int32_t>(buckets);
             return Status::Ok();
           }},
          {"srm_level",
           [&](const Field& v) {
             RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &c->srm_level));
             if (c->srm_level <= 0 || c->srm_level >= 1) {
               return yaml_.Error(v,
                                  "must be between 0 and 1 (exclusive), got " +
                                      FormatNumber(c->srm_level));
             }
             return Status::Ok();
           }},
          {"max_tracked_units", yaml_.IntInto(0, &c->max_tracked_units)},
          {"tracked_queries",
           [&](const Field& v) {
             int64_t n = 0;
             RW_RETURN_IF_ERROR(yaml_.ReadInt(v, 0, 1'000'000, &n));
             c->tracked_queries = static_cast<int32_t>(n);
             return Status::Ok();
           }},
          {"export_query_movers",
           [&](const Field& v) {
             int64_t n = 0;
             RW_RETURN_IF_ERROR(yaml_.ReadInt(v, 0, 100, &n));
             c->export_query_movers = static_cast<int32_t>(n);
             return Status::Ok();
           }},
          {"interleaving_prior_sd",
           [&](const Field& v) {
             RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &c->interleaving_prior_sd));
             // Var(p) = 1 / (4 (2a + 1)) < 1/4 for every Beta(a, a).
             if (c->interleaving_prior_sd <= 0 ||
                 c->interleaving_prior_sd >= 0.5) {
               return yaml_.Error(
                   v, "must be between 0 and 0.5 (exclusive), got " +
                          FormatNumber(c->interleaving_prior_sd));
             }
             return Status::Ok();
           }},
      });
}

Status Parser::ReadLogging(const Field& f, LoggingConfig* c) {
  return yaml_.ReadMap(
      f, {
             {"level",
              [&](const Field& v) {
                std::string_view level;
                RW_RETURN_IF_ERROR(yaml_.ReadChoice(
                    v, "log level", kLogLevels,
                    [](std::string_view n) { return n; }, &level));
                c->level = std::string(level);
                return Status::Ok();
              }},
             {"max_rejects_logged_per_second",
              yaml_.IntInto(0, &c->max_rejects_logged_per_second)},
             {"format",
              [&](const Field& v) {
                return yaml_.ReadChoice(v, "log format", kLogFormats,
                                        LogFormatName, &c->format);
              }},
         });
}

}  // namespace

StatusOr<Config> ParseConfig(std::string_view yaml,
                             const std::string& file_name, EnvLookup env) {
  Parser parser(file_name, env);
  const std::string text(yaml);
  // yaml-cpp reports errors by throwing; nothing thrown leaves this
  // function.
  try {
    RW_RETURN_IF_ERROR(parser.yaml().CheckUtf8(text));
    RW_RETURN_IF_ERROR(parser.yaml().CheckSingleDocument(text));
    Config config;
    RW_RETURN_IF_ERROR(parser.Parse(YAML::Load(text), &config));
    return config;
  } catch (const YAML::Exception& e) {
    // yaml-cpp's message may quote the offending byte, a NUL or a line
    // break included.
    return parser.yaml().ErrorAt(
        e.mark, "",
        "YAML syntax error: " + Printable(e.msg, std::string_view::npos));
  } catch (const std::exception& e) {
    return Status::Internal(Printable(file_name, std::string_view::npos) +
                            ": " + Printable(e.what(), std::string_view::npos));
  }
}

StatusOr<Config> LoadConfigFile(const std::string& path, EnvLookup env) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(
      std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    return Status::IoError("cannot open " +
                           Printable(path, std::string_view::npos) + ": " +
                           std::strerror(errno));
  }
  std::string text;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), file.get())) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxConfigBytes) {
      return Status::InvalidArgument(Printable(path, std::string_view::npos) +
                                     ": larger than 16 MiB; not a "
                                     "configuration file?");
    }
  }
  if (std::ferror(file.get())) {
    return Status::IoError("cannot read " +
                           Printable(path, std::string_view::npos) + ": " +
                           std::strerror(errno));
  }
  return ParseConfig(text, path, std::move(env));
}

}  // namespace rankwatch::config
