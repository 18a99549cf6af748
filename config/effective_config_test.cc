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
#include "config/config_loader.h"
#include "config/rfc3339.h"

namespace rankwatch::config {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// Loads `yaml` with no environment variable set (the writer escapes '$', so
// none is needed), expecting success.
Config MustParse(std::string_view yaml) {
  StatusOr<Config> c = ParseConfig(yaml, "effective.yaml", EnvLookup());
  EXPECT_TRUE(c.ok()) << c.status().message() << "\n" << yaml;
  return c.ok() ? *c : Config{};
}

std::string Defaults() { return FormatEffectiveConfig(Config{}); }

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
  kind: "kind"
  default_relevance: null
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
  interleaving_prior_sd: 0.05
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
  // written \xNN.
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
  EXPECT_NE(out.find("  file: \"tab\\x09here\\x01\"\n"), std::string::npos)
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
  c->properties.clear();
  for (int64_t n = rng.Between(0, 4); n > 0; --n) {
    const std::string name = RandomString(rng, 1, 8);
    // Secrets print masked; names with their own key are refused.
    if (IsSecretProperty(name) || name == "bootstrap.servers" ||
        name == "metadata.broker.list" || name == "group.id") {
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
    const bool taken = std::any_of(out.begin(), out.end(), [&](const auto& x) {
      return x.name == e.name;
    });
    if (!taken) out.push_back(std::move(e));
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
  return c;
}

// Every field of config.h, compared one by one.
void ExpectSameConfig(const Config& want, const Config& got) {
  const SchemaConfig &ws = want.schema, &gs = got.schema;
  EXPECT_EQ(ws.request_id, gs.request_id);
  EXPECT_EQ(ws.query_id, gs.query_id);
  EXPECT_EQ(ws.variant, gs.variant);
  EXPECT_EQ(ws.timestamp, gs.timestamp);
  EXPECT_EQ(ws.results, gs.results);
  EXPECT_EQ(ws.doc_id, gs.doc_id);
  EXPECT_EQ(ws.score, gs.score);
  EXPECT_EQ(ws.segments, gs.segments);
  EXPECT_EQ(ws.relevance, gs.relevance);
  EXPECT_EQ(ws.judgments, gs.judgments);
  EXPECT_EQ(ws.default_variant, gs.default_variant);
  EXPECT_EQ(ws.unit, gs.unit);
  EXPECT_EQ(ws.default_relevance, gs.default_relevance);

  const JoinConfig &wj = want.join, &gj = got.join;
  EXPECT_EQ(wj.mode, gj.mode);
  EXPECT_EQ(wj.window, gj.window);
  EXPECT_EQ(wj.early_tolerance, gj.early_tolerance);
  EXPECT_EQ(wj.allowed_lateness, gj.allowed_lateness);
  EXPECT_EQ(wj.idle_timeout, gj.idle_timeout);
  EXPECT_EQ(wj.combine, gj.combine);
  EXPECT_EQ(wj.qrels_delay, gj.qrels_delay);
  EXPECT_EQ(wj.qrels_file, gj.qrels_file);
  EXPECT_EQ(wj.max_pending_requests, gj.max_pending_requests);
  EXPECT_EQ(wj.max_judgments_per_request, gj.max_judgments_per_request);
  EXPECT_EQ(wj.max_table_entries, gj.max_table_entries);

  const EventLimitsConfig &we = want.events, &ge = got.events;
  EXPECT_EQ(we.max_results, ge.max_results);
  EXPECT_EQ(we.max_id_length, ge.max_id_length);
  EXPECT_EQ(we.max_judgments, ge.max_judgments);
  EXPECT_EQ(we.max_event_bytes, ge.max_event_bytes);
  EXPECT_EQ(we.max_future_skew, ge.max_future_skew);
  EXPECT_EQ(we.min_timestamp_ms, ge.min_timestamp_ms);

  const MetricsConfig &wm = want.metrics, &gm = got.metrics;
  EXPECT_EQ(wm.cutoffs, gm.cutoffs);
  EXPECT_EQ(wm.measures, gm.measures);
  EXPECT_EQ(wm.definitions.relevance_threshold,
            gm.definitions.relevance_threshold);
  EXPECT_EQ(wm.definitions.gain, gm.definitions.gain);
  EXPECT_EQ(wm.definitions.recall_denominator,
            gm.definitions.recall_denominator);
  EXPECT_EQ(wm.definitions.ap_denominator, gm.definitions.ap_denominator);
  EXPECT_EQ(wm.definitions.zero_relevant, gm.definitions.zero_relevant);

  const AggregationConfig &wa = want.aggregation, &ga = got.aggregation;
  EXPECT_EQ(wa.windows, ga.windows);
  EXPECT_EQ(wa.bucket, ga.bucket);
  EXPECT_EQ(wa.segments, ga.segments);
  EXPECT_EQ(wa.variants, ga.variants);
  EXPECT_EQ(wa.max_variants, ga.max_variants);
  EXPECT_EQ(wa.segment_values, ga.segment_values);
  EXPECT_EQ(wa.max_segment_values, ga.max_segment_values);

  EXPECT_EQ(want.dead_letter.file, got.dead_letter.file);
  EXPECT_EQ(want.dead_letter.topic, got.dead_letter.topic);

  const KafkaConfig &wk = want.kafka, &gk = got.kafka;
  EXPECT_EQ(wk.bootstrap_servers, gk.bootstrap_servers);
  EXPECT_EQ(wk.group_id, gk.group_id);
  EXPECT_EQ(wk.results_topic, gk.results_topic);
  EXPECT_EQ(wk.judgments_topic, gk.judgments_topic);
  EXPECT_EQ(wk.commit_interval, gk.commit_interval);
  EXPECT_EQ(wk.not_ready_after, gk.not_ready_after);
  EXPECT_EQ(wk.properties, gk.properties);

  EXPECT_EQ(want.http.listen, got.http.listen);
  EXPECT_EQ(want.http.enable_reload, got.http.enable_reload);
  EXPECT_EQ(want.http.allowed_hosts, got.http.allowed_hosts);
  EXPECT_EQ(want.http.response_budget_bytes, got.http.response_budget_bytes);
  EXPECT_EQ(want.http.tls.cert_file, got.http.tls.cert_file);
  EXPECT_EQ(want.http.tls.key_file, got.http.tls.key_file);
  EXPECT_EQ(want.http.tls.client_ca, got.http.tls.client_ca);
  EXPECT_EQ(want.http.tls.min_version, got.http.tls.min_version);
  EXPECT_EQ(want.http.tls.cipher_suites, got.http.tls.cipher_suites);
  EXPECT_EQ(want.http.basic_auth.username, got.http.basic_auth.username);
  EXPECT_EQ(want.http.basic_auth.password, got.http.basic_auth.password);
  EXPECT_EQ(want.http.basic_auth.users, got.http.basic_auth.users);

  ASSERT_EQ(want.experiments.size(), got.experiments.size());
  for (size_t i = 0; i < want.experiments.size(); ++i) {
    EXPECT_EQ(want.experiments[i].name, got.experiments[i].name);
    EXPECT_EQ(want.experiments[i].baseline, got.experiments[i].baseline);
    EXPECT_EQ(want.experiments[i].treatments, got.experiments[i].treatments);
    EXPECT_EQ(want.experiments[i].split, got.experiments[i].split);
    EXPECT_EQ(want.experiments[i].primary, got.experiments[i].primary);
  }

  EXPECT_EQ(want.statistics.level, got.statistics.level);
  EXPECT_EQ(want.statistics.mixture_sd, got.statistics.mixture_sd);
  EXPECT_EQ(want.statistics.unit_buckets, got.statistics.unit_buckets);
  EXPECT_EQ(want.statistics.srm_level, got.statistics.srm_level);
  EXPECT_EQ(want.statistics.max_tracked_units,
            got.statistics.max_tracked_units);

  EXPECT_EQ(want.logging.level, got.logging.level);
  EXPECT_EQ(want.logging.max_rejects_logged_per_second,
            got.logging.max_rejects_logged_per_second);
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
    const Config reloaded = MustParse(FormatEffectiveConfig(c));
    c.kafka.properties["sasl.password"] = std::string(kMaskedSecret);
    for (auto& [name, secret] : c.http.basic_auth.users) {
      secret = std::string(kMaskedSecret);
    }
    ExpectSameConfig(c, reloaded);
    if (HasFailure()) break;
  }
}

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
