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
//
// Partitions are independent (a request and its clicks go to one
// partition, whose windows close by its own progress), so by default
// (--one_partition_at_a_time 1) the run is simulated once per partition,
// each in a pipeline of its own that holds only that partition's state,
// freed before the partition's restores: records of the same sizes (the
// per-partition digests printed say so), in the memory of one partition.
// --one_partition_at_a_time 0 holds every partition in one pipeline, as one
// daemon owning them all would.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
  // Simulate and restore the partitions one after the other, each in a
  // pipeline of its own (the same bytes in a fraction of the memory), or
  // all of them in one pipeline (0).
  bool one_partition_at_a_time = true;
  // With one partition at a time: simulate partitions 0 to this - 1 only
  // (0: all), a sample of --partitions. Partitions differ only by which
  // requests they get, so the sample's bytes per event and ratio to the
  // input estimate the whole's; its bytes per second and pending requests
  // are its share.
  int32_t simulated_partitions = 0;
};

int32_t Simulated(const Options& o) {
  return o.simulated_partitions > 0 ? o.simulated_partitions : o.partitions;
}

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

// A partition's chain as the daemon keeps it, and a digest of the sizes of
// every record written to it, in order: two runs that print the same
// digests wrote records of the same sizes, round by round (the check that
// --one_partition_at_a_time changes no figure). Not of the bytes: a
// pipeline numbers label groups in the order it first sees them, and a
// shard's aggregates are written in that order, so a pipeline fed one
// partition may write a shard's groups in another order than one fed all
// of them (the same sections, the same size).
struct ChainState {
  std::string base;
  std::vector<std::string> deltas;
  int64_t delta_bytes = 0;
  uint64_t digest = 0;
};

struct Totals {
  int64_t events = 0, event_bytes = 0, chain_bytes = 0, whole_bytes = 0;
  int64_t bases = 0, deltas = 0;
  void Add(const Totals& t) {
    events += t.events;
    event_bytes += t.event_bytes;
    chain_bytes += t.chain_bytes;
    whole_bytes += t.whole_bytes;
    bases += t.bases;
    deltas += t.deltas;
  }
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
  const bool delta =
      !chain->base.empty() &&
      chain->delta_bytes <= static_cast<int64_t>(chain->base.size()) &&
      p->EncodeShardDelta(shard, &state);
  if (delta) {
    kafka::EncodeDeltaRecord(
        {shard, at, 0, static_cast<uint32_t>(chain->deltas.size() + 1), state},
        &record);
    chain->delta_bytes += static_cast<int64_t>(record.size());
    ++totals->deltas;
  } else {
    // The chain it replaces goes first: one chain in memory at a time.
    chain->base = std::string();
    chain->deltas = std::vector<std::string>();
    chain->delta_bytes = 0;
    p->EncodeShardBase(shard, &state);
    kafka::EncodeCheckpointRecord({shard, at, state}, &record);
    ++totals->bases;
  }
  const auto bytes = static_cast<int64_t>(record.size());
  chain->digest =
      chain->digest * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(bytes);
  if (delta) {
    chain->deltas.push_back(std::move(record));
  } else {
    chain->base = std::move(record);
  }
  return bytes;
}

double Millis(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - since)
      .count();
}

// What one pass over the traffic leaves: each partition's chain and the
// byte counts, over the whole run and at steady state.
struct Simulation {
  std::vector<ChainState> chains;
  std::vector<int64_t> whole_size;  // The latest sample, per partition.
  Totals all, steady;
};

// The checkpoint round `r` (offset: the last event's) of every partition,
// or of partition `only` when it is not negative.
void CheckpointRound(const Options& o, int32_t only, int64_t r, int64_t offset,
                     Pipeline* live, Simulation* sim, Totals* round) {
  for (int32_t p = 0; p < o.partitions; ++p) {
    if (only >= 0 && p != only) continue;
    const auto i = static_cast<size_t>(p);
    round->chain_bytes += ChainRound(live, p, offset, &sim->chains[i], round);
    // The whole state, sampled once a minute (it moves slowly).
    if (r % 12 == 0) {
      std::string whole, record;
      live->EncodeShard(p, &whole);
      kafka::EncodeCheckpointRecord({p, {offset, offset}, whole}, &record);
      sim->whole_size[i] = static_cast<int64_t>(record.size());
    }
    round->whole_bytes += sim->whole_size[i];
  }
}

