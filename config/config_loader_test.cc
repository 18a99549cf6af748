#include "config/config_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_test_util.h"
#include "config/effective_config.h"
#include "config/env_test_util.h"
#include "tests/testing/paths.h"

using rankwatch::testing::SourceTree;

namespace rankwatch::config {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

StatusOr<Config> Parse(std::string_view yaml,
                       std::map<std::string, std::string> env = {}) {
  return ParseConfig(yaml, "config.yaml", FakeEnv(std::move(env)));
}

// The error message of parsing `yaml`, or "OK".
std::string ErrorOf(std::string_view yaml,
                    std::map<std::string, std::string> env = {}) {
  StatusOr<Config> c = Parse(yaml, std::move(env));
  if (c.ok()) return "OK";
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  return c.status().message();
}

// ---------------------------------------------------------------------------
// Defaults.

TEST(ConfigLoaderTest, EmptyDocumentsGiveAllDefaults) {
  for (std::string_view yaml :
       {"", "{}", "# only a comment\n", "---\n", "~\n", "\n\n"}) {
    SCOPED_TRACE(yaml);
    const Config c = MustParse(yaml);
    EXPECT_EQ(FormatEffectiveConfig(c), Defaults());
    EXPECT_EQ(c.join.window, minutes(30));
    EXPECT_EQ(c.join.early_tolerance, seconds(5));
    EXPECT_EQ(c.join.max_judgments_per_request, 1000);
    EXPECT_EQ(c.events.max_future_skew, minutes(5));
    // 2010-01-01T00:00:00Z: date -u -d 2010-01-01 +%s -> 1262304000.
    EXPECT_EQ(c.events.min_timestamp_ms, 1262304000000);
    EXPECT_EQ(c.metrics.cutoffs, (std::vector<int32_t>{1, 3, 5, 10}));
    EXPECT_EQ(c.metrics.measures.size(), 8u);
    EXPECT_EQ(c.http.listen, "127.0.0.1:9464");
    EXPECT_FALSE(c.schema.default_relevance.has_value());
  }
}

TEST(ConfigLoaderTest, EmptySectionsKeepTheirDefaults) {
  const Config c = MustParse(
      "schema:\njoin: ~\nevents: {}\nmetrics:\naggregation:\ndead_letter:\n"
      "kafka:\nhttp:\nexperiments:\nstatistics:\nlogging:\n");
  EXPECT_EQ(FormatEffectiveConfig(c), Defaults());
}

TEST(ConfigLoaderTest, PresentKeyOverridesOnlyItself) {
  const Config c = MustParse("join:\n  window: 5m\n");
  EXPECT_EQ(c.join.window, minutes(5));
  Config expected;
  expected.join.window = minutes(5);
  EXPECT_EQ(FormatEffectiveConfig(c), FormatEffectiveConfig(expected));
}

// ---------------------------------------------------------------------------
// Every key.

constexpr std::string_view kFullYaml = R"(schema:
  request_id: rid
  query_id: qid
  variant: arm
  timestamp: ts
  results: hits
  doc_id: id
  score: s
  segments: segs
  relevance: grade
  judgments: labels
  default_variant: control
  default_relevance: 1
  unit: user
join:
  mode: qrels
  window: 10m
  early_tolerance: 2s
  allowed_lateness: 30s
  idle_timeout: 2m
  combine: last
  qrels_delay: 1h30m
  qrels_file: /data/qrels.txt
  max_pending_requests: 5000
  max_judgments_per_request: 50
  max_table_entries: 70000
events:
  max_results: 200
  max_id_length: 64
  max_judgments: 300
  max_event_bytes: 65536
  max_future_skew: 1m30s
  min_timestamp: "2024-02-29T12:30:00.25+01:00"
metrics:
  cutoffs: [20, 5, 1]
  measures: [ndcg, precision, r_precision]
  relevance_threshold: 2
  gain: exponential
  recall_denominator: min_k_relevant
  ap_denominator: retrieved_relevant
  zero_relevant: skip
aggregation:
  windows: [1m, 15m, 1d]
  bucket: 30s
  segments: [locale, device]
  variants: [A, B, C]
  max_variants: 5
  segment_values:
    locale: [en, de]
    device: [phone]
  max_segment_values: 7
dead_letter:
  file: /var/lib/rankwatch/dead.jsonl
  topic: rankwatch-dead
kafka:
  bootstrap_servers: k1:9092,k2:9092
  group_id: rw-prod
  results_topic: served
  judgments_topic: clicks
  commit_interval: 250ms
  not_ready_after: 45s
  properties:
    security.protocol: SASL_SSL
    enable.auto.commit: false
    fetch.max.bytes: 1048576
    sasl.password: hunter2
http:
  listen: "[::1]:0"
experiments:
  - name: ranker_v2
    baseline: A
    treatments: [B, C]
    split: {C: 1, A: 2, B: 1}
    primary: [precision@5, ndcg@all, ndcg@20]
  - name: ranker_v3
    baseline: B
    treatments: [C]
statistics:
  level: 0.9
  mixture_sd: 0.1
  unit_buckets: 128
  srm_level: 0.01
  max_tracked_units: 1000
logging:
  level: debug
  max_rejects_logged_per_second: 0
)";

