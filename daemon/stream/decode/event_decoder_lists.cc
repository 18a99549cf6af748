// EventDecoder's readers of lists and nested objects: the results array
// (ids or objects with teams and scores) and its teams, segments, and
// judgment batches with their kinds and judges.
// The set-up, the top level, ids and timestamps are in event_decoder.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/string_index.h"
#include "base/strings.h"
#include "daemon/stream/decode/event_decoder.h"
#include "daemon/stream/decode/event_decoder_internal.h"

namespace rankwatch::stream {

namespace ondemand = simdjson::ondemand;
using decoder_internal::Malformed;
using decoder_internal::Quoted;
using decoder_internal::Reject;
using decoder_internal::RejectType;
using decoder_internal::ScalarRejection;
using decoder_internal::TypeOf;
using ondemand::json_type;

// ---- Results --------------------------------------------------------------

DecodeStatus EventDecoder::ReadResults(
    ondemand::value& value, std::vector<std::string_view>* doc_ids,
    std::vector<std::string_view>* team_values) {
  doc_ids->clear();
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::array) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.results) + " is not an array");
  }
  ondemand::array array;
  if (simdjson::error_code e = value.get_array().get(array)) {
    return Malformed(e);
  }
  const size_t max_results =
      static_cast<size_t>(std::max<int32_t>(limits_.max_results, 0));
  int64_t index = 0;
  for (auto result : array) {
    ondemand::value entry;
    if (simdjson::error_code e = std::move(result).get(entry)) {
      return Malformed(e);
    }
    if (doc_ids->size() == max_results) {
      return Reject(RejectReason::kTooManyResults,
                    Quoted(schema_.results) + " has more than " +
                        std::to_string(max_results) + " entries");
    }
    std::string_view doc_id;
    std::string_view team;
    RW_RETURN_IF_REJECTED(ReadResultEntry(entry, index, &doc_id, &team));
    if (const int64_t first = EarlierPlace(doc_id, *doc_ids); first >= 0) {
      return Reject(RejectReason::kDuplicateDoc,
                    Describe(FieldPath{schema_.results, index, {}}) +
                        " repeats doc " + Quoted(doc_id) + " of " +
                        Describe(FieldPath{schema_.results, first, {}}));
    }
    doc_ids->push_back(doc_id);
    team_values->push_back(team);
    ++index;
  }
  if (doc_ids->empty()) {
    return Reject(RejectReason::kEmptyResults,
                  Quoted(schema_.results) + " is empty");
  }
  return DecodeStatus::Ok();
}

int64_t EventDecoder::EarlierPlace(std::string_view doc_id,
                                   std::span<const std::string_view> earlier) {
  // A short list is scanned: hashing each id into seen_docs_ cost 3.5% of
  // BM_PipelineEvents for lists of 10 (perf), the scan a compare of sizes
  // and of the first and last 8 bytes (BytesEqual) for most docs. The earlier
  // docs are distinct (a repeat is rejected), so the first match is the only
  // one.
  if (earlier.size() < kScanDocsBelow) {
    for (size_t i = 0; i < earlier.size(); ++i) {
      const std::string_view e = earlier[i];
      if (BytesEqual(e, doc_id)) {
        return static_cast<int64_t>(i);
      }
    }
    return -1;
  }
  if (earlier.size() == kScanDocsBelow) {
    seen_docs_.Clear();
    for (size_t i = 0; i < earlier.size(); ++i) {
      (void)seen_docs_.Insert(earlier[i], static_cast<uint32_t>(i));
    }
  }
  const uint32_t* first =
      seen_docs_.Insert(doc_id, static_cast<uint32_t>(earlier.size()));
  return first == nullptr ? -1 : static_cast<int64_t>(*first);
}

