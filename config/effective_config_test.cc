#include "config/effective_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "base/rfc3339.h"
#include "config/config_loader.h"
#include "config/config_test_util.h"

namespace rankwatch::config {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(EffectiveConfigTest, SecretsAreMasked) {
  for (std::string_view name :
       {"sasl.password", "ssl.key.password", "ssl.keystore.password",
        "sasl.oauthbearer.client.secret", "sasl.jaas.config",
        "sasl.oauthbearer.token.endpoint.url", "ssl.key.pem",
        "SASL.PASSWORD"}) {
    EXPECT_TRUE(IsSecretProperty(name)) << name;
  }
  for (std::string_view name :
       {"security.protocol", "sasl.username", "sasl.mechanism", "linger.ms"}) {
    EXPECT_FALSE(IsSecretProperty(name)) << name;
  }

  Config c;
  c.kafka.properties = {{"sasl.username", "rankwatch"},
                        {"sasl.password", "hunter2"},
                        {"sasl.jaas.config", "org.Foo required secret=x;"},
                        {"ssl.key.password", "k3y"}};
  const std::string out = FormatEffectiveConfig(c);
  EXPECT_EQ(out.find("hunter2"), std::string::npos);
  EXPECT_EQ(out.find("k3y"), std::string::npos);
  EXPECT_EQ(out.find("org.Foo"), std::string::npos);
  EXPECT_NE(out.find("    \"sasl.password\": \"****\"\n"), std::string::npos);
  EXPECT_NE(out.find("    \"sasl.jaas.config\": \"****\"\n"),
            std::string::npos);
  EXPECT_NE(out.find("    \"sasl.username\": \"rankwatch\"\n"),
            std::string::npos);

