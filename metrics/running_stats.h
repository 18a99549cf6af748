// RunningStats: count, mean and variance of a stream of values, numerically
// stable (Welford's update) and mergeable across shards (Chan, Golub and
// LeVeque's pairwise combination), plus the plain sum and sum of squares
// that Prometheus counters export.
//
// Value type; not thread-safe for concurrent mutation.
#ifndef RANKWATCH_METRICS_RUNNING_STATS_H_
#define RANKWATCH_METRICS_RUNNING_STATS_H_

#include <cstdint>

namespace rankwatch::metrics {

class RunningStats {
 public:
  void Add(double x) {
    ++count_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(count_);
    m2_ += delta * (x - mean_);
    sum_ += x;
    sum_of_squares_ += x * x;
  }

  // Combines `other` into this, as if every value added to `other` had been
  // added here. Exact up to rounding, in any merge order.
  void Merge(const RunningStats& other);

  void Clear() { *this = RunningStats(); }

  // The stats whose accessors return these values (a checkpoint restored).
  static RunningStats FromState(int64_t count, double mean, double m2,
                                double sum, double sum_of_squares) {
    RunningStats s;
    s.count_ = count;
    s.mean_ = mean;
    s.m2_ = m2;
    s.sum_ = sum;
    s.sum_of_squares_ = sum_of_squares;
    return s;
  }

  int64_t count() const { return count_; }
  double mean() const { return mean_; }
  double sum() const { return sum_; }
  double sum_of_squares() const { return sum_of_squares_; }
  // Sum of squared deviations from the mean.
  double m2() const { return m2_; }
  // Unbiased sample variance (n - 1 denominator); 0 below two values.
  double variance() const;
  double stddev() const;
  // Population variance (n denominator); 0 when empty.
  double population_variance() const;

 private:
  int64_t count_ = 0;
  double mean_ = 0;
  double m2_ = 0;
  double sum_ = 0;
  double sum_of_squares_ = 0;
};

}  // namespace rankwatch::metrics

#endif  // RANKWATCH_METRICS_RUNNING_STATS_H_
