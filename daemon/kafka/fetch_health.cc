#include "daemon/kafka/fetch_health.h"

#include <simdjson.h>

#include <limits>

namespace rankwatch::kafka {

namespace {

bool IsLogical(simdjson::dom::element broker) {
  std::string_view source;
  return broker["source"].get(source) == simdjson::SUCCESS &&
         source == "logical";
}

// Node id -> state "UP", for the real brokers.
std::map<int64_t, bool> BrokersUp(simdjson::dom::object brokers) {
  std::map<int64_t, bool> up;
  for (auto [name, b] : brokers) {
    int64_t id;
    std::string_view state;
    if (IsLogical(b)) continue;
    if (b["nodeid"].get(id) == simdjson::SUCCESS &&
        b["state"].get(state) == simdjson::SUCCESS) {
      up[id] = state == "UP";
    }
  }
  return up;
}

// A connection of the configured or learned brokers in state UP.
bool RealBrokerUp(simdjson::dom::element broker) {
  std::string_view source, state;
  return broker["source"].get(source) == simdjson::SUCCESS &&
         (source == "configured" || source == "learned") &&
         broker["state"].get(state) == simdjson::SUCCESS && state == "UP";
}

bool ValidPartition(int64_t partition) {
  return partition >= 0 && partition <= std::numeric_limits<int32_t>::max();
}

void AppendPartitions(std::string_view topic, simdjson::dom::object parts,
                      const std::map<int64_t, bool>& broker_up,
                      std::vector<PartitionFetchHealth>* out) {
  for (auto [key, p] : parts) {
    int64_t partition, leader;
    std::string_view fetch_state;
    if (p["partition"].get(partition) != simdjson::SUCCESS ||
        !ValidPartition(partition) ||
        p["leader"].get(leader) != simdjson::SUCCESS ||
        p["fetch_state"].get(fetch_state) != simdjson::SUCCESS) {
      continue;
    }
    auto up = broker_up.find(leader);
    const bool healthy =
        fetch_state == "active" && up != broker_up.end() && up->second;
    out->push_back(
        {std::string(topic), static_cast<int32_t>(partition), healthy});
  }
}

// The toppars of one real broker.
void AppendToppars(simdjson::dom::element broker,
                   std::vector<BrokerFetch>* out) {
  std::string_view state;
  int64_t rx_idle_us;
  simdjson::dom::object toppars;
  if (IsLogical(broker) || broker["state"].get(state) != simdjson::SUCCESS ||
      broker["rxidle"].get(rx_idle_us) != simdjson::SUCCESS ||
      broker["toppars"].get(toppars) != simdjson::SUCCESS) {
    return;
  }
  for (auto [key, tp] : toppars) {
    std::string_view topic;
    int64_t partition;
    if (tp["topic"].get(topic) != simdjson::SUCCESS ||
        tp["partition"].get(partition) != simdjson::SUCCESS ||
        !ValidPartition(partition)) {
      continue;
    }
    out->push_back({std::string(topic), static_cast<int32_t>(partition),
                    state == "UP", rx_idle_us < 0 ? -1 : rx_idle_us / 1000});
  }
}

}  // namespace

FetchStatistics ParseFetchStatistics(std::string_view json) {
  FetchStatistics out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  // Copies into a padded buffer (the view has no padding guarantee).
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) {
    return out;
  }
  std::map<int64_t, bool> broker_up;
  simdjson::dom::object brokers;
  if (doc["brokers"].get(brokers) == simdjson::SUCCESS) {
    broker_up = BrokersUp(brokers);
    for (auto [name, broker] : brokers) {
      AppendToppars(broker, &out.brokers);
      if (RealBrokerUp(broker)) ++out.brokers_up;
    }
  }
  simdjson::dom::object topics;
  if (doc["topics"].get(topics) != simdjson::SUCCESS) return out;
  for (auto [topic_name, topic] : topics) {
    simdjson::dom::object parts;
    if (topic["partitions"].get(parts) != simdjson::SUCCESS) continue;
    AppendPartitions(topic_name, parts, broker_up, &out.partitions);
  }
  return out;
}

std::vector<PartitionFetchHealth> ParseFetchHealth(std::string_view json) {
  return ParseFetchStatistics(json).partitions;
}

std::vector<BrokerFetch> ParseBrokerFetches(std::string_view json) {
  return ParseFetchStatistics(json).brokers;
}

void FetchHealthTable::Record(int32_t slot, bool healthy, int64_t now_mono_ms) {
  slots_[slot] = {healthy, now_mono_ms};
}

bool FetchHealthTable::Healthy(int32_t slot, int64_t now_mono_ms) const {
  auto it = slots_.find(slot);
  return it != slots_.end() && it->second.healthy &&
         now_mono_ms - it->second.reported_mono_ms < kStaleMs;
}

}  // namespace rankwatch::kafka
