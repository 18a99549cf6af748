// Checkpoints proportional to change (pipeline_delta.cc): a base and its
// deltas restore what a whole record of the same moment restores, a delta
// costs what changed, and bad delta bytes are refused with one line.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_codec.h"
#include "base/clock.h"
#include "base/random.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/stream_test_util.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

struct DeltaEvent {
  Topic topic;
  std::string json;
};

// Requests "r0000042" (fixed width: every id encodes to the same size) of
// three docs, variant A or B.
std::string DeltaResults(int64_t request, int64_t time_ms, bool b = false) {
  char id[16];
  std::snprintf(id, sizeof(id), "r%07lld", static_cast<long long>(request));
  return std::string("{\"request_id\":\"") + id + "\",\"query_id\":\"q" +
         std::to_string(request % 7) + "\",\"variant\":\"" + (b ? "B" : "A") +
         "\",\"timestamp\":" + std::to_string(time_ms) +
         ",\"results\":[{\"doc_id\":\"d1\"},{\"doc_id\":\"d2\"},"
         "{\"doc_id\":\"d3\"}]}";
}

// An interleaved list of the experiment DeltaConfig names: d1 and d3
// from team A, d2 from team B.
std::string InterleavedResults(int64_t request, int64_t time_ms) {
  std::string json = DeltaResults(request, time_ms);
  json.replace(json.find("\"A\""), 3, "\"A-vs-B\"");
  for (const char* doc : {"d1", "d2", "d3"}) {
    const std::string id = std::string("\"") + doc + "\"";
    json.insert(json.find(id) + id.size(),
                doc[1] == '2' ? ",\"team\":\"B\"" : ",\"team\":\"A\"");
  }
  return json;
}

std::string DeltaJudgment(std::string_view request, int doc, int grade,
                          int64_t time_ms) {
  return std::string("{\"request_id\":\"") + std::string(request) +
         "\",\"doc_id\":\"d" + std::to_string(doc) +
         "\",\"relevance\":" + std::to_string(grade) +
         ",\"timestamp\":" + std::to_string(time_ms) + "}";
}

std::string RequestId(int64_t request) {
  char id[16];
  std::snprintf(id, sizeof(id), "r%07lld", static_cast<long long>(request));
  return id;
}

// A random stream of one partition: results, their judgments (some before
// their results, some for requests never served), duplicate results. Event
// k is stamped T0 + 10 k (+3 for judgments), so that no two requests share
// a deadline (results close at stamp + window, requests made by a judgment
// at stamp + early tolerance, both multiples of 10): every pipeline
// finalizes equal requests in one order.
// With `step_ms` 1500, 3000 events span 75 minutes: the aggregates' hour
// of window buckets wraps around (slots reused, buckets aged out).
std::vector<DeltaEvent> RandomStream(Xoshiro256& rng, int n,
                                     int64_t step_ms = 10) {
  const int64_t t0 = kNow - step_ms * n - 60'000;
  std::vector<DeltaEvent> events;
  int64_t next_request = 0;
  for (int k = 0; k < n; ++k) {
    const int64_t t = t0 + step_ms * k;
    const uint64_t kind = rng.Below(10);
    if (kind < 4 || next_request == 0) {
      const uint64_t list = rng.Below(3);
      events.push_back({Topic::kResults,
                        list == 2 ? InterleavedResults(next_request, t)
                                  : DeltaResults(next_request, t, list == 1)});
      ++next_request;
    } else if (kind < 8) {
      // A request served lately (or about to be).
      const int64_t r = std::max<int64_t>(
          0, next_request - 1 - static_cast<int64_t>(rng.Below(60)) +
                 (kind == 7 ? 3 : 0));
      events.push_back(
          {Topic::kJudgments,
           DeltaJudgment(RequestId(r), 1 + static_cast<int>(rng.Below(4)),
                         static_cast<int>(rng.Below(3)), t + 3)});
    } else if (kind == 8) {
      events.push_back({Topic::kJudgments,
                        DeltaJudgment("x" + std::to_string(k), 1, 1, t + 3)});
    } else {
      // A duplicate of a recent request's results (ignored: not earlier).
      const int64_t r =
          next_request - 1 -
          static_cast<int64_t>(rng.Below(std::min<int64_t>(next_request, 20)));
      events.push_back({Topic::kResults, DeltaResults(r, t)});
    }
  }
  return events;
}