TEST(ConfigLoaderTest, EveryKeyIsParsed) {
  const Config c = MustParse(kFullYaml);

  EXPECT_EQ(c.schema.request_id, "rid");
  EXPECT_EQ(c.schema.query_id, "qid");
  EXPECT_EQ(c.schema.variant, "arm");
  EXPECT_EQ(c.schema.timestamp, "ts");
  EXPECT_EQ(c.schema.results, "hits");
  EXPECT_EQ(c.schema.doc_id, "id");
  EXPECT_EQ(c.schema.score, "s");
  EXPECT_EQ(c.schema.segments, "segs");
  EXPECT_EQ(c.schema.relevance, "grade");
  EXPECT_EQ(c.schema.judgments, "labels");
  EXPECT_EQ(c.schema.default_variant, "control");
  EXPECT_EQ(c.schema.default_relevance, std::optional<int32_t>(1));

  EXPECT_EQ(c.join.mode, JoinMode::kQrels);
  EXPECT_EQ(c.join.window, minutes(10));
  EXPECT_EQ(c.join.early_tolerance, seconds(2));
  EXPECT_EQ(c.join.allowed_lateness, seconds(30));
  EXPECT_EQ(c.join.idle_timeout, minutes(2));
  EXPECT_EQ(c.join.combine, CombineRule::kLast);
  EXPECT_EQ(c.join.qrels_delay, minutes(90));
  EXPECT_EQ(c.join.qrels_file, "/data/qrels.txt");
  EXPECT_EQ(c.join.max_pending_requests, 5000);
  EXPECT_EQ(c.join.max_judgments_per_request, 50);
  EXPECT_EQ(c.join.max_table_entries, 70000);

  EXPECT_EQ(c.events.max_results, 200);
  EXPECT_EQ(c.events.max_id_length, 64);
  EXPECT_EQ(c.events.max_judgments, 300);
  EXPECT_EQ(c.events.max_event_bytes, 65536);
  EXPECT_EQ(c.events.max_future_skew, seconds(90));
  // 12:30:00.25 at +01:00 is 11:30:00.250 UTC;
  // date -u -d '2024-02-29T11:30:00Z' +%s -> 1709206200.
  EXPECT_EQ(c.events.min_timestamp_ms, 1709206200250);

  // Cutoffs are stored sorted; measures keep their order.
  EXPECT_EQ(c.metrics.cutoffs, (std::vector<int32_t>{1, 5, 20}));
  EXPECT_EQ(c.metrics.measures,
            (std::vector<metrics::Measure>{metrics::Measure::kNdcg,
                                           metrics::Measure::kPrecision,
                                           metrics::Measure::kRPrecision}));
  EXPECT_EQ(c.metrics.definitions.relevance_threshold, 2);
  EXPECT_EQ(c.metrics.definitions.gain, metrics::Gain::kExponential);
  EXPECT_EQ(c.metrics.definitions.recall_denominator,
            metrics::RecallDenominator::kMinCutoffRelevant);
  EXPECT_EQ(c.metrics.definitions.ap_denominator,
            metrics::ApDenominator::kRetrievedRelevant);
  EXPECT_EQ(c.metrics.definitions.zero_relevant,
            metrics::ZeroRelevantPolicy::kSkip);

  EXPECT_EQ(c.aggregation.windows,
            (std::vector<Duration>{minutes(1), minutes(15), hours(24)}));
  EXPECT_EQ(c.aggregation.bucket, seconds(30));
  EXPECT_EQ(c.aggregation.segments,
            (std::vector<std::string>{"locale", "device"}));
  EXPECT_EQ(c.aggregation.variants, (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(c.aggregation.max_variants, 5);
  EXPECT_EQ(c.aggregation.segment_values,
            (std::map<std::string, std::vector<std::string>>{
                {"locale", {"en", "de"}}, {"device", {"phone"}}}));
  EXPECT_EQ(c.aggregation.max_segment_values, 7);

  EXPECT_EQ(c.dead_letter.file, "/var/lib/rankwatch/dead.jsonl");
  EXPECT_EQ(c.dead_letter.topic, "rankwatch-dead");

  EXPECT_EQ(c.kafka.bootstrap_servers, "k1:9092,k2:9092");
  EXPECT_EQ(c.kafka.group_id, "rw-prod");
  EXPECT_EQ(c.kafka.results_topic, "served");
  EXPECT_EQ(c.kafka.judgments_topic, "clicks");
  EXPECT_EQ(c.kafka.commit_interval, milliseconds(250));
  EXPECT_EQ(c.kafka.not_ready_after, seconds(45));
  EXPECT_EQ(c.kafka.properties, (std::map<std::string, std::string>{
                                    {"security.protocol", "SASL_SSL"},
                                    {"enable.auto.commit", "false"},
                                    {"fetch.max.bytes", "1048576"},
                                    {"sasl.password", "hunter2"}}));

  EXPECT_EQ(c.http.listen, "[::1]:0");

  ASSERT_EQ(c.experiments.size(), 2u);
  EXPECT_EQ(c.experiments[0].name, "ranker_v2");
  EXPECT_EQ(c.experiments[0].baseline, "A");
  EXPECT_EQ(c.experiments[0].treatments, (std::vector<std::string>{"B", "C"}));
  EXPECT_EQ(c.experiments[1].name, "ranker_v3");
  EXPECT_EQ(c.experiments[1].baseline, "B");
  EXPECT_EQ(c.experiments[1].treatments, (std::vector<std::string>{"C"}));
  // Weights in variant order (baseline first), whatever the map's order.
  EXPECT_EQ(c.experiments[0].split, (std::vector<double>{2, 1, 1}));
  using metrics::Measure;
  EXPECT_EQ(c.experiments[0].primary,
            (std::vector<SeriesRef>{{Measure::kPrecision, 5},
                                    {Measure::kNdcg, 0},
                                    {Measure::kNdcg, 20}}));
  // Defaults: equal weights; no ndcg@10 here (cutoffs 1, 5, 20), so the
  // first quality measure at the smallest cutoff.
  EXPECT_EQ(c.experiments[1].split, (std::vector<double>{1, 1}));
  EXPECT_EQ(c.experiments[1].primary,
            (std::vector<SeriesRef>{{Measure::kNdcg, 1}}));
  EXPECT_EQ(c.schema.unit, "user");

  EXPECT_DOUBLE_EQ(c.statistics.level, 0.9);
  EXPECT_DOUBLE_EQ(c.statistics.mixture_sd, 0.1);
  EXPECT_EQ(c.statistics.unit_buckets, 128);
  EXPECT_DOUBLE_EQ(c.statistics.srm_level, 0.01);
  EXPECT_EQ(c.statistics.max_tracked_units, 1000);

  EXPECT_EQ(c.logging.level, "debug");
  EXPECT_EQ(c.logging.max_rejects_logged_per_second, 0);
}

TEST(ConfigLoaderTest, InterleavingAndClickKinds) {
  const Config c = MustParse(
      "schema: {team: ranker, kind: type}\n"
      "metrics: {click_exclude_kinds: [label, llm]}\n"
      "statistics: {interleaving_prior_sd: 0.1}\n"
      "interleaving:\n"
      "  - {name: x, variant: AB, teams: [A, B]}\n"
      "  - {name: y, variant: AC, teams: [A, C]}\n");
  EXPECT_EQ(c.schema.team, "ranker");
  EXPECT_EQ(c.schema.kind, "type");
  EXPECT_EQ(c.metrics.click_exclude_kinds,
            (std::vector<std::string>{"label", "llm"}));
  EXPECT_DOUBLE_EQ(c.statistics.interleaving_prior_sd, 0.1);
  ASSERT_EQ(c.interleaving.size(), 2u);
  EXPECT_EQ(c.interleaving[1].name, "y");
  EXPECT_EQ(c.interleaving[1].variant, "AC");
  EXPECT_EQ(c.interleaving[1].teams[1], "C");
}

TEST(ConfigLoaderErrorTest, InterleavingErrors) {
  EXPECT_EQ(ErrorOf("interleaving:\n  - {name: x, variant: AB, teams: [A]}\n"),
            "config.yaml:2:35: interleaving[0].teams: must list 2 to 8 "
            "teams (the incumbent, then the challengers), got 1");
  EXPECT_EQ(
      ErrorOf("interleaving:\n  - {name: x, variant: AB, teams: [A, A]}\n"),
      "config.yaml:2:39: interleaving[0].teams[1]: duplicate team 'A'");
  EXPECT_EQ(ErrorOf("interleaving:\n  - {name: x, teams: [A, B]}\n"),
            "config.yaml:2:5: interleaving[0]: missing key 'variant'");
  EXPECT_EQ(ErrorOf("interleaving:\n"
                    "  - {name: x, variant: AB, teams: [A, B]}\n"
                    "  - {name: y, variant: AB, teams: [A, C]}\n"),
            "config.yaml:3:24: interleaving[1].variant: variant 'AB' is "
            "already interleaved on line 2");
  EXPECT_EQ(ErrorOf("interleaving:\n"
                    "  - {name: x, variant: AB, teams: [A, B]}\n"
                    "  - {name: x, variant: AC, teams: [A, C]}\n"),
            "config.yaml:3:12: interleaving[1].name: duplicate interleaving "
            "experiment name 'x' (first on line 2)");
  EXPECT_EQ(ErrorOf("join: {mode: qrels}\n"
                    "interleaving:\n  - {name: x, variant: AB, teams: [A, "
                    "B]}\n"),
            "config.yaml:3:3: interleaving: needs join.mode impression (each "
            "request's own clicks), not qrels");
  EXPECT_EQ(ErrorOf("aggregation: {variants: [A, B]}\n"
                    "interleaving:\n  - {name: x, variant: AB, teams: [A, "
                    "B]}\n"),
            "config.yaml:3:24: interleaving[0].variant: variant 'AB' is not "
            "listed in aggregation.variants");
  EXPECT_EQ(ErrorOf("statistics: {interleaving_prior_sd: 0.5}\n"),
            "config.yaml:1:37: statistics.interleaving_prior_sd: must be "
            "between 0 and 0.5 (exclusive), got 0.5");
}

TEST(ConfigLoaderTest, HttpTlsBasicAuthAndLogFormat) {
  const Config c = MustParse(
      "http:\n  tls: {cert_file: c.pem, key_file: k.pem}\n"
      "  basic_auth:\n    username: prom\n    password: ${PW}\n"
      "logging: {format: json}\n",
      {{"PW", "s3cret"}});
  EXPECT_EQ(c.http.tls.cert_file, "c.pem");
  EXPECT_EQ(c.http.tls.key_file, "k.pem");
  EXPECT_TRUE(c.http.tls.enabled());
  EXPECT_EQ(c.http.basic_auth.username, "prom");
  EXPECT_EQ(c.http.basic_auth.password, "s3cret");
  EXPECT_EQ(c.logging.format, LogFormat::kJson);
  // The password never reaches the effective configuration.
  EXPECT_EQ(FormatEffectiveConfig(c).find("s3cret"), std::string::npos);
  EXPECT_EQ(ErrorOf("http:\n  tls: {cert_file: c.pem}\n"),
            "config.yaml:2:8: http.tls: needs both cert_file and key_file");
  EXPECT_EQ(ErrorOf("http:\n  basic_auth: {username: u}\n"),
            "config.yaml:2:15: http.basic_auth: needs both username and "
            "password");
  EXPECT_EQ(ErrorOf("logging: {format: xml}\n"),
            "config.yaml:1:19: logging.format: unknown log format 'xml' "
            "(expected one of: text, json)");
}

// Issue 24: the endpoint's security keys.
TEST(ConfigLoaderTest, HttpHardeningKeys) {
  const Config defaults = MustParse("http: {}\n");
  EXPECT_FALSE(defaults.http.enable_reload);  // Off unless enabled.
  EXPECT_TRUE(defaults.http.allowed_hosts.empty());
  EXPECT_EQ(defaults.http.response_budget_bytes, 64 * 1024 * 1024);
  EXPECT_EQ(defaults.http.tls.min_version, "1.2");
  const Config c = MustParse(
      "http:\n"
      "  enable_reload: true\n"
      "  allowed_hosts: [rankwatch.example, localhost]\n"
      "  response_budget_bytes: 16777216\n"
      "  tls: {cert_file: c.pem, key_file: k.pem, client_ca: ca.pem,\n"
      "        min_version: '1.3', cipher_suites: "
      "ECDHE-RSA-AES128-GCM-SHA256}\n"
      "  basic_auth:\n"
      "    users:\n"
      "      alice: $$2y$$05$$abc\n"
      "      bob: ${BOB}\n",
      {{"BOB", "$2b$05$xyz"}});
  EXPECT_TRUE(c.http.enable_reload);
  EXPECT_EQ(c.http.allowed_hosts,
            (std::vector<std::string>{"rankwatch.example", "localhost"}));
  EXPECT_EQ(c.http.response_budget_bytes, 16777216);
  EXPECT_EQ(c.http.tls.client_ca, "ca.pem");
  EXPECT_EQ(c.http.tls.min_version, "1.3");
  EXPECT_EQ(c.http.tls.cipher_suites, "ECDHE-RSA-AES128-GCM-SHA256");
  EXPECT_TRUE(c.http.basic_auth.enabled());
  EXPECT_EQ(c.http.basic_auth.users,
            (std::map<std::string, std::string>{{"alice", "$2y$05$abc"},
                                                {"bob", "$2b$05$xyz"}}));
  // Hashes are secrets too: masked in the effective configuration.
  const std::string printed = FormatEffectiveConfig(c);
  EXPECT_EQ(printed.find("$2"), std::string::npos) << printed;
  EXPECT_NE(printed.find("    users:\n      \"alice\": \"****\"\n"),
            std::string::npos)
      << printed;

  // Columns: the value's, counted by hand ("http: {enable_reload: " is 22
  // characters; "  tls: {cert_file: c, key_file: k, min_version: " 48).
  EXPECT_EQ(ErrorOf("http: {enable_reload: yes}\n"),
            "config.yaml:1:23: http.enable_reload: expected true or false, "
            "got 'yes'");
  EXPECT_EQ(ErrorOf("http:\n  tls: {cert_file: c, key_file: k, "
                    "min_version: '1.1'}\n"),
            "config.yaml:2:49: http.tls.min_version: expected \"1.2\" or "
            "\"1.3\", got '1.1'");
  EXPECT_EQ(ErrorOf("http:\n  tls: {client_ca: ca.pem}\n"),
            "config.yaml:2:8: http.tls: client_ca and cipher_suites need "
            "cert_file");
  EXPECT_EQ(ErrorOf("http:\n  basic_auth: {users: {'a:b': x}}\n"),
            "config.yaml:2:24: http.basic_auth.users.a:b: a user name cannot "
            "hold ':'");
  EXPECT_EQ(ErrorOf("http:\n  basic_auth: {username: 'a:b', password: x}\n"),
            "config.yaml:2:15: http.basic_auth: a user name cannot hold ':'");
  EXPECT_EQ(ErrorOf("http:\n  allowed_hosts: [a, a]\n"),
            "config.yaml:2:22: http.allowed_hosts[1]: duplicate host 'a'");
  EXPECT_EQ(ErrorOf("http: {response_budget_bytes: 1000}\n"),
            "config.yaml:1:31: http.response_budget_bytes: must be >= "
            "1048576, got 1000");
}

TEST(ConfigLoaderTest, DefaultRelevanceNullAndNegative) {
  EXPECT_FALSE(MustParse("schema:\n  default_relevance: null\n")
                   .schema.default_relevance.has_value());
  EXPECT_FALSE(MustParse("schema:\n  default_relevance:\n")
                   .schema.default_relevance.has_value());
  EXPECT_EQ(
      MustParse("schema:\n  default_relevance: 0\n").schema.default_relevance,
      std::optional<int32_t>(0));
}

// The preset's names, written out here from the UBI 1.x specification's
// field names (o19s/ubi schema/1.3.0), not from UbiSchema().
TEST(ConfigLoaderTest, UbiPresetNamesAndOverrides) {
  const SchemaConfig ubi = MustParse("schema:\n  preset: ubi\n").schema;
  EXPECT_EQ(ubi.preset, "ubi");
  EXPECT_EQ(ubi.request_id, "query_id");
  EXPECT_EQ(ubi.query_id, "user_query");
  EXPECT_EQ(ubi.variant, "query_attributes.experiment");
  EXPECT_EQ(ubi.timestamp, "timestamp");
  EXPECT_EQ(ubi.results, "query_response_hit_ids");
  EXPECT_EQ(ubi.doc_id, "event_attributes.object.object_id");
  EXPECT_EQ(ubi.kind, "action_name");
  EXPECT_EQ(ubi.position, "event_attributes.position.ordinal");
  EXPECT_EQ(ubi.position_base, config::kPositionBaseAuto);
  EXPECT_EQ(ubi.impression_kind, "impression");
  EXPECT_EQ(ubi.unit, "");
  EXPECT_EQ(ubi.teams, "");  // Interleaving is opt-in: UBI has no such key.
  EXPECT_EQ(ubi.actions,
            (std::map<std::string, int32_t, std::less<>>{
                {"add_to_cart", 2}, {"click", 1}, {"purchase", 3}}));
  // Keys override the preset wherever they are written, before it too; an
  // actions map replaces the preset's whole map.
  const SchemaConfig s = MustParse(
                             "schema:\n"
                             "  variant: query_attributes.experiment.variant\n"
                             "  actions: {click: 1, watch: 4}\n"
                             "  unit: client_id\n"
                             "  preset: ubi\n"
                             "  position_base: 0\n"
                             "  teams: query_attributes.teams\n")
                             .schema;
  EXPECT_EQ(s.variant, "query_attributes.experiment.variant");
  EXPECT_EQ(s.actions, (std::map<std::string, int32_t, std::less<>>{
                           {"click", 1}, {"watch", 4}}));
  EXPECT_EQ(s.unit, "client_id");
  EXPECT_EQ(s.position_base, 0);
  EXPECT_EQ(s.teams, "query_attributes.teams");
  EXPECT_EQ(MustParse("schema:\n  position_base: auto\n").schema.position_base,
            config::kPositionBaseAuto);
  EXPECT_EQ(MustParse("schema:\n  position_base: 1\n").schema.position_base, 1);
  EXPECT_EQ(Config().schema.impression_kind, "");
  EXPECT_EQ(s.results, "query_response_hit_ids");  // From the preset.
  // No preset: actions and position are off.
  EXPECT_TRUE(Config().schema.actions.empty());
  EXPECT_EQ(Config().schema.position, "");
  EXPECT_EQ(Config().schema.teams, "");
  EXPECT_EQ(MustParse("schema:\n  teams: \"\"\n").schema, SchemaConfig());
  EXPECT_EQ(MustParse("schema:\n  teams: teams\n").schema.teams, "teams");
  // schema.covariate: off unless named, a dotted path when named.
  EXPECT_EQ(Config().schema.covariate, "");
  EXPECT_EQ(MustParse("schema:\n  covariate: pre.ndcg_28d\n").schema.covariate,
            "pre.ndcg_28d");
  EXPECT_EQ(MustParse("schema:\n  covariate: \"\"\n").schema, SchemaConfig());
  EXPECT_EQ(MustParse("schema:\n  preset: \"\"\n").schema, SchemaConfig());
}

TEST(ConfigLoaderErrorTest, UbiPresetAndPaths) {
  EXPECT_EQ(ErrorOf("schema:\n  preset: ubj\n"),
            "config.yaml:2:11: schema.preset: unknown schema preset 'ubj' "
            "(expected: ubi)");
  EXPECT_EQ(ErrorOf("schema:\n  doc_id: a..b\n"),
            "config.yaml:2:11: schema.doc_id: 'a..b' has an empty step (a "
            "nested field is written a.b.c)");
  EXPECT_EQ(ErrorOf("schema:\n  unit: .user\n"),
            "config.yaml:2:9: schema.unit: '.user' has an empty step (a "
            "nested field is written a.b.c)");
  EXPECT_EQ(ErrorOf("schema:\n  teams: attrs.\n"),
            "config.yaml:2:10: schema.teams: 'attrs.' has an empty step (a "
            "nested field is written a.b.c)");
  EXPECT_EQ(ErrorOf("schema:\n  actions: {click: x}\n"),
            "config.yaml:2:20: schema.actions.click: expected an integer, got "
            "'x'");
  EXPECT_EQ(ErrorOf("schema:\n  position_base: 2\n"),
            "config.yaml:2:18: schema.position_base: expected 0, 1 or auto, "
            "got '2'");
  EXPECT_EQ(ErrorOf("schema:\n  position_base: [0]\n"),
            "config.yaml:2:18: schema.position_base: expected 0, 1 or auto, "
            "got 'a collection'");
  // A field read as a value cannot hold another one; the segments object
  // can, and fields of the other kind of event do not collide.
  EXPECT_EQ(ErrorOf("schema:\n  variant: a\n  unit: a.b\n"),
            "config.yaml:2:3: schema: schema.unit 'a.b' is inside "
            "schema.variant 'a', which is read as a value");
  EXPECT_EQ(ErrorOf("schema:\n  variant: qa\n  teams: qa.teams\n"),
            "config.yaml:2:3: schema: schema.teams 'qa.teams' is inside "
            "schema.variant 'qa', which is read as a value");
  EXPECT_EQ(ErrorOf("schema:\n  segments: qa\n  variant: qa.exp\n"), "OK");
  EXPECT_EQ(ErrorOf("schema:\n  segments: qa\n  teams: qa.teams\n"), "OK");
  EXPECT_EQ(ErrorOf("schema:\n  covariate: pre..ndcg\n"),
            "config.yaml:2:14: schema.covariate: 'pre..ndcg' has an empty "
            "step (a nested field is written a.b.c)");
  EXPECT_EQ(ErrorOf("schema:\n  unit: user\n  covariate: user.pre\n"),
            "config.yaml:2:3: schema: schema.covariate 'user.pre' is inside "
            "schema.unit 'user', which is read as a value");
  EXPECT_EQ(ErrorOf("schema:\n  results: a\n  doc_id: a.b\n"), "OK");
}

TEST(ConfigLoaderTest, CutoffsMayBeEmptyWithOnlyRPrecision) {
  const Config c = MustParse(
      "metrics:\n  cutoffs: []\n"
      "  measures: [r_precision]\n");
  EXPECT_TRUE(c.metrics.cutoffs.empty());
}

// The click measures are opt-in (absent from the defaults) and parse by
// name; abandonment, first_click_rank and its reciprocal need no cutoff.
TEST(ConfigLoaderTest, ClickMeasureNames) {
  EXPECT_EQ(MustParse("").metrics.measures,
            (std::vector<metrics::Measure>(metrics::kDefaultMeasures.begin(),
                                           metrics::kDefaultMeasures.end())));
  const Config c = MustParse(
      "metrics:\n  measures: [ctr, clicks, abandonment, first_click_rank, "
      "recip_rank_first_click]\n");
  EXPECT_EQ(
      c.metrics.measures,
      (std::vector<metrics::Measure>{
          metrics::Measure::kCtr, metrics::Measure::kClicks,
          metrics::Measure::kAbandonment, metrics::Measure::kFirstClickRank,
          metrics::Measure::kRecipRankFirstClick}));
  EXPECT_TRUE(MustParse("metrics:\n  cutoffs: []\n"
                        "  measures: [abandonment, first_click_rank]\n")
                  .metrics.cutoffs.empty());
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [ctr]\n  cutoffs: []\n"),
            "config.yaml:3:12: metrics.cutoffs: must not be empty: ctr is "
            "computed at cutoffs");
}

// The rank correlations are opt-in, parse by name and need no cutoff; they
// have no cut series.
TEST(ConfigLoaderTest, RankCorrelationMeasureNames) {
  const Config c = MustParse(
      "metrics:\n  cutoffs: []\n  measures: [spearman, kendall_tau]\n");
  EXPECT_EQ(c.metrics.measures,
            (std::vector<metrics::Measure>{metrics::Measure::kSpearman,
                                           metrics::Measure::kKendallTau}));
  EXPECT_TRUE(c.metrics.cutoffs.empty());
  const Config with_cutoffs =
      MustParse("metrics:\n  cutoffs: [5]\n  measures: [ndcg, spearman]\n");
  EXPECT_EQ(with_cutoffs.metrics.measures,
            (std::vector<metrics::Measure>{metrics::Measure::kNdcg,
                                           metrics::Measure::kSpearman}));
  EXPECT_NE(ErrorOf("metrics:\n  measures: [spearmanr]\n")
                .find("unknown measure 'spearmanr'"),
            std::string::npos);
}

TEST(ConfigLoaderTest, ValidListenAddresses) {
  for (std::string_view listen :
       {"0.0.0.0:9464", "localhost:80", "metrics.internal:0", "[::]:65535",
        "[::ffff:10.0.0.1]:9464"}) {
    SCOPED_TRACE(listen);
    EXPECT_EQ(MustParse("http:\n  listen: \"" + std::string(listen) + "\"\n")
                  .http.listen,
              listen);
  }
}

TEST(ConfigLoaderTest, MinTimestampIsEpochMillisOrRfc3339) {
  const auto min_ts = [](std::string_view value) {
    return MustParse("events:\n  min_timestamp: " + std::string(value) + "\n")
        .events.min_timestamp_ms;
  };
  EXPECT_EQ(min_ts("0"), 0);
  EXPECT_EQ(min_ts("1577836800000"), 1577836800000);
  // date -u -d '2020-01-01T00:00:00Z' +%s -> 1577836800
  EXPECT_EQ(min_ts("2020-01-01T00:00:00Z"), 1577836800000);
  EXPECT_EQ(min_ts("\"2020-01-01T00:00:00Z\""), 1577836800000);
  // 01:00 at +01:00 is midnight UTC.
  EXPECT_EQ(min_ts("2020-01-01T01:00:00.999+01:00"), 1577836800999);
  EXPECT_EQ(min_ts("1970-01-01T00:00:00Z"), 0);
  // The latest accepted: date -u -d '9999-12-31T23:59:59Z' +%s ->
  // 253402300799, plus 999 ms.
  EXPECT_EQ(min_ts("9999-12-31T23:59:59.999Z"), 253402300799999);
  EXPECT_EQ(min_ts("253402300799999"), 253402300799999);
  // Substituted before it is read, like every value.
  EXPECT_EQ(MustParse("events:\n  min_timestamp: ${SINCE}\n",
                      {{"SINCE", "2020-01-01T00:00:00Z"}})
                .events.min_timestamp_ms,
            1577836800000);
  // Zero is fine: no tolerance for clock skew.
  EXPECT_EQ(MustParse("events:\n  max_future_skew: 0s\n"
                      "join:\n  early_tolerance: 0ms\n")
                .events.max_future_skew,
            Duration(0));
}

TEST(ConfigLoaderTest, WindowsMayBeEmpty) {
  EXPECT_TRUE(
      MustParse("aggregation:\n  windows: []\n").aggregation.windows.empty());
}

// ---------------------------------------------------------------------------
// Validation: each rule with its exact message and position.

TEST(ConfigLoaderErrorTest, Durations) {
  // Each malformed value is quoted back with what was probably meant
  // (issue 25: "1.5h" said only "expected a duration like ...").
  EXPECT_EQ(ErrorOf("join:\n  window: 30\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '30' (a unit is needed: 30s or 30ms?)");
  EXPECT_EQ(ErrorOf("join:\n  window: 5 m\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '5 m' (no spaces)");
  EXPECT_EQ(ErrorOf("join:\n  window: 30m1h\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '30m1h' (units from the largest, e.g. 1h30m, 2d12h, "
            "1s500ms)");
  EXPECT_EQ(ErrorOf("join:\n  window: -5m\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '-5m' (durations are not negative)");
  // 1.5 h = 90 min = 1h30m; 0.25 s = 250 ms; 2.5 d = 2 d 12 h.
  EXPECT_EQ(ErrorOf("join:\n  window: 1.5h\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '1.5h' (whole units only: 1h30m)");
  EXPECT_EQ(ErrorOf("join:\n  window: 0.25s\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '0.25s' (whole units only: 250ms)");
  EXPECT_EQ(ErrorOf("join:\n  window: 2.5d\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, "
            "5m, 1h, got '2.5d' (whole units only: 2d12h)");
  EXPECT_EQ(ErrorOf("join:\n  window: 0s\n"),
            "config.yaml:2:11: join.window: must be > 0");
  EXPECT_EQ(ErrorOf("join:\n  window: 3651d\n"),
            "config.yaml:2:11: join.window: must be at most 3650d");
  EXPECT_EQ(ErrorOf("join:\n  early_tolerance: -5s\n"),
            "config.yaml:2:20: join.early_tolerance: expected a duration like "
            "30s, 5m, 1h, got '-5s' (durations are not negative)");
  EXPECT_EQ(ErrorOf("join:\n  early_tolerance: 5\n"),
            "config.yaml:2:20: join.early_tolerance: expected a duration like "
            "30s, 5m, 1h, got '5' (a unit is needed: 5s or 5ms?)");
  EXPECT_EQ(ErrorOf("events:\n  max_future_skew: -1m\n"),
            "config.yaml:2:20: events.max_future_skew: expected a duration "
            "like 30s, 5m, 1h, got '-1m' (durations are not negative)");
  EXPECT_EQ(ErrorOf("events:\n  max_future_skew: 3651d\n"),
            "config.yaml:2:20: events.max_future_skew: must be at most 3650d");
  EXPECT_EQ(ErrorOf("join:\n  idle_timeout: 0ms\n"),
            "config.yaml:2:17: join.idle_timeout: must be > 0");
  EXPECT_EQ(ErrorOf("kafka:\n  commit_interval: 0s\n"),
            "config.yaml:2:20: kafka.commit_interval: must be > 0");
  EXPECT_EQ(ErrorOf("kafka:\n  not_ready_after: 0s\n"),
            "config.yaml:2:20: kafka.not_ready_after: must be > 0");
  EXPECT_EQ(ErrorOf("aggregation:\n  bucket: 0ms\n"),
            "config.yaml:2:11: aggregation.bucket: must be > 0");
  // An empty value points at its key (yaml-cpp marks it on the next line).
  EXPECT_EQ(ErrorOf("join:\n  window:\nevents: {}\n"),
            "config.yaml:2:3: join.window: expected a duration like 30s, 5m, "
            "1h, got null");
  // Zero is fine where it means "none".
  EXPECT_EQ(MustParse("join:\n  allowed_lateness: 0s\n  qrels_delay: 0ms\n")
                .join.allowed_lateness,
            Duration(0));
}

TEST(ConfigLoaderErrorTest, Integers) {
  EXPECT_EQ(ErrorOf("join:\n  max_pending_requests: 0\n"),
            "config.yaml:2:25: join.max_pending_requests: must be > 0, got 0");
  EXPECT_EQ(ErrorOf("join:\n  max_judgments_per_request: 0\n"),
            "config.yaml:2:30: join.max_judgments_per_request: must be > 0, "
            "got 0");
  EXPECT_EQ(ErrorOf("join:\n  max_judgments_per_request: 3000000000\n"),
            "config.yaml:2:30: join.max_judgments_per_request: must be <= "
            "2147483647, got 3000000000");
  EXPECT_EQ(ErrorOf("join:\n  max_table_entries: -5\n"),
            "config.yaml:2:22: join.max_table_entries: must be > 0, got -5");
  EXPECT_EQ(ErrorOf("events:\n  max_event_bytes: 1.5\n"),
            "config.yaml:2:20: events.max_event_bytes: expected an integer, "
            "got '1.5'");
  EXPECT_EQ(ErrorOf("events:\n  max_results: 99999999999\n"),
            "config.yaml:2:16: events.max_results: must be <= 2147483647, got "
            "99999999999");
  EXPECT_EQ(ErrorOf("events:\n  max_id_length: 99999999999999999999\n"),
            "config.yaml:2:18: events.max_id_length: integer "
            "'99999999999999999999' is out of range");
  EXPECT_EQ(ErrorOf("events:\n  max_judgments: ''\n"),
            "config.yaml:2:18: events.max_judgments: expected an integer, got "
            "''");
  EXPECT_EQ(ErrorOf("aggregation:\n  max_variants: 0\n"),
            "config.yaml:2:17: aggregation.max_variants: must be > 0, got 0");
  EXPECT_EQ(ErrorOf("aggregation:\n  max_segment_values: 0\n"),
            "config.yaml:2:23: aggregation.max_segment_values: must be > 0, "
            "got 0");
  EXPECT_EQ(ErrorOf("logging:\n  max_rejects_logged_per_second: -1\n"),
            "config.yaml:2:34: logging.max_rejects_logged_per_second: must be "
            ">= 0, got -1");
  EXPECT_EQ(ErrorOf("schema:\n  default_relevance: high\n"),
            "config.yaml:2:22: schema.default_relevance: expected an integer, "
            "got 'high'");
}

TEST(ConfigLoaderErrorTest, Strings) {
  EXPECT_EQ(ErrorOf("schema:\n  request_id: ''\n"),
            "config.yaml:2:15: schema.request_id: must not be empty");
  EXPECT_EQ(ErrorOf("kafka:\n  group_id: \"\"\n"),
            "config.yaml:2:13: kafka.group_id: must not be empty");
  EXPECT_EQ(ErrorOf("schema:\n  doc_id: [a]\n"),
            "config.yaml:2:11: schema.doc_id: expected a string, got a list");
  EXPECT_EQ(ErrorOf("dead_letter:\n  topic: ~\n"),
            "config.yaml:2:10: dead_letter.topic: expected a string, got null");
}

// A configuration is UTF-8 text: yaml-cpp would pass other bytes through,
// and the effective configuration printed from them would not load back as
// the same strings (found by tests/fuzz/config_fuzzer in a librdkafka
// property name). The position counts characters: "é" is one column.
TEST(ConfigLoaderErrorTest, NotUtf8) {
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n    \x8crity.protocol: SSL\n"),
            "config.yaml:3:5: not UTF-8 text (byte 0x8c); save the "
            "configuration as UTF-8");
  EXPECT_EQ(ErrorOf("schema:\n  doc_id: d\xc3\xa9\xff\n"),
            "config.yaml:2:13: not UTF-8 text (byte 0xff); save the "
            "configuration as UTF-8");
  // A surrogate's encoding (U+D800) and a truncated sequence at the end.
  EXPECT_EQ(ErrorOf("schema:\n  doc_id: \xed\xa0\x80\n"),
            "config.yaml:2:11: not UTF-8 text (byte 0xed); save the "
            "configuration as UTF-8");
  EXPECT_EQ(ErrorOf("schema:\n  doc_id: \xe2\x82"),
            "config.yaml:2:11: not UTF-8 text (byte 0xe2); save the "
            "configuration as UTF-8");
  // Valid multi-byte text loads.
  EXPECT_EQ(MustParse("schema:\n  doc_id: d\xc3\xa9j\xc3\xa0\n").schema.doc_id,
            "d\xc3\xa9j\xc3\xa0");
}

TEST(ConfigLoaderErrorTest, Join) {
  EXPECT_EQ(ErrorOf("join:\n  mode: inner\n"),
            "config.yaml:2:9: join.mode: unknown join mode 'inner' (expected "
            "one of: impression, qrels)");
  EXPECT_EQ(ErrorOf("join:\n  combine: first\n"),
            "config.yaml:2:12: join.combine: unknown combine rule 'first' "
            "(expected one of: max, last)");
  EXPECT_EQ(ErrorOf("join:\n  qrels_file: q.txt\n"),
            "config.yaml:2:15: join.qrels_file: is only read when join.mode "
            "is qrels (it is impression)");
  // The mode may come after the file.
  EXPECT_EQ(
      MustParse("join:\n  qrels_file: q.txt\n  mode: qrels\n").join.qrels_file,
      "q.txt");
}

TEST(ConfigLoaderErrorTest, MinTimestamp) {
  EXPECT_EQ(ErrorOf("events:\n  min_timestamp: -1\n"),
            "config.yaml:2:18: events.min_timestamp: must not be before "
            "1970-01-01T00:00:00Z, got '-1'");
  EXPECT_EQ(ErrorOf("events:\n  min_timestamp: 1969-12-31T23:59:59Z\n"),
            "config.yaml:2:18: events.min_timestamp: must not be before "
            "1970-01-01T00:00:00Z, got '1969-12-31T23:59:59Z'");
  EXPECT_EQ(ErrorOf("events:\n  min_timestamp: 253402300800000\n"),
            "config.yaml:2:18: events.min_timestamp: must not be after "
            "9999-12-31T23:59:59.999Z (253402300799999), got "
            "'253402300800000'");
  EXPECT_EQ(ErrorOf("events:\n  min_timestamp: 99999999999999999999\n"),
            "config.yaml:2:18: events.min_timestamp: integer "
            "'99999999999999999999' is out of range");
  for (std::string_view bad :
       {"2020-01-01", "2020-01-01T00:00:00", "2020-02-30T00:00:00Z", "1.5e12",
        "yesterday", "'-'", "''"}) {
    SCOPED_TRACE(bad);
    // Without YAML's quotes.
    const std::string shown(
        bad.starts_with('\'') ? bad.substr(1, bad.size() - 2) : bad);
    EXPECT_EQ(ErrorOf("events:\n  min_timestamp: " + std::string(bad) + "\n"),
              "config.yaml:2:18: events.min_timestamp: expected an RFC 3339 "
              "date-time like 2025-01-01T00:00:00Z or epoch milliseconds, "
              "got '" +
                  shown + "'");
  }
  EXPECT_EQ(ErrorOf("events:\n  min_timestamp: [0]\n"),
            "config.yaml:2:18: events.min_timestamp: expected an RFC 3339 "
            "date-time like 2025-01-01T00:00:00Z or epoch milliseconds, got "
            "a list");
}

TEST(ConfigLoaderErrorTest, Metrics) {
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [precision, recall, ndgc]\n"),
            "config.yaml:2:33: metrics.measures[2]: unknown measure 'ndgc' "
            "(did you mean 'ndcg'?)");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [ndcg@10]\n"),
            "config.yaml:2:14: metrics.measures[0]: measure 'ndcg@10': name "
            "the measure without its cutoff ('ndcg'): cutoffs are listed "
            "apart");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [Bpref]\n"),
            "config.yaml:2:14: metrics.measures[0]: measure 'Bpref': "
            "trec_eval's bpref is computed by `rankwatch eval` only, not by "
            "the daemon's engine");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [ndcg, ndcg_cut]\n"),
            "config.yaml:2:20: metrics.measures[1]: duplicate measure 'ndcg' "
            "(as 'ndcg_cut')");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [ndcg, ndcg]\n"),
            "config.yaml:2:20: metrics.measures[1]: duplicate measure 'ndcg'");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: []\n"),
            "config.yaml:2:13: metrics.measures: must not be empty");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: [1, 5, 5]\n"),
            "config.yaml:2:19: metrics.cutoffs[2]: duplicate cutoff 5");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: [0]\n"),
            "config.yaml:2:13: metrics.cutoffs[0]: must be > 0, got 0");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: []\n"),
            "config.yaml:2:12: metrics.cutoffs: must not be empty: precision "
            "is computed at cutoffs");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [r_precision, judged]\n"
                    "  cutoffs: []\n"),
            "config.yaml:3:12: metrics.cutoffs: must not be empty: judged is "
            "computed at cutoffs");
  EXPECT_EQ(ErrorOf("metrics:\n  relevance_threshold: -1\n"),
            "config.yaml:2:24: metrics.relevance_threshold: must be >= 0, got "
            "-1");
  EXPECT_EQ(ErrorOf("metrics:\n  gain: quadratic\n"),
            "config.yaml:2:9: metrics.gain: unknown gain 'quadratic' "
            "(expected one of: linear, exponential)");
  EXPECT_EQ(ErrorOf("metrics:\n  recall_denominator: k\n"),
            "config.yaml:2:23: metrics.recall_denominator: unknown recall "
            "denominator 'k' (expected one of: relevant, min_k_relevant)");
  EXPECT_EQ(ErrorOf("metrics:\n  ap_denominator: hits\n"),
            "config.yaml:2:19: metrics.ap_denominator: unknown AP denominator "
            "'hits' (expected one of: relevant, min_k_relevant, "
            "retrieved_relevant)");
  EXPECT_EQ(ErrorOf("metrics:\n  zero_relevant: drop\n"),
            "config.yaml:2:18: metrics.zero_relevant: unknown zero-relevant "
            "policy 'drop' (expected one of: score_zero, skip)");
}

