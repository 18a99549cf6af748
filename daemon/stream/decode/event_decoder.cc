#include "daemon/stream/decode/event_decoder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>
#include <utility>

#include "base/duration.h"
#include "base/rfc3339.h"
#include "base/saturating.h"
#include "base/string_index.h"
#include "base/strings.h"
#include "daemon/stream/decode/event_decoder_internal.h"
#include "daemon/stream/decode/json_scalar.h"

namespace rankwatch::stream {

namespace ondemand = simdjson::ondemand;
using decoder_internal::Malformed;
using decoder_internal::Quoted;
using decoder_internal::Reject;
using decoder_internal::RejectType;
using decoder_internal::ScalarRejection;
using decoder_internal::TypeOf;
using ondemand::json_type;

namespace {

// Smallest buffer and parser capacity: avoids a reallocation for each of the
// first few events, which are usually of similar small sizes.
constexpr size_t kMinCapacity = 4096;

// Epoch seconds of today's dates have ten digits: [1e9, 1e10) s is
// 2001-09-09T01:46:40Z to 2286-11-20T17:46:40Z (date -u -d @1000000000,
// date -u -d @10000000000). Read as milliseconds, such a number is a time
// in January to April 1970, which no real event has: a producer sending
// seconds where milliseconds are expected is the likely cause.
constexpr int64_t kTenDigitsMin = 1'000'000'000;
constexpr int64_t kTenDigitsMax = 9'999'999'999;

DecodeStatus RootObject(ondemand::document& doc, ondemand::object* root) {
  if (simdjson::error_code e = doc.get_object().get(*root)) {
    if (e != simdjson::INCORRECT_TYPE) return Malformed(e);
    return Reject(RejectReason::kMalformedJson, "the event is not an object");
  }
  return DecodeStatus::Ok();
}

// After the root object was iterated to its end: rejects anything after it
// ("{...}}"), which on-demand parsing does not look at by itself.
DecodeStatus CheckAtEnd(ondemand::document& doc) {
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    return Malformed(simdjson::TRAILING_CONTENT);
  }
  return DecodeStatus::Ok();
}

}  // namespace

// Formats a path the way details name fields (see FieldPath).
std::string EventDecoder::Describe(const FieldPath& path) {
  if (path.parent.empty()) return Quoted(path.name);
  std::string out(path.parent);
  if (path.index >= 0) {
    out += '[';
    out += std::to_string(path.index);
    out += ']';
  }
  if (!path.name.empty()) {
    out += '.';
    out.append(path.name);
  }
  return out;
}

DecodeStatus EventDecoder::MissingField(const FieldPath& path,
                                        std::string_view hint) {
  std::string detail = "missing field " + Quoted(path.name);
  if (!path.parent.empty()) {
    detail += " in ";
    detail += Describe({path.parent, path.index, {}});
  }
  detail += hint;
  return Reject(RejectReason::kMissingField, std::move(detail));
}

DecodeStatus EventDecoder::DuplicateKey(const FieldPath& path) {
  std::string detail = "duplicate key " + Quoted(path.name);
  if (!path.parent.empty()) {
    detail += " in ";
    detail += Describe({path.parent, path.index, {}});
  }
  return Reject(RejectReason::kDuplicateKey, std::move(detail));
}

namespace {

// The schema as the decoder reads it: without judges, schema.judge names
// no field (an event's "judge" key is then not read, as before judges).
config::SchemaConfig WithoutUnreadKeys(const config::SchemaConfig& schema,
                                       const DecodeRules& rules) {
  config::SchemaConfig read = schema;
  if (rules.judges.names.empty()) read.judge.clear();
  return read;
}

}  // namespace

EventDecoder::EventDecoder(const config::SchemaConfig& schema,
                           const config::EventLimitsConfig& limits,
                           config::JoinMode mode,
                           std::vector<std::string> segment_labels,
                           const Clock* clock, DecodeRules rules)
    : schema_(WithoutUnreadKeys(schema, rules)),
      limits_(limits),
      mode_(mode),
      segment_labels_(std::move(segment_labels)),
      clock_(clock),
      rules_(std::move(rules)),
      seen_labels_(segment_labels_.size(), 0),
      results_tree_(BuildResultsTree()),
      judgments_tree_(BuildTree<kJudgmentsKeys>()),
      seen_nodes_(
          std::max(results_tree_.nodes.size(), judgments_tree_.nodes.size()),
          0) {}

