// The two kinds of events rankwatch consumes, decoded, and the reasons an
// event can be rejected.
//
// Decoded events hold string_views into their decoder's buffers: they are
// valid until the decoder's next call, and the join copies what it keeps.
#ifndef RANKWATCH_DAEMON_STREAM_DECODE_EVENTS_H_
#define RANKWATCH_DAEMON_STREAM_DECODE_EVENTS_H_

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "metrics/measures.h"

namespace rankwatch::stream {

enum class Topic { kResults = 0, kJudgments = 1 };
inline constexpr std::array<Topic, 2> kAllTopics = {Topic::kResults,
                                                    Topic::kJudgments};
std::string_view TopicName(Topic t);  // "results", "judgments"

// Why an event was rejected; each has a stable snake_case name used as a
// Prometheus label value and in dead letters.
enum class RejectReason {
  kMalformedJson = 0,    // Not valid JSON, or not a JSON object.
  kTooLarge,             // Payload over events.max_event_bytes.
  kMissingField,         // A required field is absent.
  kWrongType,            // A field has the wrong JSON type.
  kEmptyId,              // request_id, query_id, doc_id... is "".
  kIdTooLong,            // An id over events.max_id_length bytes.
  kBadTimestamp,         // Not epoch ms >= 0 nor an ISO 8601 date-time.
  kEmptyResults,         // `results` is [].
  kTooManyResults,       // Over events.max_results entries.
  kDuplicateDoc,         // The same doc id twice in one results list.
  kNonFiniteScore,       // A score that is NaN, Infinity or not a number.
  kNonIntegerRelevance,  // Relevance 1.5, "high", true...
  kTooManyJudgments,     // Batch over events.max_judgments entries.
  kFutureTimestamp,      // Over events.max_future_skew ahead of the clock.
  kPastTimestamp,        // Before events.min_timestamp.
  // Interleaved traffic: a result's team is not one of the experiment's.
  kUnknownTeam,
  // A field the decoder reads appears twice in one object: which one the
  // producer meant is ambiguous (JSON parsers disagree on first or last).
  kDuplicateKey,
  // A judgment's judge (schema.judge) is not one of judges.names.
  kUnknownJudge,
};
inline constexpr int kNumRejectReasons = 18;
std::string_view RejectReasonName(RejectReason r);

// What the results event said about schema.covariate, the pre-exposure
// value of regression adjustment. Anything but kPresent leaves the list
// without a covariate (ResultsEvent::covariate NaN): its ranking data is
// good, so the event is never rejected for it; the pipeline counts the
// outcomes (PipelineCounters::covariate) so that a producer that stopped
// sending it shows.
enum class CovariateOutcome : uint8_t {
  kPresent = 0,  // A finite number.
  kAbsent,       // The field (or an object on its path) is absent.
  kNull,         // The field is null (no pre-exposure value, e.g. a new user).
  kWrongType,    // A string, boolean, array or object (or a non-object on
                 // its path): not a number.
  kNotFinite,    // A number no double holds finitely (1e999).
  // schema.fields only: a number outside the field's [min, max] (by
  // default +-1e15, where a sum of squares could overflow): left out.
  kOutOfRange,
};
inline constexpr int kNumCovariateOutcomes = 6;
// "present", "absent", "null", "wrong_type", "not_finite", "out_of_range":
// the `reason` label of rankwatch_covariate_events_total and
// rankwatch_field_events_total.
std::string_view CovariateOutcomeName(CovariateOutcome o);

// The values of schema.fields of one list, in their configured order: a
// finite number, or NaN when the list has none (entries past the
// configured fields are NaN too).
using FieldValues = std::array<double, config::kMaxResultFields>;
inline constexpr FieldValues kNoFieldValues = [] {
  FieldValues v{};
  v.fill(std::numeric_limits<double>::quiet_NaN());
  return v;
}();

inline constexpr std::array<CovariateOutcome, config::kMaxResultFields>
    kAbsentFields = [] {
      std::array<CovariateOutcome, config::kMaxResultFields> o{};
      o.fill(CovariateOutcome::kAbsent);
      return o;
    }();

// What a ranker served for one request. `doc_ids` is the ranking, rank 1
// first.
struct ResultsEvent {
  std::string_view request_id;  // Empty if absent (allowed in qrels mode).
  std::string_view query_id;    // Empty if absent (allowed in impression).
  std::string_view variant;     // schema.default_variant if absent.
  int64_t timestamp_ms = 0;
  std::vector<std::string_view> doc_ids;
  // One value per configured segment label (aggregation.segments), in that
  // order; empty when the event does not carry it.
  std::vector<std::string_view> segment_values;
  // The randomization unit (schema.unit; e.g. a user id); empty when none
  // is configured, or the event has none (absent or null).
  std::string_view unit;
  // With schema.unit configured: HashBytes of the unit, or when the event
  // has none, of its request id (of its query id and time without one):
  // such a request is its own unit. 0 without schema.unit.
  uint64_t unit_hash = 0;
  // schema.covariate: the field's value when it is a finite number, NaN
  // otherwise (and without schema.covariate); `covariate_outcome` says why.
  double covariate = std::numeric_limits<double>::quiet_NaN();
  CovariateOutcome covariate_outcome = CovariateOutcome::kAbsent;
  // schema.fields: each field's value read as the covariate is (a finite
  // number within the field's [min, max], else NaN and never a rejection),
  // and why, per field.
  FieldValues fields = kNoFieldValues;
  std::array<CovariateOutcome, config::kMaxResultFields> field_outcomes =
      kAbsentFields;
  // Interleaved traffic (the variant of an `interleaving:` experiment): the
  // experiment's index in Config::interleaving, and per rank the team that
  // contributed the doc (0 the incumbent, 1 the challenger). -1 and empty
  // for any other variant.
  int32_t interleaving = -1;
  std::vector<uint8_t> teams;
  // The decoder's scratch: each result's schema.team value as read
  // (parallel to doc_ids; empty when absent).
  std::vector<std::string_view> team_values;
};

struct Judgment {
  std::string_view doc_id;
  // nullopt: `"relevance": null`, which deletes the judgment.
  std::optional<metrics::Grade> grade;
  // schema.kind of the judgment (of its batch entry, else of the event);
  // empty when absent.
  std::string_view kind;
  // The kind is in metrics.click_exclude_kinds: never a click.
  bool click_excluded = false;
  // The position the event says the doc was shown at (schema.position)
  // plus one, whatever schema.position_base (the join applies it): 0 when
  // absent. Only checked against the served list, and orders impressions.
  int32_t claimed_position = 0;
  // Of schema.impression_kind: the doc was shown at claimed_position; it
  // grades nothing, and ranks a list that came without `results`.
  bool impression = false;
  // With judges (judges.names): who labelled, schema.judge of its batch
  // entry, else of the event, else judges.default, as read (`judge_name`)
  // and as its place in judges.names (`judge`, 0 the most trusted). Without
  // judges: empty and -1.
  std::string_view judge_name = {};
  int32_t judge = -1;
};

// One judgment, or a batch of them, for one request (impression mode) or
// one query (qrels mode).
struct JudgmentEvent {
  std::string_view request_id;
  std::string_view query_id;
  int64_t timestamp_ms = 0;
  std::vector<Judgment> judgments;
};

// An event as read, before decoding: what a dead letter copies. Both views
// point into the reader's buffer (the Kafka message, the replay file) and
// are valid for the one call they are passed to. The key travels here, not
// in EventOrigin, because EventOrigin is copied and stored by the join
// (pending requests keep their events' origins) long after the message is
// gone; and not through a "current key" set on the sink beforehand, which
// a path that forgot to set it would leak into the next event's letter.
struct RawEvent {
  std::string_view payload;
  std::string_view key;  // The Kafka message key; empty in replay.
};

// Where an event came from, so the join can tell its source when the state
// it feeds is finalized (offset tracking) or dropped (rebalance).
struct EventOrigin {
  // 16 bytes (the flags in the padding after `source`), so that it passes
  // in two registers: at 24 bytes it went through the stack, and the
  // callee's 16-byte loads of the caller's fresh 8- and 4-byte stores
  // stalled (store forwarding: 4% of BM_PipelineEvents, perf annotate). The
  // constructor keeps the order of the fields' brace initializers
  // (`EventOrigin{source, offset}`) whatever the layout.
  constexpr EventOrigin(int32_t source = 0, int64_t offset = 0,
                        bool replayed = false, bool maybe_counted = false)
      : source(source),
        replayed(replayed),
        maybe_counted(maybe_counted),
        offset(offset) {}