TEST(ConfigLoaderErrorTest, Aggregation) {
  EXPECT_EQ(ErrorOf("aggregation:\n  windows: [5m, 45s]\n"),
            "config.yaml:2:17: aggregation.windows[1]: 45s is not a multiple "
            "of aggregation.bucket (10s)");
  // The bucket may come after the windows.
  EXPECT_EQ(ErrorOf("aggregation:\n  windows: [1m]\n  bucket: 7s\n"),
            "config.yaml:2:13: aggregation.windows[0]: 1m is not a multiple "
            "of aggregation.bucket (7s)");
  EXPECT_EQ(ErrorOf("aggregation:\n  windows: [5m, 300s]\n"),
            "config.yaml:2:17: aggregation.windows[1]: duplicate window 5m");
  EXPECT_EQ(ErrorOf("aggregation:\n  windows: [0s]\n"),
            "config.yaml:2:13: aggregation.windows[0]: must be > 0");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [locale, 1device]\n"),
            "config.yaml:2:22: aggregation.segments[1]: '1device' is not a "
            "valid Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [__x]\n"),
            "config.yaml:2:14: aggregation.segments[0]: label names starting "
            "with '__' are reserved by Prometheus");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [variant]\n"),
            "config.yaml:2:14: aggregation.segments[0]: 'variant' is a label "
            "rankwatch sets itself (reserved: variant, k, window, le, topic, "
            "reason, partition, experiment, baseline, measure, label, field, "
            "better, judge)");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [field]\n"),
            "config.yaml:2:14: aggregation.segments[0]: 'field' is a label "
            "rankwatch sets itself (reserved: variant, k, window, le, topic, "
            "reason, partition, experiment, baseline, measure, label, field, "
            "better, judge)");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [locale, locale]\n"),
            "config.yaml:2:22: aggregation.segments[1]: duplicate segment "
            "'locale'");
  EXPECT_EQ(ErrorOf("aggregation:\n  variants: [A, A]\n"),
            "config.yaml:2:17: aggregation.variants[1]: duplicate variant 'A'");
  EXPECT_EQ(ErrorOf("aggregation:\n  variants: ['']\n"),
            "config.yaml:2:14: aggregation.variants[0]: must not be empty");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [locale]\n"
                    "  segment_values:\n    device: [a]\n"),
            "config.yaml:4:5: aggregation.segment_values.device: label "
            "'device' is not listed in aggregation.segments");
  EXPECT_EQ(ErrorOf("aggregation:\n  segments: [locale]\n"
                    "  segment_values:\n    locale: [en, en]\n"),
            "config.yaml:4:18: aggregation.segment_values.locale[1]: "
            "duplicate value 'en'");
  // Segments may be listed after their values.
  EXPECT_EQ(MustParse("aggregation:\n  segment_values:\n    locale: [en]\n"
                      "  segments: [locale]\n")
                .aggregation.segment_values.at("locale"),
            std::vector<std::string>{"en"});
}

