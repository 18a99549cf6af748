// The YAML configuration parser's class, shared by the files that hold
// its sections: config_loader.cc (the document, schema, join, events,
// metrics, aggregation, dead letters; ParseConfig and LoadConfigFile),
// server_sections.cc (kafka, http, logging: the keys the server reads) and
// experiment_sections.cc (experiments, interleaving, statistics) and
// judges_section.cc (judges).
// Internal to rankwatch::config: it exposes yaml-cpp, which the library
// keeps private (config_loader.h is the interface).
#ifndef RANKWATCH_CONFIG_CONFIG_PARSER_H_
#define RANKWATCH_CONFIG_CONFIG_PARSER_H_

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "config/config.h"
#include "config/yaml_reader.h"

namespace rankwatch::config::internal {

// The parts of one experiment entry read as written and resolved once the
// whole file is read.
// A `guardrails:` item as read, its series resolved later.
struct GuardrailFields {
  Field series;               // The `series` value.
  std::string text;           // Its text: "ndcg@10"...
  GuardrailConfig guardrail;  // The margin read; the series not yet.
};

struct ExperimentFields {
  std::optional<Field> split;                          // Map variant -> weight.
  std::vector<std::pair<Field, std::string>> primary;  // "ndcg@10"...
  std::vector<GuardrailFields> guardrails;
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
  Status ReadActions(const Field& v,
                     std::map<std::string, int32_t, std::less<>>* actions);
  Status ReadFieldPath(const Field& f, std::string* out) const;
  Status ReadResultFields(const Field& f, std::vector<ResultFieldConfig>* out);
  Status ReadPositionBase(const Field& v, int32_t* out) const;
  Status ReadResultFieldName(const Field& v, std::string* out) const;
  Status CheckSchemaPaths(const Field& f, const SchemaConfig& c) const;
  Status ReadJoin(const Field& f, JoinConfig* c);
  Status ReadJudges(const Field& f, JudgesConfig* c);
  // The fields of judges.ppi's judges, checked once judges.names is read.
  struct PpiFields {
    std::optional<Field> trusted;
    std::optional<Field> cheap;
  };
  Status ReadJudgesPpi(const Field& f, JudgesPpiConfig* c, PpiFields* fields);
  // An error at `f` unless `name` is one of `names` ("did you mean").
  Status CheckJudgeName(const Field& f, const std::string& name,
                        const std::vector<std::string>& names) const;
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
  Status ReadGroupInstanceId(const Field& f, std::string* out);
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
  Status CheckJudgesOfTheQrelsFile(const Config& config) const;
  Status ResolveSplit(const ExperimentFields& fields,
                      ExperimentConfig* e) const;
  Status ResolvePrimary(const ExperimentFields& fields, const Config& config,
                        ExperimentConfig* e) const;
  Status ReadGuardrail(const Field& f, ExperimentFields* later);
  Status ResolveGuardrails(const ExperimentFields& fields, const Config& config,
                           ExperimentConfig* e) const;
  // A field of schema.fields by its name, or a series named in any spelling
  // of metrics/measure_names.h that the daemon's engine computes
  // (metrics.measures at metrics.cutoffs).
  StatusOr<SeriesRef> ResolveSeries(const Field& field, const std::string& text,
                                    const Config& config) const;

  YamlReader yaml_;
  // Every experiment's baseline and treatment fields with their values,
  // checked against aggregation.variants once the whole file is read.
  std::vector<std::pair<Field, std::string>> experiment_variants_;
  // Per experiment, the fields resolved once the whole file is read (they
  // refer to metrics: and to the experiment's own variants).
  std::vector<ExperimentFields> experiment_fields_;
  // The `interleaving:` section, checked against the join mode.
  std::optional<Field> interleaving_;
  std::optional<Field> judge_names_;   // judges.names, when written.
  std::optional<Field> schema_judge_;  // schema.judge, when written.
  // kafka.properties' partition.assignment.strategy, checked against the
  // join mode once the whole file is read.
  std::optional<Field> assignment_strategy_;
};

}  // namespace rankwatch::config::internal

#endif  // RANKWATCH_CONFIG_CONFIG_PARSER_H_