  // Reloading keeps the mask, not the secret.
  const Config reloaded = MustParse(out);
  EXPECT_EQ(reloaded.kafka.properties.at("sasl.password"), kMaskedSecret);
  EXPECT_EQ(reloaded.kafka.properties.at("sasl.username"), "rankwatch");
}

TEST(EffectiveConfigTest, DefaultsPrintEveryKey) {
  const std::string out = Defaults();
  for (std::string_view key : {"request_id",
                               "default_relevance: null",
                               "mode: impression",
                               "window: 30m",
                               "early_tolerance: 5s",
                               "max_judgments_per_request: 1000",
                               "max_future_skew: 5m",
                               "min_timestamp: \"2010-01-01T00:00:00Z\"",
                               "qrels_delay: 0s",
                               "max_table_entries: 10000000",
                               "max_event_bytes: 1048576",
                               "cutoffs: [1, 3, 5, 10]",
                               "zero_relevant: score_zero",
                               "windows: [5m, 1h]",
                               "bucket: 10s",
                               "segment_values: {}",
                               "topic: \"\"",
                               "commit_interval: 5s",
                               "not_ready_after: 30s",
                               "properties: {}",
                               "listen: \"127.0.0.1:9464\"",
                               "experiments: []",
                               "level: 0.95",
                               "mixture_sd: 0.05",
                               "level: info",
                               "max_rejects_logged_per_second: 5"}) {
    EXPECT_NE(out.find(key), std::string::npos) << key;
  }
}

// The words match anywhere, in any case; sasl.jaas.config only whole.
// Issue 15: sasl.oauthbearer.config (it can hold a client secret) was
// printed in clear: masking went by words in the name, and it has none.
TEST(EffectiveConfigTest, SensitiveLibrdkafkaPropertiesWithoutTheWords) {
  for (std::string_view name :
       {"sasl.oauthbearer.config", "SASL.OAUTHBEARER.CONFIG", "ssl_key"}) {
    EXPECT_TRUE(IsSecretProperty(name)) << name;
  }
  Config c;
  c.kafka.properties["sasl.oauthbearer.config"] = "clientSecret=hunter2";
  const std::string out = FormatEffectiveConfig(c);
  EXPECT_EQ(out.find("hunter2"), std::string::npos) << out;
}

TEST(EffectiveConfigTest, SecretNamesIgnoreCase) {
  for (std::string_view name : {"SASL.JAAS.CONFIG", "Sasl.Jaas.Config",
                                "my.Token", "monkey", "xSECRETx", "PassWord"}) {
    EXPECT_TRUE(IsSecretProperty(name)) << name;
  }
  for (std::string_view name :
       {"", "sasl.jaas", "sasl.jaas.config.x", "ke.y", "pass", "k"}) {
    EXPECT_FALSE(IsSecretProperty(name)) << name;
  }
}

// Written by hand from the defaults in config.h and the names in
// config/example.yaml: the whole text, so that order and layout are checked
// too.
TEST(EffectiveConfigTest, DefaultsExactly) {
  EXPECT_EQ(Defaults(),
            R"(# rankwatch effective configuration; secrets are shown as "****".
schema:
  preset: ""
  request_id: "request_id"
  query_id: "query_id"
  variant: "variant"
  timestamp: "timestamp"
  results: "results"
  doc_id: "doc_id"
  score: "score"
  segments: "segments"
  relevance: "relevance"
  judgments: "judgments"
  default_variant: "default"
  unit: ""
  team: "team"
  teams: ""
  covariate: ""
  fields: []
  kind: "kind"
  judge: "judge"
  default_relevance: null
  actions: {}
  position: ""
  position_base: 1
  impression_kind: ""
join:
  mode: impression
  window: 30m
  early_tolerance: 5s
  allowed_lateness: 1m
  idle_timeout: 1m
  combine: max
  qrels_delay: 0s
  qrels_file: ""
  max_pending_requests: 1000000
  max_judgments_per_request: 1000
  max_table_entries: 10000000
events:
  max_results: 1000
  max_id_length: 512
  max_judgments: 1000
  max_event_bytes: 1048576
  max_future_skew: 5m
  min_timestamp: "2010-01-01T00:00:00Z"
metrics:
  cutoffs: [1, 3, 5, 10]
  measures: [precision, recall, reciprocal_rank, average_precision, ndcg, success, r_precision, judged]
  relevance_threshold: 1
  gain: linear
  recall_denominator: relevant
  ap_denominator: relevant
  zero_relevant: score_zero
  click_exclude_kinds: []
aggregation:
  windows: [5m, 1h]
  bucket: 10s
  segments: []
  variants: []
  max_variants: 20
  segment_values: {}
  max_segment_values: 50
dead_letter:
  file: ""
  topic: ""
kafka:
  bootstrap_servers: "localhost:9092"
  group_id: "rankwatch"
  results_topic: "results"
  judgments_topic: "judgments"
  commit_interval: 5s
  not_ready_after: 30s
  durable_state: true
  changelog_topic: ""
  group_instance_id: ""
  checkpoint_interval: 5s
  properties: {}
http:
  listen: "127.0.0.1:9464"
  enable_reload: false
  allowed_hosts: []
  response_budget_bytes: 67108864
  tls:
    cert_file: ""
    key_file: ""
    client_ca: ""
    min_version: "1.2"
    cipher_suites: ""
  basic_auth:
    username: ""
    password: ""
    users: {}
experiments: []
interleaving: []
statistics:
  level: 0.95
  mixture_sd: 0.05
  unit_buckets: 64
  srm_level: 0.001
  max_tracked_units: 4000000
  tracked_queries: 1000
  export_query_movers: 0
  interleaving_prior_sd: 0.05
judges:
  names: []
  default: ""
  combine: precedence
  coverage_tolerance: 0.05
logging:
  level: info
  format: text
  max_rejects_logged_per_second: 5
)");
}

TEST(EffectiveConfigTest, NestedEntriesAndEscapes) {
  Config c;
  c.aggregation.segments = {"locale"};
  c.aggregation.segment_values = {{"locale", {"en", "d\"e"}}};
  c.kafka.properties = {{"a$b", "x$y"}, {"linger.ms", "5"}};
  c.experiments = {{"e1", "A", {"B", "C"}}};
  c.dead_letter.file = "tab\there\x01";
  const std::string out = FormatEffectiveConfig(c);
  // Keys are not substituted on reload, so their '$' stays single; values
  // are, so theirs is doubled. '"' and '\' are escaped, control characters
  // too: by yaml-cpp's emitter, with YAML's short escapes where there is
  // one (tab is \t, YAML 1.2 section 5.7), else \xNN.
  EXPECT_NE(out.find("  segment_values:\n"
                     "    \"locale\": [\"en\", \"d\\\"e\"]\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  properties:\n"
                     "    \"a$b\": \"x$$y\"\n"
                     "    \"linger.ms\": \"5\"\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("experiments:\n"
                     "  - name: \"e1\"\n"
                     "    baseline: \"A\"\n"
                     "    treatments: [\"B\", \"C\"]\n"
                     "    split: {}\n"
                     "    primary: []\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  file: \"tab\\there\\x01\"\n"), std::string::npos)
      << out;
}

// Shortest round-trip printing keeps every double, the extremes too.
TEST(EffectiveConfigTest, ExtremeNumbersRoundTrip) {
  for (double sd : {std::numeric_limits<double>::denorm_min(),
                    std::numeric_limits<double>::min(),
                    std::numeric_limits<double>::max(), 0.1 + 0.2}) {
    Config c;
    c.statistics.mixture_sd = sd;
    c.statistics.level = std::nextafter(1.0, 0.0);  // 1 - 2^-53.
    const Config reloaded = MustParse(FormatEffectiveConfig(c));
    EXPECT_EQ(reloaded.statistics.mixture_sd, sd);
    EXPECT_EQ(reloaded.statistics.level, 1.0 - 0x1p-53);
  }
}

// ---------------------------------------------------------------------------
// Round trip: a valid configuration, printed and loaded again, is the same
// configuration (masked secrets aside). Configurations are drawn at random
// within the loader's rules, with awkward strings.

// Pieces of generated strings: YAML indicators, quotes, backslashes, '$'
// and ${...}, the control characters that are written \xNN, and multi-byte
// UTF-8. NUL is left out.
constexpr std::array<std::string_view, 26> kAwkward = {
    "\"",
    "\\",
    "$",
    "${X}",
    "$$",
    "#",
    "'",
    ":",
    ": ",
    " - ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a",
    "*a",
    "!",
    "%",
    "@",
    "\n",
    "\t",
    "\x01\x1f\x7f",
    "d\xc3\xa9j\xc3\xa0",  // "déjà"
    "\xe2\x82\xac",        // "€"
    "\xf0\x9d\x84\x9e"};   // U+1D11E, four bytes.

std::string RandomString(Xoshiro256& rng, int64_t min_pieces,
                         int64_t max_pieces) {
  std::string out;
  const int64_t n = rng.Between(min_pieces, max_pieces);
  for (int64_t i = 0; i < n; ++i) {
    if (rng.Below(3) == 0) {
      out += kAwkward[rng.Below(kAwkward.size())];
    } else {
      out += static_cast<char>(rng.Between(0x20, 0x7e));  // Printable ASCII.
    }
  }
  return out;
}

// Distinct non-empty strings.
std::vector<std::string> RandomNames(Xoshiro256& rng, int64_t max_count) {
  std::vector<std::string> out;
  for (int64_t n = rng.Between(0, max_count); n > 0; --n) {
    std::string name = RandomString(rng, 1, 8);
    if (std::find(out.begin(), out.end(), name) == out.end()) {
      out.push_back(std::move(name));
    }
  }
  return out;
}

// Small, medium or anything up to kMaxDuration, so that every unit shows.
Duration RandomDuration(Xoshiro256& rng, bool positive) {
  const int64_t lo = positive ? 1 : 0;
  constexpr std::array<int64_t, 3> kHi = {1'000, 3 * 86'400'000,
                                          kMaxDuration.count()};
  return Duration(rng.Between(lo, kHi[rng.Below(kHi.size())]));
}

template <typename T>
T RandomOf(Xoshiro256& rng, std::initializer_list<T> choices) {
  return *(choices.begin() + rng.Below(choices.size()));
}

template <typename T>
T RandomInt(Xoshiro256& rng, int64_t lo) {
  return static_cast<T>(rng.Between(lo, std::numeric_limits<T>::max()));
}

// A positive finite double from random bits (subnormals included): exercises
// the shortest round-trip printing.
double RandomPositive(Xoshiro256& rng) {
  for (;;) {
    const double d = std::abs(std::bit_cast<double>(rng.Next()));
    if (d > 0 && std::isfinite(d)) return d;
  }
}

void RandomSchema(Xoshiro256& rng, SchemaConfig* c) {
  for (std::string* field :
       {&c->request_id, &c->query_id, &c->variant, &c->timestamp, &c->results,
        &c->doc_id, &c->score, &c->segments, &c->relevance, &c->judgments,
        &c->default_variant}) {
    *field = RandomString(rng, 1, 10);
  }
  c->unit = RandomString(rng, 0, 10);
  if (rng.Below(2) == 0) {
    c->default_relevance = RandomInt<int32_t>(rng, INT32_MIN);
  }
}

// A random name as a valid field path: a dot that would leave a step
// empty ("a..b", ".a", "a.") becomes '_'.
std::string AsFieldPath(std::string name) {
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '.' &&
        (i == 0 || i + 1 == name.size() || name[i + 1] == '.')) {
      name[i] = '_';
    }
  }
  return name;
}

