#include "trec/judged_ranking.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "trec/qrels.h"

namespace rankwatch::trec {

namespace {

using metrics::Grade;

// trec_eval's floor for the geometric means (MIN_GEO_MEAN) and infAP's
// smoothing (INFAP_EPSILON), both .00001 in trec_eval.h.
constexpr double kMinGeoMean = 0.00001;
constexpr double kInfApEpsilon = 0.00001;

// The ideal ranking's gains, walked as trec_eval walks them: from the
// highest-gain level down, each level as many times as it has judged docs,
// until a gain <= 0.
class IdealWalk {
 public:
  explicit IdealWalk(GainTable* gains) : entries_(gains->entries()) {
    level_ = static_cast<int64_t>(entries_.size()) - 1;
    gain_ = level_ >= 0 ? entries_[static_cast<size_t>(level_)].gain : 0.0;
  }
  // Advances to the next rank; returns the ideal gain there.
  double Next() {
    ++at_level_;
    while (level_ >= 0 &&
           at_level_ > entries_[static_cast<size_t>(level_)].count) {
      at_level_ = 1;
      --level_;
      gain_ = level_ >= 0 ? entries_[static_cast<size_t>(level_)].gain : 0.0;
    }
    return gain_;
  }
  double gain() const { return gain_; }

 private:
  const std::vector<GainTable::Entry>& entries_;
  int64_t level_;
  int64_t at_level_ = 0;
  double gain_;
};

double Log2Rank(int64_t i) { return std::log2(static_cast<double>(i + 2)); }

// The DCG of the run and of the ideal ranking up to some rank, with
// trec_eval's log2(rank + 1) discount, added in trec_eval's order.
struct RunningDcg {
  double run = 0.0;
  double ideal = 0.0;

