// EventDecoder: JSON payloads -> ResultsEvent / JudgmentEvent, with the field
// names of the configured schema, using simdjson's on-demand API.
//
// The hot path allocates nothing once warmed up: the payload is copied into a
// reused padded buffer (or read where it lies, set_read_in_place), strings
// are views into simdjson's string buffer, and the output vectors keep their
// capacity between calls. A decoded event is valid until the next Decode
// call on the same decoder (and, read in place, while its payload lives).
//
// Not thread-safe; one decoder per consuming thread.
#ifndef RANKWATCH_DAEMON_STREAM_DECODE_EVENT_DECODER_H_
#define RANKWATCH_DAEMON_STREAM_DECODE_EVENT_DECODER_H_

#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/string_index.h"
#include "config/config.h"
#include "daemon/stream/decode/events.h"

namespace rankwatch::stream {

// The outcome of decoding one event. On rejection `detail` says what was
// wrong in a short phrase naming the field, e.g. "missing field
// 'request_id'" or "results[3].score is not a finite number".
struct [[nodiscard]] DecodeStatus {
  std::optional<RejectReason> reason;
  std::string detail;
  // Decoded, but with nothing to score: a judgment event whose kinds are
  // all outside schema.actions (a UBI "view", "page_exit"...). ok() holds,
  // the event has no judgments; callers count it and never dead-letter it.
  bool ignored = false;

  bool ok() const { return !reason.has_value(); }
  static DecodeStatus Ok() { return {}; }
  static DecodeStatus Ignored() {
    DecodeStatus s;
    s.ignored = true;
    return s;
  }
  static DecodeStatus Reject(RejectReason r, std::string d) {
    DecodeStatus s;
    s.reason = r;
    s.detail = std::move(d);
    return s;
  }
};

// What the decoder resolves beyond field names: the variants of interleaving
// experiments (whose results must carry teams) and the judgment kinds that
// are never clicks.
struct DecodeRules {
  std::vector<config::InterleavingConfig> interleaving;
  std::vector<std::string> click_exclude_kinds;
  // judges: the accepted values of schema.judge (empty: the field is not
  // read) and the judge of a judgment without one (empty: none).
  config::JudgesConfig judges = {};
};

class EventDecoder {
 public:
  // Required fields depend on `mode`: impression needs request_id on both
  // kinds of events; qrels needs query_id on both. `segment_labels` are the
  // segment keys to extract (aggregation.segments).
  //
  // `clock` (not owned; must outlive the decoder) is the wall clock that
  // event times are checked against (events.max_future_skew). To keep it
  // off the hot path it is read only for an event stamped later than the
  // previous reading, which assumes that it never steps back by more than
  // max_future_skew.
  EventDecoder(const config::SchemaConfig& schema,
               const config::EventLimitsConfig& limits, config::JoinMode mode,
               std::vector<std::string> segment_labels, const Clock* clock,
               DecodeRules rules = {});

  // The decoder that `config` describes: its schema, event limits, join
  // mode, segment labels, interleaved variants and click-excluded kinds.
  static EventDecoder ForConfig(const config::Config& config,
                                const Clock* clock);

  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;
  EventDecoder(EventDecoder&&) =
      default;  // Views already handed out stay valid.