// The schema keys added with the UBI preset, drawn after everything else
// so that the other fields keep the values they always had.
void RandomSchemaExtensions(Xoshiro256& rng, SchemaConfig* c) {
  for (std::string* field :
       {&c->request_id, &c->query_id, &c->variant, &c->timestamp, &c->results,
        &c->doc_id, &c->segments, &c->relevance, &c->judgments, &c->unit,
        &c->kind}) {
    *field = AsFieldPath(*field);
  }
  c->preset = RandomOf<std::string>(rng, {"", "ubi"});
  for (const std::string& action : RandomNames(rng, 3)) {
    c->actions[action] = RandomInt<int32_t>(rng, INT32_MIN);
  }
  c->position = AsFieldPath(RandomString(rng, 0, 10));
  c->position_base = static_cast<int32_t>(rng.Between(-1, 1));  // -1: auto.
  c->impression_kind = RandomString(rng, 0, 10);
  c->teams = AsFieldPath(RandomString(rng, 0, 10));
  c->covariate = AsFieldPath(RandomString(rng, 0, 10));
}

void RandomJoin(Xoshiro256& rng, JoinConfig* c) {
  c->mode = RandomOf(rng, {JoinMode::kImpression, JoinMode::kQrels});
  c->window = RandomDuration(rng, true);
  c->early_tolerance = RandomDuration(rng, false);
  c->allowed_lateness = RandomDuration(rng, false);
  c->idle_timeout = RandomDuration(rng, true);
  c->combine = RandomOf(rng, {CombineRule::kMax, CombineRule::kLast});
  c->qrels_delay = RandomDuration(rng, false);
  // Only the qrels join may name a file.
  if (c->mode == JoinMode::kQrels) c->qrels_file = RandomString(rng, 0, 10);
  c->max_pending_requests = RandomInt<int64_t>(rng, 1);
  c->max_judgments_per_request = RandomInt<int32_t>(rng, 1);
  c->max_table_entries = RandomInt<int64_t>(rng, 1);
}

void RandomEvents(Xoshiro256& rng, EventLimitsConfig* c) {
  c->max_results = RandomInt<int32_t>(rng, 1);
  c->max_id_length = RandomInt<int32_t>(rng, 1);
  c->max_judgments = RandomInt<int32_t>(rng, 1);
  c->max_event_bytes = RandomInt<int64_t>(rng, 1);
  c->max_future_skew = RandomDuration(rng, false);
  c->min_timestamp_ms = rng.Between(0, kMaxRfc3339Millis);
}

void RandomMetrics(Xoshiro256& rng, MetricsConfig* c) {
  // Measures: a non-empty subset, in any order.
  std::vector<metrics::Measure> all(metrics::kAllMeasures.begin(),
                                    metrics::kAllMeasures.end());
  for (size_t i = all.size(); i > 1; --i) {
    std::swap(all[i - 1], all[rng.Below(i)]);
  }
  c->measures.assign(all.begin(), all.begin() + rng.Between(1, all.size()));
  // Cutoffs: distinct and sorted, as the loader stores them; empty only
  // when no measure has a cutoff variant.
  c->cutoffs.clear();
  for (int64_t n = rng.Between(0, 5); n > 0; --n) {
    const int32_t k = RandomOf(rng, {1, 2, 10, 1000, INT32_MAX});
    if (std::find(c->cutoffs.begin(), c->cutoffs.end(), k) ==
        c->cutoffs.end()) {
      c->cutoffs.push_back(k);
    }
  }
  std::sort(c->cutoffs.begin(), c->cutoffs.end());
  if (c->cutoffs.empty() && std::any_of(c->measures.begin(), c->measures.end(),
                                        metrics::HasCutoffVariant)) {
    c->cutoffs = {5};
  }
  metrics::Definitions& d = c->definitions;
  d.relevance_threshold = RandomInt<int32_t>(rng, 0);
  d.gain = RandomOf(rng, {metrics::Gain::kLinear, metrics::Gain::kExponential});
  d.recall_denominator =
      RandomOf(rng, {metrics::RecallDenominator::kRelevant,
                     metrics::RecallDenominator::kMinCutoffRelevant});
  d.ap_denominator =
      RandomOf(rng, {metrics::ApDenominator::kRelevant,
                     metrics::ApDenominator::kMinCutoffRelevant,
                     metrics::ApDenominator::kRetrievedRelevant});
  d.zero_relevant = RandomOf(rng, {metrics::ZeroRelevantPolicy::kScoreZero,
                                   metrics::ZeroRelevantPolicy::kSkip});
}

void RandomAggregation(Xoshiro256& rng, AggregationConfig* c) {
  // Windows: distinct multiples of the bucket, within kMaxDuration.
  c->bucket = Duration(rng.Between(1, 3'600'000));
  const int64_t max_multiple =
      std::min<int64_t>(100, kMaxDuration.count() / c->bucket.count());
  c->windows.clear();
  for (int64_t n = rng.Between(0, 3); n > 0; --n) {
    const Duration w = c->bucket * rng.Between(1, max_multiple);
    if (std::find(c->windows.begin(), c->windows.end(), w) ==
        c->windows.end()) {
      c->windows.push_back(w);
    }
  }
  // Segment labels: valid Prometheus names that rankwatch does not use.
  c->segments.clear();
  for (int64_t n = rng.Between(0, 3); n > 0; --n) {
    std::string label = "seg_";
    for (int64_t len = rng.Between(1, 6); len > 0; --len) {
      label += static_cast<char>(rng.Between('a', 'z'));
    }
    if (std::find(c->segments.begin(), c->segments.end(), label) ==
        c->segments.end()) {
      c->segments.push_back(std::move(label));
    }
  }
  c->segment_values.clear();
  for (const std::string& label : c->segments) {
    if (rng.Below(2) == 0) c->segment_values[label] = RandomNames(rng, 3);
  }
  c->variants = RandomNames(rng, 4);
  c->max_variants = RandomInt<int32_t>(rng, 1);
  c->max_segment_values = RandomInt<int32_t>(rng, 1);
}

