#include "tests/testing/kafka_events.h"

#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <tuple>
#include <utility>

#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::testing {

std::vector<Event> Requests(int first, int count, bool variant_per_request) {
  std::vector<Event> events;
  for (int i = first; i < first + count; ++i) {
    const std::string id = "req-" + std::to_string(i);
    const int64_t t = kT0 + kSpacingMs * i;
    const std::string variant =
        variant_per_request ? "v-" + std::to_string(i) : (i % 2 ? "B" : "A");
    std::string docs;
    for (int d = 0; d < 5; ++d) {
      docs += (d ? ",\"" : "\"") + id + "-d" + std::to_string(d) + "\"";
    }
    // Users of one variant each (13 per variant), for schema.unit.
    const std::string user =
        "u-" + variant + "-" + std::to_string((i / 2) % 13);
    // Seven queries, for the query movers.
    events.push_back({true, id,
                      "{\"request_id\":\"" + id + "\",\"query_id\":\"q-" +
                          std::to_string(i % 7) + "\",\"variant\":\"" +
                          variant + "\",\"user_id\":\"" + user +
                          "\",\"timestamp\":" + std::to_string(t) +
                          ",\"results\":[" + docs + "]}",
                      t});
    if (i % 7 == 0) continue;
    auto click = [&](int doc, int grade, int64_t delay) {
      events.push_back({false, id,
                        "{\"request_id\":\"" + id + "\",\"doc_id\":\"" + id +
                            "-d" + std::to_string(doc) +
                            "\",\"relevance\":" + std::to_string(grade) +
                            ",\"timestamp\":" + std::to_string(t + delay) + "}",
                        t + delay});
    };
    click(i % 5, 1, 100);
    if (i % 3 == 0) click((i + 2) % 5, 2, 200);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) {
                     return a.timestamp_ms < b.timestamp_ms;
                   });
  return events;
}

