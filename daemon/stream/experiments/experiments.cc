#include "daemon/stream/experiments/experiments.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/random.h"
#include "metrics/clustered.h"
#include "metrics/measures.h"
#include "metrics/multiple_testing.h"
#include "metrics/running_stats.h"

namespace rankwatch::stream {

namespace {

std::vector<std::string> VariantsOf(const config::ExperimentConfig& e) {
  std::vector<std::string> v = {e.baseline};
  v.insert(v.end(), e.treatments.begin(), e.treatments.end());
  return v;
}

// Normalized shares of the configured weights (equal when none are set).
std::vector<double> SharesOf(const config::ExperimentConfig& e) {
  const size_t n = e.treatments.size() + 1;
  std::vector<double> shares(n, 1.0 / static_cast<double>(n));
  if (e.split.size() != n) return shares;
  double total = 0;
  for (double w : e.split) total += w;
  for (size_t i = 0; i < n; ++i) shares[i] = e.split[i] / total;
  return shares;
}

bool IsPrimary(const config::ExperimentConfig& e, const SeriesSpec& s) {
  const config::SeriesRef ref = RefOf(s);
  return std::find(e.primary.begin(), e.primary.end(), ref) != e.primary.end();
}

// The key of a unit in one experiment's count: units are counted once per
// experiment, and one table serves every experiment.
uint64_t ExperimentUnitKey(uint64_t unit_hash, size_t experiment) {
  uint64_t state = unit_hash + 0xD1B54A32D192ED03ULL * (experiment + 1);
  return SplitMix64(&state);
}

}  // namespace

std::string_view VerdictStateName(VerdictState s) {
  switch (s) {
    case VerdictState::kNoData:
      return "no_data";
    case VerdictState::kInconclusive:
      return "inconclusive";
    case VerdictState::kBetter:
      return "better";
    case VerdictState::kWorse:
      return "worse";
    case VerdictState::kSampleRatioMismatch:
      return "sample_ratio_mismatch";
  }
  return "?";
}

ExperimentMonitor::ExperimentMonitor(
    const std::vector<config::ExperimentConfig>* experiments,
    const config::StatisticsConfig& statistics, const Aggregator* aggregator,
    bool units, std::string covariate)
    : experiments_(experiments),
      aggregator_(aggregator),
      level_(statistics.level),
      srm_level_(statistics.srm_level),
      units_(units),
      num_buckets_(statistics.unit_buckets),
      covariate_(std::move(covariate)),
      units_seen_(units ? statistics.max_tracked_units : 0),
      max_units_(units ? statistics.max_tracked_units : 0) {
  metrics::SequentialOptions options;
  options.level = statistics.level;
  options.mixing_stddev = statistics.mixture_sd;
  metrics::SequentialOptions adjusted_options = options;
  adjusted_options.min_count = kAdjustedWarmUp;
  const std::vector<SeriesSpec>& series = aggregator_->series();
  // A window cuts units' histories: with units, window "all" only.
  const int num_windows =
      units_ ? 0 : static_cast<int>(aggregator_->windows_ms().size());
  for (size_t x = 0; x < experiments->size(); ++x) {
    const config::ExperimentConfig& experiment = (*experiments)[x];
    for (const std::string& treatment : experiment.treatments) {
      for (size_t s = 0; s < series.size(); ++s) {
        for (int w = -1; w < num_windows; ++w) {
          Comparison c;
          c.experiment = &experiment;
          c.experiment_index = x;
          c.treatment = treatment;
          c.series = s;
          c.window = w;
          c.quality = series[s].quality;
          c.primary = IsPrimary(experiment, series[s]);
          c.has_sequential = w == -1;
          // A field has its own units: its own mixing distribution.
          metrics::SequentialOptions own = options;
          metrics::SequentialOptions own_adjusted = adjusted_options;
          if (series[s].mixture_sd > 0) {
            own.mixing_stddev = own_adjusted.mixing_stddev =
                series[s].mixture_sd;
          }
          c.sequential = metrics::SequentialTest(own);
          c.has_adjusted = w == -1 && !covariate_.empty();
          c.adjusted.sequential = metrics::SequentialTest(own_adjusted);
          comparisons_.push_back(std::move(c));
        }
      }
    }
    SrmState srm;
    srm.variants = VariantsOf(experiment);
    srm.shares = SharesOf(experiment);
    srm.counts.assign(srm.variants.size(), 0);
    srm.sequential = metrics::SequentialSrmTest(srm.shares);
    srm_.push_back(std::move(srm));
    const size_t buckets = static_cast<size_t>(num_buckets_);
    for (size_t i = 0; i < srm_.back().variants.size(); ++i) {
      const std::string& variant = srm_.back().variants[i];
      auto it = std::find(variants_.begin(), variants_.end(), variant);
      if (it == variants_.end()) {
        variants_.push_back(variant);
        memberships_.emplace_back();
        first_list_ms_.push_back(kNoEventTime);
        if (units_) {
          ArmBuckets arm;
          arm.variant = variant;
          arm.counts.assign(buckets, 0);
          arm.sums.assign(series.size() * buckets, 0);
          arm.series_counts.assign(series.size() * buckets, 0);
          arms_.push_back(std::move(arm));
        }
        if (!covariate_.empty()) {
          CovariateArm arm;
          arm.variant = variant;
          arm.moments.assign(series.size(), metrics::CovariateMoments{});
          if (units_) {
            arm.y_sums.assign(series.size() * buckets, 0);
            arm.x_sums.assign(series.size() * buckets, 0);
            arm.counts.assign(series.size() * buckets, 0);
          }
          cov_arms_.push_back(std::move(arm));
        }
        it = variants_.end() - 1;
      }
      memberships_[static_cast<size_t>(it - variants_.begin())].push_back(
          {x, static_cast<uint8_t>(i)});
    }
  }
  flow_arms_ = arms_;  // Zero, the same shape.
  flow_cov_arms_ = cov_arms_;
}

namespace {

bool SameExperiment(const config::ExperimentConfig& a,
                    const config::ExperimentConfig& b) {
  return a.name == b.name && a.baseline == b.baseline &&
         a.treatments == b.treatments && a.split == b.split;
}

}  // namespace

void RecordVerdictChange(std::vector<VerdictChange>* changes,
                         const VerdictChange& change) {
  if (changes->size() >= kMaxVerdictChanges) changes->erase(changes->begin());
  changes->push_back(change);
}

int64_t ExperimentMonitor::FirstListMs(size_t experiment) const {
  int64_t first = kNoEventTime;
  for (size_t a = 0; a < variants_.size(); ++a) {
    for (const Membership& m : memberships_[a]) {
      if (m.experiment == experiment) {
        first = std::min(first, first_list_ms_[a]);
      }
    }
  }
  return first;
}

void ExperimentMonitor::AdoptState(
    const ExperimentMonitor& previous,
    const std::vector<SeriesSpec>& previous_series, bool same_statistics) {
  looks_ = previous.looks_;
  for (size_t shard = 0; shard < previous.shard_first_.size(); ++shard) {
    const std::vector<int64_t>& was = previous.shard_first_[shard];
    if (was.empty()) continue;
    std::vector<int64_t> first(variants_.size(), kNoEventTime);
    for (size_t a = 0; a < variants_.size(); ++a) {
      for (size_t b = 0; b < previous.variants_.size(); ++b) {
        if (previous.variants_[b] == variants_[a]) first[a] = was[b];
      }
    }
    SetShardFirstLists(shard, std::move(first));
  }
  RebuildFirstLists();
  if (units_ || previous.units_ || !same_statistics) return;
  const std::vector<SeriesSpec>& series = aggregator_->series();
  const bool same_covariate =
      !covariate_.empty() && covariate_ == previous.covariate_;
  if (same_covariate) AdoptCovariate(previous, previous_series);
  for (size_t x = 0; x < experiments_->size(); ++x) {
    for (size_t y = 0; y < previous.experiments_->size(); ++y) {
      if (SameExperiment((*experiments_)[x], (*previous.experiments_)[y])) {
        srm_[x] = previous.srm_[y];
      }
    }
  }
  for (Comparison& c : comparisons_) {
    if (!c.has_sequential) continue;
    for (const Comparison& old : previous.comparisons_) {
      if (!old.has_sequential || old.treatment != c.treatment ||
          !SameExperiment(*old.experiment, *c.experiment) ||
          RefOf(previous_series[old.series]) != RefOf(series[c.series])) {
        continue;
      }
      c.sequential = old.sequential;
      c.look = old.look;
      c.verdict = old.verdict;
      c.state = old.state;
      c.changes = old.changes;
      c.effect_changed_ms = old.effect_changed_ms;
      if (same_covariate && c.has_adjusted && old.has_adjusted &&
          previous_series[old.series].state_key == series[c.series].state_key) {
        c.adjusted.sequential = old.adjusted.sequential;
        c.adjusted.look = old.adjusted.look;
      }
      break;
    }
  }
}

int32_t ExperimentMonitor::ArmOf(uint32_t group) {
  if (group >= group_arm_.size()) group_arm_.resize(group + 1, kUnknownArm);
  int32_t& arm = group_arm_[group];
  if (arm == kUnknownArm) {
    arm = kNoArm;
    const std::string& variant = aggregator_->variant(group);
    for (size_t a = 0; a < variants_.size(); ++a) {
      if (variants_[a] == variant) arm = static_cast<int32_t>(a);
    }
  }
  return arm;
}

void ExperimentMonitor::Add(uint32_t group, uint64_t unit_hash,
                            std::span<const double> values, int32_t shard,
                            double covariate, int64_t event_ms) {
  const int32_t a = ArmOf(group);
  if (a < 0) return;
  const size_t arm_index = static_cast<size_t>(a);
  const size_t index = static_cast<size_t>(std::max(shard, 0));
  AddFirstList(arm_index, index, event_ms);
  if (!units_ && covariate_.empty()) return;
  if (!covariate_.empty() && !values.empty() && std::isfinite(covariate)) {
    AddCovariate(arm_index, unit_hash, values, covariate, index);
  }
  if (!units_) return;
  CountUnit(arm_index, unit_hash, index);
  if (values.empty()) return;
  if (index >= shard_arms_.size()) shard_arms_.resize(index + 1);
  if (!shard_arms_[index]) {
    shard_arms_[index] = std::make_unique<std::vector<ArmBuckets>>(EmptyArms());
  }
  const size_t buckets = static_cast<size_t>(num_buckets_);
  const size_t b =
      metrics::UnitBucket(unit_hash, static_cast<uint32_t>(num_buckets_));
  for (ArmBuckets* arm : {&arms_[arm_index], &(*shard_arms_[index])[arm_index],
                          &flow_arms_[arm_index]}) {
    ++arm->counts[b];
    for (size_t s = 0; s < values.size() && s * buckets < arm->sums.size();
         ++s) {
      if (std::isnan(values[s])) continue;  // This list lacks the measure.
      arm->sums[s * buckets + b] += values[s];
      ++arm->series_counts[s * buckets + b];
    }
  }
}

std::vector<ExperimentMonitor::ArmBuckets> ExperimentMonitor::EmptyArms()
    const {
  std::vector<ArmBuckets> arms = arms_;
  for (ArmBuckets& arm : arms) {
    std::fill(arm.counts.begin(), arm.counts.end(), 0);
    std::fill(arm.sums.begin(), arm.sums.end(), 0.0);
    std::fill(arm.series_counts.begin(), arm.series_counts.end(), 0);
  }
  return arms;
}

void ExperimentMonitor::RebuildArms() {
  arms_ = EmptyArms();
  for (const auto& shard : shard_arms_) {
    if (!shard) continue;
    for (size_t a = 0; a < arms_.size(); ++a) {
      const ArmBuckets& from = (*shard)[a];
      ArmBuckets& into = arms_[a];
      for (size_t i = 0; i < into.counts.size(); ++i) {
        into.counts[i] += from.counts[i];
      }
      for (size_t i = 0; i < into.sums.size(); ++i) {
        into.sums[i] += from.sums[i];
        into.series_counts[i] += from.series_counts[i];
      }
    }
  }
}

namespace {
// "ARM3": ARM2 and the covariate state after the units (EncodeCovariate).
// ARM2 (no covariate) is still read; ARM1 (never released) had no units.
constexpr uint32_t kArmShardMagic = 0x41524d33;
constexpr uint32_t kArmShardMagicV2 = 0x41524d32;
// More series than any configuration has (the aggregator's bound): a count
// beyond is corruption, and must not size num_series x buckets sums.
constexpr uint64_t kMaxEncodedArmSeries = 4096;
}  // namespace

void ExperimentMonitor::EncodeShard(int32_t shard, ByteWriter* out) const {
  // Without a covariate, the format before covariates: what a version
  // without them reads (a rollback keeps its checkpoints).
  out->Fixed32(covariate_.empty() ? kArmShardMagicV2 : kArmShardMagic);
  out->Varint(static_cast<uint64_t>(num_buckets_));
  const std::vector<SeriesSpec>& series = aggregator_->series();
  out->Varint(series.size());
  for (const SeriesSpec& s : series) out->String(s.state_key);
  const std::vector<ArmBuckets>* arms =
      shard >= 0 && static_cast<size_t>(shard) < shard_arms_.size()
          ? shard_arms_[static_cast<size_t>(shard)].get()
          : nullptr;
  out->Varint(arms == nullptr ? 0 : arms->size());
  if (arms != nullptr) {
    for (const ArmBuckets& arm : *arms) {
      out->String(arm.variant);
      for (int64_t c : arm.counts) out->Varint(static_cast<uint64_t>(c));
      for (size_t i = 0; i < arm.sums.size(); ++i) {
        out->Double(arm.sums[i]);
        out->Varint(static_cast<uint64_t>(arm.series_counts[i]));
      }
    }
  }
  EncodeUnits(shard, out);
  if (!covariate_.empty()) EncodeCovariate(shard, out);
}

Status ExperimentMonitor::DecodeShard(int32_t shard, ByteReader* in,
                                      const CheckpointLimits& limits) {
  if (shard < 0) return Status::InvalidArgument("negative shard");
  const uint32_t magic = in->Fixed32();
  if (magic != kArmShardMagic && magic != kArmShardMagicV2) {
    in->Fail("not an experiment record");
  }
  const uint64_t buckets = in->Varint();
  // statistics.unit_buckets is bounded far below this: beyond is corruption
  // (and must not size the vectors below).
  if (buckets > (1u << 20)) in->Fail("too many unit buckets");
  const uint64_t num_series = in->ok() ? in->Count(1) : 0;
  if (num_series > kMaxEncodedArmSeries) in->Fail("too many series");
  const std::vector<SeriesSpec>& series = aggregator_->series();
  std::vector<int> from(series.size(), -1);
  for (uint64_t i = 0; i < num_series; ++i) {
    const std::string_view name = in->String();
    for (size_t s = 0; s < series.size(); ++s) {
      if (series[s].state_key == name) from[s] = static_cast<int>(i);
    }
  }
  // Per arm: its name, then a count per bucket and a sum and count per
  // series and bucket.
  const uint64_t num_arms =
      in->ok() ? in->Count(1 + buckets * (1 + num_series * 9)) : 0;
  auto restored = std::make_unique<std::vector<ArmBuckets>>(EmptyArms());
  const bool same_buckets = buckets == static_cast<uint64_t>(num_buckets_);
  // Sized only once the record is known to hold an arm of this shape
  // (Count above): a few bytes must not allocate num_series x buckets.
  const uint64_t arm_buckets = num_arms > 0 ? buckets : 0;
  std::vector<int64_t> counts(arm_buckets);
  std::vector<double> sums(num_series * arm_buckets);
  std::vector<int64_t> series_counts(num_series * arm_buckets);
  for (uint64_t a = 0; a < num_arms && in->ok(); ++a) {
    const std::string_view variant = in->String();
    for (int64_t& c : counts) {
      c = static_cast<int64_t>(in->Varint());
      CheckCount(in, c, "a unit bucket's count");
    }
    for (size_t i = 0; i < sums.size(); ++i) {
      sums[i] = in->Double();
      series_counts[i] = static_cast<int64_t>(in->Varint());
      CheckCount(in, series_counts[i], "a unit bucket's count");
    }
    if (!same_buckets || !in->ok()) continue;
    for (ArmBuckets& arm : *restored) {
      if (arm.variant != variant) continue;
      arm.counts = counts;
      for (size_t s = 0; s < series.size(); ++s) {
        if (from[s] < 0) continue;
        const size_t old = static_cast<size_t>(from[s]) * buckets;
        std::copy_n(&sums[old], buckets, &arm.sums[s * buckets]);
        std::copy_n(&series_counts[old], buckets,
                    &arm.series_counts[s * buckets]);
      }
    }
  }
  std::vector<ShardUnit> units;
  std::vector<int64_t> first(variants_.size(), kNoEventTime);
  if (in->ok()) DecodeUnits(in, limits, &units, &first);
  std::unique_ptr<std::vector<CovariateArm>> covariate;
  if (in->ok() && magic == kArmShardMagic) {
    DecodeCovariate(in, buckets, from, num_series, &covariate);
  }
  const size_t index = static_cast<size_t>(shard);
  if (index >= shard_arms_.size()) shard_arms_.resize(index + 1);
  if (index >= shard_units_.size()) shard_units_.resize(index + 1);
  if (index >= shard_cov_.size()) shard_cov_.resize(index + 1);
  shard_cov_[index] = in->ok() ? std::move(covariate) : nullptr;
  RebuildCovariate();
  SetShardFirstLists(index,
                     in->ok() ? std::move(first) : std::vector<int64_t>());
  RebuildFirstLists();
  if (!in->ok()) {
    shard_arms_[index].reset();
    shard_units_[index].clear();
    RebuildArms();
    if (units_) RebuildUnits();
    return Status::InvalidArgument("experiment sums of shard " +
                                   std::to_string(shard) + ": " +
                                   in->status().message());
  }
  shard_arms_[index] = std::move(restored);
  RebuildArms();
  if (units_) {
    shard_units_[index] = std::move(units);
    RebuildUnits();
  }
  return Status::Ok();
}

void ExperimentMonitor::DropShard(int32_t shard) {
  if (shard < 0) return;
  const size_t index = static_cast<size_t>(shard);
  if (index < shard_arms_.size() && shard_arms_[index]) {
    shard_arms_[index].reset();
    RebuildArms();
  }
  if (index < shard_units_.size() && !shard_units_[index].empty()) {
    shard_units_[index].clear();
    RebuildUnits();
  }
  if (index < shard_cov_.size() && shard_cov_[index]) {
    shard_cov_[index].reset();
    RebuildCovariate();
  }
  if (index < shard_first_.size() && !shard_first_[index].empty()) {
    shard_first_[index].clear();
    RebuildFirstLists();
  }
}

void ExperimentMonitor::CountUnit(size_t arm, uint64_t unit_hash,
                                  size_t shard) {
  for (const Membership& m : memberships_[arm]) {
    uint8_t first = m.position;
    if (CountNewUnit(unit_hash, m.experiment, &first)) {
      if (shard >= shard_units_.size()) shard_units_.resize(shard + 1);
      shard_units_[shard].push_back(
          {unit_hash, static_cast<uint32_t>(m.experiment), m.position});
    } else if (first != m.position) {
      ++srm_[m.experiment].unit_conflicts;
    }
  }
}

bool ExperimentMonitor::CountNewUnit(uint64_t unit_hash, size_t experiment,
                                     uint8_t* position) {
  SrmState& srm = srm_[experiment];
  const uint8_t seen_as = *position;
  switch (
      units_seen_.Insert(ExperimentUnitKey(unit_hash, experiment), position)) {
    case UnitTable::Outcome::kInserted:
      ++srm.counts[seen_as];
      return true;
    case UnitTable::Outcome::kPresent:
      return false;
    case UnitTable::Outcome::kFull:
      srm.capped = true;
      return false;
  }
  return false;
}

void ExperimentMonitor::RebuildUnits() {
  units_seen_ = UnitTable(max_units_);
  for (SrmState& srm : srm_) {
    std::fill(srm.counts.begin(), srm.counts.end(), 0);
  }
  for (std::vector<ShardUnit>& units : shard_units_) {
    // A unit two shards brought (each restored from a replica that counted
    // it first) stays with the first of them.
    std::erase_if(units, [&](const ShardUnit& u) {
      uint8_t position = u.position;
      return !CountNewUnit(u.unit_hash, u.experiment, &position);
    });
  }
}

namespace {
constexpr uint32_t kUnitsMagic = 0x554e5431;  // "UNT1"
}  // namespace

// Per experiment its name and variants, then the units: experiment and
// variant by their index in that list, and the unit's hash. After the
// experiments, when the shard has a first list, one more entry holds the
// first lists (EncodeFirstLists).
void ExperimentMonitor::EncodeUnits(int32_t shard, ByteWriter* out) const {
  out->Fixed32(kUnitsMagic);
  const std::vector<int64_t>* first = ShardFirstLists(shard);
  out->Varint(srm_.size() + (first != nullptr ? 1 : 0));
  for (size_t x = 0; x < srm_.size(); ++x) {
    out->String((*experiments_)[x].name);
    out->Varint(srm_[x].variants.size());
    for (const std::string& v : srm_[x].variants) out->String(v);
  }
  if (first != nullptr) EncodeFirstLists(*first, out);
  const std::vector<ShardUnit>* units =
      shard >= 0 && static_cast<size_t>(shard) < shard_units_.size()
          ? &shard_units_[static_cast<size_t>(shard)]
          : nullptr;
  out->Varint(units == nullptr ? 0 : units->size());
  if (units == nullptr) return;
  for (const ShardUnit& u : *units) {
    out->Varint(u.experiment);
    out->Varint(u.position);
    out->Fixed64(u.unit_hash);
  }
}

// The units of a record, mapped to this configuration's experiments and
// variants by name; those of experiments or variants no longer configured
// are left out.
void ExperimentMonitor::DecodeUnits(ByteReader* in,
                                    const CheckpointLimits& limits,
                                    std::vector<ShardUnit>* units,
                                    std::vector<int64_t>* first) const {
  if (in->Fixed32() != kUnitsMagic) in->Fail("not a units record");
  const uint64_t num_experiments = in->Count(2);
  // [record experiment][record variant] -> (experiment, position) here.
  std::vector<std::vector<std::pair<int64_t, int>>> map(num_experiments);
  for (uint64_t e = 0; e < num_experiments && in->ok(); ++e) {
    const std::string_view name = in->String();
    if (name == kFirstListsEntry) {
      DecodeFirstLists(in, limits, first);  // No unit names it.
      continue;
    }
    int64_t x = -1;
    for (size_t i = 0; i < experiments_->size(); ++i) {
      if ((*experiments_)[i].name == name) x = static_cast<int64_t>(i);
    }
    const uint64_t num_variants = in->Count(1);
    for (uint64_t v = 0; v < num_variants && in->ok(); ++v) {
      const std::string_view variant = in->String();
      int position = -1;
      if (x >= 0) {
        const std::vector<std::string>& here =
            srm_[static_cast<size_t>(x)].variants;
        for (size_t i = 0; i < here.size(); ++i) {
          if (here[i] == variant) position = static_cast<int>(i);
        }
      }
      map[e].push_back({x, position});
    }
  }
  const uint64_t num_units = in->Count(10);
  for (uint64_t i = 0; i < num_units && in->ok(); ++i) {
    const uint64_t e = in->Varint();
    const uint64_t v = in->Varint();
    const uint64_t hash = in->Fixed64();
    if (!in->ok()) break;
    if (e >= map.size() || v >= map[e].size()) {
      in->Fail("a unit of an experiment or variant the record does not list");
      break;
    }
    const auto [x, position] = map[e][v];
    if (x < 0 || position < 0) continue;
    units->push_back(
        {hash, static_cast<uint32_t>(x), static_cast<uint8_t>(position)});
  }
}

void ExperimentMonitor::SummarizeVariant(
    const std::string& variant, int64_t now_ms,
    std::vector<metrics::ArmSummary>* out) const {
  const size_t num_series = aggregator_->series().size();
  const std::vector<int64_t>& windows = aggregator_->windows_ms();
  const size_t per_series = windows.size() + 1;
  std::vector<metrics::RunningStats> all(num_series);
  // Per window, per series (w * num_series + s).
  std::vector<WindowTotals> windowed(num_series * windows.size());
  for (size_t g = 0; g < aggregator_->num_groups(); ++g) {
    const GroupStats& group = aggregator_->group(g);
    if (group.variant != variant) continue;
    const size_t n = std::min(num_series, group.all.size());
    for (size_t s = 0; s < n; ++s) all[s].Merge(group.all[s]);
    for (size_t w = 0; w < windows.size(); ++w) {
      group.windows.AddSums(
          now_ms, windows[w],
          std::span<WindowTotals>(windowed).subspan(w * num_series, n));
    }
  }
  out->assign(num_series * per_series, metrics::ArmSummary{});
  for (size_t s = 0; s < num_series; ++s) {
    (*out)[s * per_series] = metrics::Summarize(all[s]);
    for (size_t w = 0; w < windows.size(); ++w) {
      const WindowTotals& t = windowed[w * num_series + s];
      (*out)[s * per_series + w + 1] =
          metrics::ArmSummary{t.count, t.mean(), t.variance()};
    }
  }
}

void ExperimentMonitor::SummarizeBuckets(
    const std::string& variant, std::vector<metrics::ArmSummary>* out) const {
  const size_t num_series = aggregator_->series().size();
  out->assign(num_series, metrics::ArmSummary{});
  const auto it =
      std::find_if(arms_.begin(), arms_.end(),
                   [&](const ArmBuckets& a) { return a.variant == variant; });
  if (it == arms_.end()) return;
  const size_t buckets = static_cast<size_t>(num_buckets_);
  for (size_t s = 0; s < num_series; ++s) {
    (*out)[s] = metrics::SummarizeBuckets(
        std::span<const double>(it->sums).subspan(s * buckets, buckets),
        std::span<const int64_t>(it->series_counts)
            .subspan(s * buckets, buckets));
  }
}

void ExperimentMonitor::Summarize(const std::string& variant, int64_t now_ms,
                                  std::vector<metrics::ArmSummary>* out) const {
  if (units_) {
    SummarizeBuckets(variant, out);
  } else {
    SummarizeVariant(variant, now_ms, out);
  }
}

void ExperimentMonitor::Update(int64_t now_ms) {
  ++looks_;
  UpdateSrm();
  const size_t per_series = units_ ? 1 : aggregator_->windows_ms().size() + 1;
  const config::ExperimentConfig* summarized_experiment = nullptr;
  std::string summarized_treatment;
  for (Comparison& c : comparisons_) {
    // Rows come grouped by experiment and treatment: summarize each arm
    // once per group of rows.
    if (c.experiment != summarized_experiment) {
      Summarize(c.experiment->baseline, now_ms, &baseline_scratch_);
      summarized_experiment = c.experiment;
      summarized_treatment.clear();
    }
    if (c.treatment != summarized_treatment) {
      Summarize(c.treatment, now_ms, &treatment_scratch_);
      summarized_treatment = c.treatment;
    }
    const size_t i = c.series * per_series + static_cast<size_t>(c.window + 1);
    c.baseline_arm = baseline_scratch_[i];
    c.treatment_arm = treatment_scratch_[i];
    c.welch = metrics::CompareWelch(c.baseline_arm, c.treatment_arm, level_);
    if (!c.has_sequential) continue;
    if (c.has_adjusted) UpdateAdjusted(&c);
    // A look without enough data leaves the test as it was.
    const int64_t changes_before = c.sequential.changes();
    c.look = c.sequential.Update(c.baseline_arm, c.treatment_arm);
    if (c.sequential.changes() > changes_before) c.effect_changed_ms = now_ms;
    if (c.look.status == metrics::ComparisonStatus::kCountDecreased) {
      // A partition's state left this replica (DropShard): the sequential
      // test, which is the process's, starts afresh on what it now holds.
      c.sequential.Reset();
      c.look = c.sequential.Update(c.baseline_arm, c.treatment_arm);
    }
    if (!c.quality) continue;
    const metrics::Direction direction =
        aggregator_->series()[c.series].higher_is_better
            ? metrics::Direction::kHigherIsBetter
            : metrics::Direction::kLowerIsBetter;
    const int verdict = metrics::Verdict(c.sequential.interval(), direction);
    const VerdictState before = c.state;
    if (srm_[c.experiment_index].detected) {
      c.verdict = 0;
      c.state = VerdictState::kSampleRatioMismatch;
    } else if (c.sequential.looks() == 0) {
      c.verdict = 0;
      c.state = VerdictState::kNoData;
    } else {
      c.verdict = verdict;
      c.state = verdict > 0   ? VerdictState::kBetter
                : verdict < 0 ? VerdictState::kWorse
                              : VerdictState::kInconclusive;
    }
    if (c.state != before) {
      RecordVerdictChange(&c.changes, {now_ms, looks_, before, c.state});
    }
  }
  UpdateFamilies();
}

void ExperimentMonitor::UpdateSrm() {
  for (size_t x = 0; x < srm_.size(); ++x) {
    SrmState& srm = srm_[x];
    if (!units_) {
      // Without units the counts are the lists, as the aggregator has them.
      std::fill(srm.counts.begin(), srm.counts.end(), 0);
      for (size_t g = 0; g < aggregator_->num_groups(); ++g) {
        const GroupStats& group = aggregator_->group(g);
        for (size_t i = 0; i < srm.variants.size(); ++i) {
          if (group.variant == srm.variants[i]) {
            srm.counts[i] += group.requests;
          }
        }
      }
    }
    srm.chi_square = metrics::TestSampleRatio(srm.counts, srm.shares);
    // The counts go down only when a partition's state leaves this
    // replica (DropShard): the sequential test, which is the process's,
    // starts afresh on what the replica now holds.
    if (srm.sequential.Update(srm.counts) ==
        metrics::SrmStatus::kInvalidInput) {
      srm.sequential.Reset();
      (void)srm.sequential.Update(srm.counts);
    }
    srm.detected = srm.sequential.p_value() < srm_level_;
  }
}

// Benjamini-Hochberg over each experiment's family: its window-"all" Welch
// p-values of every treatment and quality series.
void ExperimentMonitor::UpdateFamilies() {
  size_t begin = 0;
  while (begin < comparisons_.size()) {
    const size_t experiment = comparisons_[begin].experiment_index;
    size_t end = begin;
    family_rows_.clear();
    family_p_.clear();
    for (; end < comparisons_.size() &&
           comparisons_[end].experiment_index == experiment;
         ++end) {
      const Comparison& c = comparisons_[end];
      if (!c.has_sequential || !c.quality) continue;
      family_rows_.push_back(end);
      family_p_.push_back(c.welch.p_value);
    }
    family_adjusted_.resize(family_p_.size());
    metrics::BenjaminiHochberg(family_p_, family_adjusted_);
    for (size_t i = 0; i < family_rows_.size(); ++i) {
      comparisons_[family_rows_[i]].p_value_bh = family_adjusted_[i];
    }
    begin = end;
  }
}

}  // namespace rankwatch::stream
