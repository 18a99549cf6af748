#include "daemon/stream/aggregation/window_ring.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "base/random.h"
#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

TEST(WindowRingTest, SumsWholeBucketsInTheWindow) {
  // 10 s buckets; a 30 s window ending at t covers the bucket holding t and
  // the two before it.
  WindowRing ring(10'000, 30'000, 1);
  ring.Add(0, std::vector<double>{1.0});         // Bucket 0.
  ring.Add(15'000, std::vector<double>{0.5});    // Bucket 1.
  ring.Add(35'000, std::vector<double>{0.25});   // Bucket 3.
  ring.Add(38'000, std::vector<double>{0.75});   // Bucket 3.
  WindowTotals t = ring.Sum(0, 39'999, 30'000);  // Buckets 1..3.
  EXPECT_EQ(t.count, 3);
  EXPECT_DOUBLE_EQ(t.sum, 0.5 + 0.25 + 0.75);
  EXPECT_DOUBLE_EQ(t.sum_of_squares, 0.25 + 0.0625 + 0.5625);
  EXPECT_DOUBLE_EQ(t.mean(), 0.5);
  // Sample variance of {0.5, 0.25, 0.75}: deviations 0, -0.25, 0.25.
  EXPECT_DOUBLE_EQ(t.variance(), (0.0625 + 0.0625) / 2);
  t = ring.Sum(0, 65'000, 30'000);  // Buckets 4..6: empty.
  EXPECT_EQ(t.count, 0);
  EXPECT_TRUE(std::isnan(t.mean()));
  // A bucket far ahead recycles old slots; old values never leak in.
  ring.Add(100'000, std::vector<double>{0.1});
  t = ring.Sum(0, 100'000, 30'000);
  EXPECT_EQ(t.count, 1);
  ring.Add(5'000, std::vector<double>{0.9});  // Too old for the ring: dropped.
  // A window far behind the newest bucket reads nothing, not stale slots.
  EXPECT_EQ(ring.Sum(0, 5'000, 30'000).count, 0);
}

// The bytes of a ring, for comparing two rings' state.
std::string Encoded(const WindowRing& ring) {
  std::string out;
  ByteWriter w(&out);
  ring.Encode(&w);
  return out;
}

// Restores `changes` (EncodeChanges' bytes) onto `ring`, as a delta's
// restore does; false when they do not decode.
bool ApplyEncoded(const std::string& changes, WindowRing* ring,
                  int64_t bucket_ms, int64_t span_ms,
                  const std::vector<int>& from) {
  ByteReader in(changes);
  WindowChanges c = WindowRing::DecodeChanges(&in, bucket_ms, span_ms, from);
  if (!in.ok() || !in.at_end()) return false;
  ring->Apply(std::move(c));
  return true;
}

// Random values at random times, sometimes far ahead (slots recycled,
// buckets aged out) or far behind (dropped), with a record at random
// moments: a base (Encode, MarkRecorded), or the changes since the last
// record. A ring restored from the base and every change since holds what
// the live ring holds, byte for byte, at every record.
TEST(WindowRingTest, ABaseAndItsChangesRestoreTheRing) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Xoshiro256 rng(seed);
    const int64_t bucket_ms = 1'000;
    const int64_t span_ms = 1'000 * static_cast<int64_t>(2 + rng.Below(30));
    const std::vector<int> same = {0, 1, 2};
    WindowRing live(bucket_ms, span_ms, 3);
    WindowRing restored(bucket_ms, span_ms, 3);
    int64_t now = 50'000;
    int records = 0;
    for (int k = 0; k < 3000; ++k) {
      const uint64_t jump = rng.Below(100);
      if (jump == 0) now += span_ms * 2;  // Every bucket ages out.
      now += static_cast<int64_t>(rng.Below(400));
      // Mostly late values, as finalized requests are.
      const int64_t t =
          now - static_cast<int64_t>(rng.Below(jump < 3 ? 3 * span_ms : 5'000));
      const double nan = std::nan("");
      live.Add(t,
               std::vector<double>{rng.Uniform(), rng.Below(4) == 0 ? nan : 1.0,
                                   static_cast<double>(rng.Below(5))});
      if (rng.Below(40) != 0) continue;
      ++records;
      std::string bytes;
      ByteWriter w(&bytes);
      if (rng.Below(10) == 0) {
        live.Encode(&w);
        ByteReader in(bytes);
        restored = WindowRing::Decode(&in, bucket_ms, span_ms, same);
        ASSERT_TRUE(in.ok());
      } else {
        live.EncodeChanges(&w);
        ASSERT_TRUE(ApplyEncoded(bytes, &restored, bucket_ms, span_ms, same));
      }
      live.MarkRecorded();
      ASSERT_EQ(Encoded(restored), Encoded(live)) << "record " << records;
    }
    EXPECT_GT(records, 40);
  }
}

// What the changes cost: nothing but the header when no value came in;
// one bucket's sums when one did, whatever the ring holds; every bucket
// when the ring was remapped (a reload) and so not made by Add alone.
TEST(WindowRingTest, ChangesHoldTheChangedBucketsOnly) {
  // 10 s buckets over an hour: 361 slots, 2 series.
  WindowRing ring(10'000, 3'600'000, 2);
  for (int64_t t = 0; t < 3'600'000; t += 5'000) {
    ring.Add(t, std::vector<double>{0.5, 1.0});
  }
  ring.MarkRecorded();
  auto changes = [&ring] {
    std::string out;
    ByteWriter w(&out);
    ring.EncodeChanges(&w);
    return out;
  };
  // Bytes: the flag 1, bucket width 8, newest bucket 8, series 1, held 1.
  const size_t header = 1 + 8 + 8 + 1 + 1;
  EXPECT_EQ(changes().size(), header);
  // A value in the newest bucket and one 30 minutes late: two buckets,
  // each its index (8) and per series a count (1) and two sums (16).
  ring.Add(3'599'000, std::vector<double>{0.25, 0.0});
  ring.Add(1'800'000, std::vector<double>{0.75, 1.0});
  EXPECT_EQ(changes().size(), header + 2 * (8 + 2 * 17));
  ring.MarkRecorded();
  EXPECT_EQ(changes().size(), header);
  // Remapped: written whole, flag 1: the buckets 0 to 359 filled (the
  // span keeps 361), their count a 2-byte varint.
  const std::vector<int> same = {0, 1};
  ring = ring.Remapped(10'000, 3'600'000, same);
  const std::string whole = changes();
  ASSERT_EQ(whole.size(), header + 1 + 360 * (8 + 2 * 17));
  EXPECT_EQ(whole[0], 1);
}

TEST(WindowRingTest, AddSumsAddsEverySeriesWindowIntoOut) {
  // 10 s buckets; the 30 s window ending at 39,999 covers buckets 1..3.
  WindowRing ring(10'000, 30'000, 2);
  std::vector<WindowTotals> out(2);
  ring.AddSums(39'999, 30'000, out);  // Nothing added: out unchanged.
  EXPECT_EQ(out[0].count, 0);
  ring.Add(0, std::vector<double>{1.0, 2.0});  // Bucket 0: outside.
  ring.Add(15'000, std::vector<double>{0.5, std::nan("")});  // Bucket 1.
  ring.Add(35'000, std::vector<double>{0.25, 3.0});          // Bucket 3.
  out[1] = WindowTotals{1, 10.0, 100.0};  // Added to, not overwritten.
  ring.AddSums(39'999, 30'000, out);
  EXPECT_EQ(out[0].count, 2);
  EXPECT_DOUBLE_EQ(out[0].sum, 0.5 + 0.25);
  EXPECT_DOUBLE_EQ(out[0].sum_of_squares, 0.25 + 0.0625);
  EXPECT_EQ(out[1].count, 1 + 1);  // NaN is no value; 3.0 is.
  EXPECT_DOUBLE_EQ(out[1].sum, 10.0 + 3.0);
  EXPECT_DOUBLE_EQ(out[1].sum_of_squares, 100.0 + 9.0);
  // A shorter out reads only its series.
  std::vector<WindowTotals> first(1);
  ring.AddSums(39'999, 30'000, first);
  EXPECT_EQ(first[0].count, 2);
}

// AddSums gives Sum()'s doubles bit for bit, series by series, for rings
// wider than its chunk of 64 series, random values (NaN among them) and
// windows, including ones past the newest bucket.
TEST(WindowRingTest, AddSumsEqualsSumPerSeries) {
  const uint64_t seed = 20261207;
  SCOPED_TRACE("seed " + std::to_string(seed));
  rankwatch::Xoshiro256 random(seed);
  for (size_t num_series : {1u, 64u, 70u, 130u}) {
    WindowRing ring(1'000, 60'000, num_series);
    std::vector<double> values(num_series);
    for (int e = 0; e < 400; ++e) {
      for (double& v : values) {
        v = random.Uniform() < 0.1 ? std::nan("") : random.Uniform() * 100;
      }
      ring.Add(random.Between(0, 120'000), values);
    }
    for (int look = 0; look < 20; ++look) {
      const int64_t now = random.Between(0, 200'000);
      const int64_t window = random.Between(1, 70'000);
      std::vector<WindowTotals> out(num_series);
      ring.AddSums(now, window, out);
      for (size_t s = 0; s < num_series; ++s) {
        const WindowTotals want = ring.Sum(s, now, window);
        ASSERT_EQ(out[s].count, want.count) << s << " " << now << " " << window;
        ASSERT_EQ(out[s].sum, want.sum) << s;
        ASSERT_EQ(out[s].sum_of_squares, want.sum_of_squares) << s;
      }
    }
  }
}

TEST(WindowRingTest, BucketTotalsReadOneBucketEach) {
  // 10 s buckets, span 30 s: the ring holds 4 buckets.
  WindowRing ring(10'000, 30'000, 2);
  EXPECT_EQ(ring.num_buckets(), 4u);
  EXPECT_EQ(ring.bucket_ms(), 10'000);
  std::vector<WindowTotals> out(5);
  ring.BucketTotals(0, 39'999, out);  // Nothing added: all empty.
  for (const WindowTotals& t : out) EXPECT_EQ(t.count, 0);
  const double nan = std::nan("");
  ring.Add(15'000, std::vector<double>{0.5, nan});  // Bucket 1.
  ring.Add(35'000, std::vector<double>{0.25, 1});   // Bucket 3.
  ring.Add(38'000, std::vector<double>{0.75, 0});   // Bucket 3.
  // Five buckets ending with bucket 3: -1, 0, 1, 2, 3.
  ring.BucketTotals(0, 39'999, out);
  EXPECT_EQ(out[0].count, 0);
  EXPECT_EQ(out[1].count, 0);
  EXPECT_EQ(out[2].count, 1);
  EXPECT_DOUBLE_EQ(out[2].sum, 0.5);
  EXPECT_EQ(out[3].count, 0);
  EXPECT_EQ(out[4].count, 2);
  EXPECT_DOUBLE_EQ(out[4].sum, 1.0);
  EXPECT_DOUBLE_EQ(out[4].sum_of_squares, 0.0625 + 0.5625);
  // The second series counts its own defined values: NaN left out.
  ring.BucketTotals(1, 39'999, out);
  EXPECT_EQ(out[2].count, 0);
  EXPECT_EQ(out[4].count, 2);
  EXPECT_DOUBLE_EQ(out[4].sum, 1.0);
  // Bucket 6 recycles bucket 2's slot; bucket 1 is then beyond the span.
  ring.Add(61'000, std::vector<double>{0.1, 0.1});
  std::vector<WindowTotals> two(2);
  ring.BucketTotals(0, 69'999, two);  // Buckets 5, 6.
  EXPECT_EQ(two[0].count, 0);
  EXPECT_EQ(two[1].count, 1);
  ring.BucketTotals(0, 19'999, two);  // Buckets 0, 1: no longer held.
  EXPECT_EQ(two[0].count + two[1].count, 0);
}

}  // namespace
}  // namespace rankwatch::stream