int32_t EventDecoder::AddPath(const std::string& name, bool optional,
                              bool covariate, uint32_t field_bit,
                              FieldTree* tree) {
  if (name.find('.') != std::string::npos) tree->nested = true;
  int32_t node = 0;
  for (size_t begin = 0; begin <= name.size();) {
    size_t end = name.find('.', begin);
    if (end == std::string::npos) end = name.size();
    const std::string_view step(name.data() + begin, end - begin);
    int32_t child = tree->nodes[node].first_child;
    while (child >= 0 && tree->nodes[child].key != step) {
      child = tree->nodes[child].next_sibling;
    }
    if (child < 0) {
      child = static_cast<int32_t>(tree->nodes.size());
      PathNode added;
      added.key = std::string(step);
      added.path = name.substr(0, end);
      added.next_sibling = tree->nodes[node].first_child;
      added.optional_only = optional;
      tree->nodes.push_back(std::move(added));
      tree->nodes[node].first_child = child;
    } else if (!optional) {
      tree->nodes[child].optional_only = false;
    }
    tree->nodes[child].covariate_below |= covariate;
    tree->nodes[child].fields_below |= field_bit;
    node = child;
    begin = end + 1;
  }
  return node;
}

// Splits each name of `kKeys` at its dots into the steps of one tree. A
// path named twice keeps the first field listed, as the flat loop does; a
// path below a leaf is never reached (the loader refuses such schemas).
template <const auto& kKeys>
EventDecoder::FieldTree EventDecoder::BuildTree() const {
  FieldTree tree;
  tree.nodes.emplace_back();  // The root.
  for (const TopKey& k : kKeys) {
    const std::string& name = schema_.*k.name;
    if (name.empty()) continue;  // Not configured (schema.unit).
    const bool covariate = k.field == TopField::kCovariate;
    const int32_t node = AddPath(name, covariate, covariate, 0, &tree);
    PathNode& leaf = tree.nodes[node];
    if (k.field == TopField::kSegments) {
      leaf.segments = true;
    } else if (leaf.field < 0 && !leaf.segments) {
      leaf.field = static_cast<int32_t>(k.field);
    }
  }
  return tree;
}

// schema.fields are read by the tree alone (their names are not in the
// constant key table): with any, the results events take ReadNested. The
// loader refuses a field's path that is another key's or inside one.
EventDecoder::FieldTree EventDecoder::BuildResultsTree() const {
  FieldTree tree = BuildTree<kResultsKeys>();
  // The preset's other names of a field lead to the same field: its leaf
  // reads it, a second one in the event is duplicate_key (ReadNode).
  for (const config::FieldAlias& alias : config::PresetAliases(schema_)) {
    const auto key =
        std::find_if(std::begin(kResultsKeys), std::end(kResultsKeys),
                     [&](const TopKey& k) { return k.name == alias.key; });
    if (key == std::end(kResultsKeys)) continue;
    tree.nested = true;
    const bool covariate = key->field == TopField::kCovariate;
    PathNode& leaf =
        tree.nodes[AddPath(alias.path, covariate, covariate, 0, &tree)];
    if (key->field == TopField::kSegments) {
      leaf.segments = true;
    } else if (leaf.field < 0 && !leaf.segments) {
      leaf.field = static_cast<int32_t>(key->field);
    }
  }
  for (size_t i = 0; i < schema_.fields.size(); ++i) {
    tree.nested = true;
    const int32_t leaf =
        AddPath(schema_.fields[i].path, true, false, uint32_t{1} << i, &tree);
    tree.nodes[leaf].value_field = static_cast<int32_t>(i);
  }
  return tree;
}

EventDecoder EventDecoder::ForConfig(const config::Config& config,
                                     const Clock* clock) {
  return EventDecoder(
      config.schema, config.events, config.join.mode,
      config.aggregation.segments, clock,
      DecodeRules{config.interleaving, config.metrics.click_exclude_kinds,
                  config.judges});
}