  // Adds the run's doc at 0-based rank i (a gain of 0 adds nothing, as in
  // trec_eval); returns its gain.
  double AddRun(const JudgedRanking& r, const GainTable& gains, int64_t i) {
    const double g = gains.Of(r.codes[static_cast<size_t>(i)]);
    if (g != 0) run += g / Log2Rank(i);
    return g;
  }
  // Adds the ideal gain `ig` at rank i when positive; returns whether.
  bool AddIdeal(double ig, int64_t i) {
    if (ig <= 0.0) return false;
    ideal += ig / Log2Rank(i);
    return true;
  }
};

double ParamP(std::span<const ParamPair> pairs) {
  double p = 0.9;
  for (const ParamPair& pair : pairs) {
    if (pair.name == "p") p = pair.value;
  }
  return p;
}

}  // namespace

JudgedRanking JudgedRankingBuilder::Build(std::span<const Grade> codes,
                                          std::span<const Grade> judgments,
                                          Grade relevance_level) {
  Grade max_grade = -1;
  for (Grade g : judgments) max_grade = std::max(max_grade, g);
  levels_.clear();
  if (max_grade <= kMaxDenseGrade) {
    counts_.assign(static_cast<size_t>(max_grade + 1), 0);
    for (Grade g : judgments) {
      if (g >= 0) ++counts_[static_cast<size_t>(g)];
    }
    for (size_t g = 0; g < counts_.size(); ++g) {
      levels_.push_back(LevelCount{static_cast<int64_t>(g), counts_[g]});
    }
  } else {
    sorted_.clear();
    for (Grade g : judgments) {
      if (g >= 0) sorted_.push_back(g);
    }
    std::sort(sorted_.begin(), sorted_.end());
    for (Grade g : sorted_) {
      if (levels_.empty() || levels_.back().level != g) {
        levels_.push_back(LevelCount{g, 0});
      }
      ++levels_.back().count;
    }
  }
  JudgedRanking r;
  r.codes = codes;
  r.levels = levels_;
  for (const LevelCount& l : levels_) {
    (l.level >= relevance_level ? r.num_rel : r.num_judged_nonrel) += l.count;
  }
  for (Grade c : codes) {
    if (c == kNotInPool) {
      ++r.num_nonpool;
    } else if (c < 0) {
      ++r.num_unjudged_in_pool;
    } else if (c >= relevance_level) {
      ++r.num_rel_ret;
    }
  }
  return r;
}

void GainTable::Setup(std::span<const ParamPair> pairs,
                      std::span<const LevelCount> levels) {
  entries_.clear();
  for (const ParamPair& p : pairs) {
    if (!IsIntegerName(p.name)) continue;
    entries_.push_back(Entry{AtolLike(p.name), 0, p.value});
  }
  const size_t mapped = entries_.size();
  // trec_eval walks levels 0 .. num_rel_levels - 1: up to the highest one
  // with a judgment. Only the mapped entries can hold a level already (the
  // levels are distinct), so only they are searched.
  size_t n = levels.size();
  while (n > 0 && levels[n - 1].count == 0) --n;
  for (const LevelCount& l : levels.first(n)) {
    const auto end = entries_.begin() + static_cast<ptrdiff_t>(mapped);
    auto it = std::find_if(entries_.begin(), end,
                           [&](const Entry& e) { return e.level == l.level; });
    if (it != end) {
      it->count = l.count;
    } else {
      entries_.push_back(Entry{l.level, l.count, static_cast<double>(l.level)});
    }
  }
  scratch_.resize(entries_.size());
  MergeSort(entries_.data(), entries_.size());
  Reindex();
}

void GainTable::Reindex() {
  // get_gain returns the first entry of the level in gain order: keep that
  // one per level, then sort by level for a binary search. A few levels
  // (the usual 0..3) are scanned instead: cheaper than indexing.
  by_level_.clear();
  if (entries_.size() <= kScanEntries) return;
  for (const Entry& e : entries_) by_level_.emplace_back(e.level, e.gain);
  std::stable_sort(
      by_level_.begin(), by_level_.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  by_level_.erase(std::unique(by_level_.begin(), by_level_.end(),
                              [](const auto& a, const auto& b) {
                                return a.first == b.first;
                              }),
                  by_level_.end());
}

double GainTable::Of(int64_t code) const {
  if (entries_.size() <= kScanEntries) {
    for (const Entry& e : entries_) {
      if (e.level == code) return e.gain;
    }
    return 0.0;
  }
  const auto it = std::lower_bound(by_level_.begin(), by_level_.end(), code,
                                   [](const std::pair<int64_t, double>& e,
                                      int64_t c) { return e.first < c; });
  return it != by_level_.end() && it->first == code ? it->second : 0.0;
}

bool GainTable::IsIntegerName(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

int GainTable::Compare(const Entry& a, const Entry& b) {
  const double d = a.gain - b.gain;
  if (d >= 2147483647.0) return std::numeric_limits<int>::max();
  if (d <= -2147483648.0) return std::numeric_limits<int>::min();
  return static_cast<int>(d);
}

void GainTable::MergeSort(Entry* b, size_t n) {
  if (n <= 1) return;
  size_t n1 = n / 2;
  size_t n2 = n - n1;
  Entry* b1 = b;
  Entry* b2 = b + n1;
  MergeSort(b1, n1);
  MergeSort(b2, n2);
  Entry* t = scratch_.data();
  while (n1 > 0 && n2 > 0) {
    if (Compare(*b1, *b2) <= 0) {
      *t++ = *b1++;
      --n1;
    } else {
      *t++ = *b2++;
      --n2;
    }
  }
  t = std::copy(b1, b1 + n1, t);
  std::copy(scratch_.data(), t, b);
}

// dcg, ideal_dcg and ndcg with a gain map (m_ndcg.c).
void ComputeNdcg(const JudgedRanking& r, GainTable* gains, TrecMeasure m,
                 double* out) {
  RunningDcg dcg;
  IdealWalk ideal(gains);
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    dcg.AddRun(r, *gains, i);
    dcg.AddIdeal(ideal.Next(), i);
  }
  for (; i < n; ++i) dcg.AddRun(r, *gains, i);
  for (; ideal.gain() > 0.0; ++i) dcg.AddIdeal(ideal.Next(), i);
  if (m == TrecMeasure::kDcg) {
    *out = dcg.run;
  } else if (m == TrecMeasure::kIdealDcg) {
    *out = dcg.ideal;
  } else if (dcg.ideal > 0.0) {
    *out = dcg.run / dcg.ideal;
  }
}

// ndcg_rel (m_ndcg_rel.c): nDCG averaged over the ranks of relevant docs.
double ComputeNdcgRel(const JudgedRanking& r, GainTable* gains) {
  RunningDcg dcg;
  double sum = 0.0;
  int64_t num_rel_ret = 0;
  int64_t num_rel = 0;
  auto add_run = [&](int64_t i) {
    if (dcg.AddRun(r, *gains, i) > 0) {
      sum += dcg.run / dcg.ideal;
      ++num_rel_ret;
    }
  };
  IdealWalk ideal(gains);
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    // trec_eval adds the run's gain, then the ideal's, then the ratio.
    const double g = dcg.AddRun(r, *gains, i);
    if (dcg.AddIdeal(ideal.Next(), i)) ++num_rel;
    if (g > 0) {
      sum += dcg.run / dcg.ideal;
      ++num_rel_ret;
    }
  }
  for (; i < n; ++i) add_run(i);
  for (; ideal.gain() > 0.0; ++i) {
    if (dcg.AddIdeal(ideal.Next(), i)) ++num_rel;
  }
  sum += static_cast<double>(num_rel - num_rel_ret) * dcg.run / dcg.ideal;
  return sum > 0.0 ? sum / static_cast<double>(num_rel) : 0.0;
}

// Rndcg (m_Rndcg.c): nDCG averaged over the ranks where the ideal gain
// changes, and at the end of the ranking.
double ComputeRndcg(const JudgedRanking& r, GainTable* gains) {
  if (r.num_rel == 0) return 0.0;
  RunningDcg dcg;
  double sum = 0.0;
  int64_t changes = 0;
  auto add_ratio = [&] {
    if (dcg.ideal > 0.0) {
      sum += dcg.run / dcg.ideal;
      ++changes;
    }
  };
  IdealWalk ideal(gains);
  double old_gain = ideal.gain();
  // The ratio is taken before the rank's own gains are added.
  auto next_ideal = [&] {
    const double ig = ideal.Next();
    if (old_gain != ig) {
      add_ratio();
      old_gain = ig;
    }
    return ig;
  };
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    const double ig = next_ideal();
    dcg.AddRun(r, *gains, i);
    dcg.AddIdeal(ig, i);
  }
  if (i < n) {
    for (; i < n; ++i) dcg.AddRun(r, *gains, i);
    add_ratio();
  }
  for (; ideal.gain() > 0.0; ++i) dcg.AddIdeal(next_ideal(), i);
  return sum / static_cast<double>(changes);
}

