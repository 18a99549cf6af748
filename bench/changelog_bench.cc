// The changelog's bytes and a restore's time over a simulated stretch of
// traffic (issue 45): requests at a fixed rate through the pipeline, in
// event-time order, checkpointed every interval of event time as the
// daemon does (kafka::KafkaIngest::EncodeChainRecord: a base, then deltas
// until they outgrow it), against what writing each partition's whole
// state every interval (the design before issue 45) would write. A plain
// program: its figures are byte counts of one deterministic run, plus the
// restore's wall time. See bench/README.md for the figures.
//
// Traffic: request i is served at i / rate seconds, on partition i mod
// --partitions, 10 docs and a locale segment (stream_bench's events); it
// gets 0 to 3 clicks (uniform), each 1 s to 121 s after it. The join
// window is --window_minutes (30, the default `join.window`).
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "config/config.h"
#include "daemon/kafka/changelog.h"
#include "daemon/stream/pipeline/pipeline.h"

namespace rankwatch {
namespace {

using stream::EventOrigin;
using stream::Pipeline;
using stream::Topic;

constexpr int64_t kT0 = 1'700'000'000'000;

struct Options {
  int64_t rate = 1000;  // Requests per second.
  int64_t window_minutes = 30;
  int64_t minutes = 60;  // Simulated event time.
  int32_t partitions = 4;
  int64_t interval_ms = 5000;
};

void ResultsJson(int64_t i, int64_t t, std::string* s) {
  *s = "{\"request_id\":\"req-" + std::to_string(i) + "\",\"query_id\":\"q-" +
       std::to_string(i % 5000) + "\",\"variant\":\"" + (i % 2 ? "B" : "A") +
       "\",\"timestamp\":" + std::to_string(t) + ",\"results\":[";
  for (int d = 0; d < 10; ++d) {
    if (d > 0) *s += ',';
    *s += "{\"doc_id\":\"doc-" + std::to_string((i * 13 + d) % 100'000) +
          "\",\"score\":" + std::to_string(10 - d) + ".5}";
  }
  *s += "],\"segments\":{\"locale\":\"";
  *s += i % 3 ? "en" : "de";
  *s += "\"}}";
}

void ClickJson(int64_t i, int rank, int64_t t, std::string* s) {
  *s = "{\"request_id\":\"req-" + std::to_string(i) + "\",\"doc_id\":\"doc-" +
       std::to_string((i * 13 + rank) % 100'000) +
       "\",\"relevance\":1,\"timestamp\":" + std::to_string(t) + "}";
}

struct Click {
  int64_t time_ms;
  int64_t request;
  int rank;
  bool operator>(const Click& o) const { return time_ms > o.time_ms; }
};

// A partition's chain as the daemon keeps it.
struct ChainState {
  std::string base;
  std::vector<std::string> deltas;
  int64_t delta_bytes = 0;
};

struct Totals {
  int64_t events = 0, event_bytes = 0, chain_bytes = 0, whole_bytes = 0;
  int64_t bases = 0, deltas = 0;
  void Print(const char* what, double seconds) const {
    std::printf(
        "%s: %lld events (%.1f bytes each as JSON), %.1f s of event time\n"
        "  chain (base + deltas): %lld bytes, %.1f per event, %.0f per s, "
        "%.2f x the input; %lld bases, %lld deltas\n"
        "  whole state each round (before): %lld bytes, %.1f per event, "
        "%.0f per s, %.2f x the input\n",
        what, static_cast<long long>(events),
        static_cast<double>(event_bytes) / events, seconds,
        static_cast<long long>(chain_bytes),
        static_cast<double>(chain_bytes) / events, chain_bytes / seconds,
        static_cast<double>(chain_bytes) / event_bytes,
        static_cast<long long>(bases), static_cast<long long>(deltas),
        static_cast<long long>(whole_bytes),
        static_cast<double>(whole_bytes) / events, whole_bytes / seconds,
        static_cast<double>(whole_bytes) / event_bytes);
  }
};

config::Config BenchConfig(const Options& o) {
  config::Config c;
  c.join.window = std::chrono::minutes(o.window_minutes);
  c.join.max_pending_requests = o.rate * o.window_minutes * 60 * 2 + 100'000;
  c.aggregation.segments = {"locale"};
  return c;
}

// One checkpoint round of partition p: returns the chain record's bytes.
int64_t ChainRound(Pipeline* p, int32_t shard, int64_t offset,
                   ChainState* chain, Totals* totals) {
  std::string state, record;
  const std::array<int64_t, 2> at = {offset, offset};
  if (!chain->base.empty() &&
      chain->delta_bytes <= static_cast<int64_t>(chain->base.size()) &&
      p->EncodeShardDelta(shard, &state)) {
    kafka::EncodeDeltaRecord(
        {shard, at, 0, static_cast<uint32_t>(chain->deltas.size() + 1), state},
        &record);
    chain->delta_bytes += static_cast<int64_t>(record.size());
    chain->deltas.push_back(record);
    ++totals->deltas;
  } else {
    p->EncodeShardBase(shard, &state);
    kafka::EncodeCheckpointRecord({shard, at, state}, &record);
    chain->base = record;
    chain->deltas.clear();
    chain->delta_bytes = 0;
    ++totals->bases;
  }
  return static_cast<int64_t>(record.size());
}

double Millis(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - since)
      .count();
}

// Restores every partition from its chain into a fresh pipeline, then
// from a whole record of the live state: the wall time of each.
void TimeRestores(const Options& o, Pipeline* live,
                  const std::vector<ChainState>& chains, const Clock* clock) {
  double chain_ms = 0, whole_ms = 0;
  int64_t chain_read = 0, whole_read = 0;
  for (int32_t p = 0; p < o.partitions; ++p) {
    {
      auto fresh = Pipeline::Create(BenchConfig(o), clock);
      const auto start = std::chrono::steady_clock::now();
      auto base = kafka::DecodeCheckpointRecord(chains[p].base);
      Status s = (*fresh)->DecodeShard(p, base->state);
      for (const std::string& d : chains[p].deltas) {
        auto delta = kafka::DecodeDeltaRecord(d);
        if (s.ok()) s = (*fresh)->ApplyShardDelta(p, delta->state);
      }
      chain_ms += Millis(start);
      if (!s.ok()) std::printf("restore failed: %s\n", s.ToString().c_str());
      chain_read +=
          static_cast<int64_t>(chains[p].base.size()) + chains[p].delta_bytes;
    }
    std::string whole;
    live->EncodeShard(p, &whole);
    auto fresh = Pipeline::Create(BenchConfig(o), clock);
    const auto start = std::chrono::steady_clock::now();
    const Status s = (*fresh)->DecodeShard(p, whole);
    whole_ms += Millis(start);
    if (!s.ok()) std::printf("restore failed: %s\n", s.ToString().c_str());
    whole_read += static_cast<int64_t>(whole.size());
  }
  std::printf(
      "restore of the %d partitions at the end (%lld pending): chain %.0f ms "
      "(%lld bytes read), whole record %.0f ms (%lld bytes)\n",
      o.partitions, static_cast<long long>(live->pending_requests()), chain_ms,
      static_cast<long long>(chain_read), whole_ms,
      static_cast<long long>(whole_read));
}

int Run(const Options& o) {
  FakeClock clock(kT0 + (o.minutes + 60) * 60'000);
  auto created = Pipeline::Create(BenchConfig(o), &clock);
  if (!created.ok()) {
    std::printf("%s\n", created.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<Pipeline> live = std::move(created).value();
  for (int32_t p = 0; p < o.partitions; ++p) {
    live->AddSource(EventOrigin::SourceOf(0, p));
    live->AddSource(EventOrigin::SourceOf(1, p));
  }
  Xoshiro256 rng(45);
  std::priority_queue<Click, std::vector<Click>, std::greater<Click>> clicks;
  std::vector<ChainState> chains(static_cast<size_t>(o.partitions));
  std::vector<int64_t> whole_size(static_cast<size_t>(o.partitions), 0);
  Totals all, steady;
  const int64_t steady_from = kT0 + o.window_minutes * 60'000 + 120'000;
  std::string json;
  int64_t offset = 0, next = 0;
  const int64_t rounds = o.minutes * 60'000 / o.interval_ms;
  auto feed = [&](Topic topic, int64_t request, Totals* round) {
    const int32_t p = static_cast<int32_t>(request % o.partitions);
    const int32_t source =
        EventOrigin::SourceOf(topic == Topic::kResults ? 0 : 1, p);
    (void)live->OnPayload(topic, json, EventOrigin{source, ++offset});
    ++round->events;
    round->event_bytes += static_cast<int64_t>(json.size());
  };
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t end = kT0 + (r + 1) * o.interval_ms;
    Totals round;
    for (;;) {
      const int64_t served = kT0 + next * 1000 / o.rate;
      const int64_t due = clicks.empty() ? INT64_MAX : clicks.top().time_ms;
      if (std::min(served, due) >= end) break;
      if (due <= served) {
        const Click c = clicks.top();
        clicks.pop();
        ClickJson(c.request, c.rank, c.time_ms, &json);
        feed(Topic::kJudgments, c.request, &round);
        continue;
      }
      ResultsJson(next, served, &json);
      feed(Topic::kResults, next, &round);
      const int n = static_cast<int>(rng.Below(4));
      for (int k = 0; k < n; ++k) {
        clicks.push({served + 1000 + static_cast<int64_t>(rng.Below(120'000)),
                     next, static_cast<int>(rng.Below(10))});
      }
      ++next;
    }
    for (int32_t p = 0; p < o.partitions; ++p) {
      round.chain_bytes +=
          ChainRound(live.get(), p, offset, &chains[p], &round);
      // The whole state, sampled once a minute (it moves slowly).
      if (r % 12 == 0) {
        std::string whole, record;
        live->EncodeShard(p, &whole);
        kafka::EncodeCheckpointRecord({p, {offset, offset}, whole}, &record);
        whole_size[static_cast<size_t>(p)] =
            static_cast<int64_t>(record.size());
      }
      round.whole_bytes += whole_size[static_cast<size_t>(p)];
    }
    for (Totals* t : {&all, &steady}) {
      if (t == &steady && end <= steady_from) continue;
      t->events += round.events;
      t->event_bytes += round.event_bytes;
      t->chain_bytes += round.chain_bytes;
      t->whole_bytes += round.whole_bytes;
      t->bases += round.bases;
      t->deltas += round.deltas;
    }
  }
  std::printf(
      "rate %lld requests/s, join window %lld min, %lld min simulated, %d "
      "partitions, a round every %lld ms\n",
      static_cast<long long>(o.rate), static_cast<long long>(o.window_minutes),
      static_cast<long long>(o.minutes), o.partitions,
      static_cast<long long>(o.interval_ms));
  all.Print("whole run", static_cast<double>(o.minutes) * 60);
  steady.Print(
      "steady state (after the first window closed)",
      static_cast<double>(kT0 + o.minutes * 60'000 - steady_from) / 1000);
  // What every delta holds whatever changed: the sections written whole
  // (aggregates, windows, sums), with no request changed.
  for (int32_t p = 0; p < o.partitions; ++p) {
    std::string idle;
    (void)live->EncodeShardDelta(p, &idle);
    idle.clear();
    (void)live->EncodeShardDelta(p, &idle);
    std::printf("partition %d: a delta without changes: %zu bytes\n", p,
                idle.size());
  }
  TimeRestores(o, live.get(), chains, &clock);
  return 0;
}

}  // namespace
}  // namespace rankwatch

int main(int argc, char** argv) {
  rankwatch::Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int64_t v = std::stoll(argv[i + 1]);
    if (flag == "--rate") {
      o.rate = v;
    } else if (flag == "--window_minutes") {
      o.window_minutes = v;
    } else if (flag == "--minutes") {
      o.minutes = v;
    } else if (flag == "--partitions") {
      o.partitions = static_cast<int32_t>(v);
    } else if (flag == "--interval_ms") {
      o.interval_ms = v;
    } else {
      std::fprintf(stderr,
                   "usage: changelog_bench [--rate N] [--window_minutes N] "
                   "[--minutes N] [--partitions N] [--interval_ms N]\n");
      return 2;
    }
  }
  return rankwatch::Run(o);
}
