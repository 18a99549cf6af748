#include "daemon/exporter/families.h"

#include <limits>
#include <utility>

#include "base/json_writer.h"
#include "base/numeric.h"
#include "metrics/measures.h"

namespace rankwatch::exporter {

prometheus::MetricFamily MakeFamily(std::string name, std::string help,
                                    prometheus::MetricType type) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

void AddOutcomeCounters(
    prometheus::MetricFamily* family, const Labels& labels,
    const std::array<int64_t, stream::kNumCovariateOutcomes>& counts) {
  for (int o = 0; o < stream::kNumCovariateOutcomes; ++o) {
    Labels l = labels;
    l.push_back({"reason", std::string(stream::CovariateOutcomeName(
                               static_cast<stream::CovariateOutcome>(o)))});
    AddCounter(family, std::move(l),
               static_cast<double>(counts[static_cast<size_t>(o)]));
  }
}

MeanFamilies MakeMeanFamilies(const std::string& name,
                              const std::string& what) {
  const std::string state =
      " over the window (all: since the state began; survives restarts and "
      "rebalances); sum over replicas";
  return {MakeFamily(name + "_mean",
                     "Running mean of " + what +
                         " over the window (all: since start); NaN while the "
                         "window holds no list",
                     prometheus::MetricType::Gauge),
          MakeFamily(name + "_window_lists",
                     "Lists with a value of " + what + state,
                     prometheus::MetricType::Gauge),
          MakeFamily(name + "_window_sum_values",
                     "Sum of the values of " + what + state,
                     prometheus::MetricType::Gauge),
          MakeFamily(name + "_window_sum_squares",
                     "Sum of the squared values of " + what + state,
                     prometheus::MetricType::Gauge)};
}

void AddMeans(MeanFamilies* f, const Labels& labels,
              const stream::GroupStats& group, size_t s, int64_t now_ms,
              std::span<const int64_t> windows,
              std::span<const std::string> window_labels) {
  const metrics::RunningStats& all = group.all[s];
  auto add = [&](const std::string& window, const stream::WindowTotals& t,
                 double mean) {
    Labels l = labels;
    l.push_back({"window", window});
    AddGauge(&f->mean, l, mean);
    AddGauge(&f->window_count, l, static_cast<double>(t.count));
    AddGauge(&f->window_sum, l, t.sum);
    AddGauge(&f->window_squares, std::move(l), t.sum_of_squares);
  };
  add("all", {all.count(), all.sum(), all.sum_of_squares()},
      all.count() > 0 ? all.mean() : kNaN);
  for (size_t w = 0; w < windows.size(); ++w) {
    // A group with no value yet has an empty ring; its windows are empty
    // (and WindowRing::Sum is not meant for a ring never added to).
    const stream::WindowTotals t =
        all.count() > 0 ? group.windows.Sum(s, now_ms, windows[w])
                        : stream::WindowTotals{};
    add(window_labels[w], t, all.count() > 0 ? t.mean() : kNaN);
  }
}

void PushMeans(MeanFamilies* f, std::vector<prometheus::MetricFamily>* out) {
  out->push_back(std::move(f->mean));
  out->push_back(std::move(f->window_count));
  out->push_back(std::move(f->window_sum));
  out->push_back(std::move(f->window_squares));
}

std::string CutoffLabel(int32_t cutoff) {
  return cutoff > 0 ? std::to_string(cutoff) : std::string("all");
}

std::string MeasureLabel(const config::SeriesRef& ref) {
  return ref.field.empty() ? std::string(metrics::MeasureName(ref.measure))
                           : ref.field;
}

std::string LabelText(std::string_view text, size_t max_bytes) {
  constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD.
  constexpr std::string_view kEllipsis = "\xe2\x80\xa6";     // U+2026.
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    const std::string_view piece = n == 0 ? kReplacement : text.substr(i, n);
    if (out.size() + piece.size() > max_bytes) {
      out.append(kEllipsis);
      break;
    }
    out.append(piece);
    i += n == 0 ? 1 : n;
  }
  return out;
}

void AddCounter(prometheus::MetricFamily* family, Labels labels, double value) {
  prometheus::ClientMetric& m = family->metric.emplace_back();
  m.label = std::move(labels);
  m.counter.value = value;
}

void AddGauge(prometheus::MetricFamily* family, Labels labels, double value) {
  prometheus::ClientMetric& m = family->metric.emplace_back();
  m.label = std::move(labels);
  m.gauge.value = value;
}

void AddHistogram(prometheus::MetricFamily* family, Labels labels,
                  std::span<const double> bounds,
                  std::span<const int64_t> counts, double sum) {
  prometheus::ClientMetric& m = family->metric.emplace_back();
  m.label = std::move(labels);
  m.histogram.bucket.resize(bounds.size());
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (i < counts.size()) cumulative += static_cast<uint64_t>(counts[i]);
    m.histogram.bucket[i].upper_bound = bounds[i];
    m.histogram.bucket[i].cumulative_count = cumulative;
  }
  for (size_t i = bounds.size(); i < counts.size(); ++i) {
    cumulative += static_cast<uint64_t>(counts[i]);
  }
  // The serializer adds the +Inf bucket from the total.
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = sum;
}

double TimestampSeconds(int64_t ms) {
  if (ms == INT64_MIN) return 0;
  return static_cast<double>(ms) / 1000.0;
}

}  // namespace rankwatch::exporter
