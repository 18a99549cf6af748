#include "daemon/stream/interleaving_report.h"

#include <cmath>
#include <cstdio>

#include "base/json_writer.h"

namespace rankwatch::stream {

namespace {

const std::string& Team(const InterleavingState& s, size_t t) {
  return s.config->teams[t];
}

// {X: n, Y: m} of two teams.
void AppendWins(std::string* out, const InterleavingState& s, size_t x,
                size_t y, const metrics::InterleavingCounts& c) {
  out->push_back('{');
  AppendJsonString(out, Team(s, x));
  out->push_back(':');
  AppendJsonInt(out, c.wins[0]);
  out->push_back(',');
  AppendJsonString(out, Team(s, y));
  out->push_back(':');
  AppendJsonInt(out, c.wins[1]);
  out->push_back('}');
}

void AppendPair(std::string* out, const InterleavingState& s, size_t pair) {
  const metrics::PairAnalysis& a = s.analysis.pairs[pair];
  const metrics::InterleavingCounts& c = s.counts.pairs[pair];
  out->append("{\"teams\":[");
  AppendJsonString(out, Team(s, a.first));
  out->push_back(',');
  AppendJsonString(out, Team(s, a.second));
  out->append("],\"wins\":");
  AppendWins(out, s, a.first, a.second, c);
  out->append(",\"ties\":");
  AppendJsonInt(out, c.ties);
  out->append(",\"preference\":");
  AppendJsonDouble(out, a.preference);
  out->append(",\"interval\":[");
  AppendJsonDouble(out, a.interval.lower);
  out->push_back(',');
  AppendJsonDouble(out, a.interval.upper);
  out->append("],\"p_value\":");
  AppendJsonDouble(out, a.p_value);
  out->append(",\"sequential_p_value\":");
  AppendJsonDouble(out, a.sequential_p_value);
  out->append(",\"adjusted_p_value\":");
  AppendJsonDouble(out, a.adjusted_p_value);
  out->append(",\"verdict\":");
  AppendJsonInt(out, a.verdict);
  out->append(",\"state\":");
  AppendJsonString(out, VerdictStateName(s.pair_states[pair]));
  out->push_back('}');
}

void AppendExperimentJson(std::string* out, const InterleavingState& s) {
  const size_t n = s.config->teams.size();
  out->append("{\"impressions\":");
  AppendJsonInt(out, s.counts.impressions);
  if (n == 2) {
    // The two-team report as before multileaving: the pair's figures.
    out->append(",\"wins\":");
    AppendWins(out, s, 0, 1, s.all);
    out->append(",\"ties\":");
    AppendJsonInt(out, s.all.ties);
  }
  out->append(",\"no_click\":");
  AppendJsonInt(out, s.counts.no_click);
  if (n == 2) {
    out->append(",\"preference\":");
    AppendJsonDouble(out, metrics::Preference(s.all));
    out->append(",\"p_value\":");
    AppendJsonDouble(out,
                     metrics::SignTestPValue(s.all.wins[0], s.all.wins[1]));
    out->append(",\"sequential_p_value\":");
    AppendJsonDouble(out, s.sequential.p_value());
    out->append(",\"verdict\":");
    AppendJsonInt(out, s.verdict);
  }
  out->append(",\"clicks\":{");
  for (size_t t = 0; t < n; ++t) {
    if (t > 0) out->push_back(',');
    AppendJsonString(out, Team(s, t));
    out->push_back(':');
    AppendJsonInt(out, s.counts.clicks[t]);
  }
  out->append("},\"pairs\":[");
  for (size_t p = 0; p < s.analysis.pairs.size(); ++p) {
    if (p > 0) out->push_back(',');
    AppendPair(out, s, p);
  }
  out->append("],\"copeland\":{");
  for (size_t t = 0; t < n && t < s.analysis.copeland.size(); ++t) {
    if (t > 0) out->push_back(',');
    AppendJsonString(out, Team(s, t));
    out->push_back(':');
    AppendJsonInt(out, s.analysis.copeland[t]);
  }
  out->append("},\"ranking\":[");
  for (size_t i = 0; i < s.analysis.ranking.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(out, Team(s, s.analysis.ranking[i]));
  }
  out->append("],\"winner\":");
  if (s.analysis.winner < 0) {
    out->append("null");
  } else {
    AppendJsonString(out, Team(s, static_cast<size_t>(s.analysis.winner)));
  }
  out->push_back('}');
}

// "A=3 B=5 C=1"
std::string TeamFigures(const InterleavingState& s,
                        const std::vector<int64_t>& v) {
  std::string out;
  for (size_t t = 0; t < v.size(); ++t) {
    if (t > 0) out += ' ';
    out += Team(s, t) + "=" + std::to_string(v[t]);
  }
  return out;
}

// Multileaving's block: counts, one line per pair, the ranking.
void AppendMultileavingTable(std::string* out, const InterleavingState& s) {
  std::string teams;
  for (size_t t = 0; t < s.config->teams.size(); ++t) {
    if (t > 0) teams += ", ";
    teams += Team(s, t);
  }
  *out += "\ninterleaving " + s.config->name + " (variant " +
          s.config->variant + ", multileaved: " + teams + ")\n";
  *out += "  impressions=" + std::to_string(s.counts.impressions) +
          " no_click=" + std::to_string(s.counts.no_click) + " clicks " +
          TeamFigures(s, s.counts.clicks) + "\n";
  char buf[320];
  for (size_t p = 0; p < s.analysis.pairs.size(); ++p) {
    const metrics::PairAnalysis& a = s.analysis.pairs[p];
    const metrics::InterleavingCounts& c = s.counts.pairs[p];
    std::snprintf(
        buf, sizeof(buf),
        "  %s vs %s: wins %lld-%lld ties=%lld preference for %s "
        "%+.4f [%+.4f, %+.4f], sequential p=%.4g, BH p=%.4g: %s\n",
        Team(s, a.first).c_str(), Team(s, a.second).c_str(),
        static_cast<long long>(c.wins[0]), static_cast<long long>(c.wins[1]),
        static_cast<long long>(c.ties), Team(s, a.second).c_str(), a.preference,
        a.interval.lower, a.interval.upper, a.sequential_p_value,
        a.adjusted_p_value, PairVerdictText(s, p).c_str());
    *out += buf;
  }
  std::string ranking;
  for (size_t i = 0; i < s.analysis.ranking.size(); ++i) {
    const size_t t = s.analysis.ranking[i];
    if (i > 0) ranking += ", ";
    ranking += Team(s, t) + " (" + std::to_string(s.analysis.copeland[t]) + ")";
  }
  *out += "  ranking (Copeland score): " + ranking + "; winner: " +
          (s.analysis.winner < 0
               ? std::string("none yet")
               : Team(s, static_cast<size_t>(s.analysis.winner))) +
          "\n";
}

}  // namespace

std::string PairVerdictText(const InterleavingState& s, size_t pair) {
  if (pair >= s.analysis.pairs.size() || pair >= s.pair_states.size()) {
    return "no_data";
  }
  const metrics::PairAnalysis& a = s.analysis.pairs[pair];
  if (a.verdict > 0) return Team(s, a.second) + " better";
  if (a.verdict < 0) return Team(s, a.first) + " better";
  return std::string(VerdictStateName(s.pair_states[pair]));
}

void AppendInterleavingJson(std::string* out, const InterleavingMonitor& m) {
  out->append(",\"interleaving\":{");
  bool first = true;
  for (const InterleavingState& s : m.experiments()) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(out, s.config->name);
    out->push_back(':');
    AppendExperimentJson(out, s);
  }
  out->push_back('}');
}