// ---- Entry points ---------------------------------------------------------

DecodeStatus EventDecoder::DecodeResults(
    std::string_view payload, std::optional<int64_t> fallback_timestamp_ms,
    ResultsEvent* out) {
  DecodeStatus status = ParseResults(payload, fallback_timestamp_ms, out);
  if (!status.ok()) {
    // Leave nothing a caller could mistake for an event.
    out->request_id = out->query_id = out->variant = out->unit = {};
    out->unit_hash = 0;
    out->covariate = std::numeric_limits<double>::quiet_NaN();
    out->covariate_outcome = CovariateOutcome::kAbsent;
    out->fields = kNoFieldValues;
    out->field_outcomes = kAbsentFields;
    out->timestamp_ms = 0;
    out->doc_ids.clear();
    out->segment_values.clear();
    out->interleaving = -1;
    out->teams.clear();
    out->team_values.clear();
  }
  return status;
}

DecodeStatus EventDecoder::DecodeJudgments(
    std::string_view payload, std::optional<int64_t> fallback_timestamp_ms,
    JudgmentEvent* out) {
  DecodeStatus status = ParseJudgments(payload, fallback_timestamp_ms, out);
  if (!status.ok()) {
    out->request_id = out->query_id = {};
    out->timestamp_ms = 0;
    out->judgments.clear();
    claimed_position_ = 0;
  }
  return status;
}

DecodeStatus EventDecoder::ParseResults(std::string_view payload,
                                        std::optional<int64_t> fallback,
                                        ResultsEvent* out) {
  // One by one: chained, each view was copied from the one just cleared,
  // a 16-byte load of two 8-byte stores (a store-forwarding stall).
  out->request_id = {};
  out->query_id = {};
  out->variant = {};
  out->unit = {};
  out->doc_ids.clear();
  out->team_values.clear();
  out->segment_values.assign(segment_labels_.size(), std::string_view());
  out->covariate = std::numeric_limits<double>::quiet_NaN();
  out->covariate_outcome = CovariateOutcome::kAbsent;
  out->fields = kNoFieldValues;
  out->field_outcomes = kAbsentFields;
  team_array_.clear();
  team_array_entries_ = 0;
  team_array_present_ = false;

  EventFields fields;
  fields.request_id = &out->request_id;
  fields.query_id = &out->query_id;
  fields.timestamp_ms = &out->timestamp_ms;
  fields.variant = &out->variant;
  fields.doc_ids = &out->doc_ids;
  fields.segment_values = &out->segment_values;
  fields.unit = &out->unit;
  fields.team_values = &out->team_values;
  fields.covariate = &out->covariate;
  fields.covariate_outcome = &out->covariate_outcome;
  fields.values = &out->fields;
  fields.value_outcomes = &out->field_outcomes;
  RW_RETURN_IF_REJECTED(results_tree_.nested
                            ? ReadNested(payload, results_tree_, &fields)
                            : ReadTopLevel<kResultsKeys>(payload, &fields));
  // Without a list, schema.impression_kind events rank it in the join
  // (an empty doc_ids): only where a join waits for them.
  if (!fields.Saw(TopField::kResults) &&
      (schema_.impression_kind.empty() ||
       mode_ != config::JoinMode::kImpression)) {
    return MissingField(FieldPath{{}, -1, schema_.results});
  }
  RW_RETURN_IF_REJECTED(ResolveTimestamp(fields.Saw(TopField::kTimestamp),
                                         fields.timestamp_is_text, fallback,
                                         &out->timestamp_ms));
  if (out->variant.empty()) out->variant = schema_.default_variant;
  out->unit_hash = schema_.unit.empty() ? 0 : UnitHash(*out);
  RW_RETURN_IF_REJECTED(ResolveTeams(out));
  if (out->interleaving >= 0 && !fields.Saw(TopField::kResults)) {
    // Impressions carry no teams: an interleaved list needs its hits.
    DecodeStatus missing = MissingField(FieldPath{{}, -1, schema_.results});
    missing.detail += " (variant " + Quoted(out->variant) +
                      " is interleaved: every result needs its team)";
    out->interleaving = -1;
    out->teams.clear();
    return missing;
  }
  return DecodeStatus::Ok();
}