Producer::Producer(const std::string& bootstrap, std::string results_topic,
                   std::string judgments_topic,
                   const std::map<std::string, std::string>& properties,
                   int partitions)
    : results_topic_(std::move(results_topic)),
      judgments_topic_(std::move(judgments_topic)),
      partitions_(partitions) {
  std::unique_ptr<RdKafka::Conf> conf(
      RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  conf->set("bootstrap.servers", bootstrap, err);
  conf->set("linger.ms", "5", err);
  conf->set("compression.type", "lz4", err);
  for (const auto& [name, value] : properties) conf->set(name, value, err);
  producer_.reset(RdKafka::Producer::create(conf.get(), err));
}

Producer::~Producer() { Flush(); }

void Producer::Send(const Event& e, int32_t partition) {
  const std::string& topic = e.results ? results_topic_ : judgments_topic_;
  while (producer_->produce(topic, partition, RdKafka::Producer::RK_MSG_COPY,
                            const_cast<char*>(e.json.data()), e.json.size(),
                            e.key.data(), e.key.size(), e.timestamp_ms,
                            nullptr) == RdKafka::ERR__QUEUE_FULL) {
    producer_->poll(10);
  }
}

void Producer::SendAll(const std::vector<Event>& events) {
  for (const Event& e : events) Send(e);
  Flush();
}

void Producer::SendPaced(const std::vector<Event>& events, double speedup) {
  if (events.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  const int64_t t0 = events.front().timestamp_ms;
  for (const Event& e : events) {
    const auto due = start + std::chrono::microseconds(static_cast<int64_t>(
                                 (e.timestamp_ms - t0) * 1000 / speedup));
    while (std::chrono::steady_clock::now() < due) producer_->poll(1);
    Send(e);
    producer_->poll(0);
  }
  Flush();
}

void Producer::Sentinels(int64_t time_ms) {
  for (int p = 0; p < partitions_; ++p) {
    const std::string id =
        "sentinel-" + std::to_string(p) + "-" + std::to_string(time_ms);
    const std::string t = std::to_string(time_ms);
    Send({true, id,
          "{\"request_id\":\"" + id +
              "\",\"variant\":\"sentinel\",\"timestamp\":" + t +
              ",\"results\":[\"s\"]}",
          time_ms},
         p);
    Send({false, id + "-j",
          "{\"request_id\":\"" + id +
              "-j\",\"doc_id\":\"s\",\"relevance\":0,\"timestamp\":" + t + "}",
          time_ms},
         p);
  }
  Flush();
}

int64_t Producer::NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Producer::Flush() { producer_->flush(10'000); }

bool WaitConsumed(const std::vector<DaemonProcess*>& daemons, double events) {
  return WaitFor(
      [&] {
        double consumed = 0, lag = 0;
        for (DaemonProcess* d : daemons) {
          const Scrape s = d->Metrics();
          consumed += s.Sum("rankwatch_events_consumed_total");
          lag += s.Sum("rankwatch_consumer_lag_messages");
        }
        return consumed >= events && lag == 0;
      },
      std::chrono::seconds(30));
}

void ExpectSameAsReplay(const std::vector<Scrape>& scrapes,
                        const std::string& replay_json,
                        const std::vector<std::string>& variants,
                        double tolerance, bool relative, Figures figures,
                        const std::string& window) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(simdjson::padded_string(replay_json)).get(doc),
            simdjson::SUCCESS)
      << replay_json;
  const std::vector<std::tuple<std::string, std::string, std::string>> series =
      {{"P_1", "rankwatch_precision", "1"},
       {"P_3", "rankwatch_precision", "3"},
       {"recip_rank_3", "rankwatch_reciprocal_rank", "3"},
       {"recip_rank", "rankwatch_reciprocal_rank", "all"},
       {"ndcg_cut_3", "rankwatch_ndcg", "3"},
       {"ndcg", "rankwatch_ndcg", "all"}};
  for (const std::string& v : variants) {
    for (const auto& [trec, metric, k] : series) {
      SCOPED_TRACE(v + " " + trec);
      double count = 0, sum = 0;
      for (const Scrape& s : scrapes) {
        switch (figures) {
          case Figures::kCounters:
            count += s.Sum(metric + "_count", {{"variant", v}, {"k", k}});
            sum += s.Sum(metric + "_sum", {{"variant", v}, {"k", k}});
            break;
          case Figures::kState:
            count += s.Sum(metric + "_window_lists",
                           {{"variant", v}, {"k", k}, {"window", window}});
            sum += s.Sum(metric + "_window_sum_values",
                         {{"variant", v}, {"k", k}, {"window", window}});
            break;
        }
      }
      simdjson::dom::element m = doc["variants"][v]["measures"][trec];
      ASSERT_TRUE(m.is_object());
      EXPECT_EQ(count, double(int64_t(m["count"])));
      ASSERT_GT(count, 0);
      const double mean = double(m["mean"]);
      EXPECT_NEAR(sum / count, mean,
                  relative ? tolerance * std::abs(mean) : tolerance);
    }
  }
}

std::map<int, double> FinalizedPerRequest(const std::vector<Scrape>& scrapes,
                                          int requests) {
  std::map<int, double> n;
  for (int i = 0; i < requests; ++i) {
    for (const Scrape& s : scrapes) {
      n[i] += s.Sum("rankwatch_precision_count",
                    {{"variant", "v-" + std::to_string(i)}, {"k", "1"}});
    }
  }
  return n;
}

std::string ReplayJson(const std::string& rankwatch, const TempDir& dir,
                       const std::string& config,
                       const std::vector<Event>& events) {
  std::string results, judgments;
  for (const Event& e : events) {
    (e.results ? results : judgments) += e.json + "\n";
  }
  const CommandResult res =
      RunCommand({rankwatch, "replay", "--config", config, "--results",
                  dir.Write("r.jsonl", results), "--judgments",
                  dir.Write("j.jsonl", judgments), "--format", "json"});
  EXPECT_EQ(res.exit_code, 0) << res.err;
  return res.out;
}

}  // namespace rankwatch::testing