TEST(ConfigLoaderErrorTest, Kafka) {
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n    bootstrap.servers: x:1\n"),
            "config.yaml:3:5: kafka.properties.bootstrap.servers: set "
            "kafka.bootstrap_servers instead");
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n    group.id: g\n"),
            "config.yaml:3:5: kafka.properties.group.id: set kafka.group_id "
            "instead");
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n    group.instance.id: g\n"),
            "config.yaml:3:5: kafka.properties.group.instance.id: set "
            "kafka.group_instance_id instead");
  EXPECT_EQ(ErrorOf("kafka:\n  group_instance_id: \"pod 0\"\n"),
            "config.yaml:2:22: kafka.group_instance_id: 'pod 0' has a "
            "character Kafka does not take in a group.instance.id (a-z, A-Z, "
            "0-9, '.', '_' and '-' only)");
  EXPECT_EQ(
      ErrorOf("kafka:\n  group_instance_id: " + std::string(250, 'x') + "\n"),
      "config.yaml:2:22: kafka.group_instance_id: is longer than "
      "Kafka's 249 characters");
  EXPECT_EQ(MustParse("kafka:\n  group_instance_id: ${H}\n", {{"H", "rw-0"}})
                .kafka.group_instance_id,
            "rw-0");
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n    ssl: {a: 1}\n"),
            "config.yaml:3:10: kafka.properties.ssl: expected a scalar value, "
            "got a map");
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n    linger.ms:\n"),
            "config.yaml:3:5: kafka.properties.linger.ms: expected a scalar "
            "value, got null");
}

TEST(ConfigLoaderErrorTest, Http) {
  EXPECT_EQ(ErrorOf("http:\n  listen: localhost\n"),
            "config.yaml:2:11: http.listen: expected host:port like "
            "127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464, got 'localhost'");
  EXPECT_EQ(ErrorOf("http:\n  listen: ':9464'\n"),
            "config.yaml:2:11: http.listen: expected host:port like "
            "127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464, got ':9464'");
  EXPECT_EQ(ErrorOf("http:\n  listen: localhost:http\n"),
            "config.yaml:2:11: http.listen: port 'http' is not a number from "
            "0 to 65535");
  EXPECT_EQ(ErrorOf("http:\n  listen: '[::1]:65536'\n"),
            "config.yaml:2:11: http.listen: port '65536' is not a number from "
            "0 to 65535");
  EXPECT_EQ(ErrorOf("http:\n  listen: '::1:80'\n"),
            "config.yaml:2:11: http.listen: an IPv6 host must be in brackets, "
            "like [::1]:9464");
  EXPECT_EQ(ErrorOf("http:\n  listen: 'bad host:80'\n"),
            "config.yaml:2:11: http.listen: expected host:port like "
            "127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464, got 'bad host:80'");
}

