#include "config/effective_config.h"

#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/strings.h"
#include "config/duration.h"
#include "config/rfc3339.h"
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

// Appends one entry of a block map, its key quoted (keys are not
// substituted on reload, so '$' stays single). YAML limits implicit keys to
// 1024 characters (YAML 1.2, 7.4.2; yaml-cpp refuses longer ones), so a
// longer key is written as an explicit one: "? key" then ": value".
void MapEntry(std::string* out, int indent, std::string_view key,
              std::string_view value) {
  const std::string quoted = Quote(key, false);
  if (quoted.size() < 1000) {
    Line(out, indent, quoted, value);
    return;
  }
  out->append(static_cast<size_t>(indent), ' ');
  out->append("? " + quoted + "\n");
  out->append(static_cast<size_t>(indent), ' ');
  out->append(": ");
  out->append(value);
  out->append("\n");
}

void WriteSchema(const SchemaConfig& c, std::string* out) {
  Line(out, 0, "schema", "");
  // First, as the loader applies it first: the names below override it.
  Line(out, 2, "preset", QuoteValue(c.preset));
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
  Line(out, 2, "unit", QuoteValue(c.unit));
  Line(out, 2, "team", QuoteValue(c.team));
  Line(out, 2, "teams", QuoteValue(c.teams));
  Line(out, 2, "kind", QuoteValue(c.kind));
  Line(out, 2, "default_relevance",
       c.default_relevance ? std::to_string(*c.default_relevance) : "null");
  Line(out, 2, "actions", c.actions.empty() ? "{}" : "");
  for (const auto& [action, grade] : c.actions) {
    MapEntry(out, 4, action, std::to_string(grade));
  }
  Line(out, 2, "position", QuoteValue(c.position));
  Line(out, 2, "position_base", std::to_string(c.position_base));
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
  Line(out, 2, "click_exclude_kinds", QuotedList(c.click_exclude_kinds));
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
    MapEntry(out, 4, label, QuotedList(values));
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
  Line(out, 2, "not_ready_after", FormatDuration(c.not_ready_after));
  Line(out, 2, "durable_state", c.durable_state ? "true" : "false");
  Line(out, 2, "changelog_topic", QuoteValue(c.changelog_topic));
  Line(out, 2, "checkpoint_interval", FormatDuration(c.checkpoint_interval));
  Line(out, 2, "properties", c.properties.empty() ? "{}" : "");
  for (const auto& [name, value] : c.properties) {
    MapEntry(out, 4, name,
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
    // A block map, whose long keys MapEntry can write.
    Line(out, 4, "split", e.split.empty() ? "{}" : "");
    for (size_t i = 0; i < e.split.size(); ++i) {
      MapEntry(out, 6, i == 0 ? e.baseline : e.treatments[i - 1],
               FormatNumber(e.split[i]));
    }
    Line(out, 4, "primary", FlowList(e.primary, [](const SeriesRef& r) {
           return QuoteValue(FormatSeriesRef(r));
         }));
  }
}

void WriteInterleaving(const std::vector<InterleavingConfig>& experiments,
                       std::string* out) {
  Line(out, 0, "interleaving", experiments.empty() ? "[]" : "");
  for (const InterleavingConfig& e : experiments) {
    Line(out, 2, "- name", QuoteValue(e.name));
    Line(out, 4, "variant", QuoteValue(e.variant));
    Line(out, 4, "teams",
         QuotedList(std::vector<std::string>(e.teams.begin(), e.teams.end())));
  }
}

void WriteHttp(const HttpConfig& c, std::string* out) {
  Line(out, 0, "http", "");
  Line(out, 2, "listen", QuoteValue(c.listen));
  Line(out, 2, "enable_reload", c.enable_reload ? "true" : "false");
  Line(out, 2, "allowed_hosts", QuotedList(c.allowed_hosts));
  Line(out, 2, "response_budget_bytes",
       std::to_string(c.response_budget_bytes));
  Line(out, 2, "tls", "");
  Line(out, 4, "cert_file", QuoteValue(c.tls.cert_file));
  Line(out, 4, "key_file", QuoteValue(c.tls.key_file));
  Line(out, 4, "client_ca", QuoteValue(c.tls.client_ca));
  Line(out, 4, "min_version", QuoteValue(c.tls.min_version));
  Line(out, 4, "cipher_suites", QuoteValue(c.tls.cipher_suites));
  Line(out, 2, "basic_auth", "");
  Line(out, 4, "username", QuoteValue(c.basic_auth.username));
  Line(out, 4, "password",
       QuoteValue(c.basic_auth.password.empty() ? "" : kMaskedSecret));
  Line(out, 4, "users", c.basic_auth.users.empty() ? "{}" : "");
  for (const auto& [name, secret] : c.basic_auth.users) {
    MapEntry(out, 6, name, QuoteValue(kMaskedSecret));
  }
}

}  // namespace

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
  WriteHttp(c.http, &out);
  WriteExperiments(c.experiments, &out);
  WriteInterleaving(c.interleaving, &out);
  Line(&out, 0, "statistics", "");
  Line(&out, 2, "level", FormatNumber(c.statistics.level));
  Line(&out, 2, "mixture_sd", FormatNumber(c.statistics.mixture_sd));
  Line(&out, 2, "unit_buckets", std::to_string(c.statistics.unit_buckets));
  Line(&out, 2, "srm_level", FormatNumber(c.statistics.srm_level));
  Line(&out, 2, "max_tracked_units",
       std::to_string(c.statistics.max_tracked_units));
  Line(&out, 2, "interleaving_prior_sd",
       FormatNumber(c.statistics.interleaving_prior_sd));
  Line(&out, 0, "logging", "");
  Line(&out, 2, "level", c.logging.level);
  Line(&out, 2, "format", LogFormatName(c.logging.format));
  Line(&out, 2, "max_rejects_logged_per_second",
       std::to_string(c.logging.max_rejects_logged_per_second));
  return out;
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