// G (m_G.c): gain discounted by how far the run's cumulated gain lags the
// ideal's, normalized by the ideal cumulated gain.
double ComputeG(const JudgedRanking& r, GainTable* gains) {
  constexpr double kMinCost = 1.0;
  double results_g = 0.0;
  double sum_results = 0.0;
  double sum_ideal = 0.0;
  double sum_cost = 0.0;
  IdealWalk ideal(gains);
  const int64_t n = r.num_ret();
  int64_t i = 0;
  for (; i < n && ideal.gain() > 0.0; ++i) {
    const double g = gains->Of(r.codes[static_cast<size_t>(i)]);
    sum_results += g;
    const double ig = ideal.Next();
    if (ig > 0.0) sum_ideal += ig;
    sum_cost += ig >= kMinCost ? ig : kMinCost;
    if (g != 0) results_g += g / std::log2(2 + sum_cost - sum_results);
  }
  for (; i < n; ++i) {
    const double g = gains->Of(r.codes[static_cast<size_t>(i)]);
    sum_results += g;
    sum_cost += kMinCost;
    if (g != 0) results_g += g / std::log2(2 + sum_cost - sum_results);
  }
  while (ideal.gain() > 0.0) {
    const double ig = ideal.Next();
    if (ig > 0.0) sum_ideal += ig;
  }
  return sum_ideal > 0.0 ? results_g / sum_ideal : 0.0;
}

// rbp (m_rbp.c; Moffat and Zobel, TOIS 2008): gains scaled into [0, 1]
// when any lies outside, discounted geometrically with persistence p.
double ComputeRbp(const JudgedRanking& r, std::span<const ParamPair> pairs,
                  GainTable* gains) {
  const double p = ParamP(pairs);
  double min = 0.0;
  double max = 0.0;
  for (const GainTable::Entry& e : gains->entries()) {
    min = std::min(min, e.gain);
    max = std::max(max, e.gain);
  }
  if (min < 0 || max > 1) gains->Rescale(min, max);
  double sum = 0.0;
  double cur_p = 1.0;
  for (Grade c : r.codes) {
    const double g = gains->Of(c);
    if (g != 0) sum += g * cur_p;
    cur_p *= p;
  }
  return (1.0 - p) * sum;
}