TEST(ConfigLoaderTest, NamedVariantsInTheFilesOrderEachOnce) {
  const Config c = MustParse(
      "join:\n  mode: impression\nexperiments:\n  - name: x\n    baseline: "
      "A\n    treatments: [B, C]\n  - name: y\n    baseline: C\n"
      "    treatments: [A]\ninterleaving:\n  - name: i\n    variant: "
      "A-vs-B\n    teams: [A, B]\n");
  EXPECT_EQ(NamedVariants(c),
            (std::vector<std::string>{"A", "B", "C", "A-vs-B"}));
  EXPECT_TRUE(NamedVariants(MustParse("join: {}\n")).empty());
}

TEST(ConfigLoaderTest, DefaultPrimaryIsNdcgAt10) {
  const Config c = MustParse(
      "metrics:\n  cutoffs: [5, 10]\n"
      "experiments:\n  - {name: x, baseline: A, treatments: [B]}\n");
  EXPECT_EQ(c.experiments[0].primary,
            (std::vector<SeriesRef>{{metrics::Measure::kNdcg, 10}}));
  EXPECT_EQ(c.schema.unit, "");
  EXPECT_EQ(c.statistics.unit_buckets, 64);
  EXPECT_DOUBLE_EQ(c.statistics.srm_level, 0.001);
  EXPECT_EQ(c.statistics.max_tracked_units, 4'000'000);
}

// trec_eval's and ir_measures' spellings name the same series as
// rankwatch's (metrics/measure_names.h): ndcg_cut.10 and nDCG@10 are
// ndcg@10, map is average_precision uncut, P@5 precision@5.
TEST(ConfigLoaderTest, PrimaryAndMeasuresInEverySpelling) {
  const std::string head =
      "metrics:\n  cutoffs: [5, 10]\n"
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n";
  using metrics::Measure;
  for (const std::string_view spelling :
       {"ndcg@10", "ndcg_cut.10", "ndcg_cut_10", "nDCG@10", "NDCG@10"}) {
    SCOPED_TRACE(std::string(spelling));
    const Config c =
        MustParse(head + "    primary: [" + std::string(spelling) + "]\n");
    EXPECT_EQ(c.experiments[0].primary,
              (std::vector<SeriesRef>{{Measure::kNdcg, 10}}));
  }
  const Config mixed =
      MustParse(head + "    primary: [P@5, map, RR@10, average_precision@5]\n");
  EXPECT_EQ(mixed.experiments[0].primary,
            (std::vector<SeriesRef>{{Measure::kPrecision, 5},
                                    {Measure::kAveragePrecision, 0},
                                    {Measure::kReciprocalRank, 10},
                                    {Measure::kAveragePrecision, 5}}));
  const Config measures = MustParse(
      "metrics:\n  cutoffs: [10]\n  measures: [nDCG, P, map_cut, RR, R, "
      "Rprec]\n");
  EXPECT_EQ(
      measures.metrics.measures,
      (std::vector<Measure>{
          Measure::kNdcg, Measure::kPrecision, Measure::kAveragePrecision,
          Measure::kReciprocalRank, Measure::kRecall, Measure::kRPrecision}));
}