config::Config DeltaConfig() {
  config::Config c;
  c.join.window = std::chrono::seconds(2);
  c.join.early_tolerance = std::chrono::milliseconds(500);
  c.join.allowed_lateness = std::chrono::milliseconds(0);
  c.interleaving = {{"i", "A-vs-B", {"A", "B"}}};
  return c;
}

void Feed(Pipeline* p, const DeltaEvent& e, int64_t offset) {
  const int32_t topic = e.topic == Topic::kResults ? 0 : 1;
  (void)p->OnPayload(e.topic, e.json,
                     EventOrigin{EventOrigin::SourceOf(topic, 0), offset});
}

// A pipeline reading partition 0 of both topics (both sources known, so
// that windows close by both).
std::unique_ptr<Pipeline> NewLivePipeline(const Clock* clock) {
  std::unique_ptr<Pipeline> p = NewTestPipeline(DeltaConfig(), clock);
  if (p == nullptr) return nullptr;
  p->AddSource(EventOrigin::SourceOf(0, 0));
  p->AddSource(EventOrigin::SourceOf(1, 0));
  return p;
}

// A base and its deltas, and how many events each record reflects.
struct Chain {
  std::string base;
  std::vector<std::string> deltas;
  std::vector<size_t> consumed;  // [0]: the base's.
};

std::unique_ptr<Pipeline> RestoreChain(const Chain& chain, size_t deltas,
                                       const Clock* clock) {
  std::unique_ptr<Pipeline> p = NewTestPipeline(DeltaConfig(), clock);
  if (p == nullptr) return nullptr;
  const Status s = p->DecodeShard(0, chain.base);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < deltas; ++i) {
    const Status d = p->ApplyShardDelta(0, chain.deltas[i]);
    EXPECT_TRUE(d.ok()) << "delta " << i + 1 << ": " << d.ToString();
  }
  return p;
}

// Shard 0's record with its label groups' aggregates in label order.
// Two pipelines number label groups in the order they first see them (a
// restored one in the order its record names them and its pending
// requests' labels), and a record writes a shard's aggregates in that
// order: the same state can be written in two orders. The aggregates come
// first in a record (after its magic and version); the rest is compared
// as written.
std::string CanonicalRecord(Pipeline* p) {
  std::string record, aggregates;
  p->EncodeShard(0, &record);
  ByteWriter aw(&aggregates);
  p->aggregator().EncodeShard(0, &aw);
  EXPECT_EQ(record.substr(8, aggregates.size()), aggregates);
  std::map<std::string, std::string> groups;
  const Aggregator& a = p->aggregator();
  for (size_t i = 0; i < a.num_groups(); ++i) {
    const GroupStats& g = a.group(i);
    if (g.requests == 0) continue;
    std::string key = g.variant;
    for (const std::string& v : g.segment_values) key += "\x1f" + v;
    std::string& bytes = groups[key];
    ByteWriter w(&bytes);
    w.I64(g.requests);
    w.I64(g.without_relevant);
    for (size_t s = 0; s < g.all.size(); ++s) {
      w.I64(g.all[s].count());
      w.Double(g.all[s].mean());
      w.Double(g.all[s].m2());
      w.Double(g.all[s].sum());
      w.Double(g.all[s].sum_of_squares());
      for (int64_t c : g.histograms[s]) w.I64(c);
    }
    for (int64_t c : g.first_click.counts) w.I64(c);
    w.I64(g.first_click.count);
    w.Double(g.first_click.sum_seconds);
    g.windows.Encode(&w);
  }
  std::string out;
  for (const auto& [key, bytes] : groups) out += key + '\0' + bytes;
  return out + record.substr(8 + aggregates.size());
}