void RandomKafka(Xoshiro256& rng, KafkaConfig* c) {
  c->bootstrap_servers = RandomString(rng, 1, 10);
  c->group_id = RandomString(rng, 1, 10);
  c->results_topic = RandomString(rng, 1, 10);
  c->judgments_topic = RandomString(rng, 1, 10);
  c->commit_interval = RandomDuration(rng, true);
  c->not_ready_after = RandomDuration(rng, true);
  c->durable_state = rng.Below(2) == 1;
  c->changelog_topic = rng.Below(2) == 1 ? RandomString(rng, 1, 10) : "";
  // Kafka's alphabet for an instance id only (others are refused).
  c->group_instance_id.clear();
  for (int64_t n = rng.Below(12); n > 0; --n) {
    c->group_instance_id += "aZ09._-"[rng.Below(7)];
  }
  c->checkpoint_interval = RandomDuration(rng, true);
  c->properties.clear();
  for (int64_t n = rng.Between(0, 4); n > 0; --n) {
    const std::string name = RandomString(rng, 1, 8);
    // Secrets print masked; names with their own key are refused.
    if (IsSecretProperty(name) || name == "bootstrap.servers" ||
        name == "metadata.broker.list" || name == "group.id" ||
        name == "group.instance.id") {
      continue;
    }
    c->properties[name] = RandomString(rng, 0, 8);
  }
}

std::string RandomListen(Xoshiro256& rng) {
  std::string host;
  switch (rng.Below(3)) {
    case 0:
      host = "[::1]";
      break;
    case 1:
      host = "[fe80::1:2]";
      break;
    default:
      for (int64_t len = rng.Between(1, 10); len > 0; --len) {
        constexpr std::string_view kHostChars =
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";
        host += kHostChars[rng.Below(kHostChars.size())];
      }
  }
  return host + ":" + std::to_string(rng.Between(0, 65535));
}

// Experiments compare variants of the allow-list when there is one.
// Primary series among those `metrics` computes (the loader checks that);
// none when it computes no quality series.
std::vector<SeriesRef> RandomPrimary(Xoshiro256& rng,
                                     const MetricsConfig& metrics) {
  std::vector<SeriesRef> all;
  for (metrics::Measure m : metrics.measures) {
    if (!metrics::IsQualityMeasure(m) || !metrics::DefinedForEveryList(m)) {
      continue;
    }
    if (metrics::HasUncutVariant(m)) all.push_back({m, 0});
    if (!metrics::HasCutoffVariant(m)) continue;
    for (int32_t k : metrics.cutoffs) all.push_back({m, k});
  }
  for (size_t i = all.size(); i > 1; --i) {
    std::swap(all[i - 1], all[rng.Below(i)]);
  }
  all.resize(std::min<size_t>(all.size(), rng.Between(1, 3)));
  return all;
}

// Guardrails on computed series that are not primary, each at most once,
// with an absolute or a relative margin.
std::vector<GuardrailConfig> RandomGuardrails(
    Xoshiro256& rng, const MetricsConfig& metrics,
    const std::vector<SeriesRef>& primary) {
  std::vector<GuardrailConfig> out;
  for (metrics::Measure m : metrics.measures) {
    std::vector<int32_t> ks;
    if (metrics::HasUncutVariant(m)) ks.push_back(0);
    if (metrics::HasCutoffVariant(m)) {
      ks.insert(ks.end(), metrics.cutoffs.begin(), metrics.cutoffs.end());
    }
    for (int32_t k : ks) {
      const SeriesRef ref{m, k};
      if (rng.Below(4) != 0 ||
          std::find(primary.begin(), primary.end(), ref) != primary.end()) {
        continue;
      }
      GuardrailConfig g;
      g.series = ref;
      g.relative = rng.Below(2) == 0;
      g.margin = rng.Below(5) == 0 ? 0 : RandomPositive(rng);
      out.push_back(g);
    }
  }
  return out;
}

// schema.fields (names that no other random string takes: "f<i>..."; paths
// under their own "rwf<i>" object) and, for some experiments, a guardrail
// on one. Drawn last, so that the other fields keep their values.
void RandomResultFields(Xoshiro256& rng, Config* c) {
  static constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz_09";
  for (int64_t i = 0, n = rng.Between(0, 3); i < n; ++i) {
    ResultFieldConfig f;
    f.name = "f" + std::to_string(i);
    for (int64_t k = rng.Between(0, 6); k > 0; --k) {
      f.name += kLower[rng.Below(kLower.size())];
    }
    f.path = "rwf" + std::to_string(i) + "." + f.name;
    f.higher_is_better = rng.Below(2) == 0;
    f.mixture_sd = RandomPositive(rng);
    f.min = -static_cast<double>(rng.Between(0, 1000));
    f.max = static_cast<double>(rng.Between(1, 1000));
    c->schema.fields.push_back(std::move(f));
  }
  if (c->schema.fields.empty()) return;
  for (ExperimentConfig& e : c->experiments) {
    if (rng.Below(2) == 0) continue;
    GuardrailConfig g;
    g.series.field = c->schema.fields[rng.Below(c->schema.fields.size())].name;
    g.relative = rng.Below(2) == 0;
    g.margin = RandomPositive(rng);
    e.guardrails.push_back(g);
  }
}

std::vector<ExperimentConfig> RandomExperiments(
    Xoshiro256& rng, const std::vector<std::string>& allowed,
    const MetricsConfig& metrics) {
  std::vector<ExperimentConfig> out;
  for (int64_t n = rng.Between(0, 3); n > 0; --n) {
    std::vector<std::string> variants =
        allowed.empty() ? RandomNames(rng, 4) : allowed;
    if (variants.size() < 2) continue;
    for (size_t i = variants.size(); i > 1; --i) {
      std::swap(variants[i - 1], variants[rng.Below(i)]);
    }
    ExperimentConfig e;
    e.name = RandomString(rng, 1, 8);
    e.baseline = variants[0];
    e.treatments.assign(variants.begin() + 1,
                        variants.begin() + rng.Between(2, variants.size()));
    for (size_t i = 0; i <= e.treatments.size(); ++i) {
      e.split.push_back(RandomPositive(rng));
    }
    e.primary = RandomPrimary(rng, metrics);
    e.guardrails = RandomGuardrails(rng, metrics, e.primary);
    e.min_lists = rng.Between(0, 10000);
    e.min_duration = std::chrono::seconds(rng.Between(0, 100000));
    const bool taken = std::any_of(out.begin(), out.end(), [&](const auto& x) {
      return x.name == e.name;
    });
    if (!taken) out.push_back(std::move(e));
  }
  return out;
}

