#include "daemon/stream/interleaving/interleaving_report.h"

#include <cmath>
#include <cstdio>

#include "base/json_writer.h"

namespace rankwatch::stream {

namespace {

const std::string& Team(const InterleavingState& s, size_t t) {
  return s.config->teams[t];
}

// {X: n, Y: m} of two teams.
void WriteWins(const InterleavingState& s, size_t x, size_t y,
               const metrics::InterleavingCounts& c, JsonWriter* w) {
  w->BeginObject();
  w->Key(Team(s, x));
  w->Int(c.wins[0]);
  w->Key(Team(s, y));
  w->Int(c.wins[1]);
  w->EndObject();
}

void WritePair(const InterleavingState& s, size_t pair, JsonWriter* w) {
  const metrics::PairAnalysis& a = s.analysis.pairs[pair];
  const metrics::InterleavingCounts& c = s.counts.pairs[pair];
  w->BeginObject();
  w->Key("teams");
  w->BeginArray();
  w->String(Team(s, a.first));
  w->String(Team(s, a.second));
  w->EndArray();
  w->Key("wins");
  WriteWins(s, a.first, a.second, c, w);
  w->Key("ties");
  w->Int(c.ties);
  w->Key("preference");
  w->Double(a.preference);
  w->Key("interval");
  w->BeginArray();
  w->Double(a.interval.lower);
  w->Double(a.interval.upper);
  w->EndArray();
  w->Key("p_value");
  w->Double(a.p_value);
  w->Key("sequential_p_value");
  w->Double(a.sequential_p_value);
  w->Key("adjusted_p_value");
  w->Double(a.adjusted_p_value);
  w->Key("verdict");
  w->Int(a.verdict);
  w->Key("state");
  w->String(VerdictStateName(s.pair_states[pair]));
  w->EndObject();
}

// {team: figure, ...} of every team.
template <typename T>
void WriteTeamFigures(const InterleavingState& s, const std::vector<T>& v,
                      JsonWriter* w) {
  w->BeginObject();
  for (size_t t = 0; t < s.config->teams.size() && t < v.size(); ++t) {
    w->Key(Team(s, t));
    w->Int(v[t]);
  }
  w->EndObject();
}

// A two-team experiment's figures at the top level, as before
// multileaving: wins and ties (before no_click) ...
void WriteTwoTeamCounts(const InterleavingState& s, JsonWriter* w) {
  w->Key("wins");
  WriteWins(s, 0, 1, s.all, w);
  w->Key("ties");
  w->Int(s.all.ties);
}

// ... and the test's figures (after it).
void WriteTwoTeamTest(const InterleavingState& s, JsonWriter* w) {
  w->Key("preference");
  w->Double(metrics::Preference(s.all));
  w->Key("p_value");
  w->Double(metrics::SignTestPValue(s.all.wins[0], s.all.wins[1]));
  w->Key("sequential_p_value");
  w->Double(s.sequential.p_value());
  w->Key("verdict");
  w->Int(s.verdict);
}

void WriteExperiment(const InterleavingState& s, JsonWriter* w) {
  const bool two_teams = s.config->teams.size() == 2;
  w->BeginObject();
  w->Key("impressions");
  w->Int(s.counts.impressions);
  if (two_teams) WriteTwoTeamCounts(s, w);
  w->Key("no_click");
  w->Int(s.counts.no_click);
  if (two_teams) WriteTwoTeamTest(s, w);
  w->Key("clicks");
  WriteTeamFigures(s, s.counts.clicks, w);
  w->Key("pairs");
  w->BeginArray();
  for (size_t p = 0; p < s.analysis.pairs.size(); ++p) WritePair(s, p, w);
  w->EndArray();
  w->Key("copeland");
  WriteTeamFigures(s, s.analysis.copeland, w);
  w->Key("ranking");
  w->BeginArray();
  for (const size_t t : s.analysis.ranking) w->String(Team(s, t));
  w->EndArray();
  w->Key("winner");
  if (s.analysis.winner < 0) {
    w->Null();
  } else {
    w->String(Team(s, static_cast<size_t>(s.analysis.winner)));
  }
  w->EndObject();
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

void WriteInterleavingJson(const InterleavingMonitor& m, JsonWriter* w) {
  WriteInterleavingJson(m.experiments(), w);
}

void WriteInterleavingJson(std::span<const InterleavingState> states,
                           JsonWriter* w) {
  w->BeginObject();
  for (const InterleavingState& s : states) {
    w->Key(s.config->name);
    WriteExperiment(s, w);
  }
  w->EndObject();
}

void AppendInterleavingJson(std::string* out, const InterleavingMonitor& m) {
  JsonWriter w;
  WriteInterleavingJson(m, &w);
  out->append(",\"interleaving\":");
  out->append(w.Take());
}

void AppendInterleavingTable(std::string* out, const InterleavingMonitor& m) {
  AppendInterleavingTable(out, m.experiments());
}

void AppendInterleavingTable(std::string* out,
                             std::span<const InterleavingState> states) {
  char buf[320];
  for (const InterleavingState& s : states) {
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
