#include "config/effective_config.h"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/duration.h"
#include "base/rfc3339.h"
#include "base/strings.h"
#include "config/text.h"

namespace rankwatch::config {

namespace {

// Whether `word` occurs in `text`, ASCII case folded.
bool ContainsIgnoreCase(std::string_view text, std::string_view word) {
  for (size_t i = 0; i + word.size() <= text.size(); ++i) {
    if (EqualsIgnoreCase(text.substr(i, word.size()), word)) return true;
  }
  return false;
}

// YAML limits implicit keys to 1024 characters (YAML 1.2, 7.4.2; yaml-cpp's
// parser refuses longer ones). yaml-cpp's emitter switches to an explicit
// key ("? key" then ": value") only beyond 1024 characters before quoting,
// so a key that escaping lengthens is measured as written; 1000 leaves
// room for the quotes and the indentation.
constexpr size_t kMaxImplicitKeyChars = 1000;

// The effective configuration through yaml-cpp's emitter, which quotes and
// escapes; this class only fixes the layout: every string value
// double-quoted (so that "null", "123" or "~" stay strings), '$' in values
// doubled, empty maps and lists written "{}" and "[]" on their key's line.
class Writer {
 public:
  Writer() {
    out_.SetIndent(2);
    out_.SetNullFormat(YAML::LowerNull);
  }

  // Environment substitution on reload expands values (not keys): "$$"
  // gives the '$' back.
  static std::string EnvEscaped(std::string_view text) {
    std::string out;
    for (char c : text) {
      out += c;
      if (c == '$') out += '$';
    }
    return out;
  }

  void BeginSection(std::string_view key) {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::BeginMap;
  }
  void EndSection() { out_ << YAML::EndMap; }