  // `fallback_timestamp_ms` is used when the event has no timestamp field
  // (the daemon passes the Kafka record's timestamp); without one a missing
  // timestamp is a rejection. A negative fallback counts as none.
  //
  // The event time, from the field or the fallback, must lie in
  // [events.min_timestamp, now + events.max_future_skew]: an event stamped
  // later is future_timestamp, earlier past_timestamp, so that one producer
  // with a wrong clock cannot move event time. A number of ten digits below
  // the floor is most likely epoch seconds sent as milliseconds (they read
  // as January 1970): its past_timestamp detail says so.
  //
  // On success `*out` holds the event (views valid until the next Decode
  // call). On rejection `*out` is cleared: it holds no event and must not be
  // used. Reuse the same `out` between calls so that its vectors keep their
  // capacity and decoding allocates nothing.
  //
  // Field semantics beyond the schema comments:
  //  - An id (request_id, query_id, variant, doc_id) is a JSON string or a
  //    JSON integer, which is taken as its literal text ("query_id": 123 is
  //    the id "123"). Floats, booleans, null, arrays and objects are
  //    wrong_type.
  //  - A numeric timestamp is epoch milliseconds; a float one is truncated
  //    toward zero.
  //  - A results entry is an object (doc_id, optional score), a string or an
  //    integer; mixed arrays are fine.
  //  - A segment value is a string, or a number or boolean taken as its
  //    literal text; null or "" means the event does not carry the segment.
  //    Only the configured labels are read.
  //  - Relevance is an integer that fits 32 bits, or a float with an
  //    integral value (2.0 is 2, 1.5 is rejected); null is "delete".
  //  - Judgments: if both the batch (`judgments`) and the single form
  //    (top-level doc_id / relevance) are present, the batch wins and the
  //    single pair is ignored (it must still be well-formed).
  //  - A key the decoder reads (a schema field at the top level or in a
  //    results or judgments entry, a configured segment label) given twice
  //    in one object is duplicate_key: JSON parsers disagree on whether the
  //    first or the last counts, so either choice could score what the
  //    producer did not mean. Other keys are skipped unread and may repeat:
  //    they change nothing rankwatch computes, and checking them would mean
  //    remembering every key of every object on the hot path.
  //  - Teams (schema.team, in results entries) are read only for the
  //    variant of an interleaving experiment: every result must carry one
  //    of its two teams (missing_field, unknown_team); a string or an
  //    integer, as ids. Other variants' teams are ignored.
  //  - schema.teams (a results event field, e.g. UBI's
  //    query_attributes.teams): an array parallel to the results, entry i
  //    the team of result i, each entry read as a team above (wrong_type,
  //    empty_id...); null is absent. When present it gives the teams and
  //    entries' own team fields are not used (still checked, as the single
  //    judgment beside a batch). For an interleaved variant it must have
  //    one entry per result: fewer is missing_field, more wrong_type; then
  //    unknown_team as above. Other variants' arrays are not matched.
  //  - A judgment's kind (schema.kind) is its batch entry's, else the
  //    event's; a string or an integer.
  //  - With judges (DecodeRules::judges), a judgment's judge
  //    (schema.judge) likewise, else judges.default: a string or an
  //    integer that must be one of judges.names (unknown_judge), and
  //    present unless there is a default (missing_field). Without judges
  //    the field is not read.
  //  - A schema name with dots is a path through nested objects, read in
  //    the same single pass; an object on the path that is null or absent
  //    means the field is absent, any other non-object is wrong_type.
  //    Keys of those objects are duplicate_key when read twice, as at the
  //    top level. The segments object may hold other paths' fields.
  //  - With schema.actions, a judgment's grade is its kind's grade and no
  //    relevance field is read. A judgment without a kind is
  //    missing_field; one of another kind is dropped, and an event left
  //    without judgments is DecodeStatus::Ignored() (after its ids and
  //    time were checked, so that it still moves event time).
  //  - schema.position (top level, single form): an integer >=
  //    schema.position_base or null (none); claimed_position() has it.
  //  - schema.covariate (results events): a finite JSON number is the
  //    list's covariate. Anything else (absent, null, a string such as
  //    "NaN", a boolean, a container, 1e999, or on a dotted path an object
  //    of that path alone that is not an object) leaves the list without
  //    one (ResultsEvent::covariate NaN, covariate_outcome says why) and
  //    never rejects the event; only broken JSON there does, as anywhere.
  DecodeStatus DecodeResults(std::string_view payload,
                             std::optional<int64_t> fallback_timestamp_ms,
                             ResultsEvent* out);
  DecodeStatus DecodeJudgments(std::string_view payload,
                               std::optional<int64_t> fallback_timestamp_ms,
                               JudgmentEvent* out);