  // The source's number, not a Kafka partition: the daemon numbers each
  // topic-partition it reads as a slot, 2 x partition + topic index (0 the
  // results topic, 1 the judgments topic), so that the two topics' equal
  // partition numbers stay distinct. Replay uses 0 (and the line number
  // as offset). partition() and topic_index() decode a slot.
  int32_t source;
  // Re-read after a restart or rebalance although a previous owner had
  // already reflected it (it lies below that owner's consumed position).
  // Such an event found late is skipped as replayed, not counted as late.
  bool replayed;
  // Replayed, and its previous owner did not stop cleanly: it may have
  // finalized this event's request after its last commit, so a request
  // finalized from it here may count twice (JoinCounters::reprocessed).
  bool maybe_counted;
  int64_t offset;

  // The slot encoding, defined here once.
  static constexpr int32_t SourceOf(int32_t topic_index, int32_t partition) {
    return partition * 2 + topic_index;
  }
  static constexpr int32_t TopicIndexOf(int32_t source) { return source % 2; }
  static constexpr int32_t PartitionOf(int32_t source) { return source / 2; }
  // The Kafka topic (0 results, 1 judgments) and partition of a slot.
  constexpr int32_t topic_index() const { return TopicIndexOf(source); }
  constexpr int32_t partition() const { return PartitionOf(source); }
};
static_assert(sizeof(EventOrigin) == 16);

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_DECODE_EVENTS_H_