TEST(ConfigLoaderErrorTest, SplitAndPrimary) {
  const std::string head =
      "metrics:\n  cutoffs: [10]\n  measures: [ndcg, judged, recall]\n"
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n";
  EXPECT_EQ(ErrorOf(head + "    split: {A: 1, C: 1}\n"),
            "config.yaml:8:19: experiments[0].split.C: 'C' is not a variant of "
            "experiment 'x'");
  EXPECT_EQ(ErrorOf(head + "    split: {A: 1}\n"),
            "config.yaml:8:12: experiments[0].split: missing a weight for "
            "variant 'B'");
  EXPECT_EQ(ErrorOf(head + "    split: {A: 1, B: 0}\n"),
            "config.yaml:8:22: experiments[0].split.B: must be > 0, got 0");
  EXPECT_EQ(ErrorOf(head + "    primary: [judged@10]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: 'judged@10' "
            "measures judgment coverage, not ranking quality: it cannot be "
            "primary");
  EXPECT_EQ(ErrorOf(head + "    primary: [ndcg@5]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: 'ndcg@5' is not "
            "computed (see metrics.measures and metrics.cutoffs)");
  EXPECT_EQ(ErrorOf(head + "    primary: [recall]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: measure 'recall': "
            "needs a cutoff, as in recall@10");
  EXPECT_EQ(ErrorOf(head + "    primary: [ndcg@x]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: measure 'ndcg@x': "
            "the cutoff must be an integer >= 1");
  EXPECT_EQ(ErrorOf(head + "    primary: [nDCG@1O]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: unknown measure "
            "'nDCG@1O' (did you mean 'nDCG@10'?)");
  EXPECT_EQ(ErrorOf(head + "    primary: [Bpref]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: 'Bpref' is "
            "computed by `rankwatch eval` only, not by the daemon's engine");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [ndcg, first_click_rank]\n"
                    "experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B]\n    primary: [first_click_rank]\n"),
            "config.yaml:7:15: experiments[0].primary[0]: 'first_click_rank' "
            "has no value for lists without a click: it cannot be primary "
            "(use recip_rank_first_click)");
  EXPECT_EQ(ErrorOf("metrics:\n  measures: [ndcg, kendall_tau]\n"
                    "experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B]\n    primary: [kendall_tau]\n"),
            "config.yaml:7:15: experiments[0].primary[0]: 'kendall_tau' has "
            "no value for lists with fewer than two judged docs or a single "
            "grade: it cannot be primary");
  EXPECT_EQ(ErrorOf(head + "    primary: [map@10]\n"),
            "config.yaml:8:15: experiments[0].primary[0]: measure 'map@10': "
            "map takes no cutoff (at a cutoff it is map_cut.10)");
  EXPECT_EQ(ErrorOf(head + "    primary: [ndcg@10, ndcg@10]\n"),
            "config.yaml:8:24: experiments[0].primary[1]: duplicate "
            "'ndcg@10'");
  // The same series in two spellings is a duplicate too.
  EXPECT_EQ(ErrorOf(head + "    primary: [ndcg@10, ndcg_cut.10]\n"),
            "config.yaml:8:24: experiments[0].primary[1]: duplicate "
            "'ndcg_cut.10'");
  EXPECT_EQ(ErrorOf("statistics:\n  unit_buckets: 1\n"),
            "config.yaml:2:17: statistics.unit_buckets: must be >= 2, got 1");
  EXPECT_EQ(ErrorOf("statistics:\n  unit_buckets: 4097\n"),
            "config.yaml:2:17: statistics.unit_buckets: must be <= 4096, got "
            "4097");
  EXPECT_EQ(ErrorOf("statistics:\n  srm_level: 1\n"),
            "config.yaml:2:14: statistics.srm_level: must be between 0 and 1 "
            "(exclusive), got 1");
}

// Guardrails: a computed series that is not primary, with one margin.
TEST(ConfigLoaderTest, Guardrails) {
  const std::string head =
      "metrics:\n  cutoffs: [5, 10]\n"
      "  measures: [ndcg, precision, judged, first_click_rank]\n"
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n";
  const Config c =
      MustParse(head +
                "    guardrails:\n"
                "      - {series: P@5, margin: 0.02}\n"
                "      - {series: judged_10, relative_margin: 0.1}\n"
                "      - {series: first_click_rank, margin: 0}\n");
  using metrics::Measure;
  ASSERT_EQ(c.experiments[0].guardrails.size(), 3u);
  EXPECT_EQ(c.experiments[0].guardrails[0],
            (GuardrailConfig{{Measure::kPrecision, 5}, 0.02, false}));
  EXPECT_EQ(c.experiments[0].guardrails[1],
            (GuardrailConfig{{Measure::kJudged, 10}, 0.1, true}));
  EXPECT_EQ(c.experiments[0].guardrails[2],
            (GuardrailConfig{{Measure::kFirstClickRank, 0}, 0, false}));
  EXPECT_TRUE(MustParse(head).experiments[0].guardrails.empty());
}

TEST(ConfigLoaderErrorTest, Guardrails) {
  const std::string head =
      "metrics:\n  cutoffs: [10]\n  measures: [ndcg, precision]\n"
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n"
      "    guardrails:\n";
  EXPECT_EQ(ErrorOf(head + "      - {margin: 0.1}\n"),
            "config.yaml:9:9: experiments[0].guardrails[0]: missing key "
            "'series'");
  EXPECT_EQ(ErrorOf(head + "      - {series: P@10}\n"),
            "config.yaml:9:9: experiments[0].guardrails[0]: missing key "
            "'margin' (absolute) or 'relative_margin' (a fraction of the "
            "baseline's mean)");
  EXPECT_EQ(
      ErrorOf(head + "      - {series: P@10, margin: 1, relative_margin: 1}\n"),
      "config.yaml:9:52: experiments[0].guardrails[0].relative_margin: give "
      "margin (absolute) or relative_margin (a fraction of the baseline's "
      "mean), not both");
  EXPECT_EQ(ErrorOf(head + "      - {series: P@10, margin: -0.1}\n"),
            "config.yaml:9:32: experiments[0].guardrails[0].margin: must be >= "
            "0, got -0.1");
  // The default primary series is ndcg@10: it must improve, not only hold.
  EXPECT_EQ(ErrorOf(head + "      - {series: ndcg@10, margin: 0.1}\n"),
            "config.yaml:9:18: experiments[0].guardrails[0].series: 'ndcg@10' "
            "is a primary series (it must improve); a guardrail must not get "
            "worse");
  EXPECT_EQ(ErrorOf(head + "      - {series: P@5, margin: 0.1}\n"),
            "config.yaml:9:18: experiments[0].guardrails[0].series: 'P@5' is "
            "not computed (see metrics.measures and metrics.cutoffs)");
  EXPECT_EQ(ErrorOf(head + "      - {series: P@10, margin: 0.1}\n"
                           "      - {series: P_10, margin: 0.2}\n"),
            "config.yaml:10:18: experiments[0].guardrails[1].series: "
            "duplicate 'P_10'");
  EXPECT_EQ(ErrorOf(head + "      - {series: P@10, margin: 0.1, k: 1}\n"),
            "config.yaml:9:37: experiments[0].guardrails[0].k: unknown key "
            "(expected one of: series, margin, relative_margin)");
}

// schema.fields: numeric fields of results events as series of their own;
// a guardrail names one by its name, a primary series cannot.
TEST(ConfigLoaderTest, ResultFields) {
  const Config c = MustParse(
      "schema:\n  fields:\n"
      "    - {name: latency_ms, path: timing.latency_ms, better: lower, "
      "mixture_sd: 10}\n"
      "    - {name: revenue, better: higher, mixture_sd: 0.5}\n"
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n"
      "    guardrails:\n"
      "      - {series: latency_ms, relative_margin: 0.1}\n"
      "      - {series: revenue, margin: 0.5}\n");
  ASSERT_EQ(c.schema.fields.size(), 2u);
  EXPECT_EQ(c.schema.fields[0],
            (ResultFieldConfig{"latency_ms", "timing.latency_ms", false, 10}));
  // The path is the name by default.
  EXPECT_EQ(c.schema.fields[1],
            (ResultFieldConfig{"revenue", "revenue", true, 0.5}));
  SeriesRef latency;
  latency.field = "latency_ms";
  SeriesRef revenue;
  revenue.field = "revenue";
  ASSERT_EQ(c.experiments[0].guardrails.size(), 2u);
  EXPECT_EQ(c.experiments[0].guardrails[0],
            (GuardrailConfig{latency, 0.1, true}));
  EXPECT_EQ(c.experiments[0].guardrails[1],
            (GuardrailConfig{revenue, 0.5, false}));
  EXPECT_EQ(FormatSeriesRef(latency), "latency_ms");
  EXPECT_TRUE(Config().schema.fields.empty());
}

// judges: labels from several judges kept apart (issue 29).
TEST(ConfigLoaderTest, Judges) {
  const Config c = MustParse(
      "schema:\n  judge: meta.labeller\n"
      "judges:\n  names: [human, umbrela-v1, clicks]\n  default: clicks\n"
      "  combine: pooled\n");
  EXPECT_EQ(c.schema.judge, "meta.labeller");
  EXPECT_EQ(c.judges.names,
            (std::vector<std::string>{"human", "umbrela-v1", "clicks"}));
  EXPECT_EQ(c.judges.default_judge, "clicks");
  EXPECT_EQ(c.judges.combine, JudgeCombine::kPooled);
  const Config defaults;
  EXPECT_EQ(defaults.schema.judge, "judge");
  EXPECT_TRUE(defaults.judges.names.empty());
  EXPECT_EQ(defaults.judges.combine, JudgeCombine::kPrecedence);
  EXPECT_TRUE(defaults.judges.ppi.trusted.empty());
  EXPECT_EQ(defaults.judges.coverage_tolerance, 0.05);
}

// judges.ppi names a trusted and a cheap judge; coverage_tolerance.
TEST(ConfigLoaderTest, JudgesPpiAndCoverageTolerance) {
  const Config c = MustParse(
      "judges:\n  names: [human, llm]\n  default: llm\n"
      "  ppi: {trusted: human, cheap: llm, tune: true}\n"
      "  coverage_tolerance: 0.1\n");
  EXPECT_EQ(
      c.judges.ppi,
      (JudgesPpiConfig{.trusted = "human", .cheap = "llm", .tune = true}));
  EXPECT_EQ(c.judges.coverage_tolerance, 0.1);
  // The judges may come after ppi in the file.
  const Config later = MustParse(
      "judges:\n  ppi: {cheap: llm, trusted: human}\n"
      "  names: [human, llm]\n");
  EXPECT_EQ(later.judges.ppi.cheap, "llm");
  EXPECT_FALSE(later.judges.ppi.tune);
}

TEST(ConfigLoaderErrorTest, JudgesPpi) {
  const std::string names = "judges:\n  names: [human, llm]\n";
  EXPECT_EQ(ErrorOf(names + "  ppi: {trusted: human}\n"),
            "config.yaml:3:8: judges.ppi: missing key 'cheap' (the judge who "
            "labels every list, e.g. an LLM)");
  EXPECT_EQ(ErrorOf(names + "  ppi: {cheap: llm}\n"),
            "config.yaml:3:8: judges.ppi: missing key 'trusted' (the judge "
            "whose labels on a random sample of lists are the truth)");
  EXPECT_EQ(ErrorOf(names + "  ppi: {trusted: humans, cheap: llm}\n"),
            "config.yaml:3:18: judges.ppi.trusted: 'humans' is not one of "
            "judges.names (did you mean 'human'?)");
  EXPECT_EQ(ErrorOf(names + "  ppi: {trusted: llm, cheap: llm}\n"),
            "config.yaml:3:30: judges.ppi.cheap: 'llm' is also "
            "judges.ppi.trusted: "
            "the cheap judge's errors are measured against another judge");
  EXPECT_EQ(ErrorOf(names + "  coverage_tolerance: 0\n"),
            "config.yaml:3:23: judges.coverage_tolerance: must lie in (0, 1]: "
            "a difference of the arms' shares of unjudged docs");
}

TEST(ConfigLoaderErrorTest, Judges) {
  EXPECT_EQ(ErrorOf("judges:\n  names: [human, llm, human]\n"),
            "config.yaml:2:23: judges.names[2]: duplicate judge 'human'");
  EXPECT_EQ(ErrorOf("judges:\n  names: [a, b, c, d, e, f, g, h, i]\n"),
            "config.yaml:2:10: judges.names: more than 8 judges (each is kept "
            "apart)");
  EXPECT_EQ(ErrorOf("judges:\n  names: [human, clicks]\n  default: click\n"),
            "config.yaml:3:12: judges.default: 'click' is not one of "
            "judges.names (did you mean 'clicks'?)");
  EXPECT_EQ(ErrorOf("judges:\n  default: human\n"),
            "config.yaml:2:12: judges.default: 'human' is not one of "
            "judges.names (none are configured)");
  EXPECT_EQ(ErrorOf("join:\n  mode: qrels\n  qrels_file: q.txt\n"
                    "judges:\n  names: [human, llm]\n"),
            "config.yaml:5:10: judges.names: join.qrels_file's labels name no "
            "judge: set judges.default to the judge who made them");
  EXPECT_EQ(ErrorOf("judges:\n  combine: latest\n"),
            "config.yaml:2:12: judges.combine: unknown judge combination "
            "'latest' (expected one of: precedence, pooled)");
  // schema.judge does nothing without judges.names (issue 43); its default
  // written out is accepted.
  EXPECT_EQ(ErrorOf("schema:\n  judge: meta.labeller\n"),
            "config.yaml:2:10: schema.judge: read only with judges.names, "
            "which is empty: name the judges whose labels 'meta.labeller' "
            "holds in judges.names, or leave schema.judge out");
  EXPECT_EQ(MustParse("schema:\n  judge: judge\n").schema.judge, "judge");
  EXPECT_EQ(ErrorOf("schema:\n  kind: meta\n  judge: meta.labeller\n"),
            "config.yaml:2:3: schema: schema.judge 'meta.labeller' is inside "
            "schema.kind 'meta', which is read as a value");
}

TEST(ConfigLoaderErrorTest, ResultFields) {
  const std::string head = "schema:\n  fields:\n";
  EXPECT_EQ(ErrorOf(head + "    - {name: latency_ms, mixture_sd: 10}\n"),
            "config.yaml:3:7: schema.fields[0]: missing key 'better' (higher "
            "or lower: which way the field improves)");
  EXPECT_EQ(ErrorOf(head + "    - {better: lower, mixture_sd: 10}\n"),
            "config.yaml:3:7: schema.fields[0]: missing key 'name'");
  EXPECT_EQ(
      ErrorOf(head + "    - {name: latency, better: faster, mixture_sd: 1}\n"),
      "config.yaml:3:31: schema.fields[0].better: expected higher or "
      "lower, got 'faster'");
  EXPECT_EQ(
      ErrorOf(head + "    - {name: Latency, better: lower, mixture_sd: 10}\n"),
      "config.yaml:3:14: schema.fields[0].name: 'Latency' is not a field "
      "name (lower-case letters, digits and '_', a letter first, at "
      "most 64)");
  EXPECT_EQ(
      ErrorOf(head +
              "    - {name: ndcg_cut_10, better: higher, mixture_sd: 0.5}\n"),
      "config.yaml:3:14: schema.fields[0].name: 'ndcg_cut_10' names a "
      "measure; give the field another name");
  EXPECT_EQ(
      ErrorOf(head +
              "    - {name: lat, better: lower, mixture_sd: 10}\n"
              "    - {name: lat, path: l2, better: lower, mixture_sd: 10}\n"),
      "config.yaml:4:14: schema.fields[1].name: duplicate field name 'lat' "
      "(first on line 3)");
  EXPECT_EQ(
      ErrorOf(head +
              "    - {name: lat, path: a..b, better: lower, mixture_sd: 10}\n"),
      "config.yaml:3:25: schema.fields[0].path: 'a..b' has an empty "
      "step (a nested field is written a.b.c)");
  EXPECT_EQ(ErrorOf(head + "    - {name: lat, better: lower}\n"),
            "config.yaml:3:7: schema.fields[0]: missing key 'mixture_sd' (the "
            "effect size the always-valid tests are tuned to, in the field's "
            "units: e.g. 10 for a latency in ms)");
  EXPECT_EQ(
      ErrorOf(head + "    - {name: lat, better: lower, mixture_sd: 0}\n"),
      "config.yaml:3:46: schema.fields[0].mixture_sd: must be > 0, got 0");
  std::string nine = head;
  for (int i = 0; i < 9; ++i) {
    nine += "    - {name: f" + std::to_string(i) +
            ", better: lower, mixture_sd: 10}\n";
  }
  EXPECT_EQ(ErrorOf(nine),
            "config.yaml:11:7: schema.fields[8]: at most 8 fields (each adds a "
            "series to every group)");
  // A field is a value of its own: not another key's path, not inside one.
  EXPECT_EQ(
      ErrorOf("schema:\n  covariate: pre.x\n  fields:\n"
              "    - {name: x, path: pre.x, better: lower, mixture_sd: 10}\n"),
      "config.yaml:2:3: schema: schema.fields[0].path 'pre.x' is also "
      "schema.covariate");
  EXPECT_EQ(
      ErrorOf(head +
              "    - {name: x, path: unit.x, better: lower, mixture_sd: 10}\n"
              "  unit: unit\n"),
      "config.yaml:2:3: schema: schema.fields[0].path 'unit.x' is inside "
      "schema.unit 'unit', which is read as a value");
  EXPECT_EQ(
      ErrorOf(head +
              "    - {name: x, path: t.a, better: lower, mixture_sd: 10}\n"
              "    - {name: y, path: t.a, better: lower, mixture_sd: 10}\n"),
      "config.yaml:2:3: schema: schema.fields[1].path 't.a' is also "
      "schema.fields[0].path");
  // Beside the segments object's labels, as variant may be.
  EXPECT_EQ(
      ErrorOf("schema:\n  segments: qa\n  fields:\n"
              "    - {name: x, path: qa.x, better: lower, mixture_sd: 10}\n"),
      "OK");
  const std::string experiment =
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n";
  EXPECT_EQ(
      ErrorOf(head + "    - {name: lat, better: lower, mixture_sd: 10}\n" +
              experiment + "    primary: [lat]\n"),
      "config.yaml:8:15: experiments[0].primary[0]: 'lat' is a field of "
      "results events (schema.fields): it can be a guardrail, not a "
      "primary series");
  EXPECT_EQ(
      ErrorOf(head + "    - {name: lat, better: lower, mixture_sd: 10}\n" +
              experiment +
              "    guardrails:\n      - {series: latency, margin: 1}\n"),
      "config.yaml:9:18: experiments[0].guardrails[0].series: unknown "
      "measure 'latency' (trec_eval's, rankwatch's and ir_measures' names "
      "are listed in docs/metrics.md)");
  EXPECT_EQ(
      ErrorOf(head +
              "    - {name: latency_ms, better: lower, mixture_sd: 10}\n" +
              experiment +
              "    guardrails:\n      - {series: latncy_ms, margin: 1}\n"),
      "config.yaml:9:18: experiments[0].guardrails[0].series: 'latncy_ms' is "
      "neither a measure nor a field; did you mean the field 'latency_ms' "
      "(schema.fields)?");
}

// The impression join needs partition n of both topics on one replica;
// only the range assignor keeps them together.
TEST(ConfigLoaderErrorTest, AssignmentStrategyOfTheImpressionJoin) {
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n"
                    "    partition.assignment.strategy: cooperative-sticky\n"),
            "config.yaml:3:36: kafka.properties.partition.assignment.strategy: "
            "'cooperative-sticky' can assign partition n of the results and "
            "judgments topics to different replicas, and join.mode "
            "impression needs them together (use range, the default, or "
            "join.mode qrels)");
  const Config range = MustParse(
      "kafka:\n  properties:\n    partition.assignment.strategy: range\n");
  EXPECT_EQ(range.kafka.properties.at("partition.assignment.strategy"),
            "range");
  const Config qrels = MustParse(
      "join:\n  mode: qrels\n  qrels_file: q.txt\nkafka:\n  properties:\n"
      "    partition.assignment.strategy: cooperative-sticky\n");
  EXPECT_EQ(qrels.join.mode, JoinMode::kQrels);
}

// Issue 42: the minimum sample and the fields' bounds, read and refused.
TEST(ConfigLoaderTest, MinimumSampleAndFieldBounds) {
  const Config defaults = MustParse(
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n");
  EXPECT_EQ(defaults.experiments[0].min_lists, 100);
  EXPECT_EQ(defaults.experiments[0].min_duration, std::chrono::hours(1));
  const Config c = MustParse(
      "schema:\n  fields:\n"
      "    - {name: latency_ms, better: lower, mixture_sd: 10, min: 0, "
      "max: 60000}\n"
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n"
      "    min_lists: 0\n    min_duration: 7d\n");
  EXPECT_EQ(c.experiments[0].min_lists, 0);
  EXPECT_EQ(c.experiments[0].min_duration, std::chrono::hours(24 * 7));
  EXPECT_EQ(c.schema.fields[0].min, 0);
  EXPECT_EQ(c.schema.fields[0].max, 60000);
  EXPECT_EQ(MustParse("schema:\n  fields:\n"
                      "    - {name: n, better: lower, mixture_sd: 1}\n")
                .schema.fields[0]
                .max,
            1e15);
}

TEST(ConfigLoaderErrorTest, MinimumSampleAndFieldBounds) {
  const std::string experiment =
      "experiments:\n  - name: x\n    baseline: A\n    treatments: [B]\n";
  EXPECT_EQ(ErrorOf(experiment + "    min_lists: -1\n"),
            "config.yaml:5:16: experiments[0].min_lists: must be >= 0, got -1");
  EXPECT_EQ(ErrorOf(experiment + "    min_duration: soon\n"),
            "config.yaml:5:19: experiments[0].min_duration: expected a "
            "duration like 30s, 5m, 1h, got 'soon' (units from the largest, "
            "e.g. 1h30m, 2d12h, 1s500ms)");
  const std::string head = "schema:\n  fields:\n";
  EXPECT_EQ(ErrorOf(head + "    - {name: l, better: lower, mixture_sd: 1, "
                           "max: 1e200}\n"),
            "config.yaml:3:52: schema.fields[0].max: must lie within +-1e+15 "
            "(so no sum of squares can overflow), got 1e+200");
  EXPECT_EQ(ErrorOf(head + "    - {name: l, better: lower, mixture_sd: 1, "
                           "min: 5, max: 5}\n"),
            "config.yaml:3:60: schema.fields[0].max: must be greater than min "
            "(5), got 5");
}

TEST(ConfigLoaderErrorTest, Experiments) {
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B, A]\n"),
            "config.yaml:4:21: experiments[0].treatments[1]: treatment 'A' is "
            "the baseline");
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    treatments: [B]\n"),
            "config.yaml:2:5: experiments[0]: missing key 'baseline'");
  EXPECT_EQ(ErrorOf("experiments:\n  - baseline: A\n    treatments: [B]\n"),
            "config.yaml:2:5: experiments[0]: missing key 'name'");
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    baseline: A\n"),
            "config.yaml:2:5: experiments[0]: missing key 'treatments'");
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: []\n"),
            "config.yaml:4:17: experiments[0].treatments: must not be empty");
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B, B]\n"),
            "config.yaml:4:21: experiments[0].treatments[1]: duplicate "
            "treatment 'B'");
  EXPECT_EQ(ErrorOf("experiments:\n"
                    "  - {name: x, baseline: A, treatments: [B]}\n"
                    "  - {name: x, baseline: A, treatments: [C]}\n"),
            "config.yaml:3:12: experiments[1].name: duplicate experiment name "
            "'x' (first on line 2)");
  EXPECT_EQ(ErrorOf("experiments:\n  - name: ''\n    baseline: A\n"
                    "    treatments: [B]\n"),
            "config.yaml:2:11: experiments[0].name: must not be empty");
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B]\n    owner: me\n"),
            "config.yaml:5:5: experiments[0].owner: unknown key (expected one "
            "of: name, baseline, treatments, split, primary, min_lists, "
            "min_duration, guardrails)");
  // With an allow-list of variants, experiments may only name those, in
  // whichever order the sections come.
  EXPECT_EQ(ErrorOf("experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [C]\n"
                    "aggregation:\n  variants: [A, B]\n"),
            "config.yaml:4:18: experiments[0].treatments[0]: variant 'C' is "
            "not listed in aggregation.variants");
  EXPECT_EQ(ErrorOf("aggregation:\n  variants: [B]\n"
                    "experiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B]\n"),
            "config.yaml:5:15: experiments[0].baseline: variant 'A' is not "
            "listed in aggregation.variants");
}