  // Lets simdjson read a payload where it lies, without copying it, when the
  // padding it reads past the end cannot fault (the page of the payload's
  // last byte holds it; never under AddressSanitizer). The decoded event's
  // views may then point into the payload: only for a caller whose payload
  // outlives its use of the event (the pipeline handles an event within
  // OnPayload). The copy was 10% of stream_bench (bench/README.md).
  void set_read_in_place(bool on) { read_in_place_ = on; }

  // After a DecodeJudgments that succeeded: the rank (1 first) at which
  // schema.position says the single judgment's doc was served, for the join
  // to check against the served list; 0 when the event does not say.
  int32_t claimed_position() const { return claimed_position_; }

 private:
  // Where a value sits in the event, for reject details: "'name'" at the
  // top level, "parent[index].name" in an array entry, "parent.name" in a
  // nested object. Holds views; formatted only on the error path.
  struct FieldPath {
    std::string_view parent;  // Empty at the top level.
    int64_t index = -1;       // Entry of the `parent` array, or -1.
    std::string_view name;    // Empty for a bare array entry.
  };

  // A top-level field of an event.
  enum class TopField : uint8_t {
    kRequestId,
    kQueryId,
    kVariant,
    kTimestamp,
    kResults,
    kSegments,
    kJudgments,
    kDocId,
    kRelevance,
    kUnit,
    kKind,
    kPosition,
    kTeams,
    kCovariate,
    kJudge,
  };

  // A key table entry: the schema member that names `field`. Each kind of
  // event has a table of its fields; a key reads the first entry it names.
  struct TopKey {
    std::string config::SchemaConfig::*name;
    TopField field;
  };

  // The key tables of the two kinds. A key naming two fields (a schema
  // may) reads the first one listed.
  static constexpr TopKey kResultsKeys[] = {
      {&config::SchemaConfig::request_id, TopField::kRequestId},
      {&config::SchemaConfig::query_id, TopField::kQueryId},
      {&config::SchemaConfig::variant, TopField::kVariant},
      {&config::SchemaConfig::timestamp, TopField::kTimestamp},
      {&config::SchemaConfig::results, TopField::kResults},
      {&config::SchemaConfig::segments, TopField::kSegments},
      {&config::SchemaConfig::unit, TopField::kUnit},
      {&config::SchemaConfig::teams, TopField::kTeams},
      {&config::SchemaConfig::covariate, TopField::kCovariate},
  };
  static constexpr TopKey kJudgmentsKeys[] = {
      {&config::SchemaConfig::request_id, TopField::kRequestId},
      {&config::SchemaConfig::query_id, TopField::kQueryId},
      {&config::SchemaConfig::timestamp, TopField::kTimestamp},
      {&config::SchemaConfig::judgments, TopField::kJudgments},
      {&config::SchemaConfig::doc_id, TopField::kDocId},
      {&config::SchemaConfig::relevance, TopField::kRelevance},
      {&config::SchemaConfig::kind, TopField::kKind},
      {&config::SchemaConfig::position, TopField::kPosition},
      {&config::SchemaConfig::judge, TopField::kJudge},
  };

  // Where the top-level loop puts what it reads (views into the output
  // event, not owned) and which fields it saw. The other kind's members
  // stay null: its key table never names them.
  struct EventFields {
    // Every member is set here, in the body, not by default member
    // initializers: from those GCC cleared the whole struct with a `rep
    // stos` (a microcoded clear of 120 bytes with a startup cost of tens of
    // cycles) before each event, 2.6% of BM_PipelineEvents in
    // ParseJudgments (perf annotate, issue 45); assignments become a few
    // vector stores, and those the caller overwrites are dropped.
    EventFields() {
      request_id = query_id = variant = unit = kind = judge = nullptr;
      timestamp_ms = nullptr;
      doc_ids = segment_values = team_values = nullptr;
      covariate = nullptr;
      covariate_outcome = nullptr;
      values = nullptr;
      value_outcomes = nullptr;
      judgments = nullptr;
      single = nullptr;
      rank = nullptr;
      seen = 0;
      timestamp_is_text = false;
      ids_later = false;
    }
    static constexpr uint32_t Bit(TopField f) {
      return uint32_t{1} << static_cast<int>(f);
    }
    bool Saw(TopField f) const { return (seen & Bit(f)) != 0; }