// The state of `got` equals `want`'s: as many pending requests, records
// of the same size, and once both finalize everything, equal records
// (CanonicalRecord: every aggregate, window and sum fed by the same
// requests in the same order: a request missing, extra or different
// shows).
void ExpectSameState(Pipeline* want, Pipeline* got) {
  EXPECT_EQ(got->pending_requests(), want->pending_requests());
  std::string a, b;
  want->EncodeShard(0, &a);
  got->EncodeShard(0, &b);
  EXPECT_EQ(b.size(), a.size());
  want->FinishAll();
  got->FinishAll();
  a = CanonicalRecord(want);
  b = CanonicalRecord(got);
  EXPECT_TRUE(a == b) << "records after FinishAll differ (" << a.size()
                      << " and " << b.size() << " bytes)";
}

// Random streams, random checkpoint moments (a new base once the deltas
// outgrow it, as the daemon does): at random moments a restore of the base
// and its deltas equals a restore of a whole record of the live state;
// and at random crash points (a restore of the chain as it stood then,
// reading the input again from that record on), the end state equals the
// live pipeline's: nothing lost, nothing counted twice.
TEST(PipelineDeltaTest, BasePlusDeltasRestoresTheLiveState) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    // Half the seeds over 30 s, half over 75 minutes (see RandomStream).
    const int64_t step_ms = seed % 2 == 0 ? 1500 : 10;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", events every " +
                 std::to_string(step_ms) + " ms");
    Xoshiro256 rng(seed);
    FakeClock clock(kNow);
    const std::vector<DeltaEvent> events = RandomStream(rng, 3000, step_ms);
    std::unique_ptr<Pipeline> live = NewLivePipeline(&clock);
    ASSERT_NE(live, nullptr);
    Chain chain;
    live->EncodeShardBase(0, &chain.base);
    chain.consumed = {0};
    size_t delta_bytes = 0;
    std::vector<Chain> crashes;  // The chain as it stood at a crash.
    int compared = 0;
    for (size_t k = 0; k < events.size(); ++k) {
      Feed(live.get(), events[k], static_cast<int64_t>(k));
      if (rng.Below(25) != 0) continue;
      if (delta_bytes > chain.base.size()) {
        chain = Chain{};
        live->EncodeShardBase(0, &chain.base);
        chain.consumed = {k + 1};
        delta_bytes = 0;
      } else {
        std::string delta;
        ASSERT_TRUE(live->EncodeShardDelta(0, &delta));
        delta_bytes += delta.size();
        chain.deltas.push_back(std::move(delta));
        chain.consumed.push_back(k + 1);
      }
      if (rng.Below(12) == 0) crashes.push_back(chain);
      if (rng.Below(6) != 0) continue;
      ++compared;
      std::string whole;
      live->EncodeShard(0, &whole);
      std::unique_ptr<Pipeline> want = NewTestPipeline(DeltaConfig(), &clock);
      ASSERT_TRUE(want->DecodeShard(0, whole).ok());
      std::unique_ptr<Pipeline> got =
          RestoreChain(chain, chain.deltas.size(), &clock);
      ASSERT_NE(got, nullptr);
      ExpectSameState(want.get(), got.get());
    }
    EXPECT_GT(compared, 3);
    // A third of the lists are interleaved: their windows are in the
    // records too.
    EXPECT_GT(live->interleaving().experiments()[0].all.impressions, 100);
    ASSERT_FALSE(crashes.empty());
    live->FinishAll();
    const std::string end = CanonicalRecord(live.get());
    for (const Chain& at : crashes) {
      std::unique_ptr<Pipeline> p = RestoreChain(at, at.deltas.size(), &clock);
      for (size_t k = at.consumed.back(); k < events.size(); ++k) {
        Feed(p.get(), events[k], static_cast<int64_t>(k));
      }
      p->FinishAll();
      const std::string got = CanonicalRecord(p.get());
      EXPECT_TRUE(got == end) << "crash after " << at.consumed.back()
                              << " events, " << at.deltas.size() << " deltas";
    }
  }
}

