// Replay's report of the interleaving and multileaving experiments: the
// "interleaving" member of its JSON and the lines of its table, from an
// InterleavingMonitor after its last look (Update). The JSON member names
// are a contract (docs/statistics.md, "Multileaving"): per experiment
// `impressions`, `no_click`, `clicks`, `pairs` (each `{teams: [X, Y],
// wins: {X: n, Y: m}, ties, preference, interval, p_value,
// sequential_p_value, adjusted_p_value, verdict, state}`), `copeland`,
// `ranking` (teams best first) and `winner`; a two-team experiment keeps
// its pair's figures at the top level too (`wins`, `ties`, `preference`,
// `p_value`, `sequential_p_value`, `verdict`), as before multileaving.
//
// Pure functions of the monitor's states (or a snapshot's copies of them,
// PipelineSnapshot::interleaving); thread-compatible.
#ifndef RANKWATCH_DAEMON_STREAM_INTERLEAVING_INTERLEAVING_REPORT_H_
#define RANKWATCH_DAEMON_STREAM_INTERLEAVING_INTERLEAVING_REPORT_H_

#include <span>
#include <string>
#include <string_view>

#include "base/json_writer.h"
#include "daemon/stream/interleaving/interleaving_monitor.h"

namespace rankwatch::stream {

// Writes the "interleaving" member's value, {NAME: {...}, ...}, one
// member per experiment in configuration order.
void WriteInterleavingJson(const InterleavingMonitor& m, JsonWriter* w);
void WriteInterleavingJson(std::span<const InterleavingState> states,
                           JsonWriter* w);

// Appends `,"interleaving":{NAME: {...}, ...}` (WriteInterleavingJson's
// document) to a JSON object written by hand: replay's report until it
// writes through a JsonWriter too.
void AppendInterleavingJson(std::string* out, const InterleavingMonitor& m);

// Appends the table's lines, one block per experiment.
void AppendInterleavingTable(std::string* out, const InterleavingMonitor& m);
void AppendInterleavingTable(std::string* out,
                             std::span<const InterleavingState> states);

// What a pair's verdict means, for people: "X better", "Y better",
// "inconclusive" or "no_data".
std::string PairVerdictText(const InterleavingState& s, size_t pair);

}  // namespace rankwatch::stream

#endif  // RANKWATCH_DAEMON_STREAM_INTERLEAVING_INTERLEAVING_REPORT_H_