// Interleaving needs the impression join; distinct names and variants,
// from the allow-list when there is one.
std::vector<InterleavingConfig> RandomInterleaving(
    Xoshiro256& rng, JoinMode mode, const std::vector<std::string>& allowed) {
  std::vector<InterleavingConfig> out;
  if (mode != JoinMode::kImpression) return out;
  const std::vector<std::string> variants =
      allowed.empty() ? RandomNames(rng, 2) : allowed;
  for (size_t i = 0; i < variants.size() && i < 2; ++i) {
    InterleavingConfig e;
    e.name = "i" + std::to_string(i) + RandomString(rng, 0, 6);
    e.variant = variants[i];
    e.teams = {RandomString(rng, 1, 6), RandomString(rng, 1, 6)};
    out.push_back(std::move(e));
  }
  return out;
}

Config RandomConfig(uint64_t seed) {
  Xoshiro256 rng(seed);
  Config c;
  RandomSchema(rng, &c.schema);
  RandomJoin(rng, &c.join);
  RandomEvents(rng, &c.events);
  RandomMetrics(rng, &c.metrics);
  RandomAggregation(rng, &c.aggregation);
  c.dead_letter.file = RandomString(rng, 0, 10);
  c.dead_letter.topic = RandomString(rng, 0, 10);
  RandomKafka(rng, &c.kafka);
  c.http.listen = RandomListen(rng);
  c.http.enable_reload = rng.Between(0, 1) == 1;
  for (int i = static_cast<int>(rng.Between(0, 2)); i > 0; --i) {
    const std::string host = "h" + RandomString(rng, 1, 6);
    if (std::find(c.http.allowed_hosts.begin(), c.http.allowed_hosts.end(),
                  host) == c.http.allowed_hosts.end()) {
      c.http.allowed_hosts.push_back(host);
    }
  }
  c.http.response_budget_bytes = RandomInt<int64_t>(rng, int64_t{1} << 20);
  if (rng.Between(0, 1) == 1) {
    c.http.tls.cert_file = "c" + RandomString(rng, 0, 8);
    c.http.tls.key_file = "k" + RandomString(rng, 0, 8);
    c.http.tls.client_ca = RandomString(rng, 0, 8);
    c.http.tls.min_version = RandomOf<std::string>(rng, {"1.2", "1.3"});
    c.http.tls.cipher_suites = RandomString(rng, 0, 8);
  }
  c.experiments = RandomExperiments(rng, c.aggregation.variants, c.metrics);
  // Levels strictly between 0 and 1; mixture_sd any positive double.
  do {
    c.statistics.level = rng.Uniform();
  } while (c.statistics.level == 0);
  c.statistics.mixture_sd = RandomPositive(rng);
  c.statistics.unit_buckets = static_cast<int32_t>(rng.Between(2, 4096));
  do {
    c.statistics.srm_level = rng.Uniform();
  } while (c.statistics.srm_level == 0);
  c.statistics.max_tracked_units = RandomInt<int64_t>(rng, 0);
  c.logging.level = RandomOf<std::string>(
      rng, {"trace", "debug", "info", "warn", "error", "off"});
  c.logging.max_rejects_logged_per_second = RandomInt<int32_t>(rng, 0);
  // Drawn last, so that the fields above get the values they always had.
  // basic_auth prints masked: RandomConfigsRoundTripWithMaskedSecrets.
  c.schema.team = RandomString(rng, 1, 10);
  c.schema.kind = RandomString(rng, 1, 10);
  c.statistics.tracked_queries =
      static_cast<int32_t>(rng.Between(0, 1'000'000));
  c.metrics.click_exclude_kinds = RandomNames(rng, 3);
  c.interleaving = RandomInterleaving(rng, c.join.mode, c.aggregation.variants);
  // Strictly between 0 and 0.5.
  do {
    c.statistics.interleaving_prior_sd = rng.Uniform() / 2;
  } while (c.statistics.interleaving_prior_sd == 0);
  c.logging.format = RandomOf(rng, {LogFormat::kText, LogFormat::kJson});
  c.statistics.export_query_movers = static_cast<int32_t>(rng.Between(0, 100));
  RandomSchemaExtensions(rng, &c.schema);
  RandomResultFields(rng, &c);
  c.schema.judge = AsFieldPath("j" + RandomString(rng, 0, 8));
  c.judges.names = RandomNames(rng, static_cast<int>(kMaxJudges));
  // schema.judge is read only with judges (a load error otherwise).
  if (c.judges.names.empty()) c.schema.judge = config::SchemaConfig().judge;
  // A qrels file's labels need a default judge.
  c.judges.default_judge =
      c.judges.names.empty() ||
              (rng.Between(0, 1) == 0 && c.join.qrels_file.empty())
          ? ""
          : c.judges.names[rng.Between(0, c.judges.names.size() - 1)];
  c.judges.combine =
      RandomOf(rng, {JudgeCombine::kPrecedence, JudgeCombine::kPooled});
  if (c.judges.names.size() >= 2 && rng.Between(0, 1) == 1) {
    c.judges.ppi.trusted = c.judges.names[0];
    c.judges.ppi.cheap = c.judges.names.back();
    c.judges.ppi.tune = rng.Between(0, 1) == 1;
  }
  // In (0, 1].
  c.judges.coverage_tolerance = 1 - rng.Uniform();
  return c;
}