uint64_t EventDecoder::UnitHash(const ResultsEvent& e) {
  if (!e.unit.empty()) return HashBytes(e.unit);
  if (!e.request_id.empty()) return HashBytes(e.request_id);
  // qrels mode allows events without a request id.
  return HashBytes(e.query_id) ^
         (static_cast<uint64_t>(e.timestamp_ms) * 0x9E3779B97F4A7C15ULL);
}

DecodeStatus EventDecoder::ParseJudgments(std::string_view payload,
                                          std::optional<int64_t> fallback,
                                          JudgmentEvent* out) {
  out->request_id = {};
  out->query_id = {};
  out->judgments.clear();
  claimed_position_ = 0;

  Judgment single;
  std::string_view event_kind;
  std::string_view event_judge;
  EventFields fields;
  fields.request_id = &out->request_id;
  fields.query_id = &out->query_id;
  fields.timestamp_ms = &out->timestamp_ms;
  fields.judgments = &out->judgments;
  fields.single = &single;
  fields.kind = &event_kind;
  fields.judge = &event_judge;
  fields.rank = &claimed_position_;
  // With actions, an event of an action that grades nothing is ignored
  // whatever its ids: checked once its judgments are known.
  fields.ids_later = !schema_.actions.empty();
  RW_RETURN_IF_REJECTED(judgments_tree_.nested
                            ? ReadNested(payload, judgments_tree_, &fields)
                            : ReadTopLevel<kJudgmentsKeys>(payload, &fields));
  const bool by_action = !schema_.actions.empty();
  if (fields.Saw(TopField::kJudgments)) {
    if (out->judgments.empty()) {
      return Reject(RejectReason::kMissingField,
                    Quoted(schema_.judgments) + " is empty");
    }
  } else if (by_action && !fields.Saw(TopField::kKind)) {
    return MissingField(FieldPath{{}, -1, schema_.kind});
  } else if (by_action && !IsImpression(event_kind) &&
             schema_.actions.find(event_kind) == schema_.actions.end()) {
    // An action that grades nothing (a UBI "view"): its doc may be absent.
  } else if (IsImpression(event_kind) && !fields.Saw(TopField::kDocId)) {
    // An impression of no doc ranks nothing: ignored as other actions.
  } else if (fields.Saw(TopField::kDocId)) {
    if (!by_action && !fields.Saw(TopField::kRelevance)) {
      RW_RETURN_IF_REJECTED(
          DefaultRelevance({{}, -1, schema_.relevance}, &single.grade));
    }
    out->judgments.push_back(single);
    out->judgments.back().claimed_position = claimed_position_;
  } else {
    return Reject(RejectReason::kMissingField,
                  "missing field " + Quoted(schema_.doc_id) + " (or " +
                      Quoted(schema_.judgments) + ")");
  }
  ResolveKinds(event_kind, &out->judgments);
  if (by_action) RW_RETURN_IF_REJECTED(GradeByKind(&out->judgments));
  if (!schema_.judge.empty()) {
    RW_RETURN_IF_REJECTED(ResolveJudges(
        event_judge, fields.Saw(TopField::kJudgments), &out->judgments));
  }
  RW_RETURN_IF_REJECTED(ResolveTimestamp(fields.Saw(TopField::kTimestamp),
                                         fields.timestamp_is_text, fallback,
                                         &out->timestamp_ms));
  if (out->judgments.empty()) {
    claimed_position_ = 0;
    return DecodeStatus::Ignored();
  }
  if (fields.ids_later) {
    RW_RETURN_IF_REJECTED(CheckRequiredIds(out->request_id, out->query_id));
  }
  return DecodeStatus::Ok();
}

// ---- Top-level fields -----------------------------------------------------