// rbp_resid: the most rbp could grow if every unjudged doc were relevant.
double ComputeRbpResid(const JudgedRanking& r,
                       std::span<const ParamPair> pairs) {
  const double p = ParamP(pairs);
  int64_t unjudged = 0;
  double sum = 0.0;
  double cur_p = 1.0;
  for (Grade c : r.codes) {
    if (c < 0) {
      ++unjudged;
      sum += cur_p;
    }
    cur_p *= p;
  }
  return unjudged > 0 ? cur_p + (1 - p) * sum : 0.0;
}

double ComputeGmMap(const JudgedRanking& r, Grade level) {
  int64_t rel_so_far = 0;
  double sum = 0.0;
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (r.codes[static_cast<size_t>(i)] >= level) {
      ++rel_so_far;
      sum += static_cast<double>(rel_so_far) / static_cast<double>(i + 1);
    }
  }
  if (rel_so_far) sum /= static_cast<double>(r.num_rel);
  return std::log(std::max(sum, kMinGeoMean));
}

// bpref (Buckley and Voorhees, SIGIR 2004), as trec_eval computes it.
double ComputeBpref(const JudgedRanking& r, Grade level) {
  const int64_t num_nonrel = r.num_judged_nonrel;
  int64_t nonrel_so_far = 0;
  double bpref = 0.0;
  for (Grade c : r.codes) {
    if (c < 0) continue;
    if (c < level) {
      ++nonrel_so_far;
    } else if (nonrel_so_far > 0) {
      bpref += 1.0 - static_cast<double>(std::min(nonrel_so_far, r.num_rel)) /
                         static_cast<double>(std::min(num_nonrel, r.num_rel));
    } else {
      bpref += 1.0;
    }
  }
  if (r.num_rel) bpref /= static_cast<double>(r.num_rel);
  return bpref;
}

double ComputeGmBpref(const JudgedRanking& r, Grade level) {
  return std::log(std::max(ComputeBpref(r, level), kMinGeoMean));
}

// infAP (Yilmaz and Aslam, CIKM 2006), as trec_eval computes it.
double ComputeInfAp(const JudgedRanking& r, Grade level) {
  int64_t nonrel_so_far = 0;
  int64_t rel_so_far = 0;
  int64_t pool_unjudged_so_far = 0;
  double inf_ap = 0.0;
  for (int64_t j = 0; j < r.num_ret(); ++j) {
    const Grade c = r.codes[static_cast<size_t>(j)];
    if (c == kNotInPool) continue;
    if (c < 0) {
      ++pool_unjudged_so_far;
      continue;
    }
    if (c < level) {
      ++nonrel_so_far;
      continue;
    }
    ++rel_so_far;
    if (j == 0) {
      inf_ap += 1.0;
    } else {
      const double fj = static_cast<double>(j);
      inf_ap += 1.0 / (fj + 1.0) +
                (fj / (fj + 1.0)) *
                    (static_cast<double>(rel_so_far - 1 + nonrel_so_far +
                                         pool_unjudged_so_far) /
                     fj) *
                    ((static_cast<double>(rel_so_far - 1) + kInfApEpsilon) /
                     (static_cast<double>(rel_so_far - 1 + nonrel_so_far) +
                      2 * kInfApEpsilon));
    }
  }
  if (r.num_rel) inf_ap /= static_cast<double>(r.num_rel);
  return inf_ap;
}

// Interpolated precision at recall levels: what iprec_at_recall prints
// and 11pt_avg averages. `cutoffs` are ascending recall levels.
void InterpolatedPrecision(const JudgedRanking& r, Grade level,
                           std::span<const double> levels,
                           std::span<double> out) {
  const int64_t num = static_cast<int64_t>(levels.size());
  int64_t current = num - 1;
  auto cutoff = [&](int64_t c) {
    return std::lround(levels[static_cast<size_t>(c)] *
                       static_cast<double>(r.num_rel));
  };
  while (current >= 0 && cutoff(current) > r.num_rel_ret) --current;
  // 0/0 (NaN, printed -nan) when -J leaves no doc, as in trec_eval; a
  // query missing under -c is scored with one doc.
  double int_precis =
      static_cast<double>(r.num_rel_ret) / static_cast<double>(r.num_ret());
  int64_t rel_so_far = r.num_rel_ret;
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    const double precis =
        static_cast<double>(rel_so_far) / static_cast<double>(i);
    if (int_precis < precis) int_precis = precis;
    if (r.codes[static_cast<size_t>(i - 1)] >= level) {
      while (current >= 0 && rel_so_far == cutoff(current)) {
        out[static_cast<size_t>(current)] = int_precis;
        --current;
      }
      --rel_so_far;
    }
  }
  while (current >= 0) {
    out[static_cast<size_t>(current)] = int_precis;
    --current;
  }
}