// Without an allow-list, the variants experiments and interleaving name
// must fit aggregation.max_variants (issue 43: 25 experiments of two
// variants each at the default 20, 15 of them folded into 'other').
TEST(ConfigLoaderErrorTest, NamedVariantsMustFitMaxVariants) {
  // Three experiments of two variants: 6 variants; the 5th (c's baseline
  // c0, line 11: two lines of aggregation, one of experiments, three per
  // experiment) is past max_variants 4.
  std::string yaml = "aggregation:\n  max_variants: 4\nexperiments:\n";
  for (const char* x : {"a", "b", "c"}) {
    yaml += std::string("  - name: ") + x + "\n    baseline: " + x +
            "0\n    treatments: [" + x + "1]\n";
  }
  EXPECT_EQ(ErrorOf(yaml),
            "config.yaml:11:15: experiments[2].baseline: variant 'c0' is one "
            "of 6 variants named in experiments and interleaving, over "
            "aggregation.max_variants (4): those past it would fold into "
            "'other' and never be compared (raise aggregation.max_variants to "
            "at least 6 or list the variants in aggregation.variants)");
  // An interleaving variant counts too (line 14); one named twice counts
  // once.
  EXPECT_EQ(ErrorOf("aggregation:\n  max_variants: 2\njoin:\n  mode: "
                    "impression\nexperiments:\n  - name: x\n    baseline: A\n"
                    "    treatments: [B]\n  - name: y\n    baseline: A\n"
                    "    treatments: [B]\ninterleaving:\n  - name: i\n"
                    "    variant: A-vs-B\n    teams: [A, B]\n"),
            "config.yaml:14:14: interleaving[0].variant: variant 'A-vs-B' is "
            "one of 3 variants named in experiments and interleaving, over "
            "aggregation.max_variants (2): those past it would fold into "
            "'other' and never be compared (raise aggregation.max_variants to "
            "at least 3 or list the variants in aggregation.variants)");
  // At the bound: accepted.
  EXPECT_EQ(MustParse("aggregation:\n  max_variants: 2\nexperiments:\n"
                      "  - name: x\n    baseline: A\n    treatments: [B]\n")
                .experiments.size(),
            1u);
}

TEST(ConfigLoaderErrorTest, Statistics) {
  EXPECT_EQ(ErrorOf("statistics:\n  level: 1\n"),
            "config.yaml:2:10: statistics.level: must be between 0 and 1 "
            "(exclusive), got 1");
  EXPECT_EQ(ErrorOf("statistics:\n  level: 0\n"),
            "config.yaml:2:10: statistics.level: must be between 0 and 1 "
            "(exclusive), got 0");
  EXPECT_EQ(ErrorOf("statistics:\n  level: high\n"),
            "config.yaml:2:10: statistics.level: expected a number, got "
            "'high'");
  EXPECT_EQ(ErrorOf("statistics:\n  level: nan\n"),
            "config.yaml:2:10: statistics.level: expected a number, got 'nan'");
  EXPECT_EQ(ErrorOf("statistics:\n  mixture_sd: 0\n"),
            "config.yaml:2:15: statistics.mixture_sd: must be > 0, got 0");
  EXPECT_EQ(ErrorOf("statistics:\n  mixture_sd: -0.5\n"),
            "config.yaml:2:15: statistics.mixture_sd: must be > 0, got -0.5");
}

TEST(ConfigLoaderErrorTest, Logging) {
  EXPECT_EQ(ErrorOf("logging:\n  level: verbose\n"),
            "config.yaml:2:10: logging.level: unknown log level 'verbose' "
            "(expected one of: trace, debug, info, warn, error, off)");
}

TEST(ConfigLoaderErrorTest, UnknownKeysSuggestTheClosest) {
  EXPECT_EQ(ErrorOf("join:\n  windw: 5m\n"),
            "config.yaml:2:3: join.windw: unknown key (did you mean "
            "'window'?)");
  EXPECT_EQ(ErrorOf("jion:\n  window: 5m\n"),
            "config.yaml:1:1: jion: unknown key (did you mean 'join'?)");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoff: [5]\n"),
            "config.yaml:2:3: metrics.cutoff: unknown key (did you mean "
            "'cutoffs'?)");
  EXPECT_EQ(ErrorOf("zzz: 1\n"),
            "config.yaml:1:1: zzz: unknown key (expected one of: schema, "
            "join, events, metrics, aggregation, dead_letter, kafka, http, "
            "experiments, interleaving, statistics, logging, judges)");
  EXPECT_EQ(ErrorOf("statistics:\n  confidence: 0.9\n"),
            "config.yaml:2:3: statistics.confidence: unknown key (expected "
            "one of: level, mixture_sd, unit_buckets, srm_level, "
            "max_tracked_units, tracked_queries, export_query_movers, "
            "interleaving_prior_sd)");
}

TEST(ConfigLoaderErrorTest, DuplicateKeys) {
  EXPECT_EQ(ErrorOf("join:\n  window: 5m\n  window: 6m\n"),
            "config.yaml:3:3: join.window: duplicate key (first on line 2)");
  EXPECT_EQ(ErrorOf("join: {}\nmetrics: {}\njoin: {}\n"),
            "config.yaml:3:1: join: duplicate key (first on line 1)");
}

TEST(ConfigLoaderErrorTest, WrongNodeTypes) {
  EXPECT_EQ(ErrorOf("foo\n"), "config.yaml:1:1: expected a map, got 'foo'");
  EXPECT_EQ(ErrorOf("- join\n"), "config.yaml:1:1: expected a map, got a list");
  EXPECT_EQ(ErrorOf("join: [1]\n"),
            "config.yaml:1:7: join: expected a map, got a list");
  EXPECT_EQ(ErrorOf("join: 5m\n"),
            "config.yaml:1:7: join: expected a map, got '5m'");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: 5\n"),
            "config.yaml:2:12: metrics.cutoffs: expected a list, got '5'");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: {a: 1}\n"),
            "config.yaml:2:12: metrics.cutoffs: expected a list, got a map");
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: [[1]]\n"),
            "config.yaml:2:13: metrics.cutoffs[0]: expected an integer, got a "
            "list");
  EXPECT_EQ(ErrorOf("join:\n  mode: [a]\n"),
            "config.yaml:2:9: join.mode: expected a name (one of: "
            "impression, qrels), got a list");
  EXPECT_EQ(ErrorOf("join:\n  window: {a: 1}\n"),
            "config.yaml:2:11: join.window: expected a duration like 30s, 5m, "
            "1h, got a map");
  EXPECT_EQ(ErrorOf("aggregation:\n  segment_values: [a]\n"),
            "config.yaml:2:19: aggregation.segment_values: expected a map, got "
            "a list");
  EXPECT_EQ(ErrorOf("kafka:\n  properties: [a]\n"),
            "config.yaml:2:15: kafka.properties: expected a map, got a list");
  EXPECT_EQ(ErrorOf("experiments: {a: 1}\n"),
            "config.yaml:1:14: experiments: expected a list, got a map");
  EXPECT_EQ(ErrorOf("experiments:\n  - x\n"),
            "config.yaml:2:5: experiments[0]: expected a map, got 'x'");
  EXPECT_EQ(ErrorOf("? [a, b]\n: c\n"),
            "config.yaml:1:3: expected a key name, got a list");
}

TEST(ConfigLoaderErrorTest, YamlSyntaxErrorsKeepTheirPosition) {
  EXPECT_EQ(ErrorOf("join:\n  window: [5m\nmetrics: {}\n"),
            "config.yaml:3:8: YAML syntax error: end of sequence flow not "
            "found");
  EXPECT_EQ(ErrorOf("join:\n  window: 5m\n   bad: 1\n"),
            "config.yaml:3:7: YAML syntax error: illegal map value");
  EXPECT_EQ(ErrorOf("join:\n  window: *nope\n"),
            "config.yaml:2:11: YAML syntax error: the referenced anchor is not "
            "defined");
  EXPECT_EQ(ErrorOf("join: {}\n---\nmetrics: {}\n"),
            "config.yaml:3:1: expected one YAML document, found a second one");
  EXPECT_EQ(ErrorOf("join: {}\n--- 5\n---\n"),
            "config.yaml:2:5: expected one YAML document, found a second one");
  // yaml-cpp 0.7's LoadAll never returns on these (a stray ',' at the top).
  EXPECT_EQ(ErrorOf(","), "config.yaml:1:1: YAML syntax error: unexpected ','");
  EXPECT_EQ(ErrorOf("- a\n,\n"),
            "config.yaml:2:1: YAML syntax error: unexpected ','");
  EXPECT_EQ(ErrorOf("join: {}\n# comment\n, # x\n"),
            "config.yaml:3:1: YAML syntax error: end of map not found");
}

// A tab in the indentation is named as such, at the tab (issue 43:
// yaml-cpp said "illegal map value" for the first).
TEST(ConfigLoaderErrorTest, TabsInTheIndentationAreNamed) {
  EXPECT_EQ(ErrorOf("join:\n\twindow: 5m\n"),
            "config.yaml:2:1: a tab in the indentation: YAML indents with "
            "spaces only");
  EXPECT_EQ(ErrorOf("join:\n  window: 5m\n  \t idle_timeout: 1m\n"),
            "config.yaml:3:3: a tab in the indentation: YAML indents with "
            "spaces only");
  EXPECT_EQ(ErrorOf("metrics:\n  measures:\n\t- ndcg\n"),
            "config.yaml:3:1: a tab in the indentation: YAML indents with "
            "spaces only");
  // After a key, a tab separates like a space: not an error.
  EXPECT_EQ(MustParse("join:\n  window:\t5m\n").join.window,
            std::chrono::minutes(5));
}