// The one loop over an event's top-level fields, for both kinds: `kKeys`
// says which fields the kind has, ReadTopField reads each into `fields`.
// Keys of no field are skipped unread. A key names one field and a field
// has one key, so a field already seen is its key given twice.
template <const auto& kKeys>
DecodeStatus EventDecoder::ReadTopLevel(std::string_view payload,
                                        EventFields* fields) {
  ondemand::document doc;
  RW_RETURN_IF_REJECTED(Start(payload, &doc));
  ondemand::object root;
  RW_RETURN_IF_REJECTED(RootObject(doc, &root));
  for (auto result : root) {
    simdjson::error_code key_error = simdjson::SUCCESS;
    const std::string_view key = NextField(result, &key_error);
    if (key_error) return Malformed(key_error);
    ondemand::field& field = FieldOf(result);
    // An empty name is an unconfigured optional field (schema.unit).
    const auto named =
        std::find_if(std::begin(kKeys), std::end(kKeys), [&](const TopKey& k) {
          return BytesEqual(key, schema_.*k.name) && !key.empty();
        });
    if (named == std::end(kKeys)) continue;
    if (fields->Saw(named->field)) return DuplicateKey({{}, -1, key});
    RW_RETURN_IF_REJECTED(ReadTopField(named->field, field.value(), fields));
    fields->seen |= EventFields::Bit(named->field);
  }
  RW_RETURN_IF_REJECTED(CheckAtEnd(doc));
  if (fields->ids_later) return DecodeStatus::Ok();
  return CheckRequiredIds(*fields->request_id, *fields->query_id);
}

// Forced inline: GCC must fold the switch into each key match of the two
// ReadTopLevel instances (without it, decode_bench runs more instructions
// per event than the two loops that ReadTopLevel replaced). Since ReadNode
// calls it too, the `inline` hint alone no longer sufficed (flat results
// events 12% slower).
[[gnu::always_inline]] inline DecodeStatus EventDecoder::ReadTopField(
    TopField field, ondemand::value& value, EventFields* fields) {
  switch (field) {
    case TopField::kRequestId:
      if (fields->ids_later) {
        // null is absent: an ungraded action (a UBI "search") needs none.
        json_type type;
        if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
        if (type == json_type::null) {
          *fields->request_id = {};
          return DecodeStatus::Ok();
        }
      }
      return ReadId(value, {{}, -1, schema_.request_id}, fields->request_id);
    case TopField::kQueryId:
      return ReadQueryId(value, fields->query_id);
    case TopField::kVariant:
      return ReadId(value, {{}, -1, schema_.variant}, fields->variant);
    case TopField::kTimestamp:
      return ReadTimestamp(value, fields->timestamp_ms,
                           &fields->timestamp_is_text);
    case TopField::kResults:
      return ReadResults(value, fields->doc_ids, fields->team_values);
    case TopField::kSegments:
      return ReadSegments(value, fields->segment_values);
    case TopField::kJudgments:
      return ReadJudgmentBatch(value, fields->judgments);
    case TopField::kDocId:
      return ReadId(value, {{}, -1, schema_.doc_id}, &fields->single->doc_id);
    case TopField::kRelevance:
      // With schema.actions the kind grades: the field is not read.
      if (!schema_.actions.empty()) return DecodeStatus::Ok();
      return ReadRelevance(value, {{}, -1, schema_.relevance},
                           &fields->single->grade);
    case TopField::kUnit:
      return ReadUnit(value, fields->unit);
    case TopField::kKind:
      return ReadId(value, {{}, -1, schema_.kind}, fields->kind);
    case TopField::kJudge:
      return ReadId(value, {{}, -1, schema_.judge}, fields->judge);
    case TopField::kPosition:
      return ReadPosition(value, fields->rank);
    case TopField::kTeams:
      return ReadTeamArray(value);
    case TopField::kCovariate:
      return ReadOptionalNumber(value, fields->covariate,
                                fields->covariate_outcome);
  }
  return DecodeStatus::Ok();  // Not reached: the switch is exhaustive.
}

