// JudgeAgreement: how far the judges (judges.names) agree, live. For every
// pair of judges (first before second in judges.names), the pairs of
// grades of the items both graded (metrics::GradePairs, from which Cohen's
// kappa and Krippendorff's alpha follow), and the items only one of them
// graded.
//
// Impression mode: an item is a (request, doc) pair, a served doc of a
// finalized list (FinalizedRequest::judges), counted when the list is
// finalized: in event time, so live and replay count the same. The counts
// are kept per shard (input partition) and merged, checkpointed with the
// shard as the aggregates are (EncodeShard), restored by judge names.
//
// Qrels mode: an item is a (query, doc) pair of the judgments table, whose
// labels change as they arrive; QrelsJoin keeps those counts up to date
// (Join::judge_pairs) and the pipeline reads them there instead.
//
// Owned and driven by the pipeline's thread; not thread-safe.
#ifndef RANKWATCH_DAEMON_STREAM_JUDGES_JUDGE_AGREEMENT_H_
#define RANKWATCH_DAEMON_STREAM_JUDGES_JUDGE_AGREEMENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "base/status.h"
#include "daemon/stream/decode/checkpoint_limits.h"
#include "daemon/stream/join/join.h"
#include "metrics/agreement.h"

namespace rankwatch::stream {

class JudgeAgreement {
 public:
  // `bucket_ms` and `span_ms`: the time buckets of the windows
  // (aggregation.bucket and the longest of aggregation.windows); 0: no
  // windows, since start only.
  explicit JudgeAgreement(std::vector<std::string> judges,
                          int64_t bucket_ms = 0, int64_t span_ms = 0);
  JudgeAgreement(const JudgeAgreement&) = delete;
  JudgeAgreement& operator=(const JudgeAgreement&) = delete;

  // Counts the served docs of one finalized list (impression mode): per
  // rank, the grades of the judges that graded it, at event time
  // `time_ms` (FinalizedRequest::closed_ms: the windows file it there).
  void AddList(std::span<const JudgeGrades> judges, int32_t shard,
               int64_t time_ms = 0);

  // A shard's counts, since start and per time bucket, by judge names (a
  // pair whose judges are not both configured any more is dropped on
  // restore; buckets of another width are dropped, as the windows' are).
  // Nothing is written, and nothing need be read, without two judges:
  // Pipeline::EncodeShard then leaves the section out, so that a version
  // before judges reads the checkpoint. Reads the format before windows
  // (since start only) too.
  void EncodeShard(int32_t shard, ByteWriter* out) const;
  // A record beyond `limits` (bucket times) or kMaxGradeCells is refused.
  [[nodiscard]] Status DecodeShard(int32_t shard, ByteReader* in,
                                   const CheckpointLimits& limits = {});
  void DropShard(int32_t shard);
  // A reload's windows: a new bucket width drops the buckets (they cannot
  // be re-cut); a shorter span drops those it no longer reaches.
  void SetWindows(int64_t bucket_ms, int64_t span_ms);
  // The magic numbers that start EncodeShard's record: with buckets, and
  // the format before them.
  static constexpr uint32_t kMagic = 0x4a414732;        // "JAG2"
  static constexpr uint32_t kMagicTotals = 0x4a414731;  // "JAG1"

  // Distinct (x, y) grade pairs one pair of judges keeps, since start and
  // in each bucket: an item that would add a cell beyond is not counted
  // (refused_items()). Grades are integers from the events, unbounded; a
  // cell is a map node and 24 bytes of every checkpoint, per bucket. 1024
  // holds any pair of grades on scales of up to 32 points (the usual 0-3
  // or 0-4 scales fill 16 or 25); a stream beyond is not a grade scale.
  static constexpr size_t kMaxGradeCells = 1024;
  // Items AddList did not count for kMaxGradeCells, since start (a process
  // counter: kept when shards come and go).
  int64_t refused_items() const { return refused_items_; }

  const std::vector<std::string>& judges() const { return judges_; }
  // Per pair (PairIndex), merged over the shards held: since start, and
  // over the whole buckets in (now - window, now] (as WindowRing::Sum).
  std::vector<metrics::JudgePairCounts> Merged() const;
  std::vector<metrics::JudgePairCounts> MergedWindow(int64_t now_ms,
                                                     int64_t window_ms) const;

 private:
  struct Shard {
    std::vector<metrics::JudgePairCounts> total;  // Per pair.
    // Bucket index (event time / bucket_ms) -> per pair; at most the
    // span's buckets back from the newest.
    std::map<int64_t, std::vector<metrics::JudgePairCounts>> buckets;
    int64_t newest_bucket = INT64_MIN;
  };
  Shard& ShardAt(int32_t shard);
  // Drops the buckets of `s` older than the span reaches.
  void Prune(Shard* s) const;
  int64_t num_buckets() const;

  std::vector<std::string> judges_;
  int64_t bucket_ms_;
  int64_t span_ms_;
  // Indexed by shard; null for a shard never touched.
  std::vector<std::unique_ptr<Shard>> shards_;
  int64_t refused_items_ = 0;
};

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_JUDGES_JUDGE_AGREEMENT_H_