// Every field of Config set to a valid value other than its default, but
// for join.mode and join.qrels_file in the impression configuration and
// interleaving in the qrels one (interleaving needs the impression join,
// and only the qrels join reads a file). Secrets are the mask itself, so
// that they print and load back unchanged.
Config FullConfig(JoinMode mode) {
  Config c;
  SchemaConfig& s = c.schema;
  s.request_id = "rid";
  s.query_id = "qid";
  s.variant = "arm";
  s.timestamp = "ts";
  s.results = "hits";
  s.doc_id = "id";
  s.score = "s";
  s.segments = "labels";
  s.relevance = "grade";
  s.judgments = "batch";
  s.default_variant = "control";
  s.unit = "user_id";
  s.team = "ranker";
  s.teams = "attrs.teams";
  s.covariate = "pre.ndcg";
  s.fields = {{"latency_ms", "timing.latency_ms", false, 12.5, 0, 60000},
              {"revenue", "revenue", true, 0.25, -100, 1e6}};
  s.kind = "type";
  s.judge = "labeller";
  s.default_relevance = 1;
  s.preset = "ubi";
  s.actions = {{"view", 0}, {"buy", 4}};
  s.position = "where.rank";
  s.position_base = 0;
  s.impression_kind = "shown";

  JoinConfig& j = c.join;
  j.mode = mode;
  j.window = minutes(10);
  j.early_tolerance = seconds(2);
  j.allowed_lateness = seconds(30);
  j.idle_timeout = seconds(20);
  j.combine = CombineRule::kLast;
  j.qrels_delay = seconds(3);
  if (mode == JoinMode::kQrels) j.qrels_file = "judged.qrels";
  j.max_pending_requests = 1000;
  j.max_judgments_per_request = 10;
  j.max_table_entries = 5000;

  EventLimitsConfig& e = c.events;
  e.max_results = 500;
  e.max_id_length = 256;
  e.max_judgments = 200;
  e.max_event_bytes = 4096;
  e.max_future_skew = minutes(1);
  e.min_timestamp_ms = 1'577'836'800'000;  // 2020-01-01T00:00:00Z.

  MetricsConfig& m = c.metrics;
  m.cutoffs = {5, 20};
  m.measures = {metrics::Measure::kSuccess, metrics::Measure::kNdcg};
  m.definitions.relevance_threshold = 2;
  m.definitions.gain = metrics::Gain::kExponential;
  m.definitions.recall_denominator =
      metrics::RecallDenominator::kMinCutoffRelevant;
  m.definitions.ap_denominator = metrics::ApDenominator::kRetrievedRelevant;
  m.definitions.zero_relevant = metrics::ZeroRelevantPolicy::kSkip;
  m.click_exclude_kinds = {"label"};

  AggregationConfig& a = c.aggregation;
  a.windows = {minutes(15)};
  a.bucket = seconds(30);
  a.segments = {"locale"};
  a.variants = {"A", "B", "C"};
  a.max_variants = 5;
  a.segment_values = {{"locale", {"de", "en"}}};
  a.max_segment_values = 10;

  c.dead_letter.file = "dead.jsonl";
  c.dead_letter.topic = "dead";

  KafkaConfig& k = c.kafka;
  k.bootstrap_servers = "k1:9092";
  k.group_id = "g";
  k.results_topic = "served";
  k.judgments_topic = "judged";
  k.commit_interval = seconds(1);
  k.not_ready_after = minutes(1);
  k.durable_state = false;  // Opted out: the default is true.
  k.changelog_topic = "state";
  k.group_instance_id = "rankwatch-0";
  k.checkpoint_interval = seconds(2);
  k.properties = {{"client.id", "rw"},
                  {"sasl.password", std::string(kMaskedSecret)}};

  HttpConfig& h = c.http;
  h.listen = "0.0.0.0:9999";
  h.enable_reload = true;
  h.allowed_hosts = {"rank.example"};
  h.response_budget_bytes = 1 << 20;
  h.tls.cert_file = "cert.pem";
  h.tls.key_file = "key.pem";
  h.tls.client_ca = "ca.pem";
  h.tls.min_version = "1.3";
  h.tls.cipher_suites = "ECDHE-RSA-AES128-GCM-SHA256";
  h.basic_auth.username = "admin";
  h.basic_auth.password = std::string(kMaskedSecret);
  h.basic_auth.users = {{"bob", std::string(kMaskedSecret)}};

  c.experiments = {{"ab", "A", {"B"}}};
  c.experiments[0].split = {1, 3};
  c.experiments[0].min_lists = 250;
  c.experiments[0].min_duration = std::chrono::hours(24);
  c.experiments[0].primary = {{metrics::Measure::kNdcg, 20}};
  c.experiments[0].guardrails = {
      {{metrics::Measure::kSuccess, 5}, 0.01},
      {{metrics::Measure::kNdcg, 5}, 0.05, true},
      {{metrics::Measure::kNdcg, 0, "latency_ms"}, 0.1, true}};
  if (mode == JoinMode::kImpression) {
    c.interleaving = {{"il", "C", {"old", "new"}}};
  }

  StatisticsConfig& st = c.statistics;
  st.level = 0.9;
  st.mixture_sd = 0.1;
  st.unit_buckets = 32;
  st.srm_level = 0.01;
  st.max_tracked_units = 1000;
  st.tracked_queries = 50;
  st.export_query_movers = 5;
  st.interleaving_prior_sd = 0.1;

  c.logging.level = "debug";
  c.logging.format = LogFormat::kJson;
  c.logging.max_rejects_logged_per_second = 7;

  c.judges.names = {"human", "umbrela-v1", "clicks"};
  c.judges.default_judge = "clicks";
  c.judges.combine = JudgeCombine::kPooled;
  c.judges.ppi = {.trusted = "human", .cheap = "umbrela-v1", .tune = true};
  c.judges.coverage_tolerance = 0.1;
  return c;
}

// The whole Config, by its defaulted operator==: a field that the writer
// does not print, or the loader does not read, fails here. The keys of
// ConfigKeys() are compared first only to name the one that differs.
void ExpectSameConfig(const Config& want, const Config& got) {
  for (const ConfigKey& key : ConfigKeys()) {
    EXPECT_TRUE(key.same(want, got)) << key.path << " differs";
  }
  EXPECT_TRUE(want == got);
}
// YAML limits implicit keys to 1024 characters (the config fuzzer found a
// long variant name printing a configuration that does not load): such keys
// are written as explicit keys, and the configuration loads again.
TEST(EffectiveConfigTest, LongMapKeysRoundTrip) {
  Config c;
  const std::string long_name(1100, 'v');
  c.experiments = {{"e", "A", {long_name}}};
  c.experiments[0].split = {1, 2};
  c.experiments[0].primary = {{metrics::Measure::kNdcg, 10}};
  c.kafka.properties = {{long_name, "x"}};
  c.aggregation.segments = {"locale"};
  c.aggregation.segment_values = {{"locale", {"en"}}};
  const std::string out = FormatEffectiveConfig(c);
  EXPECT_NE(out.find("      ? \"" + long_name + "\"\n      : 2\n"),
            std::string::npos);
  StatusOr<Config> reloaded = ParseConfig(out, "effective.yaml", EnvLookup());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().message();
  EXPECT_EQ(FormatEffectiveConfig(*reloaded), out);
  EXPECT_EQ(reloaded->experiments[0].split, (std::vector<double>{1, 2}));
}

