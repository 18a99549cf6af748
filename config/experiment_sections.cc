// The experiment sections: experiments (splits, primary series, checks
// against aggregation.variants and the join mode), interleaving and
// statistics. See config_parser.h.
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
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "config/config_parser.h"
#include "config/text.h"
#include "config/yaml_reader.h"
#include "metrics/measure_names.h"

namespace rankwatch::config::internal {

namespace {

// Unit buckets: two are the fewest that give a variance; more than 4096
// cost memory and exported series (per variant and primary series) for a
// variance estimate that is already good to a few percent at 64.
constexpr int32_t kMinUnitBuckets = 2;
constexpr int32_t kMaxUnitBuckets = 4096;

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

}  // namespace

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
             {"min_lists", yaml_.IntInto(0, &out->min_lists)},
             {"min_duration", yaml_.DurationInto(false, &out->min_duration)},
             {"guardrails",
              [&](const Field& v) {
                later.guardrails.clear();
                return yaml_.ForEachItem(v, [&](const Field& item) {
                  return ReadGuardrail(item, &later);
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
// never be compared. Without one, the first aggregation.max_variants seen
// are kept: more variants named in experiments: and interleaving: than that
// would leave some folded, their experiments deciding keep_running forever
// on no lists (issue 43: 25 experiments of two variants at the default 20).
Status Parser::CheckExperimentVariants(const Config& config) const {
  const std::vector<std::string>& allowed = config.aggregation.variants;
  if (allowed.empty()) {
    std::set<std::string> named;
    for (const auto& entry : experiment_variants_) named.insert(entry.second);
    const int32_t most = config.aggregation.max_variants;
    if (named.size() <= static_cast<size_t>(most)) return Status::Ok();
    std::set<std::string> seen;
    for (const auto& [field, variant] : experiment_variants_) {
      seen.insert(variant);
      if (seen.size() <= static_cast<size_t>(most)) continue;
      return yaml_.Error(
          field, "variant '" + Printable(variant) + "' is one of " +
                     std::to_string(named.size()) +
                     " variants named in experiments and interleaving, over "
                     "aggregation.max_variants (" +
                     std::to_string(most) +
                     "): those past it would fold into 'other' and never be "
                     "compared (raise aggregation.max_variants to at least " +
                     std::to_string(named.size()) +
                     " or list the variants in aggregation.variants)");
    }
    return Status::Ok();
  }
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
    RW_RETURN_IF_ERROR(ResolvePrimary(experiment_fields_[i], *config, &e));
    RW_RETURN_IF_ERROR(ResolveGuardrails(experiment_fields_[i], *config, &e));
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
                              const Config& config, ExperimentConfig* e) const {
  const MetricsConfig& metrics = config.metrics;
  e->primary.clear();
  if (fields.primary.empty()) {
    e->primary = DefaultPrimary(metrics);
    return Status::Ok();
  }
  for (const auto& [field, text] : fields.primary) {
    StatusOr<SeriesRef> resolved = ResolveSeries(field, text, config);
    if (!resolved.ok()) return resolved.status();
    const SeriesRef ref = *resolved;
    if (!ref.field.empty()) {
      return yaml_.Error(field, "'" + Printable(text) +
                                    "' is a field of results events "
                                    "(schema.fields): it can be a guardrail, "
                                    "not a primary series");
    }
    if (!metrics::IsQualityMeasure(ref.measure)) {
      return yaml_.Error(field, "'" + Printable(text) +
                                    "' measures judgment coverage, not "
                                    "ranking quality: it cannot be primary");
    }
    if (!metrics::DefinedForEveryList(ref.measure)) {
      return yaml_.Error(field, UndefinedPrimaryError(text, ref.measure));
    }
    if (std::find(e->primary.begin(), e->primary.end(), ref) !=
        e->primary.end()) {
      return yaml_.Error(field, "duplicate '" + Printable(text) + "'");
    }
    e->primary.push_back(ref);
  }
  return Status::Ok();
}

StatusOr<SeriesRef> Parser::ResolveSeries(const Field& field,
                                          const std::string& text,
                                          const Config& config) const {
  for (const ResultFieldConfig& f : config.schema.fields) {
    if (f.name == text) {
      SeriesRef ref;
      ref.field = f.name;
      return ref;
    }
  }
  const MetricsConfig& metrics = config.metrics;
  StatusOr<metrics::MeasureRef> parsed = metrics::ParseMeasureName(text);
  if (!parsed.ok()) {
    // A mistyped field's name reads as an unknown measure: name the field.
    std::vector<std::string_view> fields;
    for (const ResultFieldConfig& f : config.schema.fields) {
      fields.push_back(f.name);
    }
    if (std::optional<std::string_view> close = ClosestKey(text, fields)) {
      return yaml_.Error(field, "'" + Printable(text) +
                                    "' is neither a measure nor a field; did "
                                    "you mean the field '" +
                                    std::string(*close) + "' (schema.fields)?");
    }
    return yaml_.Error(field, parsed.status().message());
  }
  if (!parsed->measure) {
    return yaml_.Error(field, "'" + Printable(text) +
                                  "' is computed by `rankwatch eval` "
                                  "only, not by the daemon's engine");
  }
  SeriesRef ref{*parsed->measure, parsed->cutoff.value_or(0)};
  ref.spelling = text;
  if (!IsConfiguredSeries(metrics, ref)) {
    return yaml_.Error(field, "'" + Printable(text) +
                                  "' is not computed (see metrics.measures "
                                  "and metrics.cutoffs)");
  }
  return ref;
}

// `- {series: latency..., margin: 0.01}` or `relative_margin: 0.02`: one of
// the two, finite and >= 0 (0: the treatment may not be worse at all).
Status Parser::ReadGuardrail(const Field& f, ExperimentFields* later) {
  // Fields are kept in optionals and copied once: assigning a YAML::Node
  // overwrites the node it refers to, not the handle.
  std::optional<Field> series;
  std::string text;
  GuardrailConfig guardrail;
  std::optional<Field> margin;
  std::optional<Field> relative;
  const auto read_margin = [&](std::optional<Field>* seen) {
    return [&, seen](const Field& v) {
      seen->emplace(v);
      RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &guardrail.margin));
      if (guardrail.margin < 0) {
        return yaml_.Error(
            v, "must be >= 0, got " + FormatNumber(guardrail.margin));
      }
      return Status::Ok();
    };
  };
  RW_RETURN_IF_ERROR(
      yaml_.ReadMap(f, {
                           {"series",
                            [&](const Field& v) {
                              StatusOr<std::string> read =
                                  yaml_.Text(v, "a series such as ndcg@10");
                              if (!read.ok()) return read.status();
                              series.emplace(v);
                              text = std::move(*read);
                              return Status::Ok();
                            }},
                           {"margin", read_margin(&margin)},
                           {"relative_margin", read_margin(&relative)},
                       }));
  if (!series) return yaml_.Error(f, "missing key 'series'");
  if (margin && relative) {
    return yaml_.Error(*relative,
                       "give margin (absolute) or relative_margin (a "
                       "fraction of the baseline's mean), not both");
  }
  if (!margin && !relative) {
    return yaml_.Error(f,
                       "missing key 'margin' (absolute) or 'relative_margin' "
                       "(a fraction of the baseline's mean)");
  }
  guardrail.relative = relative.has_value();
  later->guardrails.push_back({*series, std::move(text), guardrail});
  return Status::Ok();
}

// Guardrails name computed series, each once and none primary: a primary
// series must improve, a guardrail only not get worse.
Status Parser::ResolveGuardrails(const ExperimentFields& fields,
                                 const Config& config,
                                 ExperimentConfig* e) const {
  e->guardrails.clear();
  for (const GuardrailFields& g : fields.guardrails) {
    StatusOr<SeriesRef> ref = ResolveSeries(g.series, g.text, config);
    if (!ref.ok()) return ref.status();
    if (std::find(e->primary.begin(), e->primary.end(), *ref) !=
        e->primary.end()) {
      return yaml_.Error(g.series, "'" + Printable(g.text) +
                                       "' is a primary series (it must "
                                       "improve); a guardrail must not get "
                                       "worse");
    }
    for (const GuardrailConfig& other : e->guardrails) {
      if (other.series == *ref) {
        return yaml_.Error(g.series, "duplicate '" + Printable(g.text) + "'");
      }
    }
    GuardrailConfig guardrail = g.guardrail;
    guardrail.series = *ref;
    e->guardrails.push_back(guardrail);
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

}  // namespace rankwatch::config::internal