// Feeds the traffic (see the file comment) to `live`, checkpointing every
// interval: every partition's events when `only` is negative, else only
// partition `only`'s. The others' are still drawn, so that the random
// draws and the offsets are the full run's, but neither written nor fed.
// A request goes to one partition, and a shard's windows close by its own
// partition's progress (stream::Watermark), so a partition's records are
// the same whether or not the others are fed: the same sizes (the digests
// show it), the same content (up to the order of label groups: see
// ChainState).
void Simulate(const Options& o, int32_t only, Pipeline* live, Simulation* sim) {
  Xoshiro256 rng(45);
  std::priority_queue<Click, std::vector<Click>, std::greater<Click>> clicks;
  sim->chains.assign(static_cast<size_t>(o.partitions), ChainState());
  sim->whole_size.assign(static_cast<size_t>(o.partitions), 0);
  const int64_t steady_from = kT0 + o.window_minutes * 60'000 + 120'000;
  std::string json;
  int64_t offset = 0, next = 0;
  const int64_t rounds = o.minutes * 60'000 / o.interval_ms;
  auto fed = [&](int64_t request) {
    ++offset;
    return only < 0 || request % o.partitions == only;
  };
  auto feed = [&](Topic topic, int64_t request, Totals* round) {
    const int32_t p = static_cast<int32_t>(request % o.partitions);
    const int32_t source =
        EventOrigin::SourceOf(topic == Topic::kResults ? 0 : 1, p);
    (void)live->OnPayload(topic, json, EventOrigin{source, offset});
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
        if (fed(c.request)) {
          ClickJson(c.request, c.rank, c.time_ms, &json);
          feed(Topic::kJudgments, c.request, &round);
        }
        continue;
      }
      if (fed(next)) {
        ResultsJson(next, served, &json);
        feed(Topic::kResults, next, &round);
      }
      const int n = static_cast<int>(rng.Below(4));
      for (int k = 0; k < n; ++k) {
        clicks.push({served + 1000 + static_cast<int64_t>(rng.Below(120'000)),
                     next, static_cast<int>(rng.Below(10))});
      }
      ++next;
    }
    CheckpointRound(o, only, r, offset, live, sim, &round);
    sim->all.Add(round);
    if (end > steady_from) sim->steady.Add(round);
  }
}

// A partition at the end of the run.
struct PartitionEnd {
  uint64_t digest = 0;    // Its chain's records (ChainState::digest).
  int64_t pending = -1;   // Its pending requests; -1 when not counted.
  size_t idle_delta = 0;  // A delta without changes, bytes.
  double chain_ms = 0, whole_ms = 0;  // The restores' wall times.
  int64_t chain_read = 0, whole_read = 0;
};

// What every delta of partition p holds whatever changed (the sections
// written whole: aggregates, windows, sums): a delta with no request
// changed. Then the whole state of p, for the restore.
void EndOf(Pipeline* live, int32_t p, PartitionEnd* end, std::string* whole) {
  std::string idle;
  (void)live->EncodeShardDelta(p, &idle);
  idle.clear();
  (void)live->EncodeShardDelta(p, &idle);
  end->idle_delta = idle.size();
  live->EncodeShard(p, whole);
}

// Restores partition p from its chain (base, then deltas) into a fresh
// pipeline, then from a whole record into another: the wall time of each.
void TimeRestore(const Options& o, int32_t p, const ChainState& chain,
                 const std::string& whole, const Clock* clock,
                 PartitionEnd* end) {
  {
    auto fresh = Pipeline::Create(BenchConfig(o), clock);
    const auto start = std::chrono::steady_clock::now();
    auto base = kafka::DecodeCheckpointRecord(chain.base);
    Status s = (*fresh)->DecodeShard(p, base->state);
    for (const std::string& d : chain.deltas) {
      auto delta = kafka::DecodeDeltaRecord(d);
      if (s.ok()) s = (*fresh)->ApplyShardDelta(p, delta->state);
    }
    end->chain_ms = Millis(start);
    if (!s.ok()) std::printf("restore failed: %s\n", s.ToString().c_str());
    end->chain_read =
        static_cast<int64_t>(chain.base.size()) + chain.delta_bytes;
  }
  auto fresh = Pipeline::Create(BenchConfig(o), clock);
  const auto start = std::chrono::steady_clock::now();
  const Status s = (*fresh)->DecodeShard(p, whole);
  end->whole_ms = Millis(start);
  if (!s.ok()) std::printf("restore failed: %s\n", s.ToString().c_str());
  end->whole_read = static_cast<int64_t>(whole.size());
}

struct Results {
  Totals all, steady;
  int64_t pending = 0;
  std::vector<PartitionEnd> ends;
};

