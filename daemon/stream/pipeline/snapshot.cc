#include "daemon/stream/pipeline/snapshot.h"

#include <algorithm>
#include <cmath>

#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch::stream {

const std::vector<metrics::QueryMover>* PipelineSnapshot::FindMovers(
    size_t experiment, std::string_view treatment, size_t series) const {
  for (const MoversSnapshot& m : movers) {
    if (m.experiment == experiment && m.series == series &&
        m.treatment == treatment) {
      return &m.movers;
    }
  }
  return nullptr;
}

namespace {

void CopyGroups(const Aggregator& a, std::vector<GroupStats>* groups,
                std::vector<GroupFlow>* flows) {
  // Assigning element-wise keeps each group's vectors' capacity from the
  // previous snapshot (a WindowRing has no empty state to resize to).
  const size_t n = a.num_groups();
  if (groups->size() > n) groups->erase(groups->begin() + n, groups->end());
  flows->resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < groups->size()) {
      (*groups)[i] = a.group(i);
    } else {
      groups->push_back(a.group(i));
    }
    (*flows)[i] = a.flow(i);
  }
}

void CopyAggregates(const Aggregator& a, PipelineSnapshot* out) {
  out->series = a.series();
  CopyGroups(a, &out->groups, &out->flows);
  out->windows_ms = a.windows_ms();
  out->bucket_ms = a.bucket_ms();
  out->newest_time_ms = a.newest_time_ms();
  out->overflowed = a.overflowed();
}

void CopyExperiments(const ExperimentMonitor& m, PipelineSnapshot* out) {
  out->comparisons = m.comparisons();
  out->srm = m.srm();
  out->looks = m.looks();
  out->level = m.level();
  out->units = m.units();
  out->covariate = m.covariate();
  out->arm_buckets = m.arm_buckets();
  out->flow_arm_buckets = m.flow_arm_buckets();
  out->num_buckets = m.num_buckets();
  out->covariate_arms = m.covariate_arms();
  out->flow_covariate_arms = m.flow_covariate_arms();
}

void CopyInterleaving(const InterleavingMonitor& m, PipelineSnapshot* out) {
  out->interleaving = m.experiments();
  out->interleaving_windows_ms = m.windows_ms();
  out->interleaving_alpha = m.alpha();
  out->interleaving_prior_shape = m.prior_shape();
}

// The movers of every comparison that has them: a primary series' whole
// run (the only ones QueryMovers tracks).
void ComputeMovers(PipelineSnapshot* out) {
  const QueryMoversCounts& q = out->movers_counts;
  out->movers_capacity = q.capacity;
  size_t n = 0;
  if (q.capacity > 0) {
    for (const Comparison& c : out->comparisons) {
      if (!c.primary || c.window >= 0) continue;
      if (out->movers.size() <= n) out->movers.emplace_back();
      MoversSnapshot& m = out->movers[n++];
      m.experiment = c.experiment_index;
      m.treatment = c.treatment;
      m.series = c.series;
      m.movers.clear();
      if (c.experiment_index < out->config.experiments.size()) {
        m.movers =
            q.Movers(out->config.experiments[c.experiment_index].baseline,
                     c.treatment, c.series);
      }
    }
  }
  out->movers.resize(n);
}

// Each pair of judges' figures from their counts (trec::AgreementOf, as
// `rankwatch compare` computes them from qrels files).
std::vector<trec::LabelAgreement> AgreementOf(
    size_t n, const std::vector<metrics::JudgePairCounts>& counts) {
  std::vector<trec::LabelAgreement> out;
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      const size_t p = metrics::PairIndex(a, b, n);
      if (p >= counts.size()) continue;
      trec::LabelAgreement l = trec::AgreementOf(
          counts[p].both, counts[p].only_first, counts[p].only_second);
      l.first = a;
      l.second = b;
      out.push_back(std::move(l));
    }
  }
  return out;
}

// The judges' pair counts, since start and per window (in impression
// mode, with two judges or more).
void CopyJudgePairs(const Pipeline& pipeline, PipelineSnapshot* out) {
  out->judges = pipeline.config().judges.names;
  out->judge_pair_counts = pipeline.judge_agreement();
  out->agreement_refused = pipeline.judge_agreement_refused();
  out->window_judge_pair_counts.clear();
  if (pipeline.config().join.mode != config::JoinMode::kImpression ||
      out->judges.size() < 2) {
    return;
  }
  for (int64_t w : out->windows_ms) {
    out->window_judge_pair_counts.push_back(pipeline.judge_agreement(w));
  }
}

void ComputeAgreement(PipelineSnapshot* out) {
  const size_t n = out->judges.size();
  out->agreement = AgreementOf(n, out->judge_pair_counts);
  out->window_agreement.clear();
  for (const std::vector<metrics::JudgePairCounts>& w :
       out->window_judge_pair_counts) {
    out->window_agreement.push_back(AgreementOf(n, w));
  }
}