// The reader of schemas with nested names: one pass over the event, as
// ReadTopLevel, descending only into the objects on a configured path.
DecodeStatus EventDecoder::ReadNested(std::string_view payload,
                                      const FieldTree& tree,
                                      EventFields* fields) {
  ondemand::document doc;
  RW_RETURN_IF_REJECTED(Start(payload, &doc));
  ondemand::object root;
  RW_RETURN_IF_REJECTED(RootObject(doc, &root));
  std::fill(seen_nodes_.begin(), seen_nodes_.end(), 0);
  RW_RETURN_IF_REJECTED(ReadNode(root, tree, 0, fields));
  RW_RETURN_IF_REJECTED(CheckAtEnd(doc));
  if (fields->ids_later) return DecodeStatus::Ok();
  return CheckRequiredIds(*fields->request_id, *fields->query_id);
}

DecodeStatus EventDecoder::ReadNode(ondemand::object& object,
                                    const FieldTree& tree, int32_t node,
                                    EventFields* fields) {
  const PathNode& here = tree.nodes[static_cast<size_t>(node)];
  if (here.segments) {
    std::fill(fields->segment_values->begin(), fields->segment_values->end(),
              std::string_view());
    std::fill(seen_labels_.begin(), seen_labels_.end(), 0);
  }
  for (auto result : object) {
    simdjson::error_code key_error = simdjson::SUCCESS;
    const std::string_view key = NextField(result, &key_error);
    if (key_error) return Malformed(key_error);
    ondemand::field& field = FieldOf(result);
    int32_t child = here.first_child;
    while (child >= 0 &&
           !BytesEqual(tree.nodes[static_cast<size_t>(child)].key, key)) {
      child = tree.nodes[static_cast<size_t>(child)].next_sibling;
    }
    if (child < 0) {
      if (here.segments) {
        RW_RETURN_IF_REJECTED(ReadSegmentLabel(field.value(), key, here.path,
                                               fields->segment_values));
      }
      continue;
    }
    const size_t c = static_cast<size_t>(child);
    if (seen_nodes_[c] != 0) return DuplicateKey({here.path, -1, key});
    seen_nodes_[c] = 1;
    const PathNode& next = tree.nodes[c];
    ondemand::value value = field.value();
    if (next.value_field >= 0) {
      const size_t i = static_cast<size_t>(next.value_field);
      double& v = (*fields->values)[i];
      RW_RETURN_IF_REJECTED(
          ReadOptionalNumber(value, &v, &(*fields->value_outcomes)[i]));
      // Outside its range (1e200 ms of latency) a value would swamp, or
      // overflow, the sums of squares: the list goes without it.
      if (std::isfinite(v) &&
          !(v >= schema_.fields[i].min && v <= schema_.fields[i].max)) {
        v = std::numeric_limits<double>::quiet_NaN();
        (*fields->value_outcomes)[i] = CovariateOutcome::kOutOfRange;
      }
      continue;
    }
    if (next.field >= 0) {
      const TopField f = static_cast<TopField>(next.field);
      // Under two names (a preset's alias and the field's own).
      if (fields->Saw(f)) return DuplicateKey({here.path, -1, key});
      RW_RETURN_IF_REJECTED(ReadTopField(f, value, fields));
      fields->seen |= EventFields::Bit(f);
      continue;
    }
    json_type type;
    if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
    // On the way to a field, null is an absent object (UBI clients send
    // "position": null); the segments object itself must be one.
    if (type == json_type::null && !next.segments) continue;
    if (type != json_type::object && next.optional_only) {
      // Only optional numbers lie below: the list goes without them.
      if (simdjson::error_code e = CheckScalar(value, type)) {
        return Malformed(e);
      }
      if (next.covariate_below) {
        *fields->covariate_outcome = CovariateOutcome::kWrongType;
      }
      for (size_t i = 0; i < config::kMaxResultFields; ++i) {
        if ((next.fields_below >> i) & 1) {
          (*fields->value_outcomes)[i] = CovariateOutcome::kWrongType;
        }
      }
      continue;
    }
    if (type != json_type::object) {
      return RejectType(value, type, RejectReason::kWrongType,
                        Quoted(next.path) + " is not an object");
    }
    ondemand::object inner;
    if (simdjson::error_code e = value.get_object().get(inner)) {
      return Malformed(e);
    }
    RW_RETURN_IF_REJECTED(ReadNode(inner, tree, child, fields));
    if (next.segments) fields->seen |= EventFields::Bit(TopField::kSegments);
  }
  return DecodeStatus::Ok();
}