    std::string_view* request_id;
    std::string_view* query_id;
    int64_t* timestamp_ms;
    // Results events.
    std::string_view* variant;
    std::vector<std::string_view>* doc_ids;
    std::vector<std::string_view>* segment_values;
    std::string_view* unit;
    std::vector<std::string_view>* team_values;
    double* covariate;
    CovariateOutcome* covariate_outcome;
    FieldValues* values;  // schema.fields.
    std::array<CovariateOutcome, config::kMaxResultFields>* value_outcomes;
    // Judgment events; `single` is the top-level doc_id and relevance.
    std::vector<Judgment>* judgments;
    Judgment* single;
    std::string_view* kind;   // The event's (top-level) kind.
    std::string_view* judge;  // The event's (top-level) judge.
    int32_t* rank;            // schema.position, as a rank.
    uint32_t seen;            // Bit(f) is set once field f was read.
    // The timestamp field was an RFC 3339 string, not epoch milliseconds.
    bool timestamp_is_text;
    // Judgment events with schema.actions: the required ids are checked
    // by the caller once it knows whether the event grades anything, and
    // a null request id is an absent one.
    bool ids_later;
  };

  // One step of a kind's field tree, built from its schema names split at
  // the dots: the root is the event, inner nodes are nested objects, and a
  // leaf is a field. Children are a sibling list.
  struct PathNode {
    std::string key;   // This step; empty for the root.
    std::string path;  // The steps to here ("a.b"), for details.
    int32_t first_child = -1;
    int32_t next_sibling = -1;
    int32_t field = -1;     // The TopField of a leaf; -1 otherwise.
    bool segments = false;  // The segments object (its labels are read).
    // A leaf of schema.fields: its index there; -1 otherwise.
    int32_t value_field = -1;
    // An object on the paths of optional numbers alone (schema.covariate,
    // schema.fields): a value there that is not an object leaves them
    // without a value instead of rejecting the event
    // (CovariateOutcome::kWrongType): the covariate when `covariate_below`,
    // and field i when bit i of `fields_below` is set.
    bool optional_only = false;
    bool covariate_below = false;
    uint32_t fields_below = 0;
  };
  // A kind's fields as a tree; `nested` when some name has a dot (else the
  // flat loop of ReadTopLevel reads the kind).
  struct FieldTree {
    std::vector<PathNode> nodes;
    bool nested = false;
  };

  static std::string Describe(const FieldPath& path);
  // `hint` (" (...)") follows the field's name and place.
  static DecodeStatus MissingField(const FieldPath& path,
                                   std::string_view hint = {});
  // `path` names the key and the object it repeats in.
  static DecodeStatus DuplicateKey(const FieldPath& path);

  DecodeStatus ParseResults(std::string_view payload,
                            std::optional<int64_t> fallback_timestamp_ms,
                            ResultsEvent* out);
  DecodeStatus ParseJudgments(std::string_view payload,
                              std::optional<int64_t> fallback_timestamp_ms,
                              JudgmentEvent* out);