// The prediction-powered means of every variant, PPI series and window.
void ComputePpi(PipelineSnapshot* out) {
  out->ppi.clear();
  std::vector<int32_t> measures;
  for (const JudgeSeries& l : out->judge_layout) {
    if (l.role == JudgeSeriesRole::kPpiTruth) measures.push_back(l.measure);
  }
  if (measures.empty()) return;
  const config::JudgesPpiConfig& ppi = out->config.judges.ppi;
  std::vector<WindowTotals> totals(out->judge_series.size());
  for (size_t g = 0; g < out->judge_groups.size(); ++g) {
    const GroupStats& group = out->judge_groups[g];
    for (int w = -1; w < static_cast<int>(out->windows_ms.size()); ++w) {
      // Only the PPI sums are read (PpiMomentsOf): the windows of the
      // judges' own series are not summed here.
      for (size_t i = 0; i < totals.size(); ++i) {
        const JudgeSeriesRole role = out->judge_layout[i].role;
        const bool ppi_sum = role == JudgeSeriesRole::kPpiTruth ||
                             role == JudgeSeriesRole::kPpiCheap ||
                             role == JudgeSeriesRole::kPpiOther ||
                             role == JudgeSeriesRole::kPpiCross;
        totals[i] =
            ppi_sum ? TotalsOf(group, i, w, out->windows_ms, out->window_now_ms)
                    : WindowTotals{};
      }
      for (int32_t m : measures) {
        std::optional<metrics::PpiMoments> moments =
            PpiMomentsOf(out->judge_layout, totals, m);
        if (!moments) continue;
        PpiFigure f;
        f.group = g;
        f.series = static_cast<size_t>(m);
        f.window = w;
        f.moments = *moments;
        f.estimate =
            metrics::PpiMean(*moments, out->config.statistics.level, ppi.tune);
        out->ppi.push_back(std::move(f));
      }
    }
  }
}

// The unjudged share of `variant`'s top k since start; NaN without lists.
double UnjudgedShare(const PipelineSnapshot& s, std::string_view variant,
                     int32_t cutoff) {
  for (size_t i = 0; i < s.judge_layout.size(); ++i) {
    if (s.judge_layout[i].role != JudgeSeriesRole::kUnjudged ||
        s.judge_series[i].cutoff != cutoff) {
      continue;
    }
    for (const GroupStats& g : s.judge_groups) {
      if (g.variant == variant && g.all[i].count() > 0) return g.all[i].mean();
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// One coverage check per experiment and treatment.
void ComputeCoverage(PipelineSnapshot* out) {
  out->coverage.clear();
  if (out->judge_layout.empty() || out->config.metrics.cutoffs.empty()) return;
  const std::vector<int32_t>& cutoffs = out->config.metrics.cutoffs;
  for (size_t e = 0; e < out->config.experiments.size(); ++e) {
    const config::ExperimentConfig& x = out->config.experiments[e];
    int32_t k = *std::min_element(cutoffs.begin(), cutoffs.end());
    if (!x.primary.empty() && x.primary[0].cutoff > 0) k = x.primary[0].cutoff;
    for (const std::string& t : x.treatments) {
      CoverageCheck c;
      c.experiment = e;
      c.treatment = t;
      c.cutoff = k;
      c.baseline_unjudged = UnjudgedShare(*out, x.baseline, k);
      c.treatment_unjudged = UnjudgedShare(*out, t, k);
      c.flagged = std::abs(c.treatment_unjudged - c.baseline_unjudged) >
                  out->config.judges.coverage_tolerance;
      out->coverage.push_back(std::move(c));
    }
  }
}

void CopyJudges(const Pipeline& pipeline, PipelineSnapshot* out) {
  const JudgeMonitor* m = pipeline.judge_monitor();
  if (m == nullptr) {
    out->judge_layout.clear();
    out->judge_series.clear();
    out->judge_groups.clear();
    out->judge_flows.clear();
  } else {
    out->judge_layout = m->layout();
    out->judge_series = m->aggregator().series();
    CopyGroups(m->aggregator(), &out->judge_groups, &out->judge_flows);
  }
}

// The comparisons and interleaving states point at their configuration:
// the copies point at the snapshot's own, so that they outlive a reload
// that frees the pipeline's.
void PointIntoOwnConfig(PipelineSnapshot* out) {
  for (Comparison& c : out->comparisons) {
    c.experiment = c.experiment_index < out->config.experiments.size()
                       ? &out->config.experiments[c.experiment_index]
                       : nullptr;
  }
  for (size_t i = 0; i < out->interleaving.size(); ++i) {
    out->interleaving[i].config = i < out->config.interleaving.size()
                                      ? &out->config.interleaving[i]
                                      : nullptr;
  }
}

}  // namespace

void CopySnapshot(const Pipeline& pipeline, PipelineSnapshot* out) {
  out->config = pipeline.config();
  CopyAggregates(pipeline.aggregator(), out);
  CopyExperiments(pipeline.experiments(), out);
  out->decisions = pipeline.decisions().decisions();
  CopyInterleaving(pipeline.interleaving(), out);
  pipeline.query_movers().CopyCounts(&out->movers_counts);
  out->window_now_ms = pipeline.window_now_ms();
  CopyJudgePairs(pipeline, out);
  CopyJudges(pipeline, out);
  PointIntoOwnConfig(out);
  out->counters = pipeline.counters();
  out->join_counters = pipeline.join_counters();
  out->pending_requests = pipeline.pending_requests();
  out->table_entries = pipeline.table_entries();
  out->watermark_ms = pipeline.watermark_ms();
  out->tracks_clicks = pipeline.tracks_clicks();
}

void CompleteSnapshot(PipelineSnapshot* out) {
  ComputeMovers(out);
  ComputeAgreement(out);
  ComputePpi(out);
  ComputeCoverage(out);
}

void TakeSnapshot(const Pipeline& pipeline, PipelineSnapshot* out) {
  CopySnapshot(pipeline, out);
  CompleteSnapshot(out);
}

}  // namespace rankwatch::stream