// ---- Parsing --------------------------------------------------------------

DecodeStatus EventDecoder::Start(std::string_view payload,
                                 ondemand::document* doc) {
  if (static_cast<int64_t>(payload.size()) > limits_.max_event_bytes) {
    return Reject(RejectReason::kTooLarge,
                  "event is " + std::to_string(payload.size()) +
                      " bytes (max " + std::to_string(limits_.max_event_bytes) +
                      ")");
  }
  RW_RETURN_IF_REJECTED(Reserve(payload.size()));
  const char* json = payload.data();
  size_t capacity = payload.size() + simdjson::SIMDJSON_PADDING;
  if (!read_in_place_ || !decoder_internal::PaddingOnSamePage(payload)) {
    if (!payload.empty()) {
      std::memcpy(buffer_.data(), payload.data(), payload.size());
    }
    json = buffer_.data();
    capacity = buffer_.size();
  }
  if (simdjson::error_code e =
          parser_.iterate(json, payload.size(), capacity).get(*doc)) {
    return Malformed(e);
  }
  return DecodeStatus::Ok();
}

// Grows the buffer and the parser geometrically, so that events of slowly
// increasing sizes do not reallocate every time (simdjson alone would
// reallocate to the exact size).
DecodeStatus EventDecoder::Reserve(size_t payload_bytes) {
  const size_t capacity = std::max(kMinCapacity, std::bit_ceil(payload_bytes));
  if (buffer_.size() < payload_bytes + simdjson::SIMDJSON_PADDING) {
    buffer_.resize(capacity + simdjson::SIMDJSON_PADDING);
  }
  if (parser_.capacity() < payload_bytes) {
    const size_t want = std::min(capacity, parser_.max_capacity());
    if (simdjson::error_code e = parser_.allocate(want, parser_.max_depth())) {
      return Reject(RejectReason::kTooLarge,
                    "event is " + std::to_string(payload_bytes) +
                        " bytes: " + simdjson::error_message(e));
    }
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadId(ondemand::value& value, const FieldPath& path,
                                  std::string_view* id) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  const ScalarResult read = ReadIdText(value, type, id);
  if (!read.ok()) {
    return ScalarRejection(read, RejectReason::kWrongType, [&] {
      return Describe(path) + " is not a string or an integer";
    });
  }
  return CheckIdLength(*id, path);
}

// In impression mode the query text only names the request's query among
// the movers: "" or null (the UBI plugin writes "" for a search without a
// user_query) is a request without one, scored all the same. In qrels mode
// it is the key of the table: an id.
DecodeStatus EventDecoder::ReadQueryId(ondemand::value& value,
                                       std::string_view* query_id) const {
  const FieldPath path{{}, -1, schema_.query_id};
  if (mode_ != config::JoinMode::kImpression) {
    return ReadId(value, path, query_id);
  }
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::null) {
    *query_id = {};
    return DecodeStatus::Ok();
  }
  const ScalarResult read = ReadIdText(value, type, query_id);
  if (!read.ok()) {
    return ScalarRejection(read, RejectReason::kWrongType, [&] {
      return Describe(path) + " is not a string or an integer";
    });
  }
  return query_id->empty() ? DecodeStatus::Ok()
                           : CheckIdLength(*query_id, path);
}

// Like an id, but null means "no unit" (e.g. a signed-out user): the
// request is then its own unit.
DecodeStatus EventDecoder::ReadUnit(ondemand::value& value,
                                    std::string_view* unit) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  if (type == json_type::null) {
    *unit = {};
    return DecodeStatus::Ok();
  }
  return ReadId(value, {{}, -1, schema_.unit}, unit);
}

DecodeStatus EventDecoder::RejectIdLength(std::string_view id,
                                          const FieldPath& path) const {
  if (id.empty()) {
    return Reject(RejectReason::kEmptyId, Describe(path) + " is empty");
  }
  if (static_cast<int64_t>(id.size()) > limits_.max_id_length) {
    return Reject(RejectReason::kIdTooLong,
                  Describe(path) + " is " + std::to_string(id.size()) +
                      " bytes (max " + std::to_string(limits_.max_id_length) +
                      ")");
  }
  return DecodeStatus::Ok();
}

