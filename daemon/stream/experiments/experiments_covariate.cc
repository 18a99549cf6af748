// ExperimentMonitor's regression-adjustment state (schema.covariate): the
// covariate moments and bucket sums per variant, series and shard, their
// checkpoint section, and the adjusted figures of a look. See
// experiments.h and docs/statistics.md, "Regression adjustment".
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/numeric.h"
#include "daemon/stream/experiments/experiments.h"
#include "metrics/clustered.h"

namespace rankwatch::stream {

std::array<NamedFigure, kNumAdjustedFigures> AdjustedFigures(
    const AdjustedComparison& a) {
  const bool both = a.baseline_arm.count > 0 && a.treatment_arm.count > 0;
  const metrics::WelchComparison& w = a.welch;
  return {{
      {"theta", a.theta},
      {"variance_ratio", a.variance_ratio},
      {"difference", both ? w.difference : kNaN},
      {"relative_difference",
       both && w.has_relative_difference ? w.relative_difference : kNaN},
      {"standard_error", w.standard_error},
      {"ci_lower", w.interval.lower},
      {"ci_upper", w.interval.upper},
      {"p_value", w.p_value},
      {"sequential_p_value", a.sequential.p_value()},
      {"sequential_ci_lower", a.sequential.interval().lower},
      {"sequential_ci_upper", a.sequential.interval().upper},
      {"sequential_look_p_value", a.look.p_value},
      {"sequential_look_ci_lower", a.look.interval.lower},
      {"sequential_look_ci_upper", a.look.interval.upper},
  }};
}

void WriteAdjustedJson(const AdjustedComparison& a, JsonWriter* out) {
  out->BeginObject();
  out->Key("status");
  out->String(metrics::AdjustmentStatusName(a.status));
  for (const auto& [key, value] : AdjustedFigures(a)) {
    out->Key(key);
    out->Double(value);
  }
  out->Key("sequential_looks");
  out->Int(a.sequential.looks());
  out->Key("baseline_count");
  out->Int(std::max<int64_t>(a.baseline_arm.count, 0));
  out->Key("treatment_count");
  out->Int(std::max<int64_t>(a.treatment_arm.count, 0));
  out->EndObject();
}

namespace {
// The bytes of one series' moments in a checkpoint: a count and five
// doubles.
constexpr size_t kMomentsBytes = 1 + 5 * 8;
}  // namespace

std::vector<ExperimentMonitor::CovariateArm>
ExperimentMonitor::EmptyCovariateArms() const {
  std::vector<CovariateArm> arms = cov_arms_;
  for (CovariateArm& arm : arms) {
    std::fill(arm.moments.begin(), arm.moments.end(),
              metrics::CovariateMoments{});
    std::fill(arm.y_sums.begin(), arm.y_sums.end(), 0.0);
    std::fill(arm.x_sums.begin(), arm.x_sums.end(), 0.0);
    std::fill(arm.counts.begin(), arm.counts.end(), 0);
  }
  return arms;
}

// Merged in shard order, so that the sum of the same shards is the same
// whatever order they were restored in.
void ExperimentMonitor::RebuildCovariate() {
  cov_arms_ = EmptyCovariateArms();
  for (const auto& shard : shard_cov_) {
    if (!shard) continue;
    for (size_t a = 0; a < cov_arms_.size(); ++a) {
      const CovariateArm& from = (*shard)[a];
      CovariateArm& into = cov_arms_[a];
      for (size_t s = 0; s < into.moments.size(); ++s) {
        into.moments[s].Merge(from.moments[s]);
      }
      for (size_t i = 0; i < into.counts.size(); ++i) {
        into.y_sums[i] += from.y_sums[i];
        into.x_sums[i] += from.x_sums[i];
        into.counts[i] += from.counts[i];
      }
    }
  }
}

void ExperimentMonitor::AddCovariate(size_t arm_index, uint64_t unit_hash,
                                     std::span<const double> values, double x,
                                     size_t shard) {
  if (shard >= shard_cov_.size()) shard_cov_.resize(shard + 1);
  if (!shard_cov_[shard]) {
    shard_cov_[shard] =
        std::make_unique<std::vector<CovariateArm>>(EmptyCovariateArms());
  }
  const size_t buckets = static_cast<size_t>(num_buckets_);
  const size_t b = units_ ? metrics::UnitBucket(
                                unit_hash, static_cast<uint32_t>(num_buckets_))
                          : 0;
  for (CovariateArm* arm :
       {&cov_arms_[arm_index], &(*shard_cov_[shard])[arm_index],
        &flow_cov_arms_[arm_index]}) {
    for (size_t s = 0; s < values.size() && s < arm->moments.size(); ++s) {
      const double y = values[s];
      // A pair needs both: a list without the measure (first_click_rank:
      // NaN) is no pair of that series.
      if (!std::isfinite(y)) continue;
      arm->moments[s].Add(y, x);
      if (!units_) continue;
      arm->y_sums[s * buckets + b] += y;
      arm->x_sums[s * buckets + b] += x;
      ++arm->counts[s * buckets + b];
    }
  }
}

// The covariate's name (state kept under another covariate means
// something else), whether bucket sums follow, then per variant its name
// and per series of the record its moments and, with units, per bucket
// the sums of y and x and the pairs.
void ExperimentMonitor::EncodeCovariate(int32_t shard, ByteWriter* out) const {
  out->String(covariate_);
  out->Bool(units_);
  const std::vector<CovariateArm>* arms =
      shard >= 0 && static_cast<size_t>(shard) < shard_cov_.size()
          ? shard_cov_[static_cast<size_t>(shard)].get()
          : nullptr;
  out->Varint(arms == nullptr ? 0 : arms->size());
  if (arms == nullptr) return;
  for (const CovariateArm& arm : *arms) {
    out->String(arm.variant);
    for (const metrics::CovariateMoments& m : arm.moments) {
      out->Varint(static_cast<uint64_t>(m.count));
      out->Double(m.mean_y);
      out->Double(m.mean_x);
      out->Double(m.m2_y);
      out->Double(m.m2_x);
      out->Double(m.c_xy);
    }
    for (size_t i = 0; i < arm.counts.size(); ++i) {
      out->Double(arm.y_sums[i]);
      out->Double(arm.x_sums[i]);
      out->Varint(static_cast<uint64_t>(arm.counts[i]));
    }
  }
}

void ExperimentMonitor::DecodeCovariate(
    ByteReader* in, uint64_t buckets, const std::vector<int>& from,
    uint64_t num_series,
    std::unique_ptr<std::vector<CovariateArm>>* restored) const {
  const std::string_view name = in->String();
  const bool with_buckets = in->Bool();
  const uint64_t per_series = kMomentsBytes + (with_buckets ? buckets * 17 : 0);
  const uint64_t num_arms =
      in->ok() ? in->Count(1 + num_series * per_series) : 0;
  // Kept only when the pairs mean the same here: the same covariate, and
  // bucket sums in this shape (or none, without units).
  const bool keep = in->ok() && !covariate_.empty() && name == covariate_ &&
                    with_buckets == units_ &&
                    (!units_ || buckets == static_cast<uint64_t>(num_buckets_));
  if (keep) {
    *restored =
        std::make_unique<std::vector<CovariateArm>>(EmptyCovariateArms());
  }
  // Sized only once the record is known to hold an arm of this shape
  // (Count above): a few bytes must not allocate num_series x buckets.
  const size_t b =
      static_cast<size_t>(with_buckets && num_arms > 0 ? buckets : 0);
  std::vector<metrics::CovariateMoments> moments(num_arms > 0 ? num_series : 0);
  std::vector<double> y_sums(num_series * b);
  std::vector<double> x_sums(num_series * b);
  std::vector<int64_t> counts(num_series * b);
  for (uint64_t a = 0; a < num_arms && in->ok(); ++a) {
    const std::string_view variant = in->String();
    for (metrics::CovariateMoments& m : moments) {
      m.count = static_cast<int64_t>(in->Varint());
      m.mean_y = in->Double();
      m.mean_x = in->Double();
      m.m2_y = in->Double();
      m.m2_x = in->Double();
      m.c_xy = in->Double();
      CheckCount(in, m.count, "a covariate pair count");
    }
    for (size_t i = 0; i < counts.size(); ++i) {
      y_sums[i] = in->Double();
      x_sums[i] = in->Double();
      counts[i] = static_cast<int64_t>(in->Varint());
      CheckCount(in, counts[i], "a covariate bucket count");
    }
    if (!keep || !in->ok()) continue;
    for (CovariateArm& arm : **restored) {
      if (arm.variant != variant) continue;
      for (size_t s = 0; s < arm.moments.size(); ++s) {
        if (from[s] < 0) continue;
        const size_t old = static_cast<size_t>(from[s]);
        arm.moments[s] = moments[old];
        if (b == 0) continue;
        std::copy_n(&y_sums[old * b], b, &arm.y_sums[s * b]);
        std::copy_n(&x_sums[old * b], b, &arm.x_sums[s * b]);
        std::copy_n(&counts[old * b], b, &arm.counts[s * b]);
      }
    }
  }
  if (!in->ok()) restored->reset();
}

const ExperimentMonitor::CovariateArm* ExperimentMonitor::FindCovariateArm(
    const std::string& variant) const {
  for (const CovariateArm& arm : cov_arms_) {
    if (arm.variant == variant) return &arm;
  }
  return nullptr;
}

// After c->welch: the adjusted arms from the summed covariate state, their
// Welch test, and a look of their own sequential test once warm.
void ExperimentMonitor::UpdateAdjusted(Comparison* c) const {
  AdjustedComparison& adj = c->adjusted;
  const CovariateArm* b = FindCovariateArm(c->experiment->baseline);
  const CovariateArm* t = FindCovariateArm(c->treatment);
  metrics::AdjustedArms arms;
  if (b != nullptr && t != nullptr) {
    const size_t s = c->series;
    if (units_) {
      const size_t n = static_cast<size_t>(num_buckets_);
      const auto sums = [&](const CovariateArm& arm) {
        return metrics::ClusteredArmSums{
            std::span<const double>(arm.y_sums).subspan(s * n, n),
            std::span<const double>(arm.x_sums).subspan(s * n, n),
            std::span<const int64_t>(arm.counts).subspan(s * n, n)};
      };
      arms = metrics::AdjustClusteredArms(b->moments[s], sums(*b),
                                          t->moments[s], sums(*t));
    } else {
      arms = metrics::AdjustArms(b->moments[s], t->moments[s]);
    }
  }
  adj.status = arms.status;
  adj.theta = arms.theta;
  adj.baseline_arm = arms.baseline;
  adj.treatment_arm = arms.treatment;
  adj.welch = metrics::CompareWelch(arms.baseline, arms.treatment, level_);
  const double adjusted_se = adj.welch.standard_error;
  const double se = c->welch.standard_error;
  adj.variance_ratio = adj.welch.ok() && c->welch.ok() && se > 0 &&
                               std::isfinite(se) && std::isfinite(adjusted_se)
                           ? (adjusted_se * adjusted_se) / (se * se)
                           : std::numeric_limits<double>::quiet_NaN();
  // The warm-up in buckets (SequentialOptions::min_count counts values).
  const bool warm = !units_ || (arms.baseline.clusters >= kAdjustedWarmUp &&
                                arms.treatment.clusters >= kAdjustedWarmUp);
  if (arms.status == metrics::AdjustmentStatus::kInvalidInput || !warm) {
    adj.look = metrics::SequentialLook{};
    adj.look.status = arms.status == metrics::AdjustmentStatus::kInvalidInput
                          ? metrics::ComparisonStatus::kInvalidInput
                          : metrics::ComparisonStatus::kTooFewSamples;
    return;
  }
  adj.look = adj.sequential.Update(arms.baseline, arms.treatment);
  if (adj.look.status == metrics::ComparisonStatus::kCountDecreased) {
    // As the unadjusted test: a shard left this replica.
    adj.sequential.Reset();
    adj.look = adj.sequential.Update(arms.baseline, arms.treatment);
  }
}

// The moments carry over as a checkpoint would: by variant, and by what the
// series' values mean.
void ExperimentMonitor::AdoptCovariate(
    const ExperimentMonitor& previous,
    const std::vector<SeriesSpec>& previous_series) {
  const std::vector<SeriesSpec>& series = aggregator_->series();
  for (size_t shard = 0; shard < previous.shard_cov_.size(); ++shard) {
    if (!previous.shard_cov_[shard]) continue;
    if (shard >= shard_cov_.size()) shard_cov_.resize(shard + 1);
    shard_cov_[shard] =
        std::make_unique<std::vector<CovariateArm>>(EmptyCovariateArms());
    for (CovariateArm& arm : *shard_cov_[shard]) {
      for (const CovariateArm& old : *previous.shard_cov_[shard]) {
        if (old.variant != arm.variant) continue;
        for (size_t s = 0; s < series.size(); ++s) {
          for (size_t o = 0; o < previous_series.size(); ++o) {
            if (previous_series[o].state_key == series[s].state_key) {
              arm.moments[s] = old.moments[o];
            }
          }
        }
      }
    }
  }
  RebuildCovariate();
}

}  // namespace rankwatch::stream
