// The judges section: labels from several judges (issue 29), their
// precedence, prediction-powered means and the coverage flag. See
// config_parser.h.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_parser.h"
#include "config/text.h"
#include "config/yaml_reader.h"

namespace rankwatch::config::internal {

namespace {

constexpr std::array<JudgeCombine, 2> kJudgeCombines = {
    JudgeCombine::kPrecedence, JudgeCombine::kPooled};

}  // namespace

// `judges: {names: [human, llm], default: llm, combine: precedence,
//           ppi: {trusted: human, cheap: llm}, coverage_tolerance: 0.05}`.
Status Parser::ReadJudges(const Field& f, JudgesConfig* c) {
  std::optional<Field> names_field;
  std::optional<Field> default_field;
  PpiFields ppi;
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f, {
             {"names",
              [&](const Field& v) {
                names_field.emplace(v);
                judge_names_.emplace(v);
                return yaml_.ReadNameList(v, "judge", &c->names);
              }},
             {"default",
              [&](const Field& v) {
                default_field.emplace(v);
                return yaml_.ReadString(v, &c->default_judge);
              }},
             {"combine",
              [&](const Field& v) {
                return yaml_.ReadChoice(v, "judge combination", kJudgeCombines,
                                        JudgeCombineName, &c->combine);
              }},
             {"ppi",
              [&](const Field& v) { return ReadJudgesPpi(v, &c->ppi, &ppi); }},
             {"coverage_tolerance",
              [&](const Field& v) {
                RW_RETURN_IF_ERROR(yaml_.ReadNumber(v, &c->coverage_tolerance));
                if (c->coverage_tolerance <= 0 || c->coverage_tolerance > 1) {
                  return yaml_.Error(v,
                                     "must lie in (0, 1]: a difference of "
                                     "the arms' shares of unjudged docs");
                }
                return Status::Ok();
              }},
         }));
  if (c->names.size() > kMaxJudges) {
    return yaml_.Error(*names_field, "more than " + std::to_string(kMaxJudges) +
                                         " judges (each is kept apart)");
  }
  if (!c->default_judge.empty()) {
    RW_RETURN_IF_ERROR(
        CheckJudgeName(*default_field, c->default_judge, c->names));
  }
  if (ppi.trusted) {
    RW_RETURN_IF_ERROR(CheckJudgeName(*ppi.trusted, c->ppi.trusted, c->names));
    RW_RETURN_IF_ERROR(CheckJudgeName(*ppi.cheap, c->ppi.cheap, c->names));
    if (c->ppi.trusted == c->ppi.cheap) {
      return yaml_.Error(*ppi.cheap,
                         "'" + Printable(c->ppi.cheap) +
                             "' is also judges.ppi.trusted: the cheap judge's "
                             "errors are measured against another judge");
    }
  }
  return Status::Ok();
}

// `ppi: {trusted: human, cheap: llm, tune: false}`; both judges required.
Status Parser::ReadJudgesPpi(const Field& f, JudgesPpiConfig* c,
                             PpiFields* fields) {
  RW_RETURN_IF_ERROR(yaml_.ReadMap(
      f,
      {
          {"trusted",
           [&](const Field& v) {
             fields->trusted.emplace(v);
             return yaml_.ReadName(v, &c->trusted);
           }},
          {"cheap",
           [&](const Field& v) {
             fields->cheap.emplace(v);
             return yaml_.ReadName(v, &c->cheap);
           }},
          {"tune", [&](const Field& v) { return yaml_.ReadBool(v, &c->tune); }},
      }));
  if (!fields->trusted) {
    return yaml_.Error(f,
                       "missing key 'trusted' (the judge whose labels on "
                       "a random sample of lists are the truth)");
  }
  if (!fields->cheap) {
    return yaml_.Error(f,
                       "missing key 'cheap' (the judge who labels every "
                       "list, e.g. an LLM)");
  }
  return Status::Ok();
}

Status Parser::CheckJudgeName(const Field& f, const std::string& name,
                              const std::vector<std::string>& names) const {
  if (std::find(names.begin(), names.end(), name) != names.end()) {
    return Status::Ok();
  }
  std::string message = "'" + Printable(name) + "' is not one of judges.names";
  if (names.empty()) {
    message += " (none are configured)";
  } else {
    const std::vector<std::string_view> known(names.begin(), names.end());
    if (std::optional<std::string_view> near = ClosestKey(name, known)) {
      message += " (did you mean '" + std::string(*near) + "'?)";
    }
  }
  return yaml_.Error(f, message);
}

// The labels of join.qrels_file name no judge: with judges they are
// judges.default's, which must then be set. And schema.judge is read only
// with judges.names: a field named there without judges would do nothing
// (issue 43). Its default written out (config/example.yaml) is no choice.
Status Parser::CheckJudgesOfTheQrelsFile(const Config& config) const {
  if (schema_judge_ && config.judges.names.empty() &&
      config.schema.judge != SchemaConfig().judge) {
    return yaml_.Error(*schema_judge_,
                       "read only with judges.names, which is empty: name "
                       "the judges whose labels '" +
                           Printable(config.schema.judge) +
                           "' holds in judges.names, or leave schema.judge "
                           "out");
  }
  if (!judge_names_ || config.judges.names.empty() ||
      config.join.qrels_file.empty() || !config.judges.default_judge.empty()) {
    return Status::Ok();
  }
  return yaml_.Error(*judge_names_,
                     "join.qrels_file's labels name no judge: set "
                     "judges.default to the judge who made them");
}

}  // namespace rankwatch::config::internal