DecodeStatus EventDecoder::ReadTeamArray(ondemand::value& value) {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::null) return DecodeStatus::Ok();  // Absent.
  if (type != json_type::array) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.teams) + " is not an array");
  }
  ondemand::array array;
  if (simdjson::error_code e = value.get_array().get(array)) {
    return Malformed(e);
  }
  // No valid list is longer: what is beyond is counted, not kept.
  const size_t max_results =
      static_cast<size_t>(std::max<int32_t>(limits_.max_results, 0));
  for (auto result : array) {
    ondemand::value entry;
    if (simdjson::error_code e = std::move(result).get(entry)) {
      return Malformed(e);
    }
    std::string_view team;
    RW_RETURN_IF_REJECTED(ReadId(
        entry, {schema_.teams, static_cast<int64_t>(team_array_entries_), {}},
        &team));
    if (team_array_.size() < max_results) team_array_.push_back(team);
    ++team_array_entries_;
  }
  team_array_present_ = true;
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadResultEntry(ondemand::value& value,
                                           int64_t index,
                                           std::string_view* doc_id,
                                           std::string_view* team) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::object) {
    return ReadResultObject(value, index, doc_id, team);
  }
  const FieldPath path{schema_.results, index, {}};
  const ScalarResult read = ReadIdText(value, type, doc_id);
  if (!read.ok()) {
    return ScalarRejection(read, RejectReason::kWrongType, [&] {
      return Describe(path) + " is not an object, a string or an integer";
    });
  }
  return CheckIdLength(*doc_id, path);
}

DecodeStatus EventDecoder::ReadResultObject(ondemand::value& value,
                                            int64_t index,
                                            std::string_view* doc_id,
                                            std::string_view* team) const {
  ondemand::object object;
  if (simdjson::error_code e = value.get_object().get(object)) {
    return Malformed(e);
  }
  bool has_doc_id = false;
  bool has_score = false;
  bool has_team = false;
  // Sets *seen, or rejects a key seen before in this entry.
  const auto first = [&](bool* seen, std::string_view key) {
    if (*seen) return DuplicateKey({schema_.results, index, key});
    *seen = true;
    return DecodeStatus::Ok();
  };
  for (auto result : object) {
    simdjson::error_code key_error = simdjson::SUCCESS;
    const std::string_view key = NextField(result, &key_error);
    if (key_error) return Malformed(key_error);
    ondemand::field& field = FieldOf(result);
    if (BytesEqual(key, schema_.doc_id)) {
      RW_RETURN_IF_REJECTED(first(&has_doc_id, key));
      RW_RETURN_IF_REJECTED(ReadId(
          field.value(), {schema_.results, index, schema_.doc_id}, doc_id));
    } else if (BytesEqual(key, schema_.score)) {
      RW_RETURN_IF_REJECTED(first(&has_score, key));
      RW_RETURN_IF_REJECTED(
          ReadScore(field.value(), {schema_.results, index, schema_.score}));
    } else if (BytesEqual(key, schema_.team)) {
      RW_RETURN_IF_REJECTED(first(&has_team, key));
      RW_RETURN_IF_REJECTED(
          ReadId(field.value(), {schema_.results, index, schema_.team}, team));
    }
  }
  if (!has_doc_id) {
    return MissingField(FieldPath{schema_.results, index, schema_.doc_id});
  }
  return DecodeStatus::Ok();
}

// Scores are informational: checked, not kept.
DecodeStatus EventDecoder::ReadScore(ondemand::value& value,
                                     const FieldPath& path) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  const ScalarResult read = CheckFiniteNumber(value, type);
  if (read.ok()) return DecodeStatus::Ok();
  return ScalarRejection(read, RejectReason::kNonFiniteScore, [&] {
    return Describe(path) + " is not a finite number";
  });
}

DecodeStatus EventDecoder::ReadSegments(ondemand::value& value,
                                        std::vector<std::string_view>* values) {
  std::fill(values->begin(), values->end(), std::string_view());
  std::fill(seen_labels_.begin(), seen_labels_.end(), 0);
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::object) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.segments) + " is not an object");
  }
  ondemand::object object;
  if (simdjson::error_code e = value.get_object().get(object)) {
    return Malformed(e);
  }
  for (auto result : object) {
    simdjson::error_code key_error = simdjson::SUCCESS;
    const std::string_view key = NextField(result, &key_error);
    if (key_error) return Malformed(key_error);
    ondemand::field& field = FieldOf(result);
    RW_RETURN_IF_REJECTED(
        ReadSegmentLabel(field.value(), key, schema_.segments, values));
  }
  return DecodeStatus::Ok();
}

// Reads the field `key` of the segments object (`parent`) when it is a
// configured label; skips it otherwise.
DecodeStatus EventDecoder::ReadSegmentLabel(
    ondemand::value& value, std::string_view key, std::string_view parent,
    std::vector<std::string_view>* values) {
  const auto label =
      std::find_if(segment_labels_.begin(), segment_labels_.end(),
                   [&](const std::string& l) { return BytesEqual(l, key); });
  if (label == segment_labels_.end()) return DecodeStatus::Ok();
  const size_t i = static_cast<size_t>(label - segment_labels_.begin());
  if (seen_labels_[i] != 0) return DuplicateKey({parent, -1, key});
  seen_labels_[i] = 1;
  return ReadSegmentValue(value, {parent, -1, key}, &(*values)[i]);
}