TEST(ConfigLoaderErrorTest, MessagesStayOnOneLine) {
  const std::string message = ErrorOf("\"a\\nb\": 1\n");
  EXPECT_EQ(message,
            "config.yaml:1:1: a\\nb: unknown key (expected one of: schema, "
            "join, events, metrics, aggregation, dead_letter, kafka, http, "
            "experiments, interleaving, statistics, logging, judges)");
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

// ---------------------------------------------------------------------------
// Environment substitution.

TEST(ConfigLoaderEnvTest, SetVariableIsSubstituted) {
  const Config c = MustParse(
      "kafka:\n  bootstrap_servers: ${HOST}:${PORT}\n"
      "  properties:\n    sasl.password: ${KAFKA_PASSWORD}\n",
      {{"HOST", "broker"}, {"PORT", "9093"}, {"KAFKA_PASSWORD", "pa$${X}"}});
  EXPECT_EQ(c.kafka.bootstrap_servers, "broker:9093");
  // The value is not expanded again.
  EXPECT_EQ(c.kafka.properties.at("sasl.password"), "pa$${X}");
}

TEST(ConfigLoaderEnvTest, SubstitutionHappensBeforeInterpretation) {
  const Config c = MustParse(
      "join:\n  window: ${WINDOW}\nevents:\n  max_results: ${MAX}\n"
      "metrics:\n  cutoffs: [\"${K}\"]\n",
      {{"WINDOW", "10m"}, {"MAX", "77"}, {"K", "3"}});
  EXPECT_EQ(c.join.window, minutes(10));
  EXPECT_EQ(c.events.max_results, 77);
  EXPECT_EQ(c.metrics.cutoffs, std::vector<int32_t>{3});
  EXPECT_EQ(ErrorOf("join:\n  window: ${WINDOW}\n", {{"WINDOW", "10"}}),
            "config.yaml:2:11: join.window: expected a duration like 30s, 5m, "
            "1h, got '10' (a unit is needed: 10s or 10ms?)");
}

// In a flow list or map, '{' and '}' are YAML syntax: ${...} must be quoted
// there (docs/configuration.md says so).
TEST(ConfigLoaderEnvTest, UnquotedInAFlowListIsAYamlError) {
  EXPECT_EQ(ErrorOf("metrics:\n  cutoffs: [${K}]\n", {{"K", "3"}}),
            "config.yaml:2:14: YAML syntax error: end of sequence flow not "
            "found");
}

TEST(ConfigLoaderEnvTest, DefaultWhenUnsetOrEmpty) {
  constexpr std::string_view kYaml = "join:\n  window: ${WINDOW:-5m}\n";
  EXPECT_EQ(MustParse(kYaml).join.window, minutes(5));
  EXPECT_EQ(MustParse(kYaml, {{"WINDOW", ""}}).join.window, minutes(5));
  EXPECT_EQ(MustParse(kYaml, {{"WINDOW", "1h"}}).join.window, hours(1));
  EXPECT_EQ(MustParse("dead_letter:\n  topic: ${TOPIC:-}\n").dead_letter.topic,
            "");
}

TEST(ConfigLoaderEnvTest, SetButEmptyWithoutDefaultIsEmpty) {
  EXPECT_EQ(
      MustParse("dead_letter:\n  file: ${F}\n", {{"F", ""}}).dead_letter.file,
      "");
  EXPECT_EQ(ErrorOf("kafka:\n  group_id: ${G}\n", {{"G", ""}}),
            "config.yaml:2:13: kafka.group_id: must not be empty");
}

TEST(ConfigLoaderEnvTest, UnsetVariableIsAnError) {
  EXPECT_EQ(ErrorOf("kafka:\n  properties:\n"
                    "    sasl.password: ${KAFKA_PASSWORD}\n"),
            "config.yaml:3:20: kafka.properties.sasl.password: environment "
            "variable KAFKA_PASSWORD is not set");
}

TEST(ConfigLoaderEnvTest, DollarSyntax) {
  EXPECT_EQ(
      MustParse("dead_letter:\n  file: /tmp/$$HOME/$${X}$$\n").dead_letter.file,
      "/tmp/$HOME/${X}$");
  EXPECT_EQ(ErrorOf("dead_letter:\n  file: $HOME\n"),
            "config.yaml:2:9: dead_letter.file: '$' must start ${NAME} or "
            "${NAME:-default} (write '$$' for a literal '$')");
  EXPECT_EQ(ErrorOf("dead_letter:\n  file: a$\n"),
            "config.yaml:2:9: dead_letter.file: '$' must start ${NAME} or "
            "${NAME:-default} (write '$$' for a literal '$')");
  EXPECT_EQ(ErrorOf("dead_letter:\n  file: ${HOME\n"),
            "config.yaml:2:9: dead_letter.file: unterminated '${' (write '$$' "
            "for a literal '$')");
  EXPECT_EQ(ErrorOf("dead_letter:\n  file: ${A-B}\n"),
            "config.yaml:2:9: dead_letter.file: invalid environment variable "
            "name 'A-B'");
  EXPECT_EQ(ErrorOf("dead_letter:\n  file: ${}\n"),
            "config.yaml:2:9: dead_letter.file: invalid environment variable "
            "name ''");
}

TEST(ConfigLoaderEnvTest, KeysAreNotSubstituted) {
  EXPECT_EQ(ErrorOf("${SECTION}: {}\n", {{"SECTION", "join"}}),
            "config.yaml:1:1: ${SECTION}: unknown key (expected one of: "
            "schema, join, events, metrics, aggregation, dead_letter, kafka, "
            "http, experiments, interleaving, statistics, logging, judges)");
}

TEST(ConfigLoaderEnvTest, EmptyLookupMeansNothingIsSet) {
  StatusOr<Config> c =
      ParseConfig("join:\n  window: ${W:-2m}\n", "c.yaml", EnvLookup());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->join.window, minutes(2));
  EXPECT_EQ(ParseConfig("join:\n  window: ${W}\n", "c.yaml", EnvLookup())
                .status()
                .message(),
            "c.yaml:2:11: join.window: environment variable W is not set");
}

TEST(ConfigLoaderEnvTest, SystemEnvReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("RANKWATCH_CONFIG_TEST_VAR", "7m", 1), 0);
  EXPECT_EQ(SystemEnv("RANKWATCH_CONFIG_TEST_VAR"), "7m");
  StatusOr<Config> c =
      ParseConfig("join:\n  window: ${RANKWATCH_CONFIG_TEST_VAR}\n", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->join.window, minutes(7));
  ASSERT_EQ(unsetenv("RANKWATCH_CONFIG_TEST_VAR"), 0);
  EXPECT_EQ(SystemEnv("RANKWATCH_CONFIG_TEST_VAR"), std::nullopt);
}

// ---------------------------------------------------------------------------
// The effective configuration (more in effective_config_test.cc): every key
// of kFullYaml survives printing and loading.

TEST(EffectiveConfigTest, RoundTripsEveryKey) {
  Config c = MustParse(kFullYaml);
  c.kafka.properties.erase("sasl.password");  // Masked: would not survive.
  const std::string out = FormatEffectiveConfig(c);
  const Config reloaded = MustParse(out);
  EXPECT_EQ(FormatEffectiveConfig(reloaded), out);
  // A few fields checked directly, beyond the text comparison.
  EXPECT_EQ(reloaded.join.qrels_delay, minutes(90));
  EXPECT_EQ(reloaded.join.early_tolerance, seconds(2));
  EXPECT_EQ(reloaded.join.max_judgments_per_request, 50);
  EXPECT_EQ(reloaded.events.max_future_skew, seconds(90));
  EXPECT_NE(out.find("  min_timestamp: \"2024-02-29T11:30:00.250Z\"\n"),
            std::string::npos);
  EXPECT_EQ(reloaded.events.min_timestamp_ms, 1709206200250);
  EXPECT_EQ(reloaded.kafka.commit_interval, milliseconds(250));
  EXPECT_EQ(reloaded.kafka.not_ready_after, seconds(45));
  EXPECT_EQ(reloaded.kafka.properties.at("enable.auto.commit"), "false");
  EXPECT_EQ(reloaded.schema.default_relevance, std::optional<int32_t>(1));
  EXPECT_EQ(reloaded.aggregation.segment_values.at("locale"),
            (std::vector<std::string>{"en", "de"}));
  ASSERT_EQ(reloaded.experiments.size(), 2u);
  EXPECT_EQ(reloaded.experiments[1].treatments, std::vector<std::string>{"C"});
  EXPECT_DOUBLE_EQ(reloaded.statistics.mixture_sd, 0.1);
}

// ---------------------------------------------------------------------------
// Files.

std::string SourcePath(std::string_view relative) {
  return std::string(SourceTree()) + "/" + std::string(relative);
}

TEST(ConfigFileTest, ExampleLoadsAndEqualsTheDefaultsExceptItsExamples) {
  StatusOr<Config> c =
      LoadConfigFile(SourcePath("config/example.yaml"), FakeEnv({}));
  ASSERT_TRUE(c.ok()) << c.status().message();
  Config expected;
  expected.aggregation.segments = {"locale"};
  expected.experiments = {{"ranker_v2", "A", {"B"}}};
  expected.experiments[0].split = {1, 1};
  expected.experiments[0].primary = {{metrics::Measure::kNdcg, 10}};
  expected.interleaving = {{"ranker_v2_interleaved", "A-vs-B", {"A", "B"}}};
  EXPECT_EQ(FormatEffectiveConfig(*c), FormatEffectiveConfig(expected));
}

TEST(ConfigFileTest, MissingFileIsAnIoError) {
  StatusOr<Config> c = LoadConfigFile("/nonexistent/rankwatch.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kIoError);
  EXPECT_EQ(c.status().message(),
            "cannot open /nonexistent/rankwatch.yaml: No such file or "
            "directory");
}

TEST(ConfigFileTest, DirectoryIsAnIoError) {
  StatusOr<Config> c = LoadConfigFile(SourcePath("config"));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kIoError);
  EXPECT_EQ(c.status().message(),
            "cannot read " + SourcePath("config") + ": Is a directory");
}

TEST(ConfigFileTest, ErrorsNameTheFileAsGiven) {
  char path[] = "/tmp/rankwatch_config_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string yaml = "join:\n  window: 30\n";
  ASSERT_EQ(write(fd, yaml.data(), yaml.size()),
            static_cast<ssize_t>(yaml.size()));
  close(fd);
  StatusOr<Config> c = LoadConfigFile(path);
  std::remove(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            std::string(path) +
                ":2:11: join.window: expected a duration like 30s, 5m, 1h, "
                "got '30' (a unit is needed: 30s or 30ms?)");
}

// Multileaving: 2 to 8 distinct teams, the incumbent first; the effective
// configuration writes them back in the same order.
TEST(ConfigLoaderTest, MultileavingTeams) {
  const Config c = MustParse(
      "schema: {team: ranker}\n"
      "interleaving:\n"
      "  - {name: m, variant: M, teams: [prod, b, c, d, e, f, g, h]}\n");
  ASSERT_EQ(c.interleaving.size(), 1u);
  EXPECT_EQ(
      c.interleaving[0].teams,
      (std::vector<std::string>{"prod", "b", "c", "d", "e", "f", "g", "h"}));
  const Config reloaded = MustParse(FormatEffectiveConfig(c));
  EXPECT_EQ(reloaded.interleaving, c.interleaving);
  EXPECT_NE(FormatEffectiveConfig(c).find(
                "teams: [\"prod\", \"b\", \"c\", \"d\", \"e\", \"f\", "
                "\"g\", \"h\"]"),
            std::string::npos)
      << FormatEffectiveConfig(c);
}

TEST(ConfigLoaderErrorTest, MultileavingTeamBounds) {
  // Nine teams: one past the bound (36 pairs).
  EXPECT_EQ(ErrorOf("interleaving:\n"
                    "  - {name: x, variant: M, teams: [a, b, c, d, e, f, g, "
                    "h, i]}\n"),
            "config.yaml:2:34: interleaving[0].teams: must list 2 to 8 "
            "teams (the incumbent, then the challengers), got 9");
  EXPECT_EQ(ErrorOf("interleaving:\n  - {name: x, variant: M, teams: []}\n"),
            "config.yaml:2:34: interleaving[0].teams: must list 2 to 8 "
            "teams (the incumbent, then the challengers), got 0");
  // Distinct: a repeated challenger is named where it repeats.
  EXPECT_EQ(ErrorOf("interleaving:\n  - {name: x, variant: M, teams: [a, b, "
                    "c, b]}\n"),
            "config.yaml:2:44: interleaving[0].teams[3]: duplicate team 'b'");
}

// How human outputs name a series (issue 43): the user's first spelling
// in experiments (primary series before guardrails), else trec_eval's name.
// The spelling is no part of a series' identity.
TEST(SeriesLabelTest, TheUsersFirstSpellingElseTrecEvalsName) {
  StatusOr<Config> config = ParseConfig(R"(
metrics:
  cutoffs: [10]
  measures: [ndcg, reciprocal_rank, precision]
experiments:
  - name: one
    baseline: A
    treatments: [B]
    primary: [MRR]
    guardrails:
      - {series: ndcg@10, margin: 0.1}
  - name: two
    baseline: A
    treatments: [C]
    primary: [recip_rank, P@10]
)",
                                        "config.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  using metrics::Measure;
  EXPECT_EQ(SeriesLabel(*config, {Measure::kReciprocalRank, 0}), "MRR");
  EXPECT_EQ(SeriesLabel(*config, {Measure::kNdcg, 10}), "ndcg@10");
  EXPECT_EQ(SeriesLabel(*config, {Measure::kPrecision, 10}), "P@10");
  EXPECT_EQ(SeriesLabel(*config, {Measure::kNdcg, 0}), "ndcg");
  EXPECT_EQ(SeriesLabel(*config, {Measure::kReciprocalRank, 10}),
            "recip_rank_10");
  EXPECT_EQ(SeriesLabel(SeriesRef{Measure::kPrecision, 10}), "P_10");
  const SeriesRef& mrr = config->experiments[0].primary[0];
  EXPECT_EQ(mrr.spelling, "MRR");
  EXPECT_EQ(mrr, (SeriesRef{Measure::kReciprocalRank, 0}));
  EXPECT_EQ(mrr, config->experiments[1].primary[0]);
}

}  // namespace
}  // namespace rankwatch::config