// Precision at multiples of R (m_Rprec_mult.c).
void ComputeRprecMult(const JudgedRanking& r, Grade level,
                      std::span<const double> mults, std::span<double> out) {
  const int64_t num = static_cast<int64_t>(mults.size());
  auto cutoff = [&](int64_t c) -> int64_t {
    // trec_eval's (long)(m R + 0.9), saturated: a huge multiplier is a
    // rank past any list, not undefined behaviour.
    const double x =
        mults[static_cast<size_t>(c)] * static_cast<double>(r.num_rel) + 0.9;
    if (!(x < 9.2e18)) return std::numeric_limits<int64_t>::max();
    if (x <= -9.2e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(x);
  };
  int64_t current = num - 1;
  while (current >= 0 && cutoff(current) > r.num_ret()) {
    out[static_cast<size_t>(current)] = static_cast<double>(r.num_rel_ret) /
                                        static_cast<double>(cutoff(current));
    --current;
  }
  int64_t rel_so_far = r.num_rel_ret;
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    const double precis =
        static_cast<double>(rel_so_far) / static_cast<double>(i);
    while (current >= 0 && i == cutoff(current)) {
      out[static_cast<size_t>(current)] = precis;
      --current;
    }
    if (r.codes[static_cast<size_t>(i - 1)] >= level) --rel_so_far;
  }
}

// Relevant docs in the top k over min(k, R) (m_rel_P.c).
void ComputeRelativeP(const JudgedRanking& r, Grade level,
                      std::span<const int32_t> cutoffs, std::span<double> out) {
  if (r.num_rel == 0) return;
  size_t c = 0;
  int64_t rel_so_far = 0;
  auto value = [&](int64_t k) {
    return static_cast<double>(rel_so_far) /
           static_cast<double>(k > r.num_rel ? r.num_rel : k);
  };
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (i == cutoffs[c]) {
      out[c] = value(i);
      if (++c == cutoffs.size()) break;
    }
    if (r.codes[static_cast<size_t>(i)] >= level) ++rel_so_far;
  }
  for (; c < cutoffs.size(); ++c) out[c] = value(cutoffs[c]);
}

// Unjudged docs in the top k over k (m_unjudged.c).
void ComputeUnj(const JudgedRanking& r, std::span<const int32_t> cutoffs,
                std::span<double> out) {
  size_t c = 0;
  int64_t unj = 0;
  for (int64_t i = 0; i < r.num_ret() && c < cutoffs.size(); ++i) {
    if (i == cutoffs[c]) {
      out[c] = static_cast<double>(unj) / static_cast<double>(i);
      if (++c == cutoffs.size()) break;
    }
    if (r.codes[static_cast<size_t>(i)] < 0) ++unj;
  }
  for (; c < cutoffs.size(); ++c) {
    out[c] = static_cast<double>(unj) / static_cast<double>(cutoffs[c]);
  }
}

double ComputeBinG(const JudgedRanking& r, Grade level) {
  int64_t rel_so_far = 0;
  double sum = 0.0;
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (r.codes[static_cast<size_t>(i)] >= level) {
      ++rel_so_far;
      sum += 1.0 / std::log2(static_cast<double>(3 + i - rel_so_far));
    }
  }
  return rel_so_far ? sum / static_cast<double>(r.num_rel) : 0.0;
}

void ComputeRelstring(const JudgedRanking& r, double length,
                      std::string* text) {
  // trec_eval's MIN((long) length, num_ret), without the undefined cast:
  // a length beyond long's range or NaN converts to LONG_MIN on x86-64
  // (trec_eval then prints ''), so it gives 0 here too.
  const bool representable = length > -9.2e18 && length < 9.2e18;
  const int64_t len =
      representable
          ? std::clamp<int64_t>(static_cast<int64_t>(length), 0, r.num_ret())
          : 0;
  text->clear();
  for (int64_t i = 0; i < len; ++i) {
    const Grade c = r.codes[static_cast<size_t>(i)];
    if (c > 9) {
      text->push_back('>');
    } else if (c >= 0) {
      text->push_back(static_cast<char>('0' + c));
    } else if (c == kNotInPool) {
      text->push_back('-');
    } else {
      text->push_back('.');
    }
  }
}

}  // namespace rankwatch::trec
