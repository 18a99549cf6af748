#include "config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
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

#include "config/config_parser.h"
#include "config/text.h"
#include "config/yaml_reader.h"
#include "metrics/measure_names.h"

namespace rankwatch::config {

namespace internal {
namespace {

// Labels that rankwatch puts on its own series; a segment label may not
// reuse them, or its series would collide.
constexpr std::array<std::string_view, 14> kReservedLabels = {
    "variant", "k",         "window",     "le",       "topic",
    "reason",  "partition", "experiment", "baseline", "measure",
    "label",   "field",     "better",     "judge"};

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

}  // namespace

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
          {"judges",
           section([&](const Field& v) { return ReadJudges(v, &c.judges); })},
      }));
  RW_RETURN_IF_ERROR(CheckExperimentVariants(c));
  RW_RETURN_IF_ERROR(CheckInterleavingMode(c));
  RW_RETURN_IF_ERROR(CheckJudgesOfTheQrelsFile(c));
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

// `actions: {click: 1, purchase: 3}`. The map replaces the preset's: an
// action left out is ignored, not graded as before.
Status Parser::ReadActions(
    const Field& v, std::map<std::string, int32_t, std::less<>>* actions) {
  actions->clear();
  if (v.node.IsNull()) return Status::Ok();
  return yaml_.ForEachPair(v, [&](const Field& key, const Field& value) {
    // A key, so not substituted (as every key).
    const std::string& action = key.node.Scalar();
    if (action.empty()) return yaml_.Error(key, "empty action name");
    int32_t grade = 0;
    RW_RETURN_IF_ERROR(
        yaml_.ReadInt(value, std::numeric_limits<int32_t>::min(), &grade));
    (*actions)[action] = grade;
    return Status::Ok();
  });
}

// `fields: [{name: latency_ms, path: timing.latency_ms, better: lower}]`:
// each a series of its own; `better` is required (no direction is a safe
// default: latency is better lower, revenue higher).
Status Parser::ReadResultFields(const Field& f,
                                std::vector<ResultFieldConfig>* out) {
  out->clear();
  std::map<std::string, YAML::Mark> names;
  return yaml_.ForEachItem(f, [&](const Field& item) {
    if (out->size() == kMaxResultFields) {
      return yaml_.Error(item, "at most " + std::to_string(kMaxResultFields) +
                                   " fields (each adds a series to every "
                                   "group)");
    }
    ResultFieldConfig field;
    std::optional<Field> name;
    std::optional<Field> better;
    std::optional<Field> mixture_sd;
    std::optional<Field> min_field;
    std::optional<Field> max_field;
    // A bound beyond kMaxFieldMagnitude would let a sum of squares
    // overflow: the guardrail's variance would turn infinite.
    const auto read_bound = [&](double* bound, std::optional<Field>* seen) {
      return [&, bound, seen](const Field& v) {
        seen->emplace(v);
        RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, bound));
        if (!(std::fabs(*bound) <= kMaxFieldMagnitude)) {
          return yaml_.Error(v, "must lie within +-" +
                                    FormatNumber(kMaxFieldMagnitude) +
                                    " (so no sum of squares can overflow), "
                                    "got " +
                                    FormatNumber(*bound));
        }
        return Status::Ok();
      };
    };
    RW_RETURN_IF_ERROR(yaml_.ReadMap(
        item,
        {
            {"name",
             [&](const Field& v) {
               name.emplace(v);
               return ReadResultFieldName(v, &field.name);
             }},
            {"path",
             [&](const Field& v) { return ReadFieldPath(v, &field.path); }},
            {"mixture_sd",
             [&](const Field& v) {
               mixture_sd.emplace(v);
               RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &field.mixture_sd));
               if (field.mixture_sd <= 0) {
                 return yaml_.Error(
                     v, "must be > 0, got " + FormatNumber(field.mixture_sd));
               }
               return Status::Ok();
             }},
            {"min", read_bound(&field.min, &min_field)},
            {"max", read_bound(&field.max, &max_field)},
            {"better",
             [&](const Field& v) {
               better.emplace(v);
               StatusOr<std::string> text = yaml_.Text(v, "higher or lower");
               if (!text.ok()) return text.status();
               if (*text != "higher" && *text != "lower") {
                 return yaml_.Error(v, "expected higher or lower, got '" +
                                           Printable(*text) + "'");
               }
               field.higher_is_better = *text == "higher";
               return Status::Ok();
             }},
        }));
    if (!name) return yaml_.Error(item, "missing key 'name'");
    if (!better) {
      return yaml_.Error(item,
                         "missing key 'better' (higher or lower: which way "
                         "the field improves)");
    }
    if (!mixture_sd) {
      return yaml_.Error(item,
                         "missing key 'mixture_sd' (the effect size the "
                         "always-valid tests are tuned to, in the field's "
                         "units: e.g. 10 for a latency in ms)");
    }
    if (max_field && !(field.min < field.max)) {
      return yaml_.Error(*max_field, "must be greater than min (" +
                                         FormatNumber(field.min) + "), got " +
                                         FormatNumber(field.max));
    }
    if (min_field && !(field.min < field.max)) {
      return yaml_.Error(*min_field, "must be less than max (" +
                                         FormatNumber(field.max) + "), got " +
                                         FormatNumber(field.min));
    }
    if (field.path.empty()) field.path = field.name;
    RW_RETURN_IF_ERROR(
        CheckUnique(item, "name", field.name, &names, [&](int first_line) {
          return "duplicate field name '" + Printable(field.name) +
                 "' (first on line " + std::to_string(first_line) + ")";
        }));
    out->push_back(std::move(field));
    return Status::Ok();
  });
}

