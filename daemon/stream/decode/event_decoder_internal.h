// Helpers shared by the files of EventDecoder (event_decoder.cc: set-up,
// the top level, ids and timestamps; event_decoder_lists.cc: the results,
// team, segment and judgment readers): rejections built only on the error
// path, and simdjson's on-demand aliases. Internal to rankwatch::stream.
#ifndef RANKWATCH_DAEMON_STREAM_DECODE_EVENT_DECODER_INTERNAL_H_
#define RANKWATCH_DAEMON_STREAM_DECODE_EVENT_DECODER_INTERNAL_H_

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "daemon/stream/decode/event_decoder.h"
#include "daemon/stream/decode/json_scalar.h"

// Returns the DecodeStatus of `expr` if it is a rejection.
#define RW_RETURN_IF_REJECTED(expr)          \
  do {                                       \
    DecodeStatus rw_status_ = expr;          \
    if (!rw_status_.ok()) return rw_status_; \
  } while (false)

namespace rankwatch::stream::decoder_internal {

using json_type = simdjson::ondemand::json_type;

inline DecodeStatus Reject(RejectReason reason, std::string detail) {
  return DecodeStatus::Reject(reason, std::move(detail));
}

inline DecodeStatus Malformed(simdjson::error_code error) {
  return Reject(RejectReason::kMalformedJson, simdjson::error_message(error));
}

// Rejects `value` for its type with `reason`, unless it is broken JSON.
inline DecodeStatus RejectType(simdjson::ondemand::value& value, json_type type,
                               RejectReason reason, std::string detail) {
  if (simdjson::error_code e = CheckScalar(value, type)) return Malformed(e);
  return Reject(reason, std::move(detail));
}

// The rejection for a reading rule's failed `result`: malformed_json for
// broken JSON, else `reason` with the detail that `detail()` formats (only
// here: the hot path builds no strings).
template <typename Detail>
DecodeStatus ScalarRejection(const ScalarResult& result, RejectReason reason,
                             const Detail& detail) {
  if (result.outcome == ScalarOutcome::kMalformed) {
    return Malformed(result.error);
  }
  return Reject(reason, detail());
}

// Forced inline: GCC kept it out of line, a call for every value read
// (1.9% of BM_PipelineEvents' samples in the call alone).
[[gnu::always_inline]] inline simdjson::error_code TypeOf(
    simdjson::ondemand::value& value, json_type* type) {
  return value.type().get(*type);
}

// Whether simdjson may read `payload` where it lies: the SIMDJSON_PADDING
// bytes past its end are on the page of its last byte, which is mapped, so
// reading them cannot fault (simdjson's "page trick", its doc/basics.md).
// Their content does not affect the parse (the copy's padding holds stale
// bytes too). Never under AddressSanitizer, which reports such reads. 4096
// is the smallest page of the targets; a larger page only widens the margin.
inline bool PaddingOnSamePage(std::string_view payload) {
#if defined(__SANITIZE_ADDRESS__)
  (void)payload;
  return false;
#else
  constexpr uintptr_t kPage = 4096;
  const uintptr_t last =
      reinterpret_cast<uintptr_t>(payload.data()) + payload.size() - 1;
  return !payload.empty() && last % kPage + simdjson::SIMDJSON_PADDING < kPage;
#endif
}

// ---- Reject details -------------------------------------------------------

inline std::string Quoted(std::string_view s) {
  std::string out = "'";
  out.append(s);
  out += '\'';
  return out;
}

}  // namespace rankwatch::stream::decoder_internal

#endif  // RANKWATCH_DAEMON_STREAM_DECODE_EVENT_DECODER_INTERNAL_H_