  // `kKeys` is the kind's key table (an array of TopKey): a template
  // argument, so that matching a key compiles to the comparisons a
  // hand-written chain of ifs would make.
  template <const auto& kKeys>
  DecodeStatus ReadTopLevel(std::string_view payload, EventFields* fields);
  // The same for a schema with nested names: walks `tree`.
  DecodeStatus ReadNested(std::string_view payload, const FieldTree& tree,
                          EventFields* fields);
  DecodeStatus ReadNode(simdjson::ondemand::object& object,
                        const FieldTree& tree, int32_t node,
                        EventFields* fields);
  DecodeStatus ReadSegmentLabel(simdjson::ondemand::value& value,
                                std::string_view key, std::string_view parent,
                                std::vector<std::string_view>* values);
  template <const auto& kKeys>
  FieldTree BuildTree() const;
  // Adds the steps of `name` to `tree`; returns its leaf. An optional
  // number (the covariate, schema.fields: `optional`) marks the objects on
  // its way: with `covariate`, or its `field_bit`.
  static int32_t AddPath(const std::string& name, bool optional, bool covariate,
                         uint32_t field_bit, FieldTree* tree);
  // The results tree with schema.fields added: read by ReadNested.
  FieldTree BuildResultsTree() const;
  DecodeStatus ReadTopField(TopField field, simdjson::ondemand::value& value,
                            EventFields* fields);

  // Copies `payload` into the padded buffer and starts simdjson on it.
  DecodeStatus Start(std::string_view payload,
                     simdjson::ondemand::document* doc);
  DecodeStatus Reserve(size_t payload_bytes);

  static uint64_t UnitHash(const ResultsEvent& e);
  DecodeStatus ReadUnit(simdjson::ondemand::value& value,
                        std::string_view* unit) const;
  DecodeStatus ReadId(simdjson::ondemand::value& value, const FieldPath& path,
                      std::string_view* id) const;
  DecodeStatus ReadQueryId(simdjson::ondemand::value& value,
                           std::string_view* query_id) const;
  // Inline: it runs for every id of every event (13 per results event of
  // the benchmark), and the call cost more than the two compares.
  DecodeStatus CheckIdLength(std::string_view id, const FieldPath& path) const {
    if (!id.empty() && static_cast<int64_t>(id.size()) <= limits_.max_id_length)
        [[likely]] {
      return DecodeStatus::Ok();
    }
    return RejectIdLength(id, path);
  }
  // The rejection of an id that CheckIdLength refuses.
  DecodeStatus RejectIdLength(std::string_view id, const FieldPath& path) const;
  DecodeStatus ReadTimestamp(simdjson::ondemand::value& value, int64_t* ms,
                             bool* is_text) const;
  // `present`: the event has the timestamp field (`is_text`: as RFC 3339).
  DecodeStatus ResolveTimestamp(bool present, bool is_text,
                                std::optional<int64_t> fallback, int64_t* ms);
  DecodeStatus CheckTimeBounds(bool present, bool is_text, int64_t ms);
  DecodeStatus PastTimestamp(bool present, bool is_text, int64_t ms) const;
  DecodeStatus CheckRequiredIds(std::string_view request_id,
                                std::string_view query_id) const;

  DecodeStatus ReadResults(simdjson::ondemand::value& value,
                           std::vector<std::string_view>* doc_ids,
                           std::vector<std::string_view>* team_values);
  // The place of `doc_id` among `earlier` (the list's docs before it), or
  // -1; indexes them in seen_docs_ from kScanDocsBelow docs on.
  int64_t EarlierPlace(std::string_view doc_id,
                       std::span<const std::string_view> earlier);
  DecodeStatus ReadResultEntry(simdjson::ondemand::value& value, int64_t index,
                               std::string_view* doc_id,
                               std::string_view* team) const;
  DecodeStatus ReadResultObject(simdjson::ondemand::value& value, int64_t index,
                                std::string_view* doc_id,
                                std::string_view* team) const;
  // Reads the schema.teams array into team_array_.
  DecodeStatus ReadTeamArray(simdjson::ondemand::value& value);
  // Sets out->interleaving and out->teams from team_array_ when the event
  // had one, else from out->team_values.
  DecodeStatus ResolveTeams(ResultsEvent* out) const;
  // Gives batch entries without a kind the event's, and marks the kinds
  // of metrics.click_exclude_kinds.
  void ResolveKinds(std::string_view event_kind,
                    std::vector<Judgment>* judgments) const;
  DecodeStatus ReadScore(simdjson::ondemand::value& value,
                         const FieldPath& path) const;
  DecodeStatus ReadSegments(simdjson::ondemand::value& value,
                            std::vector<std::string_view>* values);
  DecodeStatus ReadSegmentValue(simdjson::ondemand::value& value,
                                const FieldPath& path,
                                std::string_view* out) const;