std::unique_ptr<Pipeline> LivePipeline(const Options& o, const Clock* clock) {
  auto created = Pipeline::Create(BenchConfig(o), clock);
  if (!created.ok()) {
    std::printf("%s\n", created.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(created).value();
}

// Every partition in one pipeline, as a daemon that owns them all: the
// memory of every partition's state at once, and of a partition's
// restores beside it.
void RunAllAtOnce(const Options& o, const Clock* clock, Results* out) {
  std::unique_ptr<Pipeline> live = LivePipeline(o, clock);
  for (int32_t p = 0; p < o.partitions; ++p) {
    live->AddSource(EventOrigin::SourceOf(0, p));
    live->AddSource(EventOrigin::SourceOf(1, p));
  }
  Simulation sim;
  Simulate(o, -1, live.get(), &sim);
  out->all = sim.all;
  out->steady = sim.steady;
  for (int32_t p = 0; p < o.partitions; ++p) {
    PartitionEnd& end = out->ends[static_cast<size_t>(p)];
    end.digest = sim.chains[static_cast<size_t>(p)].digest;
    std::string whole;
    EndOf(live.get(), p, &end, &whole);
    TimeRestore(o, p, sim.chains[static_cast<size_t>(p)], whole, clock, &end);
  }
  out->pending = live->pending_requests();
}

// One partition after the other, each in a pipeline of its own freed
// before its restores: the same bytes (see Simulate) in the memory of one
// partition's state, chain and whole record.
void RunOneAtATime(const Options& o, const Clock* clock, Results* out) {
  for (int32_t p = 0; p < Simulated(o); ++p) {
    PartitionEnd& end = out->ends[static_cast<size_t>(p)];
    Simulation sim;
    std::string whole;
    {
      std::unique_ptr<Pipeline> live = LivePipeline(o, clock);
      live->AddSource(EventOrigin::SourceOf(0, p));
      live->AddSource(EventOrigin::SourceOf(1, p));
      Simulate(o, p, live.get(), &sim);
      EndOf(live.get(), p, &end, &whole);
      end.pending = live->pending_requests();
    }
    out->all.Add(sim.all);
    out->steady.Add(sim.steady);
    out->pending += end.pending;
    const ChainState& chain = sim.chains[static_cast<size_t>(p)];
    end.digest = chain.digest;
    TimeRestore(o, p, chain, whole, clock, &end);
  }
}

void Report(const Options& o, const Results& res) {
  std::printf(
      "rate %lld requests/s, join window %lld min, %lld min simulated, %d "
      "partitions, a round every %lld ms%s\n",
      static_cast<long long>(o.rate), static_cast<long long>(o.window_minutes),
      static_cast<long long>(o.minutes), o.partitions,
      static_cast<long long>(o.interval_ms),
      o.one_partition_at_a_time ? ", one partition at a time" : "");
  if (Simulated(o) < o.partitions) {
    std::printf(
        "only partitions 0 to %d simulated: bytes per second and pending "
        "requests are theirs, %d/%d of the whole\n",
        Simulated(o) - 1, Simulated(o), o.partitions);
  }
  res.all.Print("whole run", static_cast<double>(o.minutes) * 60);
  const int64_t steady_from = kT0 + o.window_minutes * 60'000 + 120'000;
  res.steady.Print(
      "steady state (after the first window closed)",
      static_cast<double>(kT0 + o.minutes * 60'000 - steady_from) / 1000);
  double chain_ms = 0, whole_ms = 0;
  int64_t chain_read = 0, whole_read = 0;
  for (int32_t p = 0; p < Simulated(o); ++p) {
    const PartitionEnd& e = res.ends[static_cast<size_t>(p)];
    std::printf("partition %d: a delta without changes: %zu bytes\n", p,
                e.idle_delta);
    std::printf(
        "partition %d: record sizes digest %016llx; restore: chain %.0f ms "
        "(%lld "
        "bytes read), whole record %.0f ms (%lld bytes)",
        p, static_cast<unsigned long long>(e.digest), e.chain_ms,
        static_cast<long long>(e.chain_read), e.whole_ms,
        static_cast<long long>(e.whole_read));
    if (e.pending >= 0) {
      std::printf("; %lld pending", static_cast<long long>(e.pending));
    }
    std::printf("\n");
    chain_ms += e.chain_ms;
    whole_ms += e.whole_ms;
    chain_read += e.chain_read;
    whole_read += e.whole_read;
  }
  std::printf(
      "restore of the %d partitions at the end (%lld pending): chain %.0f ms "
      "(%lld bytes read), whole record %.0f ms (%lld bytes)\n",
      Simulated(o), static_cast<long long>(res.pending), chain_ms,
      static_cast<long long>(chain_read), whole_ms,
      static_cast<long long>(whole_read));
}

int Run(const Options& o) {
  FakeClock clock(kT0 + (o.minutes + 60) * 60'000);
  Results res;
  res.ends.resize(static_cast<size_t>(Simulated(o)));
  if (o.one_partition_at_a_time) {
    RunOneAtATime(o, &clock, &res);
  } else {
    RunAllAtOnce(o, &clock, &res);
  }
  Report(o, res);
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
    } else if (flag == "--one_partition_at_a_time") {
      o.one_partition_at_a_time = v != 0;
    } else if (flag == "--simulated_partitions") {
      o.simulated_partitions = static_cast<int32_t>(v);
    } else {
      std::fprintf(stderr,
                   "usage: changelog_bench [--rate N] [--window_minutes N] "
                   "[--minutes N] [--partitions N] [--interval_ms N] "
                   "[--one_partition_at_a_time 0|1] "
                   "[--simulated_partitions N]\n");
      return 2;
    }
  }
  if (o.simulated_partitions < 0 || o.simulated_partitions > o.partitions ||
      (o.simulated_partitions > 0 && !o.one_partition_at_a_time)) {
    std::fprintf(stderr,
                 "--simulated_partitions: from 0 (all) to --partitions, and "
                 "only with --one_partition_at_a_time 1\n");
    return 2;
  }
  return rankwatch::Run(o);
}