TEST(EffectiveConfigTest, RandomConfigsRoundTrip) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Config c = RandomConfig(seed);
    const std::string out = FormatEffectiveConfig(c);
    StatusOr<Config> reloaded = ParseConfig(out, "effective.yaml", EnvLookup());
    ASSERT_TRUE(reloaded.ok()) << reloaded.status().message() << "\n" << out;
    ExpectSameConfig(c, *reloaded);
    EXPECT_EQ(FormatEffectiveConfig(*reloaded), out);
    if (HasFailure()) break;  // One failing configuration is enough to read.
  }
}

// A secret does not survive the trip: the mask does, and everything else.
TEST(EffectiveConfigTest, RandomConfigsRoundTripWithMaskedSecrets) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Config c = RandomConfig(seed);
    Xoshiro256 rng(~seed);
    c.kafka.properties["sasl.password"] = RandomString(rng, 0, 8);
    c.http.basic_auth.users["u" + std::to_string(rng.Below(1000))] =
        "p" + RandomString(rng, 0, 8);
    // Named apart from the users ("u..."), as the loader asks.
    c.http.basic_auth.username = "n" + std::to_string(rng.Below(1000));
    c.http.basic_auth.password = "p" + RandomString(rng, 0, 8);
    const Config reloaded = MustParse(FormatEffectiveConfig(c));
    c.kafka.properties["sasl.password"] = std::string(kMaskedSecret);
    c.http.basic_auth.password = std::string(kMaskedSecret);
    for (auto& [name, secret] : c.http.basic_auth.users) {
      secret = std::string(kMaskedSecret);
    }
    ExpectSameConfig(c, reloaded);
    if (HasFailure()) break;
  }
}

// Every field set, in both join modes, prints and loads back equal.
TEST(EffectiveConfigTest, EveryFieldRoundTrips) {
  for (JoinMode mode : {JoinMode::kImpression, JoinMode::kQrels}) {
    SCOPED_TRACE(JoinModeName(mode));
    const Config c = FullConfig(mode);
    const std::string out = FormatEffectiveConfig(c);
    StatusOr<Config> reloaded = ParseConfig(out, "effective.yaml", EnvLookup());
    ASSERT_TRUE(reloaded.ok()) << reloaded.status().message() << "\n" << out;
    ExpectSameConfig(c, *reloaded);
    EXPECT_EQ(FormatEffectiveConfig(*reloaded), out);
  }
}

// FullConfig() leaves no field at its default (but the join's mode and
// file, and interleaving, each in one of the two), so that the round trip
// above covers every field.
TEST(EffectiveConfigTest, FullConfigSetsEveryKey) {
  const Config defaults;
  for (const ConfigKey& key : ConfigKeys()) {
    EXPECT_FALSE(key.same(FullConfig(JoinMode::kImpression), defaults) &&
                 key.same(FullConfig(JoinMode::kQrels), defaults))
        << key.path << " is left at its default";
  }
}

// ConfigKeys() holds every field of Config exactly once: copying every key
// into a default Config gives the whole, and each key copies only itself.
// A field added to Config without its row fails here (when FullConfig sets
// it; the size check below catches one that is not set either).
TEST(ConfigKeysTest, CoverEveryFieldOnce) {
  for (JoinMode mode : {JoinMode::kImpression, JoinMode::kQrels}) {
    SCOPED_TRACE(JoinModeName(mode));
    const Config full = FullConfig(mode);
    Config copied;
    for (const ConfigKey& key : ConfigKeys()) key.copy(full, &copied);
    EXPECT_TRUE(copied == full);
    for (const ConfigKey& key : ConfigKeys()) {
      Config one;
      key.copy(full, &one);
      for (const ConfigKey& other : ConfigKeys()) {
        if (other.path == key.path) continue;
        EXPECT_TRUE(other.same(one, Config()))
            << key.path << " sets " << other.path;
      }
    }
  }
  std::vector<std::string_view> paths;
  for (const ConfigKey& key : ConfigKeys()) paths.push_back(key.path);
  std::sort(paths.begin(), paths.end());
  EXPECT_EQ(std::adjacent_find(paths.begin(), paths.end()), paths.end());
}

// What a reload changed (issue 43): every differing key, live or not, in
// ConfigKeys() order; none for an equal configuration. An experiment's
// series spelled another way is the same series (SeriesRef::spelling).
TEST(ConfigKeysTest, ChangedKeysNamesEveryKeyThatDiffers) {
  const Config defaults;
  EXPECT_EQ(ChangedKeys(defaults, defaults), std::vector<std::string>{});
  Config next = defaults;
  next.metrics.cutoffs = {1, 3};
  next.join.window = std::chrono::minutes(5);
  next.logging.level = "debug";
  EXPECT_EQ(
      ChangedKeys(defaults, next),
      (std::vector<std::string>{"logging", "join.window", "metrics.cutoffs"}));
}

// The refused keys of docs/configuration.md ("Reloading"), each owner's
// in table order; the click threshold only when the next join is the
// impression join.
TEST(ConfigKeysTest, FixedKeysChangedNamesTheRefusedKeys) {
  const Config defaults;
  EXPECT_EQ(FixedKeysChanged(defaults, FullConfig(JoinMode::kImpression),
                             KeyOwner::kServer),
            (std::vector<std::string>{
                "kafka.bootstrap_servers", "kafka.group_id",
                "kafka.results_topic", "kafka.judgments_topic",
                "kafka.commit_interval", "kafka.not_ready_after",
                "kafka.durable_state", "kafka.changelog_topic",
                "kafka.group_instance_id", "kafka.checkpoint_interval",
                "kafka.properties", "http.listen", "http.allowed_hosts",
                "http.response_budget_bytes", "http.tls", "http.basic_auth"}));
  EXPECT_EQ(FixedKeysChanged(defaults, FullConfig(JoinMode::kImpression),
                             KeyOwner::kPipeline),
            (std::vector<std::string>{
                "schema", "judges", "join.window", "join.early_tolerance",
                "join.allowed_lateness", "join.idle_timeout", "join.combine",
                "join.qrels_delay", "dead_letter.file", "dead_letter.topic",
                "aggregation.segments", "aggregation.variants",
                "aggregation.segment_values",
                "metrics.definitions.relevance_threshold"}));
  EXPECT_EQ(
      FixedKeysChanged(defaults, FullConfig(JoinMode::kQrels),
                       KeyOwner::kPipeline),
      (std::vector<std::string>{
          "schema", "judges", "join.mode", "join.window",
          "join.early_tolerance", "join.allowed_lateness", "join.idle_timeout",
          "join.combine", "join.qrels_delay", "join.qrels_file",
          "dead_letter.file", "dead_letter.topic", "aggregation.segments",
          "aggregation.variants", "aggregation.segment_values"}));
  // One field deep inside a section names the section.
  Config next;
  next.http.tls.cipher_suites = "x";
  EXPECT_EQ(FixedKeysChanged(defaults, next, KeyOwner::kServer),
            (std::vector<std::string>{"http.tls"}));
  EXPECT_TRUE(FixedKeysChanged(defaults, next, KeyOwner::kPipeline).empty());
}

