#include "daemon/kafka/ingest_state.h"

#include <chrono>

#include "base/duration.h"

namespace rankwatch::kafka {

namespace {

std::string Ms(int64_t ms) {
  return FormatDuration(std::chrono::milliseconds(ms));
}

}  // namespace

std::string_view ReadyReasonName(ReadyReason reason) {
  switch (reason) {
    case ReadyReason::kReady:
      return "ready";
    case ReadyReason::kNotConsuming:
      return "not_consuming";
    case ReadyReason::kNotAssigned:
      return "not_assigned";
    case ReadyReason::kLoopStalled:
      return "loop_stalled";
    case ReadyReason::kBrokerUnreachable:
      return "broker_unreachable";
    case ReadyReason::kFetchStalled:
      return "fetch_stalled";
    case ReadyReason::kStateUnavailable:
      return "state_unavailable";
  }
  return "unknown";
}

ReadyReason IngestState::ready_reason(int64_t now_mono_ms) const {
  // Not ready either way; the broker says why.
  if ((!consuming || !assigned) && brokers_down.has_value()) {
    return ReadyReason::kBrokerUnreachable;
  }
  // Before consuming too: the changelog topic that cannot be prepared
  // (refused, wrong policy) is why it does not start.
  if (!state_problem.empty()) return ReadyReason::kStateUnavailable;
  if (!consuming) return ReadyReason::kNotConsuming;
  if (!assigned) return ReadyReason::kNotAssigned;
  if (last_poll_mono_ms != kUnwatched &&
      now_mono_ms - last_poll_mono_ms >= kStallMs) {
    return ReadyReason::kLoopStalled;
  }
  // The bound itself is still ready: "no fetch for longer than".
  if (stalest_fetch.has_value() &&
      now_mono_ms - stalest_fetch->progress_mono_ms > not_ready_after_ms) {
    return stalest_fetch->leader_up ? ReadyReason::kFetchStalled
                                    : ReadyReason::kBrokerUnreachable;
  }
  return ReadyReason::kReady;
}

void ReadinessBoard::Publish(const IngestState& state) {
  std::lock_guard<std::mutex> lock(mu_);
  inputs_.assigned = state.assigned;
  inputs_.consuming = state.consuming;
  inputs_.last_poll_mono_ms = state.last_poll_mono_ms;
  inputs_.not_ready_after_ms = state.not_ready_after_ms;
  inputs_.stalest_fetch = state.stalest_fetch;
  inputs_.brokers_down = state.brokers_down;
  inputs_.state_problem = state.state_problem;
}

ReadinessBoard::Readiness ReadinessBoard::At(int64_t now_mono_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  return {inputs_.ready(now_mono_ms), inputs_.ReadinessMessage(now_mono_ms)};
}

std::string IngestState::ReadinessMessage(int64_t now_mono_ms) const {
  const ReadyReason reason = ready_reason(now_mono_ms);
  if (reason == ReadyReason::kReady) return "ready";
  std::string out =
      "not ready (" + std::string(ReadyReasonName(reason)) + "): ";
  auto fetch_detail = [&] {
    const FetchLag& f = *stalest_fetch;
    return "no fetch for " + f.topic + "/" + std::to_string(f.partition) +
           " for " + Ms(now_mono_ms - f.progress_mono_ms) +
           " (kafka.not_ready_after " + Ms(not_ready_after_ms) + "): ";
  };
  switch (reason) {
    case ReadyReason::kReady:
      break;
    case ReadyReason::kStateUnavailable:
      return out + state_problem;
    case ReadyReason::kNotConsuming:
      return out +
             "not consuming (starting, loading the judgments table, or "
             "shut down)";
    case ReadyReason::kNotAssigned:
      return out +
             "no partitions assigned (joining the consumer group or "
             "rebalancing)";
    case ReadyReason::kLoopStalled:
      return out + "the consume loop has not polled for " +
             Ms(now_mono_ms - last_poll_mono_ms);
    case ReadyReason::kBrokerUnreachable:
      if (consuming && assigned) {
        return out + fetch_detail() + "its leader broker is unreachable";
      }
      return out +
             (brokers_down->reached_before
                  ? "lost every broker connection (bootstrap "
                  : "cannot reach any bootstrap broker (") +
             brokers_down->bootstrap + "): " + brokers_down->cause;
    case ReadyReason::kFetchStalled:
      return out + fetch_detail() + "its leader broker does not answer";
  }
  return out;
}

void FetchProgressTable::Track(int32_t slot, int64_t now_mono_ms) {
  slots_.try_emplace(slot, Entry{now_mono_ms, true});
}

void FetchProgressTable::Untrack(int32_t slot) { slots_.erase(slot); }

void FetchProgressTable::Progress(int32_t slot, int64_t at_mono_ms) {
  auto it = slots_.find(slot);
  if (it != slots_.end() && at_mono_ms > it->second.progress_mono_ms) {
    it->second.progress_mono_ms = at_mono_ms;
  }
}

void FetchProgressTable::SetLeaderUp(int32_t slot, bool up) {
  auto it = slots_.find(slot);
  if (it != slots_.end()) it->second.leader_up = up;
}

std::optional<FetchProgressTable::Stalest> FetchProgressTable::stalest() const {
  std::optional<Stalest> out;
  for (const auto& [slot, e] : slots_) {
    if (!out.has_value() || e.progress_mono_ms < out->progress_mono_ms) {
      out = Stalest{slot, e.progress_mono_ms, e.leader_up};
    }
  }
  return out;
}

}  // namespace rankwatch::kafka
