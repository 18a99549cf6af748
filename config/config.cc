#include "config/config.h"

#include <algorithm>
#include <cctype>

namespace rankwatch::config {

namespace {

// A row of kConfigKeys for the member path `member` of Config: the path is
// the member expression spelled out, compared and copied as a whole with
// the structs' defaulted operator==.
// (clang-format takes `#member` at a line start for a directive.)
// clang-format off
#define RW_CONFIG_KEY(member, reload, owner)                                  \
  ConfigKey{                                                                  \
      #member, Reload::reload, KeyOwner::owner,                               \
      [](const Config& a, const Config& b) { return a.member == b.member; },  \
      [](const Config& from, Config* to) { to->member = from.member; }}
// clang-format on

// Refused keys are named in this order: the server's, then the pipeline's
// (the schema, the join, dead_letter, the label dimensions, then the
// impression join's click threshold).
const ConfigKey kConfigKeys[] = {
    // The consumer and the endpoint are built once: their group membership,
    // subscriptions and listening socket would have to be torn down.
    RW_CONFIG_KEY(kafka.bootstrap_servers, kRestart, kServer),
    RW_CONFIG_KEY(kafka.group_id, kRestart, kServer),
    RW_CONFIG_KEY(kafka.results_topic, kRestart, kServer),
    RW_CONFIG_KEY(kafka.judgments_topic, kRestart, kServer),
    RW_CONFIG_KEY(kafka.commit_interval, kRestart, kServer),
    RW_CONFIG_KEY(kafka.not_ready_after, kRestart, kServer),
    RW_CONFIG_KEY(kafka.durable_state, kRestart, kServer),
    RW_CONFIG_KEY(kafka.changelog_topic, kRestart, kServer),
    RW_CONFIG_KEY(kafka.group_instance_id, kRestart, kServer),
    RW_CONFIG_KEY(kafka.checkpoint_interval, kRestart, kServer),
    RW_CONFIG_KEY(kafka.properties, kRestart, kServer),
    RW_CONFIG_KEY(http.listen, kRestart, kServer),
    RW_CONFIG_KEY(http.enable_reload, kLive, kServer),
    RW_CONFIG_KEY(http.allowed_hosts, kRestart, kServer),
    RW_CONFIG_KEY(http.response_budget_bytes, kRestart, kServer),
    // The TLS files are re-read on every reload (a rotated certificate),
    // but which files and how: at start.
    RW_CONFIG_KEY(http.tls, kRestart, kServer),
    RW_CONFIG_KEY(http.basic_auth, kRestart, kServer),
    // Level, format and rate apply live (the daemon's apply_logging).
    RW_CONFIG_KEY(logging, kLive, kServer),
    RW_CONFIG_KEY(schema, kRestart, kPipeline),
    // The joins hold each label with its judge's place in the list.
    RW_CONFIG_KEY(judges, kRestart, kPipeline),
    RW_CONFIG_KEY(join.mode, kRestart, kPipeline),
    RW_CONFIG_KEY(join.window, kRestart, kPipeline),
    RW_CONFIG_KEY(join.early_tolerance, kRestart, kPipeline),
    RW_CONFIG_KEY(join.allowed_lateness, kRestart, kPipeline),
    RW_CONFIG_KEY(join.idle_timeout, kRestart, kPipeline),
    RW_CONFIG_KEY(join.combine, kRestart, kPipeline),
    RW_CONFIG_KEY(join.qrels_delay, kRestart, kPipeline),
    RW_CONFIG_KEY(join.qrels_file, kRestart, kPipeline),
    // The join's bounds follow a reload (Join::SetLimits).
    RW_CONFIG_KEY(join.max_pending_requests, kLive, kPipeline),
    RW_CONFIG_KEY(join.max_judgments_per_request, kLive, kPipeline),
    RW_CONFIG_KEY(join.max_table_entries, kLive, kPipeline),
    RW_CONFIG_KEY(events, kLive, kPipeline),
    RW_CONFIG_KEY(dead_letter.file, kRestart, kPipeline),
    RW_CONFIG_KEY(dead_letter.topic, kRestart, kPipeline),
    // The label dimensions are fixed; the windows and the caps are not.
    RW_CONFIG_KEY(aggregation.windows, kLive, kPipeline),
    RW_CONFIG_KEY(aggregation.bucket, kLive, kPipeline),
    RW_CONFIG_KEY(aggregation.segments, kRestart, kPipeline),
    RW_CONFIG_KEY(aggregation.variants, kRestart, kPipeline),
    RW_CONFIG_KEY(aggregation.max_variants, kLive, kPipeline),
    RW_CONFIG_KEY(aggregation.segment_values, kRestart, kPipeline),
    RW_CONFIG_KEY(aggregation.max_segment_values, kLive, kPipeline),
    RW_CONFIG_KEY(metrics.cutoffs, kLive, kPipeline),
    RW_CONFIG_KEY(metrics.measures, kLive, kPipeline),
    // The impression join is built with the threshold (its clicks: a grade
    // at or above it); in qrels mode only scoring reads it, and a change
    // empties the series as any other definition does.
    RW_CONFIG_KEY(metrics.definitions.relevance_threshold,
                  kRestartInImpressionMode, kPipeline),
    RW_CONFIG_KEY(metrics.definitions.gain, kLive, kPipeline),
    RW_CONFIG_KEY(metrics.definitions.recall_denominator, kLive, kPipeline),
    RW_CONFIG_KEY(metrics.definitions.ap_denominator, kLive, kPipeline),
    RW_CONFIG_KEY(metrics.definitions.zero_relevant, kLive, kPipeline),
    RW_CONFIG_KEY(metrics.click_exclude_kinds, kLive, kPipeline),
    RW_CONFIG_KEY(experiments, kLive, kPipeline),
    RW_CONFIG_KEY(interleaving, kLive, kPipeline),
    RW_CONFIG_KEY(statistics, kLive, kPipeline),
};

#undef RW_CONFIG_KEY

}  // namespace

std::span<const ConfigKey> ConfigKeys() { return kConfigKeys; }

std::vector<std::string> FixedKeysChanged(const Config& running,
                                          const Config& next, KeyOwner owner) {
  const bool impression = next.join.mode == JoinMode::kImpression;
  std::vector<std::string> keys;
  for (const ConfigKey& key : kConfigKeys) {
    const bool fixed =
        key.reload == Reload::kRestart ||
        (key.reload == Reload::kRestartInImpressionMode && impression);
    if (key.owner == owner && fixed && !key.same(running, next)) {
      keys.emplace_back(key.path);
    }
  }
  return keys;
}

std::vector<std::string> ChangedKeys(const Config& running,
                                     const Config& next) {
  std::vector<std::string> keys;
  for (const ConfigKey& key : kConfigKeys) {
    if (!key.same(running, next)) keys.emplace_back(key.path);
  }
  return keys;
}

namespace {

// "query_attributes.experiment" -> "queryAttributes.experiment": Jackson
// names the record's own properties in camelCase; the keys of its maps
// (below the first step) are the client's, unchanged.
std::string CamelFirstStep(const std::string& path) {
  std::string out;
  const size_t dot = std::min(path.find('.'), path.size());
  bool upper = false;
  for (size_t i = 0; i < dot; ++i) {
    if (path[i] == '_' && i > 0) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(
                       std::toupper(static_cast<unsigned char>(path[i])))
                 : path[i];
    upper = false;
  }
  return out + path.substr(dot);
}

}  // namespace

std::vector<FieldAlias> PresetAliases(const SchemaConfig& s) {
  std::vector<FieldAlias> out;
  if (s.preset != "ubi") return out;
  if (s.results == "query_response_hit_ids") {
    for (const char* path :
         {"query_response_object_ids", "queryResponse.queryResponseHitIds",
          "queryResponse.queryResponseObjectIds"}) {
      out.push_back({&SchemaConfig::results, path});
    }
  }
  for (std::string SchemaConfig::*key :
       {&SchemaConfig::request_id, &SchemaConfig::query_id,
        &SchemaConfig::variant, &SchemaConfig::unit, &SchemaConfig::segments,
        &SchemaConfig::teams, &SchemaConfig::covariate}) {
    const std::string& path = s.*key;
    if (path.empty()) continue;
    std::string camel = CamelFirstStep(path);
    if (camel != path) out.push_back({key, std::move(camel)});
  }
  return out;
}

std::string_view JoinModeName(JoinMode m) {
  switch (m) {
    case JoinMode::kImpression:
      return "impression";
    case JoinMode::kQrels:
      return "qrels";
  }
  return "?";
}

std::string_view LogFormatName(LogFormat f) {
  switch (f) {
    case LogFormat::kText:
      return "text";
    case LogFormat::kJson:
      return "json";
  }
  return "text";
}

std::string_view JudgeCombineName(JudgeCombine c) {
  switch (c) {
    case JudgeCombine::kPrecedence:
      return "precedence";
    case JudgeCombine::kPooled:
      return "pooled";
  }
  return "?";
}

std::string_view CombineRuleName(CombineRule r) {
  switch (r) {
    case CombineRule::kMax:
      return "max";
    case CombineRule::kLast:
      return "last";
  }
  return "?";
}

// Whether `ref` is one of the series that metrics: computes.
bool SameTests(const StatisticsConfig& a, const StatisticsConfig& b) {
  // A copy with the movers' sizes taken from `a`: a field added later
  // counts as one the tests read unless it is listed here.
  StatisticsConfig tests = b;
  tests.tracked_queries = a.tracked_queries;
  tests.export_query_movers = a.export_query_movers;
  return tests == a;
}

bool IsConfiguredSeries(const MetricsConfig& metrics, const SeriesRef& ref) {
  if (std::find(metrics.measures.begin(), metrics.measures.end(),
                ref.measure) == metrics.measures.end()) {
    return false;
  }
  if (ref.cutoff == 0) return metrics::HasUncutVariant(ref.measure);
  return metrics::HasCutoffVariant(ref.measure) &&
         std::find(metrics.cutoffs.begin(), metrics.cutoffs.end(),
                   ref.cutoff) != metrics.cutoffs.end();
}

// ndcg@10 when computed, else the first quality series in the order of
// metrics.measures, at its smallest cutoff.
std::vector<SeriesRef> DefaultPrimary(const MetricsConfig& metrics) {
  const SeriesRef ndcg10{metrics::Measure::kNdcg, 10};
  if (IsConfiguredSeries(metrics, ndcg10)) return {ndcg10};
  std::vector<int32_t> cutoffs = metrics.cutoffs;
  std::sort(cutoffs.begin(), cutoffs.end());
  for (metrics::Measure m : metrics.measures) {
    // A primary series must have a value for every list.
    if (!metrics::IsQualityMeasure(m) || !metrics::DefinedForEveryList(m)) {
      continue;
    }
    if (metrics::HasCutoffVariant(m) && !cutoffs.empty()) {
      return {SeriesRef{m, cutoffs.front()}};
    }
    if (metrics::HasUncutVariant(m)) return {SeriesRef{m, 0}};
  }
  return {};
}

std::string FormatSeriesRef(const SeriesRef& r) {
  if (!r.field.empty()) return r.field;
  std::string out(metrics::MeasureName(r.measure));
  if (r.cutoff > 0) out += "@" + std::to_string(r.cutoff);
  return out;
}

std::string SeriesLabel(const SeriesRef& r) {
  if (!r.spelling.empty()) return r.spelling;
  if (!r.field.empty()) return r.field;
  return metrics::TrecName(r.measure, r.cutoff > 0
                                          ? std::optional<int32_t>(r.cutoff)
                                          : std::nullopt);
}

std::string SeriesLabel(const Config& config, const SeriesRef& r) {
  for (const ExperimentConfig& e : config.experiments) {
    for (const SeriesRef& p : e.primary) {
      if (p == r && !p.spelling.empty()) return p.spelling;
    }
  }
  for (const ExperimentConfig& e : config.experiments) {
    for (const GuardrailConfig& g : e.guardrails) {
      if (g.series == r && !g.series.spelling.empty()) {
        return g.series.spelling;
      }
    }
  }
  SeriesRef plain = r;
  plain.spelling.clear();
  return SeriesLabel(plain);
}

std::vector<std::string> NamedVariants(const Config& config) {
  std::vector<std::string> named;
  const auto add = [&named](const std::string& v) {
    if (std::find(named.begin(), named.end(), v) == named.end()) {
      named.push_back(v);
    }
  };
  for (const ExperimentConfig& e : config.experiments) {
    add(e.baseline);
    for (const std::string& t : e.treatments) add(t);
  }
  for (const InterleavingConfig& i : config.interleaving) add(i.variant);
  return named;
}

}  // namespace rankwatch::config