  // A string value, double-quoted.
  void Text(std::string_view key, std::string_view value) {
    out_ << YAML::Key << std::string(key) << YAML::Value;
    Quoted(value);
  }
  // A value whose text is YAML as it stands: a number, a duration, a
  // name of an enumeration's value.
  void Plain(std::string_view key, const std::string& value) {
    out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  template <typename Int>
  void Integer(std::string_view key, Int value) {
    out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  void Bool(std::string_view key, bool value) {
    out_ << YAML::Key << std::string(key) << YAML::Value << value;
  }
  void Null(std::string_view key) {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::Null;
  }

  // A flow list of `items`, each written by `write(item)` (which calls
  // Quoted() or PlainItem()).
  template <typename Range, typename WriteFn>
  void List(std::string_view key, const Range& items, WriteFn write) {
    out_ << YAML::Key << std::string(key) << YAML::Value << YAML::Flow
         << YAML::BeginSeq;
    for (const auto& item : items) write(item);
    out_ << YAML::EndSeq;
  }
  template <typename Range>
  void QuotedList(std::string_view key, const Range& items) {
    List(key, items, [this](std::string_view s) { Quoted(s); });
  }

  // A block map under `key`, or "{}" when `entries` is empty; each entry
  // is a quoted key (not substituted on reload: its '$' stays single) and
  // the value written by `write(name, value)`.
  template <typename Entries, typename WriteFn>
  void Map(std::string_view key, const Entries& entries, WriteFn write) {
    out_ << YAML::Key << std::string(key) << YAML::Value;
    if (entries.empty()) out_ << YAML::Flow;
    out_ << YAML::BeginMap;
    for (const auto& [name, value] : entries) {
      MapKey(name);
      write(name, value);
    }
    out_ << YAML::EndMap;
  }
  void MapKey(std::string_view name) {
    YAML::Emitter quoted;
    quoted << YAML::DoubleQuoted << std::string(name);
    if (quoted.size() >= kMaxImplicitKeyChars) out_ << YAML::LongKey;
    out_ << YAML::Key << YAML::DoubleQuoted << std::string(name) << YAML::Value;
  }

  void Quoted(std::string_view value) {
    out_ << YAML::DoubleQuoted << EnvEscaped(value);
  }
  void PlainItem(const std::string& value) { out_ << value; }

  YAML::Emitter& emitter() { return out_; }

 private:
  YAML::Emitter out_;
};

void WriteSchema(const SchemaConfig& c, Writer* w) {
  w->BeginSection("schema");
  // First, as the loader applies it first: the names below override it.
  w->Text("preset", c.preset);
  w->Text("request_id", c.request_id);
  w->Text("query_id", c.query_id);
  w->Text("variant", c.variant);
  w->Text("timestamp", c.timestamp);
  w->Text("results", c.results);
  w->Text("doc_id", c.doc_id);
  w->Text("score", c.score);
  w->Text("segments", c.segments);
  w->Text("relevance", c.relevance);
  w->Text("judgments", c.judgments);
  w->Text("default_variant", c.default_variant);
  w->Text("unit", c.unit);
  w->Text("team", c.team);
  w->Text("teams", c.teams);
  w->Text("covariate", c.covariate);
  w->List("fields", c.fields, [w](const ResultFieldConfig& f) {
    YAML::Emitter& y = w->emitter();
    y << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value;
    w->Quoted(f.name);  // Quoted: a name may read as YAML's null or true.
    y << YAML::Key << "path" << YAML::Value;
    w->Quoted(f.path);
    y << YAML::Key << "better" << YAML::Value;
    w->PlainItem(f.higher_is_better ? "higher" : "lower");
    y << YAML::Key << "mixture_sd" << YAML::Value;
    w->PlainItem(FormatNumber(f.mixture_sd));
    y << YAML::Key << "min" << YAML::Value;
    w->PlainItem(FormatNumber(f.min));
    y << YAML::Key << "max" << YAML::Value;
    w->PlainItem(FormatNumber(f.max));
    y << YAML::EndMap;
  });
  w->Text("kind", c.kind);
  w->Text("judge", c.judge);
  if (c.default_relevance.has_value()) {
    w->Integer("default_relevance", *c.default_relevance);
  } else {
    w->Null("default_relevance");
  }
  w->Map("actions", c.actions,
         [w](const std::string&, int32_t grade) { w->emitter() << grade; });
  w->Text("position", c.position);
  if (c.position_base == kPositionBaseAuto) {
    w->Text("position_base", "auto");
  } else {
    w->Integer("position_base", c.position_base);
  }
  w->Text("impression_kind", c.impression_kind);
  w->EndSection();
}

void WriteJoin(const JoinConfig& c, Writer* w) {
  w->BeginSection("join");
  w->Plain("mode", std::string(JoinModeName(c.mode)));
  w->Plain("window", FormatDuration(c.window));
  w->Plain("early_tolerance", FormatDuration(c.early_tolerance));
  w->Plain("allowed_lateness", FormatDuration(c.allowed_lateness));
  w->Plain("idle_timeout", FormatDuration(c.idle_timeout));
  w->Plain("combine", std::string(CombineRuleName(c.combine)));
  w->Plain("qrels_delay", FormatDuration(c.qrels_delay));
  w->Text("qrels_file", c.qrels_file);
  w->Integer("max_pending_requests", c.max_pending_requests);
  w->Integer("max_judgments_per_request", c.max_judgments_per_request);
  w->Integer("max_table_entries", c.max_table_entries);
  w->EndSection();
}

void WriteEvents(const EventLimitsConfig& c, Writer* w) {
  w->BeginSection("events");
  w->Integer("max_results", c.max_results);
  w->Integer("max_id_length", c.max_id_length);
  w->Integer("max_judgments", c.max_judgments);
  w->Integer("max_event_bytes", c.max_event_bytes);
  w->Plain("max_future_skew", FormatDuration(c.max_future_skew));
  w->Text("min_timestamp", FormatRfc3339Millis(c.min_timestamp_ms));
  w->EndSection();
}

void WriteMetrics(const MetricsConfig& c, Writer* w) {
  const metrics::Definitions& d = c.definitions;
  w->BeginSection("metrics");
  w->List("cutoffs", c.cutoffs, [w](int32_t k) { w->emitter() << k; });
  w->List("measures", c.measures, [w](metrics::Measure m) {
    w->PlainItem(std::string(metrics::MeasureName(m)));
  });
  w->Integer("relevance_threshold", d.relevance_threshold);
  w->Plain("gain", std::string(metrics::GainName(d.gain)));
  w->Plain("recall_denominator",
           std::string(metrics::RecallDenominatorName(d.recall_denominator)));
  w->Plain("ap_denominator",
           std::string(metrics::ApDenominatorName(d.ap_denominator)));
  w->Plain("zero_relevant",
           std::string(metrics::ZeroRelevantPolicyName(d.zero_relevant)));
  w->QuotedList("click_exclude_kinds", c.click_exclude_kinds);
  w->EndSection();
}

void WriteAggregation(const AggregationConfig& c, Writer* w) {
  w->BeginSection("aggregation");
  w->List("windows", c.windows,
          [w](Duration d) { w->PlainItem(FormatDuration(d)); });
  w->Plain("bucket", FormatDuration(c.bucket));
  w->QuotedList("segments", c.segments);
  w->QuotedList("variants", c.variants);
  w->Integer("max_variants", c.max_variants);
  w->Map("segment_values", c.segment_values,
         [w](const std::string&, const std::vector<std::string>& values) {
           w->emitter() << YAML::Flow << YAML::BeginSeq;
           for (const std::string& v : values) w->Quoted(v);
           w->emitter() << YAML::EndSeq;
         });
  w->Integer("max_segment_values", c.max_segment_values);
  w->EndSection();
}

void WriteKafka(const KafkaConfig& c, Writer* w) {
  w->BeginSection("kafka");
  w->Text("bootstrap_servers", c.bootstrap_servers);
  w->Text("group_id", c.group_id);
  w->Text("results_topic", c.results_topic);
  w->Text("judgments_topic", c.judgments_topic);
  w->Plain("commit_interval", FormatDuration(c.commit_interval));
  w->Plain("not_ready_after", FormatDuration(c.not_ready_after));
  w->Bool("durable_state", c.durable_state);
  w->Text("changelog_topic", c.changelog_topic);
  w->Text("group_instance_id", c.group_instance_id);
  w->Plain("checkpoint_interval", FormatDuration(c.checkpoint_interval));
  w->Map("properties", c.properties,
         [w](const std::string& name, const std::string& value) {
           w->Quoted(IsSecretProperty(name) ? kMaskedSecret : value);
         });
  w->EndSection();
}

void WriteExperiments(const std::vector<ExperimentConfig>& experiments,
                      Writer* w) {
  YAML::Emitter& y = w->emitter();
  y << YAML::Key << "experiments" << YAML::Value;
  if (experiments.empty()) y << YAML::Flow;
  y << YAML::BeginSeq;
  for (const ExperimentConfig& e : experiments) {
    y << YAML::BeginMap;
    w->Text("name", e.name);
    w->Text("baseline", e.baseline);
    w->QuotedList("treatments", e.treatments);
    // A block map, whose long keys MapKey() writes as explicit keys.
    y << YAML::Key << "split" << YAML::Value;
    if (e.split.empty()) y << YAML::Flow;
    y << YAML::BeginMap;
    for (size_t i = 0; i < e.split.size(); ++i) {
      w->MapKey(i == 0 ? e.baseline : e.treatments[i - 1]);
      w->PlainItem(FormatNumber(e.split[i]));
    }
    y << YAML::EndMap;
    w->List("primary", e.primary,
            [w](const SeriesRef& r) { w->Quoted(FormatSeriesRef(r)); });
    w->List("guardrails", e.guardrails, [&y, w](const GuardrailConfig& g) {
      y << YAML::Flow << YAML::BeginMap;
      y << YAML::Key << "series" << YAML::Value;
      w->Quoted(FormatSeriesRef(g.series));
      y << YAML::Key << (g.relative ? "relative_margin" : "margin")
        << YAML::Value;
      w->PlainItem(FormatNumber(g.margin));
      y << YAML::EndMap;
    });
    w->Integer("min_lists", e.min_lists);
    w->Plain("min_duration", FormatDuration(e.min_duration));
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
}

void WriteInterleaving(const std::vector<InterleavingConfig>& experiments,
                       Writer* w) {
  YAML::Emitter& y = w->emitter();
  y << YAML::Key << "interleaving" << YAML::Value;
  if (experiments.empty()) y << YAML::Flow;
  y << YAML::BeginSeq;
  for (const InterleavingConfig& e : experiments) {
    y << YAML::BeginMap;
    w->Text("name", e.name);
    w->Text("variant", e.variant);
    w->QuotedList("teams", e.teams);
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
}

void WriteHttp(const HttpConfig& c, Writer* w) {
  w->BeginSection("http");
  w->Text("listen", c.listen);
  w->Bool("enable_reload", c.enable_reload);
  w->QuotedList("allowed_hosts", c.allowed_hosts);
  w->Integer("response_budget_bytes", c.response_budget_bytes);
  w->BeginSection("tls");
  w->Text("cert_file", c.tls.cert_file);
  w->Text("key_file", c.tls.key_file);
  w->Text("client_ca", c.tls.client_ca);
  w->Text("min_version", c.tls.min_version);
  w->Text("cipher_suites", c.tls.cipher_suites);
  w->EndSection();
  w->BeginSection("basic_auth");
  w->Text("username", c.basic_auth.username);
  w->Text("password", c.basic_auth.password.empty() ? "" : kMaskedSecret);
  w->Map("users", c.basic_auth.users,
         [w](const std::string&, const std::string&) {
           w->Quoted(kMaskedSecret);
         });
  w->EndSection();
  w->EndSection();
}

void WriteStatistics(const StatisticsConfig& c, Writer* w) {
  w->BeginSection("statistics");
  w->Plain("level", FormatNumber(c.level));
  w->Plain("mixture_sd", FormatNumber(c.mixture_sd));
  w->Integer("unit_buckets", c.unit_buckets);
  w->Plain("srm_level", FormatNumber(c.srm_level));
  w->Integer("max_tracked_units", c.max_tracked_units);
  w->Integer("tracked_queries", c.tracked_queries);
  w->Integer("export_query_movers", c.export_query_movers);
  w->Plain("interleaving_prior_sd", FormatNumber(c.interleaving_prior_sd));
  w->EndSection();
}

}  // namespace

std::string FormatEffectiveConfig(const Config& c) {
  Writer w;
  YAML::Emitter& y = w.emitter();
  y << YAML::Comment(
      "rankwatch effective configuration; secrets are shown as \"****\".");
  y << YAML::BeginMap;
  WriteSchema(c.schema, &w);
  WriteJoin(c.join, &w);
  WriteEvents(c.events, &w);
  WriteMetrics(c.metrics, &w);
  WriteAggregation(c.aggregation, &w);
  w.BeginSection("dead_letter");
  w.Text("file", c.dead_letter.file);
  w.Text("topic", c.dead_letter.topic);
  w.EndSection();
  WriteKafka(c.kafka, &w);
  WriteHttp(c.http, &w);
  WriteExperiments(c.experiments, &w);
  WriteInterleaving(c.interleaving, &w);
  WriteStatistics(c.statistics, &w);
  w.BeginSection("judges");
  w.QuotedList("names", c.judges.names);
  w.Text("default", c.judges.default_judge);
  w.Plain("combine", std::string(JudgeCombineName(c.judges.combine)));
  // Absent without PPI: an empty judge is not a name.
  if (!c.judges.ppi.trusted.empty()) {
    w.BeginSection("ppi");
    w.Text("trusted", c.judges.ppi.trusted);
    w.Text("cheap", c.judges.ppi.cheap);
    w.Bool("tune", c.judges.ppi.tune);
    w.EndSection();
  }
  w.Plain("coverage_tolerance", FormatNumber(c.judges.coverage_tolerance));
  w.EndSection();
  w.BeginSection("logging");
  w.Plain("level", c.logging.level);
  w.Plain("format", std::string(LogFormatName(c.logging.format)));
  w.Integer("max_rejects_logged_per_second",
            c.logging.max_rejects_logged_per_second);
  w.EndSection();
  y << YAML::EndMap;
  // The emitter fails only on unbalanced Begin/End calls above, which the
  // round-trip tests would catch; it ends without a line break.
  return std::string(y.c_str(), y.size()) + "\n";
}

bool IsSecretProperty(std::string_view name) {
  for (std::string_view word : {"password", "secret", "token", "key"}) {
    if (ContainsIgnoreCase(name, word)) return true;
  }
  // librdkafka's sensitive properties whose names carry none of the words
  // (CONFIGURATION.md marks them "sensitive"): matched by name.
  for (std::string_view sensitive :
       {"sasl.jaas.config", "sasl.oauthbearer.config", "ssl_key", "ssl.key.pem",
        "ssl.keystore.password"}) {
    if (EqualsIgnoreCase(name, sensitive)) return true;
  }
  return false;
}

}  // namespace rankwatch::config