  DecodeStatus ReadJudgmentBatch(simdjson::ondemand::value& value,
                                 std::vector<Judgment>* judgments) const;
  DecodeStatus ReadJudgmentEntry(simdjson::ondemand::value& value,
                                 int64_t index, Judgment* judgment) const;
  DecodeStatus ReadRelevance(simdjson::ondemand::value& value,
                             const FieldPath& path,
                             std::optional<metrics::Grade>* grade) const;
  DecodeStatus DefaultRelevance(const FieldPath& path,
                                std::optional<metrics::Grade>* grade) const;
  DecodeStatus ReadPosition(simdjson::ondemand::value& value,
                            int32_t* position) const;
  // `kind` is schema.impression_kind (which is set), in impression mode
  // (a qrels table has no served lists to rank: there they are ignored).
  bool IsImpression(std::string_view kind) const {
    return mode_ == config::JoinMode::kImpression &&
           !schema_.impression_kind.empty() && kind == schema_.impression_kind;
  }
  // An optional number (schema.covariate, a field of schema.fields): a
  // finite number, else NaN with the outcome; only broken JSON is a
  // rejection.
  DecodeStatus ReadOptionalNumber(simdjson::ondemand::value& value, double* x,
                                  CovariateOutcome* outcome) const;
  // schema.actions: grades each judgment by its kind, dropping other kinds.
  DecodeStatus GradeByKind(std::vector<Judgment>* judgments) const;
  // With judges: gives each judgment its judge (its entry's, else
  // `event_judge`, else judges.default) and that judge's place in
  // judges.names; unknown_judge or missing_field otherwise. `batch`: the
  // judgments came from the schema.judgments array (for details).
  DecodeStatus ResolveJudges(std::string_view event_judge, bool batch,
                             std::vector<Judgment>* judgments) const;

  const config::SchemaConfig schema_;
  const config::EventLimitsConfig limits_;
  const config::JoinMode mode_;
  const std::vector<std::string> segment_labels_;
  const Clock* clock_;
  const DecodeRules rules_;
  // The latest reading of clock_: an event stamped no later is within the
  // future bound without reading the clock again. Starts below any time.
  int64_t clock_seen_ms_ = std::numeric_limits<int64_t>::min();

  simdjson::ondemand::parser parser_;
  // The payload copy simdjson reads: size >= payload + SIMDJSON_PADDING.
  std::vector<char> buffer_;
  // Doc ids of the results list being read, for duplicate detection once
  // it has kScanDocsBelow (EarlierPlace). Keys point into buffer_ (or the
  // payload, read in place) or the parser's string buffer.
  static constexpr size_t kScanDocsBelow = 16;
  StringIndex seen_docs_;
  // Per segment label: whether the segments object being read had it yet
  // (sized once, at construction, so that reading allocates nothing).
  std::vector<uint8_t> seen_labels_;
  // The field trees of the two kinds, and per node whether the event being
  // read had its key yet (sized once, as seen_labels_).
  FieldTree results_tree_;
  FieldTree judgments_tree_;
  std::vector<uint8_t> seen_nodes_;
  // The schema.teams array of the results event being read: its first
  // events.max_results entries (views, as doc ids; capacity kept between
  // events), how many it had, and whether the event had one (not null).
  std::vector<std::string_view> team_array_;
  size_t team_array_entries_ = 0;
  bool team_array_present_ = false;
  int32_t claimed_position_ = 0;
  bool read_in_place_ = false;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_DECODE_EVENT_DECODER_H_