DecodeStatus EventDecoder::ReadSegmentValue(ondemand::value& value,
                                            const FieldPath& path,
                                            std::string_view* out) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  const ScalarResult read = ReadScalarText(value, type, out);
  if (!read.ok()) {
    return ScalarRejection(read, RejectReason::kWrongType, [&] {
      return Describe(path) + " is not a string, a number or a boolean";
    });
  }
  // Unlike ids, an empty value is allowed: it means "not carried".
  if (out->empty()) return DecodeStatus::Ok();
  return CheckIdLength(*out, path);
}

// ---- Judgments ------------------------------------------------------------

DecodeStatus EventDecoder::ReadJudgmentBatch(
    ondemand::value& value, std::vector<Judgment>* judgments) const {
  judgments->clear();
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::array) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Quoted(schema_.judgments) + " is not an array");
  }
  ondemand::array array;
  if (simdjson::error_code e = value.get_array().get(array)) {
    return Malformed(e);
  }
  const size_t max_judgments =
      static_cast<size_t>(std::max<int32_t>(limits_.max_judgments, 0));
  int64_t index = 0;
  for (auto result : array) {
    ondemand::value entry;
    if (simdjson::error_code e = std::move(result).get(entry)) {
      return Malformed(e);
    }
    if (judgments->size() == max_judgments) {
      return Reject(RejectReason::kTooManyJudgments,
                    Quoted(schema_.judgments) + " has more than " +
                        std::to_string(max_judgments) + " entries");
    }
    Judgment judgment;
    RW_RETURN_IF_REJECTED(ReadJudgmentEntry(entry, index, &judgment));
    judgments->push_back(judgment);
    ++index;
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadJudgmentEntry(ondemand::value& value,
                                             int64_t index,
                                             Judgment* judgment) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type != json_type::object) {
    return RejectType(value, type, RejectReason::kWrongType,
                      Describe(FieldPath{schema_.judgments, index, {}}) +
                          " is not an object");
  }
  ondemand::object object;
  if (simdjson::error_code e = value.get_object().get(object)) {
    return Malformed(e);
  }
  bool has_doc_id = false;
  bool has_relevance = false;
  bool has_kind = false;
  bool has_judge = false;
  // Sets *seen, or rejects a key seen before in this entry.
  const auto first = [&](bool* seen, std::string_view key) {
    if (*seen) return DuplicateKey({schema_.judgments, index, key});
    *seen = true;
    return DecodeStatus::Ok();
  };
  for (auto result : object) {
    simdjson::error_code key_error = simdjson::SUCCESS;
    const std::string_view key = NextField(result, &key_error);
    if (key_error) return Malformed(key_error);
    ondemand::field& field = FieldOf(result);
    if (BytesEqual(key, schema_.doc_id)) {
      RW_RETURN_IF_REJECTED(first(&has_doc_id, key));
      RW_RETURN_IF_REJECTED(ReadId(field.value(),
                                   {schema_.judgments, index, schema_.doc_id},
                                   &judgment->doc_id));
    } else if (BytesEqual(key, schema_.relevance) && schema_.actions.empty()) {
      RW_RETURN_IF_REJECTED(first(&has_relevance, key));
      RW_RETURN_IF_REJECTED(ReadRelevance(
          field.value(), {schema_.judgments, index, schema_.relevance},
          &judgment->grade));
    } else if (BytesEqual(key, schema_.kind)) {
      RW_RETURN_IF_REJECTED(first(&has_kind, key));
      RW_RETURN_IF_REJECTED(ReadId(field.value(),
                                   {schema_.judgments, index, schema_.kind},
                                   &judgment->kind));
    } else if (BytesEqual(key, schema_.judge) && !key.empty()) {
      RW_RETURN_IF_REJECTED(first(&has_judge, key));
      RW_RETURN_IF_REJECTED(ReadId(field.value(),
                                   {schema_.judgments, index, schema_.judge},
                                   &judgment->judge_name));
    }
  }
  if (!has_doc_id) {
    return MissingField(FieldPath{schema_.judgments, index, schema_.doc_id});
  }
  if (!has_relevance && schema_.actions.empty()) {
    return DefaultRelevance({schema_.judgments, index, schema_.relevance},
                            &judgment->grade);
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ResolveJudges(
    std::string_view event_judge, bool batch,
    std::vector<Judgment>* judgments) const {
  const std::vector<std::string>& names = rules_.judges.names;
  for (size_t i = 0; i < judgments->size(); ++i) {
    Judgment& j = (*judgments)[i];
    if (j.judge_name.empty()) j.judge_name = event_judge;
    if (j.judge_name.empty()) j.judge_name = rules_.judges.default_judge;
    const FieldPath path =
        batch ? FieldPath{schema_.judgments, static_cast<int64_t>(i),
                          schema_.judge}
              : FieldPath{{}, -1, schema_.judge};
    if (j.judge_name.empty()) return MissingField(path);
    const auto known = std::find(names.begin(), names.end(), j.judge_name);
    if (known == names.end()) {
      std::string list;
      for (const std::string& n : names) {
        list += list.empty() ? "" : ", ";
        list += Printable(n);
      }
      return Reject(RejectReason::kUnknownJudge,
                    Describe(path) + " '" + Printable(j.judge_name) +
                        "' is not one of judges.names (" + list + ")");
    }
    j.judge = static_cast<int32_t>(known - names.begin());
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadRelevance(
    ondemand::value& value, const FieldPath& path,
    std::optional<metrics::Grade>* grade) const {
  static_assert(std::is_same_v<metrics::Grade, int32_t>,
                "ReadNullableInt32 reads grades");
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  const ScalarResult read = ReadNullableInt32(value, type, grade);
  switch (read.outcome) {
    case ScalarOutcome::kOk:
      return DecodeStatus::Ok();  // A number, or null: a deletion.
    case ScalarOutcome::kMalformed:
      return Malformed(read.error);
    case ScalarOutcome::kOutOfRange:
      return Reject(RejectReason::kNonIntegerRelevance,
                    Describe(path) + " is out of the 32-bit integer range");
    case ScalarOutcome::kRejected:
      break;
  }
  return Reject(RejectReason::kNonIntegerRelevance,
                Describe(path) + " is not an integer");
}

// The position that schema.position claims, plus one (0: none, null):
// any integer. Which rank it means depends on schema.position_base, which
// may be detected per request, so the join turns it into one; a position
// before the first, or past events.max_results, is kept as
// events.max_results (a place no served doc has under base 0), so that the
// judgment is credited all the same and its claim counts as a mismatch.
DecodeStatus EventDecoder::ReadPosition(ondemand::value& value,
                                        int32_t* position) const {
  const FieldPath path{{}, -1, schema_.position};
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  std::optional<int32_t> read_position;
  const ScalarResult read = ReadNullableInt32(value, type, &read_position);
  if (read.outcome == ScalarOutcome::kMalformed) return Malformed(read.error);
  if (!read.ok()) {
    return Reject(RejectReason::kWrongType,
                  Describe(path) + " is not an integer");
  }
  if (!read_position) {
    *position = 0;
    return DecodeStatus::Ok();
  }
  const int64_t last = std::max<int64_t>(1, limits_.max_results);
  const int64_t p = int64_t{*read_position} + 1;
  *position = static_cast<int32_t>(p < 1 || p > last ? last : p);
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::DefaultRelevance(
    const FieldPath& path, std::optional<metrics::Grade>* grade) const {
  if (!schema_.default_relevance) {
    // Click events often carry no grade at all: say which setting reads
    // them (issue 43), not only what is missing.
    return MissingField(path,
                        " (for events without a grade, such as clicks, set "
                        "schema.default_relevance to the grade they mean)");
  }
  *grade = *schema_.default_relevance;
  return DecodeStatus::Ok();
}

#undef RW_RETURN_IF_REJECTED

// ---- Teams and kinds --------------------------------------------------

DecodeStatus EventDecoder::ResolveTeams(ResultsEvent* out) const {
  out->interleaving = -1;
  out->teams.clear();
  for (size_t e = 0; e < rules_.interleaving.size(); ++e) {
    const config::InterleavingConfig& experiment = rules_.interleaving[e];
    if (experiment.variant != out->variant) continue;
    // Formatted only on the error path: the hot path builds no strings.
    const auto interleaved = [&] {
      return " (variant " + Quoted(out->variant) +
             " is interleaved: every result needs its team)";
    };
    const size_t n = out->doc_ids.size();
    if (team_array_present_ && team_array_entries_ != n) {
      // Fewer: some result has no team, as an entry without `team`. More:
      // the array is not the one of this list.
      const auto counted = [](size_t k, const char* noun) {
        return std::to_string(k) + " " + noun + (k == 1 ? "" : "s");
      };
      const std::string count = Quoted(schema_.teams) + " has " +
                                counted(team_array_entries_, "team") + " for " +
                                counted(n, "result") + " in " +
                                Quoted(schema_.results);
      if (team_array_entries_ < n) {
        return Reject(RejectReason::kMissingField, count + interleaved());
      }
      return Reject(RejectReason::kWrongType, count + " (one team per result)");
    }
    for (size_t i = 0; i < n; ++i) {
      const std::string_view team =
          team_array_present_ ? team_array_[i] : out->team_values[i];
      const FieldPath path =
          team_array_present_
              ? FieldPath{schema_.teams, static_cast<int64_t>(i), {}}
              : FieldPath{schema_.results, static_cast<int64_t>(i),
                          schema_.team};
      if (team.empty()) {  // Only an entry's: an array's team is never "".
        DecodeStatus missing = MissingField(path);
        if (!schema_.teams.empty()) {
          missing.detail += " (or " + Quoted(schema_.teams) + ")";
        }
        missing.detail += interleaved();
        return missing;
      }
      // At most config::kMaxInterleavingTeams teams: a scan is cheapest.
      const auto found =
          std::find(experiment.teams.begin(), experiment.teams.end(), team);
      if (found == experiment.teams.end()) {
        out->teams.clear();
        std::string teams;
        for (size_t t = 0; t < experiment.teams.size(); ++t) {
          if (t > 0) teams += t + 1 == experiment.teams.size() ? " or " : ", ";
          teams += Quoted(experiment.teams[t]);
        }
        return Reject(RejectReason::kUnknownTeam,
                      Describe(path) + " " + Quoted(team) +
                          " is not a team of interleaving experiment " +
                          Quoted(experiment.name) + " (" + teams + ")");
      }
      out->teams.push_back(
          static_cast<uint8_t>(found - experiment.teams.begin()));
    }
    out->interleaving = static_cast<int32_t>(e);
    break;
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::GradeByKind(std::vector<Judgment>* judgments) const {
  size_t kept = 0;
  for (size_t i = 0; i < judgments->size(); ++i) {
    Judgment& j = (*judgments)[i];
    if (j.kind.empty()) {
      return MissingField(
          FieldPath{schema_.judgments, static_cast<int64_t>(i), schema_.kind});
    }
    const auto action = schema_.actions.find(j.kind);
    if (IsImpression(j.kind)) {
      j.impression = true;
      j.grade = 0;  // Grades nothing; not a withdrawal either.
    } else if (action == schema_.actions.end()) {
      continue;
    } else {
      j.grade = action->second;
    }
    (*judgments)[kept++] = j;
  }
  judgments->resize(kept);
  return DecodeStatus::Ok();
}

void EventDecoder::ResolveKinds(std::string_view event_kind,
                                std::vector<Judgment>* judgments) const {
  for (Judgment& j : *judgments) {
    if (j.kind.empty()) j.kind = event_kind;
    j.click_excluded = !j.kind.empty() &&
                       std::find(rules_.click_exclude_kinds.begin(),
                                 rules_.click_exclude_kinds.end(),
                                 j.kind) != rules_.click_exclude_kinds.end();
  }
}

// ---- Optional numbers (schema.covariate, schema.fields) ------------------

DecodeStatus EventDecoder::ReadOptionalNumber(ondemand::value& value, double* x,
                                              CovariateOutcome* outcome) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (simdjson::error_code e = CheckScalar(value, type)) return Malformed(e);
  *x = std::numeric_limits<double>::quiet_NaN();
  *outcome = CovariateOutcome::kWrongType;
  if (type == json_type::null) {
    *outcome = CovariateOutcome::kNull;
  } else if (type == json_type::number) {
    // simdjson fails on a literal that overflows a double (1e999).
    double v;
    if (!value.get_double().get(v) && std::isfinite(v)) {
      *x = v;
      *outcome = CovariateOutcome::kPresent;
    } else {
      *outcome = CovariateOutcome::kNotFinite;
    }
  }
  return DecodeStatus::Ok();
}

}  // namespace rankwatch::stream