// A field's series name: lower-case letters, digits and '_', a letter
// first, and not a measure's name in any spelling (a guardrail's series
// must mean one thing).
Status Parser::ReadResultFieldName(const Field& v, std::string* out) const {
  RW_RETURN_IF_ERROR(yaml_.ReadName(v, out));
  const bool valid = out->size() <= 64 && (*out)[0] >= 'a' &&
                     (*out)[0] <= 'z' &&
                     std::all_of(out->begin(), out->end(), [](char ch) {
                       return (ch >= 'a' && ch <= 'z') ||
                              (ch >= '0' && ch <= '9') || ch == '_';
                     });
  if (!valid) {
    return yaml_.Error(v, "'" + Printable(*out) +
                              "' is not a field name (lower-case letters, "
                              "digits and '_', a letter first, at most 64)");
  }
  if (metrics::ParseMeasureName(*out).ok()) {
    return yaml_.Error(v, "'" + Printable(*out) +
                              "' names a measure; give the field another "
                              "name");
  }
  return Status::Ok();
}

// schema.position_base: 0, 1 or auto (kPositionBaseAuto).
Status Parser::ReadPositionBase(const Field& v, int32_t* out) const {
  const std::string text = v.node.IsScalar() ? v.node.Scalar() : "";
  if (text == "auto") {
    *out = kPositionBaseAuto;
  } else if (text == "0" || text == "1") {
    *out = text == "1" ? 1 : 0;
  } else {
    return yaml_.Error(
        v, "expected 0, 1 or auto, got '" +
               Printable(v.node.IsScalar() ? text : "a collection") + "'");
  }
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
             {"covariate",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(yaml_.ReadString(v, &c->covariate));
                return c->covariate.empty() ? Status::Ok()
                                            : ReadFieldPath(v, &c->covariate);
              }},
             {"fields",
              [&](const Field& v) { return ReadResultFields(v, &c->fields); }},
             {"kind", path(&c->kind)},
             {"judge",
              [&](const Field& v) {
                schema_judge_ = v;
                return path(&c->judge)(v);
              }},
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
              [&](const Field& v) { return ReadActions(v, &c->actions); }},
             {"position",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(yaml_.ReadString(v, &c->position));
                return c->position.empty() ? Status::Ok()
                                           : ReadFieldPath(v, &c->position);
              }},
             {"position_base",
              [&](const Field& v) {
                return ReadPositionBase(v, &c->position_base);
              }},
             {"impression_kind", yaml_.StringInto(&c->impression_kind)},
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
    std::string key;  // "unit", "fields[0].path".
    const std::string* path;
  };
  std::vector<std::vector<Named>> kinds = {
      {{"request_id", &c.request_id},
       {"query_id", &c.query_id},
       {"variant", &c.variant},
       {"timestamp", &c.timestamp},
       {"results", &c.results},
       {"segments", &c.segments},
       {"unit", &c.unit},
       {"teams", &c.teams},
       {"covariate", &c.covariate}},
      {{"request_id", &c.request_id},
       {"query_id", &c.query_id},
       {"timestamp", &c.timestamp},
       {"judgments", &c.judgments},
       {"doc_id", &c.doc_id},
       {"relevance", &c.relevance},
       {"kind", &c.kind},
       {"judge", &c.judge},
       {"position", &c.position}},
  };
  const size_t fixed_keys = kinds[0].size();
  for (size_t i = 0; i < c.fields.size(); ++i) {
    kinds[0].push_back(
        {"fields[" + std::to_string(i) + "].path", &c.fields[i].path});
  }
  // A field of schema.fields is a value of its own: sharing a path with
  // another key of results events would read one value as two things.
  const std::vector<Named>& results = kinds[0];
  for (size_t i = fixed_keys; i < results.size(); ++i) {
    for (size_t o = 0; o < i; ++o) {
      if (*results[o].path == *results[i].path) {
        return yaml_.Error(f, "schema." + results[i].key + " '" +
                                  Printable(*results[i].path) +
                                  "' is also schema." + results[o].key);
      }
    }
  }
  for (const std::vector<Named>& fields : kinds) {
    for (const Named& outer : fields) {
      if (outer.path->empty() || outer.key == "segments") continue;
      for (const Named& inner : fields) {
        if (inner.path->size() > outer.path->size() &&
            inner.path->starts_with(*outer.path) &&
            (*inner.path)[outer.path->size()] == '.') {
          return yaml_.Error(
              f, "schema." + inner.key + " '" + Printable(*inner.path) +
                     "' is inside schema." + outer.key + " '" +
                     Printable(*outer.path) + "', which is read as a value");
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

}  // namespace internal

namespace {

// Anything larger is not a configuration file (and reading /dev/zero must
// end).
constexpr size_t kMaxConfigBytes = size_t{16} << 20;

// The first tab in a line's indentation, up to line `last` (0-based), if
// any. YAML indents with spaces only, and yaml-cpp's error for a tab often
// names only what it then failed to read ("illegal map value"), so a
// syntax error with a tab in the indentation before it is told as the tab.
std::optional<YAML::Mark> TabInIndentation(std::string_view text, int last) {
  YAML::Mark mark;
  mark.line = 0;
  mark.column = 0;
  for (size_t i = 0; i < text.size() && mark.line <= last; ++i) {
    if (text[i] == '\t') {
      mark.pos = static_cast<int>(i);
      return mark;
    }
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else if (text[i] == ' ') {
      ++mark.column;
    } else {  // Content: skip to the end of the line.
      const size_t end = text.find('\n', i);
      if (end == std::string_view::npos) break;
      i = end - 1;
    }
  }
  return std::nullopt;
}

}  // namespace

using internal::Parser;

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
    if (std::optional<YAML::Mark> tab = TabInIndentation(text, e.mark.line)) {
      return parser.yaml().ErrorAt(
          *tab, "", "a tab in the indentation: YAML indents with spaces only");
    }
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
