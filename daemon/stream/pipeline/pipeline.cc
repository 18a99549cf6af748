#include "daemon/stream/pipeline/pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "base/saturating.h"
#include "daemon/stream/join/impression_join.h"
#include "daemon/stream/join/qrels_join.h"
#include "trec/qrels.h"

namespace rankwatch::stream {

namespace {

// The configured series, each keyed by what its values mean
// (SeriesSpec::state_key): the trec name, the metric definitions, and for
// click measures the kinds that are not clicks.
std::vector<SeriesSpec> KeyedSeries(const config::Config& config) {
  std::vector<SeriesSpec> series = BuildSeries(
      config.metrics.measures, config.metrics.cutoffs, config.schema.fields);
  const metrics::Definitions& d = config.metrics.definitions;
  const std::string definitions =
      "|l=" + std::to_string(d.relevance_threshold) +
      ",gain=" + std::string(metrics::GainName(d.gain)) + ",recall=" +
      std::string(metrics::RecallDenominatorName(d.recall_denominator)) +
      ",ap=" + std::string(metrics::ApDenominatorName(d.ap_denominator)) +
      ",zero=" + std::string(metrics::ZeroRelevantPolicyName(d.zero_relevant));
  std::string kinds = "|not_clicks=";
  for (const std::string& k : config.metrics.click_exclude_kinds) {
    kinds += k + ",";
  }
  for (SeriesSpec& s : series) {
    s.label = config::SeriesLabel(config, RefOf(s));
    if (s.field >= 0) continue;  // Its values are the events' own.
    s.state_key = s.trec_name + definitions;
    if (metrics::IsClickMeasure(s.measure)) s.state_key += kinds;
  }
  return series;
}

size_t TopicIndex(Topic t) { return static_cast<size_t>(t); }

// The windows' bucket width and the longest window, as the aggregator
// keeps them.
int64_t BucketMs(const config::AggregationConfig& a) {
  return a.bucket.count();
}
int64_t SpanMs(const config::AggregationConfig& a) {
  int64_t span = 0;
  for (const Duration& w : a.windows) span = std::max(span, w.count());
  return span;
}

// A configuration built in code (not loaded) may leave an experiment's
// primary series empty: the loader's default applies.
config::Config WithDefaultPrimary(config::Config config) {
  for (config::ExperimentConfig& e : config.experiments) {
    if (e.primary.empty()) e.primary = config::DefaultPrimary(config.metrics);
  }
  return config;
}

// An evaluator for `metrics`, computing the rank correlations only when a
// measure needs them (they cost a pass the others do not).
StatusOr<metrics::Evaluator> MakeEvaluator(
    const config::MetricsConfig& metrics) {
  StatusOr<metrics::Evaluator> evaluator =
      metrics::Evaluator::Create(metrics.cutoffs, metrics.definitions);
  if (!evaluator.ok()) return evaluator;
  evaluator->set_rank_correlations(
      std::any_of(metrics.measures.begin(), metrics.measures.end(),
                  metrics::IsRankCorrelationMeasure));
  return evaluator;
}

}  // namespace

StatusOr<std::unique_ptr<Pipeline>> Pipeline::Create(
    const config::Config& config, const Clock* clock, ReleaseListener* releases,
    DeadLetterSink* dead_letters) {
  StatusOr<metrics::Evaluator> evaluator = MakeEvaluator(config.metrics);
  if (!evaluator.ok()) return evaluator.status();
  std::unique_ptr<Pipeline> p(new Pipeline(config, clock, *std::move(evaluator),
                                           releases, dead_letters));
  JoinListener* listener = p.get();  // A private base: converted here.
  if (config.join.mode == config::JoinMode::kQrels) {
    auto join = std::make_unique<QrelsJoin>(config.join, clock, listener);
    join->SetJudges(config.judges);  // Before the preload: its judge.
    p->qrels_join_ = join.get();
    if (!config.join.qrels_file.empty()) {
      StatusOr<trec::Qrels> qrels = trec::Qrels::Load(config.join.qrels_file);
      if (!qrels.ok()) return qrels.status();
      RW_RETURN_IF_ERROR(join->Preload(*qrels));
    }
    p->join_ = std::move(join);
  } else {
    p->join_ = std::make_unique<ImpressionJoin>(
        config.join, clock, listener,
        config.metrics.definitions.relevance_threshold,
        config.schema.position_base);
    p->join_->SetJudges(config.judges);
    if (config.judges.names.size() >= 2) {
      p->agreement_ = std::make_unique<JudgeAgreement>(
          config.judges.names, BucketMs(config.aggregation),
          SpanMs(config.aggregation));
    }
  }
  if (!config.judges.names.empty()) {
    p->judge_monitor_ = std::make_unique<JudgeMonitor>(
        p->config_, p->aggregator_.series(), p->evaluator_);
  }
  // What each field value of a pending request means, for checkpoints.
  std::vector<std::string> field_keys;
  for (const SeriesSpec& s : p->aggregator_.series()) {
    if (s.field >= 0) field_keys.push_back(s.state_key);
  }
  p->join_->SetFieldKeys(std::move(field_keys));
  return p;
}

Pipeline::Pipeline(const config::Config& config, const Clock* clock,
                   metrics::Evaluator evaluator, ReleaseListener* releases,
                   DeadLetterSink* dead_letters)
    : config_(WithDefaultPrimary(config)),
      clock_(clock),
      decoder_(EventDecoder::ForConfig(config, clock)),
      evaluator_(std::move(evaluator)),
      aggregator_(config.aggregation, KeyedSeries(config)),
      experiments_(std::make_unique<ExperimentMonitor>(
          &config_.experiments, config.statistics, &aggregator_,
          !config.schema.unit.empty(), config.schema.covariate)),
      decisions_(std::make_unique<DecisionBoard>(
          &config_.experiments, config.statistics, config.schema.fields)),
      interleaving_(std::make_unique<InterleavingMonitor>(
          &config_.interleaving, config.aggregation, config.statistics)),
      movers_(std::make_unique<QueryMovers>(&config_.experiments, &aggregator_,
                                            config.statistics.tracked_queries,
                                            config.statistics.level)),
      releases_(releases),
      dead_letters_(dead_letters),
      reject_log_limit_(config.logging.max_rejects_logged_per_second, clock) {
  // An event is handled within OnPayload, while its payload lives.
  decoder_->set_read_in_place(true);
  values_.resize(aggregator_.series().size());
  aggregator_.ReserveVariants(config::NamedVariants(config_));
}

Pipeline::~Pipeline() = default;

bool Pipeline::OnPayload(Topic topic, const RawEvent& event, EventOrigin origin,
                         std::optional<int64_t> fallback_timestamp_ms) {
  ++state_version_;
  // Read as two words: the caller stores them one by one, and a copy of the
  // view in one 16-byte load would stall on those two stores.
  const std::string_view payload(event.payload.data(), event.payload.size());
  if (!event.key.empty()) join_->Prefetch(origin.partition(), event.key);
  if (topic == Topic::kResults) {
    DecodeStatus s = decoder_->DecodeResults(payload, fallback_timestamp_ms,
                                             &results_scratch_);
    if (!s.ok()) {
      OnRejected(topic, s, event, origin);
      return false;
    }
    return OnResults(results_scratch_, origin);
  }
  DecodeStatus s = decoder_->DecodeJudgments(payload, fallback_timestamp_ms,
                                             &judgments_scratch_);
  if (!s.ok()) {
    OnRejected(topic, s, event, origin);
    return false;
  }
  if (s.ignored) {
    OnIgnored(topic);
    return false;
  }
  return OnJudgments(judgments_scratch_, origin);
}

bool Pipeline::OnResults(const ResultsEvent& event, EventOrigin origin) {
  ++state_version_;
  ++counters_.consumed[TopicIndex(Topic::kResults)];
  int64_t& last = counters_.last_event_ms[TopicIndex(Topic::kResults)];
  last = std::max(last, event.timestamp_ms);
  if (event.query_id.empty()) ++counters_.without_query_id;
  int64_t& first = counters_.first_results_ms;
  if (first == INT64_MIN || event.timestamp_ms < first) {
    first = event.timestamp_ms;
  }
  if (!config_.schema.covariate.empty()) {
    ++counters_.covariate[static_cast<size_t>(event.covariate_outcome)];
  }
  for (size_t i = 0; i < config_.schema.fields.size(); ++i) {
    ++counters_.fields[i][static_cast<size_t>(event.field_outcomes[i])];
  }
  const uint32_t group =
      aggregator_.ResolveGroup(event.variant, event.segment_values);
  return join_->OnResults(event, group, origin);
}

bool Pipeline::OnJudgments(const JudgmentEvent& event, EventOrigin origin) {
  ++state_version_;
  ++counters_.consumed[TopicIndex(Topic::kJudgments)];
  int64_t& last = counters_.last_event_ms[TopicIndex(Topic::kJudgments)];
  last = std::max(last, event.timestamp_ms);
  return join_->OnJudgments(event, origin);
}

void Pipeline::OnIgnored(Topic topic) {
  ++state_version_;
  ++counters_.consumed[TopicIndex(topic)];
  ++counters_.ignored[TopicIndex(topic)];
}

void Pipeline::LogSuppressedRejections() {
  const int64_t suppressed = reject_log_limit_.suppressed();
  // 0 logs none: not even how many.
  if (suppressed == reported_suppressed_ ||
      config_.logging.max_rejects_logged_per_second == 0) {
    return;
  }
  spdlog::warn(
      "{} more rejected events not logged "
      "(logging.max_rejects_logged_per_second {}; each is counted by reason)",
      suppressed - reported_suppressed_,
      config_.logging.max_rejects_logged_per_second);
  reported_suppressed_ = suppressed;
}

void Pipeline::OnRejected(Topic topic, const DecodeStatus& status,
                          RawEvent event, EventOrigin origin,
                          std::string_view location) {
  ++state_version_;
  ++counters_.consumed[TopicIndex(topic)];
  const RejectReason reason = *status.reason;
  ++counters_.rejected[TopicIndex(topic)][static_cast<size_t>(reason)];
  if (reject_log_limit_.Allow()) {
    LogSuppressedRejections();
    if (!location.empty()) {
      spdlog::warn("rejected {} event ({}): {}: {}", TopicName(topic), location,
                   RejectReasonName(reason), status.detail);
    } else {
      // The topic and its Kafka partition, not the slot (origin.source).
      spdlog::warn("rejected {} event (partition {}, offset {}): {}: {}",
                   TopicName(topic), origin.partition(), origin.offset,
                   RejectReasonName(reason), status.detail);
    }
  }
  if (dead_letters_ != nullptr) {
    dead_letters_->Write(topic, reason, status.detail, event, origin);
  }
}

bool Pipeline::IsInterleavingOf(int32_t experiment, uint32_t group) const {
  // A request pending across a reload carries the index of the old
  // configuration's list: out of range, or another experiment's variant,
  // it is not counted.
  if (experiment < 0 ||
      static_cast<size_t>(experiment) >= config_.interleaving.size()) {
    return false;
  }
  const std::string& variant = aggregator_.variant(group);
  return variant == Aggregator::kOther ||
         variant ==
             config_.interleaving[static_cast<size_t>(experiment)].variant;
}

void Pipeline::OnFinalized(const FinalizedRequest& request) {
  finalized_since_look_ = true;
  const int32_t shard = request.shard;
  if (request.first_click_delay_ms >= 0) {
    aggregator_.AddFirstClick(request.group, request.first_click_delay_ms,
                              shard);
  }
  if (IsInterleavingOf(request.interleaving, request.group)) {
    interleaving_->AddImpression(
        request.interleaving, request.closed_ms, request.teams, request.clicks,
        config_.metrics.definitions.relevance_threshold, shard);
  }
  if (agreement_) agreement_->AddList(request.judges, shard, request.closed_ms);
  if (judge_monitor_) {
    judge_monitor_->Add(request, aggregator_.variant(request.group));
  }
  evaluator_.Evaluate(request.ranked, request.judged, &scores_);
  // Some judgments are not clicks: the click measures read their own
  // scores. They depend on the clicked ranks only, not on R.
  const bool own_click_scores =
      !request.clicks.empty() && request.clicks.data() != request.ranked.data();
  if (own_click_scores) {
    evaluator_.Evaluate(request.clicks, request.clicks, &click_scores_);
  }
  const bool without_relevant = scores_.num_rel == 0;
  if (without_relevant) ++counters_.without_relevant;
  if (without_relevant && config_.metrics.definitions.zero_relevant ==
                              metrics::ZeroRelevantPolicy::kSkip) {
    aggregator_.Add(request.group, request.closed_ms, {}, true, shard);
    experiments_->Add(request.group, request.unit_hash, {}, shard,
                      std::numeric_limits<double>::quiet_NaN(),
                      request.served_ms);
    return;
  }
  const std::vector<SeriesSpec>& series = aggregator_.series();
  for (size_t s = 0; s < series.size(); ++s) {
    if (series[s].field >= 0) {
      values_[s] = request.fields[static_cast<size_t>(series[s].field)];
      continue;
    }
    const bool click =
        own_click_scores && metrics::IsClickMeasure(series[s].measure);
    values_[s] =
        metrics::MeasureValue(click ? click_scores_ : scores_,
                              series[s].measure, series[s].cutoff_index);
  }
  ++counters_.scored;
  aggregator_.Add(request.group, request.closed_ms, values_, without_relevant,
                  shard);
  experiments_->Add(request.group, request.unit_hash, values_, shard,
                    request.covariate, request.served_ms);
  movers_->Add(request.group, request.query_id, values_, shard);
}

void Pipeline::OnReleased(EventOrigin origin) {
  if (releases_ != nullptr) releases_->OnReleased(origin);
}

void Pipeline::AdvanceWallClock() {
  ++state_version_;
  join_->AdvanceWallClock();
  // Looks walk every group and bucket: once per interval, not per call.
  const int64_t now = clock_->MonotonicMillis();
  if (last_look_ms_ != INT64_MIN &&
      now - last_look_ms_ < kExperimentLookIntervalMs) {
    return;
  }
  last_look_ms_ = now;
  Look();
}

void Pipeline::RefreshLook() {
  if (!finalized_since_look_) return;
  last_look_ms_ = clock_->MonotonicMillis();
  Look();
}

void Pipeline::Look() {
  ++state_version_;
  finalized_since_look_ = false;
  experiments_->Update(window_now_ms());
  decisions_->Update(*experiments_, aggregator_.series(), window_now_ms());
  interleaving_->Update(window_now_ms());
}

void Pipeline::FinishAll() {
  ++state_version_;
  join_->FinishAll();
  Look();
}

bool Pipeline::RestoreWatermark(int32_t source, int64_t watermark_ms) {
  ++state_version_;
  const int64_t limit =
      SatAdd(clock_->NowMillis(), config_.events.max_future_skew.count());
  if (watermark_ms > limit) {
    spdlog::warn(
        "ignoring the committed watermark {} ms: it lies beyond the clock "
        "plus events.max_future_skew (a far-future event time moved it); "
        "re-read events are joined afresh",
        watermark_ms);
    return false;
  }
  join_->RestoreWatermark(source, watermark_ms);
  return true;
}

void Pipeline::DropPartitions(std::span<const int32_t> partitions) {
  ++state_version_;
  join_->DropPartitions(partitions);
}

namespace {

constexpr uint32_t kCheckpointMagic = 0x4b435752;  // "RWCK"

}  // namespace

void Pipeline::AggregatorGroups::Write(uint32_t group, ByteWriter* out) const {
  out->String(aggregator_->variant(group));
  const std::vector<std::string>& segments = aggregator_->segment_values(group);
  out->Varint(segments.size());
  for (const std::string& v : segments) out->String(v);
}

uint32_t Pipeline::AggregatorGroups::Read(ByteReader* in) const {
  const size_t max_length =
      limits_ == nullptr ? SIZE_MAX : limits_->max_id_length;
  const std::string_view variant = in->Text(max_length, "a variant label");
  std::array<std::string_view, 16> segments;
  const uint64_t n = in->Count(1);
  if (n > segments.size()) in->Fail("more segment labels than supported");
  for (uint64_t i = 0; i < n && in->ok(); ++i) {
    segments[i] = in->Text(max_length, "a segment label");
  }
  if (!in->ok()) return 0;
  if (staged_ == nullptr) {
    return aggregator_->ResolveGroup(variant, std::span(segments.data(), n));
  }
  staged_->push_back(StagedLabels{
      std::string(variant),
      std::vector<std::string>(segments.begin(),
                               segments.begin() + static_cast<ptrdiff_t>(n))});
  return kStagedGroup + static_cast<uint32_t>(staged_->size() - 1);
}

void Pipeline::EncodeShard(int32_t shard, std::string* out) const {
  ByteWriter w(out);
  w.Fixed32(kCheckpointMagic);
  w.Fixed32(kCheckpointVersion);
  const AggregatorGroups groups(const_cast<Aggregator*>(&aggregator_));
  aggregator_.EncodeShard(shard, &w);
  join_->EncodeShard(shard, groups, &w);
  EncodeShardSections(shard, &w);
}

void Pipeline::EncodeShardSections(int32_t shard, ByteWriter* w,
                                   bool changes) const {
  experiments_->EncodeShard(shard, w);
  if (changes) {
    interleaving_->EncodeShardChanges(shard, w);
  } else {
    interleaving_->EncodeShard(shard, w);
  }
  movers_->EncodeShard(shard, w);
  // Only with judges, so that a version before them reads the record;
  // each section starts with its own magic number.
  if (agreement_) agreement_->EncodeShard(shard, w);
  if (judge_monitor_) judge_monitor_->EncodeShard(shard, w);
}

Status Pipeline::DecodeJudgeSections(
    int32_t shard, ByteReader* in, const CheckpointLimits& limits,
    Aggregator::StagedShard* judge_aggregates) {
  // The sections after the movers, each optional (written only with the
  // judges they need), told apart by their magic numbers. A section this
  // configuration has no use for (a judge fewer than when it was written)
  // is read into a throwaway monitor that keeps nothing.
  while (in->ok() && in->remaining() >= 4) {
    ByteReader peek = *in;
    const uint32_t magic = peek.Fixed32();
    Status status;
    if (magic == JudgeAgreement::kMagic ||
        magic == JudgeAgreement::kMagicTotals) {
      if (agreement_) {
        status = agreement_->DecodeShard(shard, in, limits);
      } else {
        status = JudgeAgreement({}).DecodeShard(shard, in, limits);
      }
    } else if (magic == JudgeMonitor::kMagic && judge_monitor_) {
      status = judge_monitor_->StageShard(shard, in, limits, judge_aggregates);
    } else if (magic == JudgeMonitor::kMagic) {
      config::Config none = config_;
      none.judges = {};
      Aggregator::StagedShard unused;
      status = JudgeMonitor(none, {}, evaluator_)
                   .StageShard(shard, in, limits, &unused);
    } else {
      break;  // Not a section: the caller reports the bytes left.
    }
    RW_RETURN_IF_ERROR(status);
  }
  return Status::Ok();
}

Status Pipeline::DecodeSections(int32_t shard, ByteReader* in,
                                const CheckpointLimits& limits,
                                StagedRestore* staged, RecordKind kind) {
  const AggregatorGroups groups(&aggregator_, &staged->labels, &limits);
  Status status =
      kind == RecordKind::kDelta
          ? aggregator_.StageShardChanges(shard, in, limits,
                                          &staged->aggregates)
          : aggregator_.StageShard(shard, in, limits, &staged->aggregates);
  if (status.ok()) {
    status = kind == RecordKind::kWhole
                 ? join_->DecodeShard(shard, groups, in, limits)
                 : join_->ApplyShardDelta(shard, groups, in, limits);
  }
  if (status.ok()) status = experiments_->DecodeShard(shard, in, limits);
  if (status.ok()) status = interleaving_->DecodeShard(shard, in, limits);
  if (status.ok()) status = movers_->DecodeShard(shard, in, limits);
  // A record written without judges has no judge sections.
  if (status.ok()) {
    status = DecodeJudgeSections(shard, in, limits, &staged->judge_aggregates);
  }
  if (status.ok() && !in->at_end()) {
    status = Status::InvalidArgument(std::to_string(in->remaining()) +
                                     " bytes after the checkpoint's end");
  }
  return status;
}

Status Pipeline::DecodeShard(int32_t shard, std::string_view record) {
  ++state_version_;
  ByteReader in(record);
  if (in.Fixed32() != kCheckpointMagic) {
    return Status::InvalidArgument("not a rankwatch checkpoint");
  }
  const uint32_t version = in.Fixed32();
  if (version != kCheckpointVersion) {
    return Status::InvalidArgument(
        "checkpoint format version " + std::to_string(version) +
        ", this rankwatch reads version " + std::to_string(kCheckpointVersion));
  }
  DropShard(shard);
  return RestoreSections(shard, &in, RecordKind::kWhole);
}

Status Pipeline::RestoreSections(int32_t shard, ByteReader* in,
                                 RecordKind kind) {
  // Bounded as live events are: the changelog is input like any other.
  const CheckpointLimits limits =
      CheckpointLimits::Of(config_, clock_->NowMillis());
  StagedRestore staged;
  Status status = DecodeSections(shard, in, limits, &staged, kind);
  // Every section decoded: only now are groups created (in the order the
  // record names them, as a restore always did).
  if (status.ok() && kind == RecordKind::kDelta) {
    status = aggregator_.CommitShardChanges(std::move(staged.aggregates));
  } else if (status.ok()) {
    aggregator_.CommitShard(std::move(staged.aggregates));
  }
  if (!status.ok()) {
    DropShard(shard);
    return status;
  }
  std::vector<uint32_t> ids;
  ids.reserve(staged.labels.size());
  std::vector<std::string_view> segments;
  for (const StagedLabels& l : staged.labels) {
    segments.assign(l.segments.begin(), l.segments.end());
    ids.push_back(aggregator_.ResolveGroup(l.variant, segments));
  }
  join_->ResolveStagedGroups(shard, ids);
  if (judge_monitor_ && staged.judge_aggregates.shard >= 0) {
    judge_monitor_->CommitShard(std::move(staged.judge_aggregates));
  }
  // The restored figures show at once.
  Look();
  return Status::Ok();
}

void Pipeline::DropShard(int32_t shard) {
  join_->DropShard(shard);
  DropShardSections(shard);
}

void Pipeline::DropShardSections(int32_t shard, bool keep_windows) {
  ++state_version_;
  if (!keep_windows) aggregator_.DropShard(shard);
  experiments_->DropShard(shard);
  if (!keep_windows) interleaving_->DropShard(shard);
  movers_->DropShard(shard);
  if (agreement_) agreement_->DropShard(shard);
  if (judge_monitor_) judge_monitor_->DropShard(shard);
}

std::vector<metrics::JudgePairCounts> Pipeline::judge_agreement() const {
  if (qrels_join_ != nullptr) return qrels_join_->judge_pairs();
  return agreement_ ? agreement_->Merged()
                    : std::vector<metrics::JudgePairCounts>{};
}

std::vector<metrics::JudgePairCounts> Pipeline::judge_agreement(
    int64_t window_ms) const {
  if (!agreement_) return {};
  return agreement_->MergedWindow(window_now_ms(), window_ms);
}

bool Pipeline::tracks_clicks() const {
  const config::Config& c = config_;
  return c.join.mode == config::JoinMode::kImpression &&
         (!c.interleaving.empty() ||
          std::any_of(c.metrics.measures.begin(), c.metrics.measures.end(),
                      metrics::IsClickMeasure));
}

int64_t Pipeline::window_now_ms() const {
  return std::max(join_->watermark_ms(), aggregator_.newest_time_ms());
}

std::vector<std::string> Pipeline::FixedKeysChanged(
    const config::Config& running, const config::Config& next) {
  return config::FixedKeysChanged(running, next, config::KeyOwner::kPipeline);
}

Status Pipeline::Reconfigure(const config::Config& next) {
  ++state_version_;
  const std::vector<std::string> fixed = FixedKeysChanged(config_, next);
  if (!fixed.empty()) {
    std::string keys;
    for (const std::string& k : fixed) keys += (keys.empty() ? "" : ", ") + k;
    return Status::InvalidArgument("cannot change while running: " + keys);
  }
  StatusOr<metrics::Evaluator> evaluator = MakeEvaluator(next.metrics);
  if (!evaluator.ok()) return evaluator.status();

  // The series: the same measure at the same cutoff (or the same field)
  // keeps its values, unless what the values mean changed.
  const std::vector<SeriesSpec> old_series = aggregator_.series();
  std::vector<SeriesSpec> series = KeyedSeries(next);
  const bool same_click_kinds =
      config_.metrics.click_exclude_kinds == next.metrics.click_exclude_kinds;
  std::vector<int> from(series.size(), -1);
  for (size_t s = 0; s < series.size(); ++s) {
    // The state key says what the values mean (the measure and cutoff with
    // the metric definitions, a field's name, path and direction); the
    // kinds that are not clicks are compared as a list, not as their
    // joined text.
    if (!same_click_kinds && series[s].field < 0 &&
        metrics::IsClickMeasure(series[s].measure)) {
      continue;
    }
    for (size_t o = 0; o < old_series.size(); ++o) {
      if (old_series[o].state_key == series[s].state_key) {
        from[s] = static_cast<int>(o);
      }
    }
  }
  const bool same_statistics =
      config::SameTests(config_.statistics, next.statistics);

  // The monitors point into config_: the old ones read the old lists
  // (moved, so their elements stay where they were) while the new ones
  // take over their state.
  const config::Config previous = std::move(config_);
  config_ = WithDefaultPrimary(next);
  std::unique_ptr<ExperimentMonitor> old_experiments = std::move(experiments_);
  std::unique_ptr<InterleavingMonitor> old_interleaving =
      std::move(interleaving_);
  evaluator_ = *std::move(evaluator);
  // The query movers carry over as a checkpoint would (series by what they
  // mean, arms by variant), written before the series change.
  std::vector<std::pair<int32_t, std::string>> movers;
  for (int32_t shard : movers_->HeldShards()) {
    std::string record;
    ByteWriter w(&record);
    movers_->EncodeShard(shard, &w);
    movers.emplace_back(shard, std::move(record));
  }
  aggregator_.Reconfigure(config_.aggregation, std::move(series), from);
  aggregator_.ReserveVariants(config::NamedVariants(config_));
  values_.assign(aggregator_.series().size(), 0.0);
  if (judge_monitor_) {
    judge_monitor_->Reconfigure(config_, aggregator_.series(), evaluator_);
  }
  if (agreement_) {
    agreement_->SetWindows(BucketMs(config_.aggregation),
                           SpanMs(config_.aggregation));
  }
  experiments_ = std::make_unique<ExperimentMonitor>(
      &config_.experiments, config_.statistics, &aggregator_,
      !config_.schema.unit.empty(), config_.schema.covariate);
  experiments_->AdoptState(*old_experiments, old_series, same_statistics);
  std::unique_ptr<DecisionBoard> old_decisions = std::move(decisions_);
  decisions_ = std::make_unique<DecisionBoard>(
      &config_.experiments, config_.statistics, config_.schema.fields);
  decisions_->AdoptState(*old_decisions);
  interleaving_ = std::make_unique<InterleavingMonitor>(
      &config_.interleaving, config_.aggregation, config_.statistics);
  interleaving_->AdoptState(*old_interleaving, same_statistics);
  movers_ = std::make_unique<QueryMovers>(&config_.experiments, &aggregator_,
                                          config_.statistics.tracked_queries,
                                          config_.statistics.level);
  for (const auto& [shard, record] : movers) {
    ByteReader r(record);
    (void)movers_->DecodeShard(shard, &r);  // Its own fresh record.
  }
  old_experiments.reset();
  old_interleaving.reset();

  decoder_.reset();
  decoder_.emplace(EventDecoder::ForConfig(config_, clock_));
  decoder_->set_read_in_place(true);
  join_->SetLimits(config_.join);
  reject_log_limit_.set_per_second(
      config_.logging.max_rejects_logged_per_second);
  // The gauges of the monitors show the new configuration at once.
  Look();
  return Status::Ok();
}

}  // namespace rankwatch::stream