// Tracking starts with a base: a shard restored or created since has no
// delta to give.
TEST(PipelineDeltaTest, NoDeltaBeforeABase) {
  FakeClock clock(kNow);
  std::unique_ptr<Pipeline> p = NewTestPipeline(DeltaConfig(), &clock);
  ASSERT_NE(p, nullptr);
  Feed(p.get(), {Topic::kResults, DeltaResults(1, kNow - 1000)}, 0);
  std::string delta;
  EXPECT_FALSE(p->EncodeShardDelta(0, &delta));
  EXPECT_TRUE(delta.empty());
  std::string base;
  p->EncodeShardBase(0, &base);
  EXPECT_TRUE(p->EncodeShardDelta(0, &delta));
  // Restored: not tracked until its next base.
  std::unique_ptr<Pipeline> q = NewTestPipeline(DeltaConfig(), &clock);
  ASSERT_TRUE(q->DecodeShard(0, base).ok());
  std::string none;
  EXPECT_FALSE(q->EncodeShardDelta(0, &none));
  EXPECT_TRUE(none.empty());
}

// A shard holding `pending` requests of one hour's window, its base
// written: the pipeline and the base's size.
std::unique_ptr<Pipeline> Holding(int64_t pending, const Clock* clock,
                                  std::string* base) {
  config::Config c = DeltaConfig();
  c.join.window = std::chrono::hours(1);
  c.join.max_pending_requests = 100'000;
  std::unique_ptr<Pipeline> p = NewTestPipeline(c, clock);
  for (int64_t i = 0; i < pending; ++i) {
    Feed(p.get(), {Topic::kResults, DeltaResults(i, kNow - 600'000 + i)}, i);
  }
  p->EncodeShardBase(0, base);
  return p;
}

// The bytes of a round grow with its events, not with the state held.
// A new request of DeltaResults (no judgment, variant A, no segments)
// encodes (EncodePendingRequest, format 4) to 71 bytes:
//   key "r0000123" 1+8, query "q4" 1+2, docs "d1d2d3" 1+6, 3 doc ends
//   1+3, judged docs 1, 0 judgments 1, has_results 1, labels "A" 1+1 and
//   0 segments 1, unit hash 8, interleaving 8, teams 1, served and
//   deadline 16, covariate 8, 0 field values 1
// = 9+3+7+4+1+1+1+3+8+8+1+16+8+1 = 71; with one judgment of "d2" 94:
//   judged docs +2, the judgment's begin 1, end 1, time 8, grade 8,
//   flags 1, claimed position 1, judge 1 (+21).
// A base holds its requests in format 1 (no covariate, no field values:
// 71 - 9 = 62 bytes each).
TEST(PipelineDeltaTest, BytesPerRoundFollowTheEventsNotTheState) {
  FakeClock clock(kNow);
  std::string small_base, big_base;
  std::unique_ptr<Pipeline> small = Holding(1'000, &clock, &small_base);
  std::unique_ptr<Pipeline> big = Holding(10'000, &clock, &big_base);
  ASSERT_NE(small, nullptr);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big_base.size() - small_base.size(), 9'000u * 62);
  for (Pipeline* p : {small.get(), big.get()}) {
    std::string idle, served, judged;
    ASSERT_TRUE(p->EncodeShardDelta(0, &idle));
    // 10 new requests; their 1-byte count stays 1 byte.
    for (int64_t i = 0; i < 10; ++i) {
      Feed(p, {Topic::kResults, DeltaResults(50'000 + i, kNow - 1000 + i)}, 0);
    }
    ASSERT_TRUE(p->EncodeShardDelta(0, &served));
    EXPECT_EQ(served.size(), idle.size() + 10 * 71);
    // One judgment each on 10 requests the base holds.
    for (int64_t i = 0; i < 10; ++i) {
      Feed(p,
           {Topic::kJudgments,
            DeltaJudgment(RequestId(i * 7), 2, 1, kNow - 500'000 + i)},
           0);
    }
    ASSERT_TRUE(p->EncodeShardDelta(0, &judged));
    EXPECT_EQ(judged.size(), idle.size() + 10 * 94);
  }
  // The same round costs the same whatever the state held.
  std::string a, b;
  ASSERT_TRUE(small->EncodeShardDelta(0, &a));
  ASSERT_TRUE(big->EncodeShardDelta(0, &b));
  EXPECT_EQ(a.size(), b.size());
}

// A finalized request that an earlier record holds is deleted by its key
// (1 + 8 bytes); one created and finalized between two records costs
// nothing.
TEST(PipelineDeltaTest, FinalizedRequestsCostTheirKey) {
  FakeClock clock(kNow);
  std::unique_ptr<Pipeline> p = NewTestPipeline(DeltaConfig(), &clock);
  p->AddSource(EventOrigin::SourceOf(0, 0));
  p->AddSource(EventOrigin::SourceOf(1, 0));
  const int64_t t = kNow - 600'000;
  for (int64_t i = 0; i < 5; ++i) {
    Feed(p.get(), {Topic::kResults, DeltaResults(i, t + i)}, i);
  }
  std::string base, idle, closed;
  p->EncodeShardBase(0, &base);
  ASSERT_TRUE(p->EncodeShardDelta(0, &idle));
  // Both sources move 10 s on: the 5 requests' windows (2 s) close; a
  // request served and closed in between leaves no trace.
  Feed(p.get(), {Topic::kResults, DeltaResults(100, t + 5'000)}, 5);
  Feed(p.get(), {Topic::kJudgments, DeltaJudgment("x", 1, 1, t + 10'000)}, 6);
  Feed(p.get(), {Topic::kResults, DeltaResults(101, t + 10'000)}, 7);
  ASSERT_EQ(p->pending_requests(), 2);  // "x" and r0000101.
  ASSERT_TRUE(p->EncodeShardDelta(0, &closed));
  // 5 keys of 9 bytes; the judgment-only "x" (1+1 key, 1+1 query "",
  // docs 1, 0 docs 1, judged "d1" 1+2, 1 judgment 1+21, no results 1,
  // unit hash 8, interleaving 8, teams 1, times 16, covariate 8, fields 1
  // = 73) and r0000101 (71) are new. The aggregates changed too (6
  // requests finalized): a delta with no change after it has them, but
  // for the one window bucket they changed: requests at t to t + 5000,
  // one 10 s bucket (t = kNow - 600,000 is a multiple of 10,000) of
  // variant A's group, its index (8 bytes) and per series a count (1
  // byte) and two sums (16).
  std::string unchanged;
  ASSERT_TRUE(p->EncodeShardDelta(0, &unchanged));
  const size_t series = p->aggregator().series().size();
  EXPECT_EQ(closed.size(),
            unchanged.size() + 5 * 9 + 73 + 71 + 8 + series * (1 + 16));
  std::string whole;
  p->EncodeShard(0, &whole);
  std::unique_ptr<Pipeline> q = NewTestPipeline(DeltaConfig(), &clock);
  ASSERT_TRUE(q->DecodeShard(0, whole).ok());
  const Chain chain{base, {idle, closed, unchanged}, {}};
  std::unique_ptr<Pipeline> restored = RestoreChain(chain, 3, &clock);
  ExpectSameState(q.get(), restored.get());
}

// Version 1 deltas (what rankwatch wrote before version 2: the aggregates
// and the interleaving counts whole, every window bucket included) still
// apply, so that an upgraded replica restores the chain its predecessor
// wrote. Version 1's layout: the magic, the version, the aggregates as a
// whole record holds them (Aggregator::EncodeShard), then the join's
// delta and the other sections as version 2 writes them, but for the
// interleaving section, whole (InterleavingMonitor::EncodeShard, "ILV2")
// where version 2 has its changes ("ILV3").
TEST(PipelineDeltaTest, VersionOneDeltasStillApply) {
  const uint64_t seed = 7;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  FakeClock clock(kNow);
  const std::vector<DeltaEvent> events = RandomStream(rng, 1200, 700);
  std::unique_ptr<Pipeline> live = NewLivePipeline(&clock);
  ASSERT_NE(live, nullptr);
  Chain chain;
  size_t k = 0;
  for (; k < 300; ++k) Feed(live.get(), events[k], static_cast<int64_t>(k));
  live->EncodeShardBase(0, &chain.base);
  for (int round = 0; round < 3; ++round) {
    for (const size_t end = k + 300; k < end; ++k) {
      Feed(live.get(), events[k], static_cast<int64_t>(k));
    }
    std::string changes, whole_aggregates, ilv3, ilv2, v2;
    ByteWriter changes_out(&changes);
    live->aggregator().EncodeShardChanges(0, &changes_out);
    ByteWriter whole_out(&whole_aggregates);
    live->aggregator().EncodeShard(0, &whole_out);
    ByteWriter ilv3_out(&ilv3);
    live->interleaving().EncodeShardChanges(0, &ilv3_out);
    ByteWriter ilv2_out(&ilv2);
    live->interleaving().EncodeShard(0, &ilv2_out);
    ASSERT_TRUE(live->EncodeShardDelta(0, &v2));
    ASSERT_EQ(v2.substr(8, changes.size()), changes) << "round " << round;
    std::string rest = v2.substr(8 + changes.size());
    const size_t at = rest.find(ilv3);
    ASSERT_NE(at, std::string::npos) << "round " << round;
    ASSERT_EQ(rest.find(ilv3, at + 1), std::string::npos);
    rest.replace(at, ilv3.size(), ilv2);
    std::string v1 = v2.substr(0, 4);
    ByteWriter(&v1).Fixed32(Pipeline::kDeltaVersionWholeWindows);
    v1 += whole_aggregates;
    v1 += rest;
    chain.deltas.push_back(std::move(v1));
  }
  std::string whole;
  live->EncodeShard(0, &whole);
  std::unique_ptr<Pipeline> want = NewTestPipeline(DeltaConfig(), &clock);
  ASSERT_TRUE(want->DecodeShard(0, whole).ok());
  std::unique_ptr<Pipeline> got = RestoreChain(chain, 3, &clock);
  ASSERT_NE(got, nullptr);
  ExpectSameState(want.get(), got.get());
}

// Two label groups the writer kept apart fold into one at a restorer
// whose variant slots other partitions filled first (the first
// aggregation.max_variants seen): a whole record merges them, but the two
// groups' changed buckets cannot be applied onto their sum. The delta is
// refused with one line and the shard left empty (the daemon then
// restores the base and reads the input again from its offsets).
TEST(PipelineDeltaTest, GroupsTheRestorerFoldsTogetherRefuseTheDelta) {
  FakeClock clock(kNow);
  std::unique_ptr<Pipeline> writer = NewTestPipeline(DeltaConfig(), &clock);
  ASSERT_NE(writer, nullptr);
  const int64_t t0 = kNow - 600'000;
  auto variant = [](int64_t i, std::string_view v) {
    std::string json = DeltaResults(i, t0 + 1000 * i, true);
    json.replace(json.find("\"B\""), 3, "\"" + std::string(v) + "\"");
    return json;
  };
  auto serve = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) {
      // Variants A, B and C in turn.
      Feed(writer.get(), {Topic::kResults, variant(i, {&"ABC"[i % 3], 1})},
           2 * i);
      Feed(
          writer.get(),
          {Topic::kJudgments, DeltaJudgment(RequestId(i), 1, 1, t0 + 1000 * i)},
          2 * i + 1);
    }
  };
  serve(0, 30);
  std::string base, delta;
  writer->EncodeShardBase(0, &base);
  serve(30, 60);
  ASSERT_TRUE(writer->EncodeShardDelta(0, &delta));
  // Two variant slots, X's taken by partition 1: A takes the other, B and
  // C are "other".
  config::Config lower = DeltaConfig();
  lower.aggregation.max_variants = 2;
  std::unique_ptr<Pipeline> restorer = NewTestPipeline(lower, &clock);
  ASSERT_NE(restorer, nullptr);
  (void)restorer->OnPayload(Topic::kResults, variant(100, "X"),
                            EventOrigin{EventOrigin::SourceOf(0, 1), 0});
  const int64_t partition_1 = restorer->pending_requests();  // X's.
  const Status b = restorer->DecodeShard(0, base);
  ASSERT_TRUE(b.ok()) << b.ToString();
  ASSERT_GT(restorer->pending_requests(), partition_1);
  const Status s = restorer->ApplyShardDelta(0, delta);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("fold into one here"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find('\n'), std::string::npos);
  EXPECT_EQ(restorer->pending_requests(), partition_1);
  EXPECT_FALSE(restorer->aggregator().HasShard(0));
  // The same restorer takes the base again (what the daemon falls back
  // to), its "other" group holding B's and C's requests.
  ASSERT_TRUE(restorer->DecodeShard(0, base).ok());
  EXPECT_GT(restorer->pending_requests(), partition_1);
}

// A reload between two records that changes the windows (an hour's to 30
// minutes') and the series (a cutoff more) remaps every ring: the next
// delta writes them whole, and a restore under the new configuration
// equals a restore of a whole record.
TEST(PipelineDeltaTest, AReloadThatRemapsTheWindowsWritesThemWhole) {
  const uint64_t seed = 11;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  FakeClock clock(kNow);
  const std::vector<DeltaEvent> events = RandomStream(rng, 1500, 1500);
  std::unique_ptr<Pipeline> live = NewLivePipeline(&clock);
  ASSERT_NE(live, nullptr);
  Chain chain;
  for (size_t k = 0; k < 1000; ++k) Feed(live.get(), events[k], k);
  live->EncodeShardBase(0, &chain.base);
  config::Config next = DeltaConfig();
  next.aggregation.windows = {std::chrono::minutes(30)};
  next.metrics.cutoffs = {1, 3, 5, 10, 20};
  ASSERT_TRUE(live->Reconfigure(next).ok());
  for (size_t k = 1000; k < events.size(); ++k) {
    Feed(live.get(), events[k], k);
  }
  chain.deltas.emplace_back();
  ASSERT_TRUE(live->EncodeShardDelta(0, &chain.deltas.back()));
  std::string whole;
  live->EncodeShard(0, &whole);
  std::unique_ptr<Pipeline> want = NewTestPipeline(next, &clock);
  std::unique_ptr<Pipeline> got = NewTestPipeline(next, &clock);
  ASSERT_TRUE(want->DecodeShard(0, whole).ok());
  ASSERT_TRUE(got->DecodeShard(0, chain.base).ok());
  ASSERT_TRUE(got->ApplyShardDelta(0, chain.deltas[0]).ok());
  ExpectSameState(want.get(), got.get());
}

// Bad delta bytes: every truncation and random byte flips are either
// refused with one line, leaving the shard empty, or read as some valid
// delta; never a crash (ASan and UBSan watch), never a shard half applied.
TEST(PipelineDeltaTest, TruncatedOrFlippedDeltasAreRefusedWithOneLine) {
  const uint64_t seed = 4242;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Xoshiro256 rng(seed);
  FakeClock clock(kNow);
  const std::vector<DeltaEvent> events = RandomStream(rng, 400);
  std::unique_ptr<Pipeline> live = NewTestPipeline(DeltaConfig(), &clock);
  std::string base, delta;
  for (size_t k = 0; k < 200; ++k) Feed(live.get(), events[k], k);
  live->EncodeShardBase(0, &base);
  for (size_t k = 200; k < events.size(); ++k) Feed(live.get(), events[k], k);
  ASSERT_TRUE(live->EncodeShardDelta(0, &delta));
  int refused = 0;
  auto check = [&](std::string_view bad) {
    std::unique_ptr<Pipeline> p = NewTestPipeline(DeltaConfig(), &clock);
    ASSERT_TRUE(p->DecodeShard(0, base).ok());
    const Status s = p->ApplyShardDelta(0, bad);
    if (s.ok()) return;
    ++refused;
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
    EXPECT_FALSE(s.message().empty());
    EXPECT_EQ(p->pending_requests(), 0) << s.message();
  };
  for (size_t n = 0; n < delta.size(); n += 1 + n / 16) {
    check(std::string_view(delta).substr(0, n));
  }
  for (int i = 0; i < 300; ++i) {
    std::string bad = delta;
    bad[rng.Below(bad.size())] = static_cast<char>(rng.Below(256));
    check(bad);
  }
  EXPECT_GT(refused, 50);
}

// The start of min_duration survives a restart (issue: the first list's
// time was the process's, so a fleet redeployed more often than
// min_duration never called an experiment). One list per arm a minute for
// 76 minutes from t0, every list judged; min_lists 10, min_duration 1h.
// The first process reads minutes 0-39 and checkpoints (a base at minute
// 30, a delta at 40), the second restores base and delta and reads the
// rest: its decision's first list is t0 (the first list, read by the first
// process), and it has met its minimum as the uninterrupted pipeline has,
// with the same figures. Counting from the restart (the first list it
// read at minute 40) it would have had 36 minutes of the 60.
TEST(PipelineDeltaTest, RestartKeepsTheExperimentsFirstList) {
  FakeClock clock(kNow);
  const int64_t t0 = kNow - 7'200'000;
  config::Config config = DeltaConfig();
  config.experiments = {{"x", "A", {"B"}}};
  config.experiments[0].min_lists = 10;
  config.experiments[0].min_duration = std::chrono::hours(1);
  std::vector<DeltaEvent> events;
  for (int64_t i = 0; i < 76; ++i) {
    for (const bool b : {false, true}) {
      const int64_t request = 2 * i + (b ? 1 : 0);
      const int64_t t = t0 + i * 60'000;
      events.push_back({Topic::kResults, DeltaResults(request, t, b)});
      events.push_back(
          {Topic::kJudgments,
           DeltaJudgment(RequestId(request), 1 + (i % 3), b ? 2 : 1, t + 100)});
    }
  }
  const size_t per_minute = 4;
  std::unique_ptr<Pipeline> whole = NewTestPipeline(config, &clock);
  std::unique_ptr<Pipeline> first = NewTestPipeline(config, &clock);
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(first, nullptr);
  Chain chain;
  for (size_t k = 0; k < 40 * per_minute; ++k) {
    Feed(first.get(), events[k], static_cast<int64_t>(k));
    if (k + 1 == 30 * per_minute) first->EncodeShardBase(0, &chain.base);
  }
  chain.deltas.emplace_back();
  ASSERT_TRUE(first->EncodeShardDelta(0, &chain.deltas.back()));
  ASSERT_EQ(first->experiments().FirstListMs(0), t0);
  first.reset();  // The restart.

  std::unique_ptr<Pipeline> second = NewTestPipeline(config, &clock);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(second->DecodeShard(0, chain.base).ok());
  ASSERT_TRUE(second->ApplyShardDelta(0, chain.deltas[0]).ok());
  EXPECT_EQ(second->experiments().FirstListMs(0), t0);
  for (size_t k = 40 * per_minute; k < events.size(); ++k) {
    Feed(second.get(), events[k], static_cast<int64_t>(k));
  }
  for (size_t k = 0; k < events.size(); ++k) {
    Feed(whole.get(), events[k], static_cast<int64_t>(k));
  }
  second->FinishAll();
  whole->FinishAll();
  ASSERT_EQ(second->decisions().decisions().size(), 1u);
  ASSERT_EQ(whole->decisions().decisions().size(), 1u);
  const MinimumSample& got = second->decisions().decisions()[0].minimum;
  const MinimumSample& want = whole->decisions().decisions()[0].minimum;
  EXPECT_EQ(got.first_list_ms, t0);
  EXPECT_EQ(want.first_list_ms, t0);
  // 76 lists per arm; the look's event time is at least the last list's,
  // 75 minutes after t0.
  EXPECT_EQ(got.baseline_lists, 76);
  EXPECT_EQ(got.treatment_lists, 76);
  EXPECT_GE(got.elapsed_ms, 75 * 60'000);
  EXPECT_EQ(got.elapsed_ms, want.elapsed_ms);
  EXPECT_TRUE(got.met());
  EXPECT_TRUE(want.met());
  for (const std::string& reason : second->decisions().decisions()[0].reasons) {
    EXPECT_EQ(reason.find("minimum sample not reached"), std::string::npos)
        << reason;
  }
}

}  // namespace
}  // namespace rankwatch::stream