void AppendInterleavingTable(std::string* out, const InterleavingMonitor& m) {
  char buf[320];
  for (const InterleavingState& s : m.experiments()) {
    if (s.config->teams.size() > 2) {
      AppendMultileavingTable(out, s);
      continue;
    }
    const metrics::InterleavingCounts& c = s.all;
    std::snprintf(
        buf, sizeof(buf),
        "\ninterleaving %s (variant %s: %s vs %s)\n"
        "  impressions=%lld wins %s=%lld %s=%lld ties=%lld no_click=%lld\n"
        "  preference for %s %+.4f, sign test p=%.4g, sequential p=%.4g: "
        "%s\n",
        s.config->name.c_str(), s.config->variant.c_str(),
        s.config->teams[0].c_str(), s.config->teams[1].c_str(),
        static_cast<long long>(c.impressions), s.config->teams[0].c_str(),
        static_cast<long long>(c.wins[0]), s.config->teams[1].c_str(),
        static_cast<long long>(c.wins[1]), static_cast<long long>(c.ties),
        static_cast<long long>(c.no_click), s.config->teams[1].c_str(),
        metrics::Preference(c), metrics::SignTestPValue(c.wins[0], c.wins[1]),
        s.sequential.p_value(), std::string(VerdictStateName(s.state)).c_str());
    *out += buf;
  }
}

}  // namespace rankwatch::stream
