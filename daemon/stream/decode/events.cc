#include "daemon/stream/decode/events.h"

namespace rankwatch::stream {

std::string_view TopicName(Topic t) {
  switch (t) {
    case Topic::kResults:
      return "results";
    case Topic::kJudgments:
      return "judgments";
  }
  return "unknown";
}

std::string_view RejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kMalformedJson:
      return "malformed_json";
    case RejectReason::kTooLarge:
      return "too_large";
    case RejectReason::kMissingField:
      return "missing_field";
    case RejectReason::kWrongType:
      return "wrong_type";
    case RejectReason::kEmptyId:
      return "empty_id";
    case RejectReason::kIdTooLong:
      return "id_too_long";
    case RejectReason::kBadTimestamp:
      return "bad_timestamp";
    case RejectReason::kEmptyResults:
      return "empty_results";
    case RejectReason::kTooManyResults:
      return "too_many_results";
    case RejectReason::kDuplicateDoc:
      return "duplicate_doc";
    case RejectReason::kNonFiniteScore:
      return "non_finite_score";
    case RejectReason::kNonIntegerRelevance:
      return "non_integer_relevance";
    case RejectReason::kTooManyJudgments:
      return "too_many_judgments";
    case RejectReason::kFutureTimestamp:
      return "future_timestamp";
    case RejectReason::kPastTimestamp:
      return "past_timestamp";
    case RejectReason::kUnknownTeam:
      return "unknown_team";
    case RejectReason::kDuplicateKey:
      return "duplicate_key";
    case RejectReason::kUnknownJudge:
      return "unknown_judge";
  }
  return "unknown";
}

std::string_view CovariateOutcomeName(CovariateOutcome o) {
  switch (o) {
    case CovariateOutcome::kPresent:
      return "present";
    case CovariateOutcome::kAbsent:
      return "absent";
    case CovariateOutcome::kNull:
      return "null";
    case CovariateOutcome::kWrongType:
      return "wrong_type";
    case CovariateOutcome::kNotFinite:
      return "not_finite";
    case CovariateOutcome::kOutOfRange:
      return "out_of_range";
  }
  return "unknown";
}

}  // namespace rankwatch::stream