DecodeStatus EventDecoder::ReadTimestamp(ondemand::value& value, int64_t* ms,
                                         bool* is_text) const {
  json_type type;
  if (simdjson::error_code e = TypeOf(value, &type)) return Malformed(e);
  *is_text = type == json_type::string;
  const ScalarResult read = ReadEpochMillis(value, type, ms);
  if (read.ok()) return DecodeStatus::Ok();
  return ScalarRejection(read, RejectReason::kBadTimestamp, [this] {
    return Quoted(schema_.timestamp) +
           " is not epoch milliseconds >= 0 nor an ISO 8601 date-time";
  });
}

DecodeStatus EventDecoder::ResolveTimestamp(bool present, bool is_text,
                                            std::optional<int64_t> fallback,
                                            int64_t* ms) {
  if (!present) {
    // Kafka reports -1 for a record without a timestamp.
    if (!fallback || *fallback < 0) {
      return MissingField(FieldPath{{}, -1, schema_.timestamp});
    }
    *ms = *fallback;
  }
  return CheckTimeBounds(present, present && is_text, *ms);
}

DecodeStatus EventDecoder::CheckTimeBounds(bool present, bool is_text,
                                           int64_t ms) {
  const auto name = [&] {
    return (present ? Quoted(schema_.timestamp) : "the Kafka timestamp") + " " +
           FormatRfc3339Millis(ms);
  };
  if (ms < limits_.min_timestamp_ms) return PastTimestamp(present, is_text, ms);
  if (ms <= clock_seen_ms_) return DecodeStatus::Ok();
  clock_seen_ms_ = clock_->NowMillis();
  // Saturating: now + skew must not overflow for any clock.
  const int64_t limit = SatAdd(clock_seen_ms_, limits_.max_future_skew.count());
  if (ms <= limit) return DecodeStatus::Ok();
  // In double: the difference of two int64 may not fit one.
  const double ahead_s =
      (static_cast<double>(ms) - static_cast<double>(clock_seen_ms_)) / 1000;
  return Reject(RejectReason::kFutureTimestamp,
                name() + " is " + FormatApproxSeconds(ahead_s) +
                    " ahead of the wall clock (events.max_future_skew " +
                    FormatDuration(limits_.max_future_skew) + ")");
}

DecodeStatus EventDecoder::PastTimestamp(bool present, bool is_text,
                                         int64_t ms) const {
  const std::string source =
      present ? Quoted(schema_.timestamp) : "the Kafka timestamp";
  const std::string floor = FormatRfc3339Millis(limits_.min_timestamp_ms);
  // A date-time written out is what the producer meant; only a bare number
  // can be in the wrong unit.
  if (is_text || ms < kTenDigitsMin || ms > kTenDigitsMax) {
    return Reject(RejectReason::kPastTimestamp,
                  source + " " + FormatRfc3339Millis(ms) +
                      " is before events.min_timestamp " + floor);
  }
  return Reject(RejectReason::kPastTimestamp,
                source + " " + std::to_string(ms) + " is " +
                    FormatRfc3339Millis(ms) +
                    ": seconds where milliseconds are expected? (as seconds "
                    "it is " +
                    FormatRfc3339Millis(ms * 1000) + "; events.min_timestamp " +
                    floor + ")");
}

DecodeStatus EventDecoder::CheckRequiredIds(std::string_view request_id,
                                            std::string_view query_id) const {
  // A present id is never empty (empty_id), so empty means absent.
  if (mode_ == config::JoinMode::kImpression && request_id.empty()) {
    return MissingField(FieldPath{{}, -1, schema_.request_id});
  }
  if (mode_ == config::JoinMode::kQrels && query_id.empty()) {
    return MissingField(FieldPath{{}, -1, schema_.query_id});
  }
  return DecodeStatus::Ok();
}

}  // namespace rankwatch::stream