// The query movers' sizes are not read by any test: changing them keeps
// the running tests on reload; any other statistics field restarts them.
TEST(ConfigKeysTest, SameTestsIgnoresOnlyTheMoversSizes) {
  const StatisticsConfig defaults;
  StatisticsConfig next;
  next.tracked_queries = 5;
  next.export_query_movers = 3;
  EXPECT_TRUE(SameTests(defaults, next));
  EXPECT_FALSE(defaults == next);
  const StatisticsConfig full = FullConfig(JoinMode::kImpression).statistics;
  StatisticsConfig one = defaults;
  one.level = full.level;
  EXPECT_FALSE(SameTests(defaults, one));
  one = defaults;
  one.interleaving_prior_sd = full.interleaving_prior_sd;
  EXPECT_FALSE(SameTests(defaults, one));
  one = defaults;
  one.max_tracked_units = full.max_tracked_units;
  EXPECT_FALSE(SameTests(defaults, one));
}

// A tripwire for a field added to a config struct and to nothing else (not
// FullConfig, not ConfigKeys(), not the writer): the struct grows. Sizes of
// libstdc++ on 64-bit x86; when this fails, add the field to FullConfig()
// and to ConfigKeys() (config.cc), print it in effective_config.cc, then
// update the size.
#if defined(__GLIBCXX__) && defined(__x86_64__)
static_assert(sizeof(SchemaConfig) == 728);
static_assert(sizeof(ResultFieldConfig) == 96);
static_assert(sizeof(JoinConfig) == 112);
static_assert(sizeof(EventLimitsConfig) == 40);
static_assert(sizeof(MetricsConfig) == 96);
static_assert(sizeof(metrics::Definitions) == 20);
static_assert(sizeof(AggregationConfig) == 144);
static_assert(sizeof(DeadLetterConfig) == 64);
static_assert(sizeof(KafkaConfig) == 272);
static_assert(sizeof(TlsConfig) == 160);
static_assert(sizeof(BasicAuthConfig) == 112);
static_assert(sizeof(HttpConfig) == 344);
static_assert(sizeof(ExperimentConfig) == 176);
// SeriesRef::spelling is no key of its own: the text of `primary` and
// `series`, which the writer prints in canonical form.
static_assert(sizeof(GuardrailConfig) == 88);
static_assert(sizeof(SeriesRef) == 72);
static_assert(sizeof(InterleavingConfig) == 88);
static_assert(sizeof(StatisticsConfig) == 56);
static_assert(sizeof(LoggingConfig) == 40);
static_assert(sizeof(JudgesPpiConfig) == 72);
static_assert(sizeof(JudgesConfig) == 144);
static_assert(sizeof(Config) == 2088);
#endif

// Whole seconds print without a fraction, others with milliseconds; both
// read back to the same time.
TEST(EffectiveConfigTest, MinTimestampRoundTrips) {
  struct Case {
    int64_t ms;
    std::string_view line;
  };
  for (const Case& c : {
           Case{0, "  min_timestamp: \"1970-01-01T00:00:00Z\"\n"},
           Case{1, "  min_timestamp: \"1970-01-01T00:00:00.001Z\"\n"},
           // date -u -d '2020-01-01T00:00:00Z' +%s -> 1577836800
           Case{1577836800000, "  min_timestamp: \"2020-01-01T00:00:00Z\"\n"},
           Case{1577836799999,
                "  min_timestamp: \"2019-12-31T23:59:59.999Z\"\n"},
           Case{1577836800010,
                "  min_timestamp: \"2020-01-01T00:00:00.010Z\"\n"},
           Case{253402300799999,
                "  min_timestamp: \"9999-12-31T23:59:59.999Z\"\n"},
       }) {
    SCOPED_TRACE(c.ms);
    Config config;
    config.events.min_timestamp_ms = c.ms;
    const std::string out = FormatEffectiveConfig(config);
    EXPECT_NE(out.find(c.line), std::string::npos) << out;
    EXPECT_EQ(MustParse(out).events.min_timestamp_ms, c.ms);
  }
}

TEST(EffectiveConfigTest, RoundTripsAwkwardStrings) {
  Config c;
  c.dead_letter.file = "/tmp/a \"quoted\" $HOME ${X} back\\slash\nnew\tline";
  c.dead_letter.topic = "null";
  c.schema.variant = "~";
  c.schema.doc_id = "true";
  c.schema.score = "123";
  c.schema.default_variant = "# not a comment: {x}";
  c.kafka.properties["client.id"] = "a: b, [c]";
  c.kafka.properties["odd name: x"] = "$";
  c.statistics.level = 0.123456789012345;
  const std::string out = FormatEffectiveConfig(c);
  const Config reloaded = MustParse(out);
  EXPECT_EQ(reloaded.dead_letter.file, c.dead_letter.file);
  EXPECT_EQ(reloaded.dead_letter.topic, "null");
  EXPECT_EQ(reloaded.schema.variant, "~");
  EXPECT_EQ(reloaded.schema.doc_id, "true");
  EXPECT_EQ(reloaded.schema.score, "123");
  EXPECT_EQ(reloaded.schema.default_variant, c.schema.default_variant);
  EXPECT_EQ(reloaded.kafka.properties, c.kafka.properties);
  EXPECT_EQ(reloaded.statistics.level, c.statistics.level);
  EXPECT_EQ(FormatEffectiveConfig(reloaded), out);
}

}  // namespace
}  // namespace rankwatch::config
