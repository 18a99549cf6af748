// The typed configuration of rankwatch: one struct tree, filled from YAML by
// LoadConfigFile() (config_loader.h) with a default for every key that has a
// sensible one. Plain values; copy freely; not synchronized.
//
// Every field documents its YAML key. config/example.yaml lists them all
// with comments; docs/configuration.md explains them. The structs compare
// with defaulted operator==, never field by field. A new key: its field
// here, its row in ConfigKeys() (config.cc: how it reloads), the loader,
// the writer (effective_config.cc), FullConfig() in effective_config_test.cc
// and the docs; the tests there fail when the row or the writer is missing.
#ifndef RANKWATCH_CONFIG_CONFIG_H_
#define RANKWATCH_CONFIG_CONFIG_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/duration.h"
#include "metrics/measures.h"

namespace rankwatch::config {

// `schema:` the field names of the JSON events, so that users map their own
// events without code. A name with dots is a path into nested objects
// ("query_attributes.experiment"), read from the top of the event; the names
// inside each entry of `results` / `judgments` (doc_id, score, team,
// relevance, kind) are plain keys there.
// A numeric field of results events compared between A/B arms as a series
// of its own (`schema.fields` items), e.g. the served list's latency or
// revenue: each list's value is the field's when it is a finite number,
// none otherwise. Such a series can be an experiment's guardrail.
// The largest magnitude of a schema.fields value: 1e15 squared, times
// 2^63 lists, times the per-bucket sums' squares, stays far below the
// largest double (1.8e308).
inline constexpr double kMaxFieldMagnitude = 1e15;

struct ResultFieldConfig {
  // The series' name, as guardrails and every output spell it
  // ([a-z][a-z0-9_]*, not a measure's name).
  std::string name;
  // Where results events hold it (a dotted path); the name by default.
  std::string path;
  // Which way is better (`better: higher` or `lower`): latency is better
  // lower, revenue higher.
  bool higher_is_better = true;
  // The standard deviation (tau) of the mixing distribution of the field's
  // always-valid tests, in the field's units: the size of effect they are
  // tuned to detect (statistics.mixture_sd is in units of a measure in
  // [0, 1], far off for a latency in ms). Required, > 0.
  double mixture_sd = 0;
  // The values accepted (`min`, `max`): a value outside is left out of the
  // list's figures and counted (reason out_of_range). The default, and the
  // widest allowed, is +-kMaxFieldMagnitude, so that no sum of values or
  // of their squares over any number of lists can overflow.
  double min = -kMaxFieldMagnitude;
  double max = kMaxFieldMagnitude;
  bool operator==(const ResultFieldConfig&) const = default;
};

// At most this many schema.fields: each adds a series to every group and
// a value to every pending request.
inline constexpr size_t kMaxResultFields = 8;

struct SchemaConfig {
  // "" or "ubi": the defaults of the other keys (UbiSchema() below), which
  // the keys written next to it override.
  std::string preset;
  std::string request_id = "request_id";
  std::string query_id = "query_id";
  std::string variant = "variant";
  std::string timestamp = "timestamp";  // Epoch ms (number) or RFC 3339.
  std::string results = "results";      // Array of objects or of strings.
  std::string doc_id = "doc_id";        // In results entries and judgments.
  std::string score = "score";          // In results entries; informational.
  std::string segments = "segments";    // Object of label -> string value.
  std::string relevance = "relevance";  // Integer grade; null deletes.
  std::string judgments = "judgments";  // Batch form: array of judgments.
  std::string default_variant = "default";  // When `variant` is absent.
  // Randomization unit of A/B experiments (e.g. "user_id"), a field of
  // results events; empty: none, requests are the unit.
  std::string unit;
  // Interleaved traffic: in each results entry, the team (ranker) that
  // contributed the doc (see `interleaving:`).
  std::string team = "team";
  // Interleaved traffic whose results are plain doc ids (UBI's
  // query_response_hit_ids): a field of results events (a dotted path,
  // e.g. "query_attributes.teams") holding an array parallel to the
  // results, entry i the team of result i. When an event has it, it gives
  // every result's team (entries' `team` fields are not used); empty: none.
  std::string teams;
  // Regression adjustment of A/B comparisons (CUPED/CUPAC): a numeric field
  // of results events (a dotted path) holding a pre-exposure value of the
  // unit or request, computed upstream (e.g. the user's metric over the
  // weeks before the experiment). Empty: none, comparisons unadjusted.
  std::string covariate;
  // Numeric fields of results events compared as series of their own
  // (ResultFieldConfig); at most kMaxResultFields.
  std::vector<ResultFieldConfig> fields;
  // Judgment events (top level, or in each batch entry): the kind of
  // judgment (click, purchase, label...), matched against
  // metrics.click_exclude_kinds. Absent: not excluded.
  std::string kind = "kind";
  // Judgment events (in each batch entry, else top level): who labelled
  // (a model and prompt version, an assessor pool, clicks), one of
  // judges.names. Read only with judges.names.
  std::string judge = "judge";
  // Grade of a judgment without a relevance field (e.g. a click event);
  // nullopt means the field is required.
  std::optional<int32_t> default_relevance;
  // Judgment kind -> grade (UBI: action_name -> grade). When not empty, a
  // judgment's grade is its kind's, relevance fields are not read, and a
  // judgment of any other kind is ignored (DecodeStatus::ignored), not
  // rejected.
  std::map<std::string, int32_t, std::less<>> actions;
  // Judgment events: the rank at which the event says its doc was served
  // (UBI: event_attributes.position.ordinal), checked against the served
  // list; "" reads none.
  std::string position;
  // The value of `position` that means rank 1: 1 (the UBI specification's
  // "nth position"), 0 (zero-based ordinals), or kPositionBaseAuto: per
  // request, 0 when one of its events claims position 0, else 1 (the
  // producers of UBI data disagree; see docs/configuration.md).
  int32_t position_base = 1;
  // Judgment events of this kind (UBI: action_name "impression") say
  // where a doc was shown: they grade nothing, and a results event without
  // `results` (impression mode) is ranked by them, in `position` order.
  // Empty: no such kind, and `results` is required.
  std::string impression_kind;
  bool operator==(const SchemaConfig&) const = default;
};

// schema.position_base: "auto".
inline constexpr int32_t kPositionBaseAuto = -1;

// The field names of `schema.preset: ubi`: OpenSearch User Behavior
// Insights 1.x query records as results events (query_id the request,
// query_response_hit_ids the ranking) and UBI events as judgments
// (action_name the kind, graded by `actions`; the doc and its position
// under event_attributes).
inline SchemaConfig UbiSchema() {
  SchemaConfig s;
  s.preset = "ubi";
  s.request_id = "query_id";
  s.query_id = "user_query";
  s.variant = "query_attributes.experiment";
  s.results = "query_response_hit_ids";
  s.doc_id = "event_attributes.object.object_id";
  s.kind = "action_name";
  s.actions = {{"click", 1}, {"add_to_cart", 2}, {"purchase", 3}};
  s.position = "event_attributes.position.ordinal";
  s.position_base = kPositionBaseAuto;
  s.impression_kind = "impression";
  return s;
}

// Another name of a results field, read as the field itself (both in one
// event: duplicate_key).
struct FieldAlias {
  std::string SchemaConfig::*key;  // The field (&SchemaConfig::results...).
  std::string path;
};
// The names other OpenSearch UBI producers give the fields of `s` that
// still have the ubi preset's names (none without the preset): the
// plugin before 2.19 (query_response_object_ids), and its query records
// as it posts them to Data Prepper, serialized by Jackson in camelCase
// (queryId, userQuery, clientId, queryAttributes.experiment,
// queryResponse.queryResponseHitIds).
std::vector<FieldAlias> PresetAliases(const SchemaConfig& s);

enum class JoinMode {
  kImpression,  // Results and judgments meet on request_id in a window.
  kQrels,       // Judgments form a (query_id, doc_id) -> grade table.
};

// How several judgments of one doc combine.
enum class CombineRule {
  kMax,   // The highest grade wins.
  kLast,  // The latest event time wins (the higher grade on ties).
};

// `join:` how results and judgments meet, and the bounds on join state.
struct JoinConfig {
  JoinMode mode = JoinMode::kImpression;
  // impression: judgments are accepted until this long (event time) after
  // the results event.
  Duration window = std::chrono::minutes(30);
  // impression: judgments stamped up to this long (event time) before their
  // results event still belong to it: producers' clocks disagree a little.
  Duration early_tolerance = std::chrono::seconds(5);
  // The watermark trails each source's highest event time by this much:
  // how far out of order an event may arrive within its own partition.
  Duration allowed_lateness = std::chrono::minutes(1);
  // A caught-up source keeps holding the watermark this long (wall clock);
  // with no event at all for this long, event time is taken to advance
  // with the wall clock, so an idle stream still finalizes.
  Duration idle_timeout = std::chrono::minutes(1);
  CombineRule combine = CombineRule::kMax;
  // qrels: a results event is scored once the watermark passes its time
  // plus this, so labels produced with it land first. 0 scores on arrival.
  Duration qrels_delay = Duration(0);
  std::string qrels_file;  // qrels: TREC qrels preloaded into the table.
  int64_t max_pending_requests = 1'000'000;
  // impression: judgment records one pending request holds; more are
  // counted and dropped, so that one request cannot take all the memory.
  int32_t max_judgments_per_request = 1000;
  int64_t max_table_entries = 10'000'000;  // qrels: (query, doc) entries.
  bool operator==(const JoinConfig&) const = default;
};

// `events:` limits on single events; anything beyond is rejected.
struct EventLimitsConfig {
  int32_t max_results = 1000;    // Results array length.
  int32_t max_id_length = 512;   // request_id, query_id, doc_id, variant...
  int32_t max_judgments = 1000;  // Batch judgments array length.
  int64_t max_event_bytes = 1 << 20;
  // An event time more than this ahead of the wall clock is rejected
  // (future_timestamp): one producer with a wrong clock must not move the
  // watermark.
  Duration max_future_skew = std::chrono::minutes(5);
  // An earlier event time (epoch ms) is rejected (past_timestamp). The
  // default, 2010-01-01T00:00:00Z (date -u -d 2010-01-01 +%s -> 1262304000),
  // rejects what no live or replayed stream of today holds (0, a clock at
  // its epoch, epoch seconds read as milliseconds: January 1970) yet
  // accepts any plausible backfill; older data sets lower it.
  int64_t min_timestamp_ms = 1'262'304'000'000;
  bool operator==(const EventLimitsConfig&) const = default;
};

// `metrics:` what to compute for every served list.
struct MetricsConfig {
  std::vector<int32_t> cutoffs = {1, 3, 5, 10};
  std::vector<metrics::Measure> measures = {metrics::kDefaultMeasures.begin(),
                                            metrics::kDefaultMeasures.end()};
  metrics::Definitions definitions;  // relevance_threshold, gain, ...
  // Judgment kinds (schema.kind) that never count as clicks (e.g. human or
  // LLM labels): they still grade docs for the relevance measures.
  std::vector<std::string> click_exclude_kinds;
  bool operator==(const MetricsConfig&) const = default;
};

// `aggregation:` running means and the bounds on label cardinality.
struct AggregationConfig {
  std::vector<Duration> windows = {std::chrono::minutes(5),
                                   std::chrono::hours(1)};
  Duration bucket = std::chrono::seconds(10);  // Window granularity.
  std::vector<std::string> segments;  // Segment labels kept (e.g. locale).
  // Variants: an allow-list, or (when empty) the first max_variants seen.
  std::vector<std::string> variants;
  int32_t max_variants = 20;
  // Segment values per label: an allow-list, or the first
  // max_segment_values seen. Anything else is folded into "other".
  std::map<std::string, std::vector<std::string>> segment_values;
  int32_t max_segment_values = 50;
  bool operator==(const AggregationConfig&) const = default;
};

// `dead_letter:` where rejected events are copied (optional).
struct DeadLetterConfig {
  std::string file;   // replay: a JSON-lines file.
  std::string topic;  // daemon: a Kafka topic (payload + reason header).
  bool operator==(const DeadLetterConfig&) const = default;
};

// `kafka:` the consumer (rankwatch run).
struct KafkaConfig {
  std::string bootstrap_servers = "localhost:9092";
  std::string group_id = "rankwatch";
  std::string results_topic = "results";
  std::string judgments_topic = "judgments";
  Duration commit_interval = std::chrono::seconds(5);
  // Not ready (/readyz 503) once an assigned partition has had no fetch
  // progress for longer than this.
  Duration not_ready_after = std::chrono::seconds(30);
  // Durable state (docs/operations.md, "Durable state"): every assigned
  // partition's state is checkpointed, with the offsets it covers, every
  // checkpoint_interval (and when the partition leaves) into the compacted
  // changelog_topic, and restored from there where the partition is
  // assigned next, so restarts, rollouts and rebalances keep every figure.
  // On by default: a deployment that never read about it keeps its figures
  // (false opts out: at-least-once, figures from each restart on).
  bool durable_state = true;
  std::string changelog_topic;  // Empty: "<group_id>-changelog".
  // Static group membership (KIP-345, librdkafka's group.instance.id): a
  // replica that restarts with the same id (a crash, kill -9, a container
  // restart) gets its partitions back at once instead of after
  // session.timeout.ms; a stopped one does not leave the group, so its
  // partitions wait for it that long. Empty: dynamic membership.
  // docs/operations.md, "Static membership".
  std::string group_instance_id;
  Duration checkpoint_interval = std::chrono::seconds(5);
  // Any librdkafka property (TLS, SASL, timeouts...), passed through.
  std::map<std::string, std::string> properties;
  // The changelog topic in effect.
  std::string changelog() const {
    return changelog_topic.empty() ? group_id + "-changelog" : changelog_topic;
  }
  bool operator==(const KafkaConfig&) const = default;
};

// `http.tls:` HTTPS for the endpoint; both files set, or neither (plain
// HTTP). The files are re-read on reload and when they change.
struct TlsConfig {
  std::string cert_file;  // PEM certificate chain.
  std::string key_file;   // PEM private key.
  // PEM CA bundle; when set, clients must present a certificate it signed.
  std::string client_ca;
  std::string min_version = "1.2";  // "1.2" or "1.3".
  // TLS 1.2 suites (OpenSSL names, ':'-separated); "" = ECDHE with AES-GCM
  // or ChaCha20-Poly1305 only.
  std::string cipher_suites;
  bool enabled() const { return !cert_file.empty(); }
  bool operator==(const TlsConfig&) const = default;
};

// `http.basic_auth:` HTTP basic authentication of every path but /healthz
// and /readyz (probes); off when no user is set.
struct BasicAuthConfig {
  std::string username;
  std::string password;  // Or a bcrypt hash; usually ${ENV}; shown masked.
  // More users: name -> bcrypt hash ($2a$/$2b$/$2y$, as exporter-toolkit's
  // basic_auth_users) or plaintext password; shown masked.
  std::map<std::string, std::string> users;
  bool enabled() const { return !username.empty() || !users.empty(); }
  bool operator==(const BasicAuthConfig&) const = default;
};

// `http:` the metrics endpoint.
struct HttpConfig {
  std::string listen = "127.0.0.1:9464";  // host:port; port 0 = any.
  // POST /-/reload; off by default, as Prometheus' --web.enable-lifecycle
  // (SIGHUP works either way).
  bool enable_reload = false;
  // Host header names answered (http::HostPolicy); [] = "localhost" when
  // bound to loopback, any name otherwise. IP literals always.
  std::vector<std::string> allowed_hosts;
  // Bytes held for responses not yet taken by their clients, in all.
  int64_t response_budget_bytes = int64_t{64} << 20;
  TlsConfig tls;
  BasicAuthConfig basic_auth;
  bool operator==(const HttpConfig&) const = default;
};

// `experiments:` (a list) A/B comparisons of a baseline variant with one or
// more treatments.
// A series of the comparisons: a measure at a cutoff, or uncut (cutoff 0),
// or, when `field` is set, the schema.fields entry of that name (measure
// and cutoff then unused, left at their defaults).
struct SeriesRef {
  metrics::Measure measure = metrics::Measure::kNdcg;
  int32_t cutoff = 0;
  // `= {}`: SeriesRef{measure, cutoff} stays a complete initializer.
  std::string field = {};
  // The text the user wrote for it ("MRR", "ndcg@10"), empty for a
  // default: how human outputs name the series (SeriesLabel). Presentation,
  // not identity: equality ignores it, so "MRR" and "recip_rank" are one
  // series wherever series are matched.
  std::string spelling = {};
  bool operator==(const SeriesRef& o) const {
    return measure == o.measure && cutoff == o.cutoff && field == o.field;
  }
};

// One guardrail of an experiment (`guardrails:` items): a series that must
// not get worse under a treatment by more than a margin (a non-inferiority
// test; docs/statistics.md, "Decisions"). Which way is worse is the
// measure's direction (metrics::HigherIsBetter).
struct GuardrailConfig {
  SeriesRef series;
  // How much worse than the baseline the treatment may be, >= 0: in the
  // series' own units (`margin`), or with `relative` (`relative_margin`) as
  // a fraction of the baseline arm's mean at each look.
  double margin = 0;
  bool relative = false;
  bool operator==(const GuardrailConfig&) const = default;
};

inline constexpr int64_t kDefaultMinLists = 100;
inline constexpr Duration kDefaultMinDuration = std::chrono::hours(1);

struct ExperimentConfig {
  std::string name;
  std::string baseline;
  std::vector<std::string> treatments;
  // Expected traffic weights, parallel to baseline then treatments, all > 0
  // (equal when not configured); shares are weight / sum of weights.
  std::vector<double> split = {};
  // The series that decide the experiment (alerts, summaries): quality
  // measures only. Defaults to ndcg@10 when configured, else the first
  // quality series.
  std::vector<SeriesRef> primary = {};
  // Series that must not get worse by more than their margin (any computed
  // series but a primary one): with the primary series, they decide the
  // experiment (ship, no ship, keep running).
  std::vector<GuardrailConfig> guardrails = {};
  // The minimum evidence before a call (issue 42): until every arm has
  // `min_lists` lists (units with schema.unit) and `min_duration` of event
  // time has passed since the experiment's first list, the decision is
  // keep_running, but for a guardrail beyond its margin (no_ship).
  // docs/statistics.md ("Minimum sample") says why these defaults.
  int64_t min_lists = kDefaultMinLists;
  Duration min_duration = kDefaultMinDuration;
  bool operator==(const ExperimentConfig&) const = default;
};

// `statistics:` how A/B differences are tested.
struct StatisticsConfig {
  double level = 0.95;       // Confidence level of the intervals.
  double mixture_sd = 0.05;  // mSPRT mixing standard deviation (tau).
  // Hash buckets of randomization units (with schema.unit): the clusters
  // of the cluster-robust variance.
  int32_t unit_buckets = 64;
  // Significance level of the sample-ratio-mismatch check.
  double srm_level = 0.001;
  // Distinct units remembered for the SRM counts, over all experiments;
  // later new units are not counted (the counts stay a valid sample).
  int64_t max_tracked_units = 4'000'000;
  // Query movers: counters of the most frequent queries per experiment
  // variant and input partition (Space-Saving); 0 tracks none.
  int32_t tracked_queries = 1000;
  // The top movers exported to Prometheus per experiment, treatment and
  // primary series (rankwatch_query_mover_*{rank}); 0 exports none.
  int32_t export_query_movers = 0;
  // Prior standard deviation of the chance that the challenger wins a
  // decided interleaved impression, in the sequential interleaving test.
  double interleaving_prior_sd = 0.05;
  bool operator==(const StatisticsConfig&) const = default;
};

// Whether `a` and `b` configure the same statistical tests: equal but for
// the query movers' sizes (tracked_queries, export_query_movers), which no
// test reads, so that changing them on reload keeps the running tests.
bool SameTests(const StatisticsConfig& a, const StatisticsConfig& b);

// `interleaving:` (a list) live team-draft interleaving and multileaving
// experiments: the traffic of `variant` serves lists merged from two or
// more rankers, each result tagged with the team that contributed it
// (schema.team or schema.teams).
struct InterleavingConfig {
  std::string name;
  std::string variant;
  // The team values, distinct, 2 to kMaxInterleavingTeams: the incumbent
  // first, then the challengers. With two teams a verdict of +1 means the
  // challenger is better; with more, each pair (X, Y) of teams, X listed
  // first, has its own verdict (+1: Y is better).
  std::vector<std::string> teams;
  bool operator==(const InterleavingConfig&) const = default;
};
// metrics::kMaxMultileavingTeams: 28 pairs of teams at most.
inline constexpr size_t kMaxInterleavingTeams = 8;

// `logging:`
enum class LogFormat {
  kText,  // Human-readable lines, RFC 3339 UTC time.
  kJson,  // One JSON object per line: time, level, message, fields.
};

struct LoggingConfig {
  std::string level = "info";  // trace|debug|info|warn|error|off
  LogFormat format = LogFormat::kText;
  int32_t max_rejects_logged_per_second = 5;
  bool operator==(const LoggingConfig&) const = default;
};

// How the measures' grade of a doc comes from the labels of several judges
// (`judges.combine`).
enum class JudgeCombine {
  // The label of the first judge in judges.names that labelled the doc
  // (each judge's own labels combined by join.combine): human over LLM
  // over clicks.
  kPrecedence,
  // Every judge's labels pooled and combined by join.combine, as if they
  // had no judge (the judges are still kept apart for what reads them one
  // by one).
  kPooled,
};

// At most this many judges: each multiplies what a pending label holds and
// what reads judges one by one.
inline constexpr size_t kMaxJudges = 8;

// `judges.ppi`: prediction-powered means (metrics/ppi.h), live: the mean
// of each measure the trusted judge would give over every list, from the
// trusted judge's labels on a random few and the cheap judge's on all.
struct JudgesPpiConfig {
  std::string trusted = {};  // One of judges.names; empty: no PPI.
  std::string cheap = {};    // Another of judges.names.
  // PPI++'s variance-minimizing weight of the cheap judge (else 1, plain
  // PPI, whose interval is exact rather than asymptotic in the weight).
  bool tune = false;
  bool operator==(const JudgesPpiConfig&) const = default;
};

// `judges:` labels from several judges (issue 29), named by schema.judge.
struct JudgesConfig {
  // The judges rankwatch keeps apart, in precedence order (most trusted
  // first): the values of schema.judge it accepts. A judgment from any
  // other judge is rejected (unknown_judge). Empty: no judges.
  std::vector<std::string> names = {};
  // The judge of a judgment without schema.judge; empty: such a judgment
  // is rejected (missing_field).
  std::string default_judge = {};
  JudgeCombine combine = JudgeCombine::kPrecedence;
  JudgesPpiConfig ppi = {};
  // A comparison is flagged when its arms' shares of unjudged top-k docs
  // (no judge labelled them) differ by more than this: unjudged docs count
  // as non-relevant, so the arm with fewer labels looks worse.
  double coverage_tolerance = 0.05;
  bool operator==(const JudgesConfig&) const = default;
};

struct Config {
  SchemaConfig schema;
  JoinConfig join;
  EventLimitsConfig events;
  MetricsConfig metrics;
  AggregationConfig aggregation;
  DeadLetterConfig dead_letter;
  KafkaConfig kafka;
  HttpConfig http;
  std::vector<ExperimentConfig> experiments;
  std::vector<InterleavingConfig> interleaving;
  StatisticsConfig statistics;
  LoggingConfig logging;
  JudgesConfig judges = {};
  bool operator==(const Config&) const = default;
};

// How a configuration key takes a reload (docs/configuration.md,
// "Reloading").
enum class Reload {
  kLive,     // Applied by a reload.
  kRestart,  // Built once at start: a change refuses the whole reload.
  // kRestart while the next join.mode is impression, else kLive.
  kRestartInImpressionMode,
};

// The part of the daemon that reads a key: the server (Kafka consumer, HTTP
// endpoint, logging) or the pipeline (stream::Pipeline).
enum class KeyOwner { kServer, kPipeline };

// One row of ConfigKeys(): a key or a whole section, as its YAML path, with
// how it reloads. `same` and `copy` are made from the member path itself
// (config.cc), so the path printed cannot drift from the field compared.
// Plain constant data; thread-safe.
struct ConfigKey {
  std::string_view path;  // "join.window", or a whole section: "schema".
  Reload reload;
  KeyOwner owner;
  bool (*same)(const Config& a, const Config& b);
  void (*copy)(const Config& from, Config* to);  // Sets the key in `to`.
};

// Every key of Config, each field exactly once (a field inside a listed
// section is not listed again), in the order in which refused keys are
// named. Adding a field to Config means adding its row (a test fails
// otherwise).
std::span<const ConfigKey> ConfigKeys();

// The paths of the keys of `owner` that cannot change live (Reload) and
// differ between `running` and `next`, in ConfigKeys() order. Empty when
// `next` can be applied live as far as `owner` is concerned.
std::vector<std::string> FixedKeysChanged(const Config& running,
                                          const Config& next, KeyOwner owner);
// The paths of every key that differs between `running` and `next`, in
// ConfigKeys() order: what a reload changed.
std::vector<std::string> ChangedKeys(const Config& running, const Config& next);

std::string_view JoinModeName(JoinMode m);
std::string_view CombineRuleName(CombineRule r);
std::string_view JudgeCombineName(JudgeCombine c);  // precedence, pooled
std::string_view LogFormatName(LogFormat f);
// The default primary series of an experiment: ndcg@10 when `metrics`
// computes it, else the first quality series in the order of
// metrics.measures, at its smallest cutoff (none without quality measures).
std::vector<SeriesRef> DefaultPrimary(const MetricsConfig& metrics);
// Whether `ref` is one of the series that `metrics` computes.
bool IsConfiguredSeries(const MetricsConfig& metrics, const SeriesRef& ref);
// "ndcg@10", or the bare measure name for an uncut series.
std::string FormatSeriesRef(const SeriesRef& r);
// How every human output (replay's table, the decisions' reasons, the
// status page) names a series, one name per measure (issue 43): the
// user's spelling where they gave one, else trec_eval's name ("ndcg_cut_10",
// "recip_rank") or the field's. The first overload reads `r` alone; the
// second the first spelling of the same series in `config`'s experiments
// (primary series, then guardrails, in the file's order), so that a series
// spelled in one experiment keeps that name in every table.
std::string SeriesLabel(const SeriesRef& r);
std::string SeriesLabel(const Config& config, const SeriesRef& r);
// The variants `config` names in experiments (baselines, treatments) and
// interleaving (variant), each once, in the order of the file: the ones
// the aggregator must never fold into "other".
std::vector<std::string> NamedVariants(const Config& config);

}  // namespace rankwatch::config

#endif  // RANKWATCH_CONFIG_CONFIG_H_
