#include "daemon/stream/snapshot.h"

#include <algorithm>

#include "daemon/stream/pipeline.h"

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

void CopyAggregates(const Aggregator& a, PipelineSnapshot* out) {
  out->series = a.series();
  // Assigning element-wise keeps each group's vectors' capacity from the
  // previous snapshot (a WindowRing has no empty state to resize to).
  const size_t n = a.num_groups();
  if (out->groups.size() > n)
    out->groups.erase(out->groups.begin() + n, out->groups.end());
  out->flows.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < out->groups.size()) {
      out->groups[i] = a.group(i);
    } else {
      out->groups.push_back(a.group(i));
    }
    out->flows[i] = a.flow(i);
  }
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
void ComputeMovers(const QueryMovers& q, const std::vector<Comparison>& cs,
                   PipelineSnapshot* out) {
  out->movers_capacity = q.capacity();
  size_t n = 0;
  if (q.capacity() > 0) {
    for (const Comparison& c : cs) {
      if (!c.primary || c.window >= 0) continue;
      if (out->movers.size() <= n) out->movers.emplace_back();
      MoversSnapshot& m = out->movers[n++];
      m.experiment = c.experiment_index;
      m.treatment = c.treatment;
      m.series = c.series;
      m.movers = q.Movers(c.experiment_index, c.treatment, c.series);
    }
  }
  out->movers.resize(n);
}

// Each pair of judges' figures from their counts (trec::AgreementOf, as
// `rankwatch compare` computes them from qrels files).
void ComputeAgreement(const Pipeline& pipeline, PipelineSnapshot* out) {
  out->judges = pipeline.config().judges.names;
  const std::vector<JudgePairCounts> counts = pipeline.judge_agreement();
  out->agreement.clear();
  const size_t n = out->judges.size();
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      const size_t p = PairIndex(a, b, n);
      if (p >= counts.size()) continue;
      trec::LabelAgreement l = trec::AgreementOf(
          counts[p].both, counts[p].only_first, counts[p].only_second);
      l.first = a;
      l.second = b;
      out->agreement.push_back(std::move(l));
    }
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

void TakeSnapshot(const Pipeline& pipeline, PipelineSnapshot* out) {
  out->config = pipeline.config();
  CopyAggregates(pipeline.aggregator(), out);
  CopyExperiments(pipeline.experiments(), out);
  out->decisions = pipeline.decisions().decisions();
  CopyInterleaving(pipeline.interleaving(), out);
  ComputeMovers(pipeline.query_movers(), out->comparisons, out);
  ComputeAgreement(pipeline, out);
  PointIntoOwnConfig(out);
  out->counters = pipeline.counters();
  out->join_counters = pipeline.join_counters();
  out->pending_requests = pipeline.pending_requests();
  out->table_entries = pipeline.table_entries();
  out->watermark_ms = pipeline.watermark_ms();
  out->window_now_ms = pipeline.window_now_ms();
  out->tracks_clicks = pipeline.tracks_clicks();
}

}  // namespace rankwatch::stream
