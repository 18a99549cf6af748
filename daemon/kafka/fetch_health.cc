#include "daemon/kafka/fetch_health.h"

#include <simdjson.h>

#include <limits>

namespace rankwatch::kafka {

namespace {

// Node id -> state "UP", for the real brokers.
std::map<int64_t, bool> BrokersUp(simdjson::dom::element doc) {
  std::map<int64_t, bool> up;
  simdjson::dom::object brokers;
  if (doc["brokers"].get(brokers) != simdjson::SUCCESS) return up;
  for (auto [name, b] : brokers) {
    int64_t id;
    std::string_view state, source;
    if (b["source"].get(source) == simdjson::SUCCESS && source == "logical") {
      continue;
    }
    if (b["nodeid"].get(id) == simdjson::SUCCESS &&
        b["state"].get(state) == simdjson::SUCCESS) {
      up[id] = state == "UP";
    }
  }
  return up;
}

void AppendPartitions(std::string_view topic, simdjson::dom::object parts,
                      const std::map<int64_t, bool>& broker_up,
                      std::vector<PartitionFetchHealth>* out) {
  for (auto [key, p] : parts) {
    int64_t partition, leader;
    std::string_view fetch_state;
    if (p["partition"].get(partition) != simdjson::SUCCESS || partition < 0 ||
        partition > std::numeric_limits<int32_t>::max() ||
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

}  // namespace

std::vector<PartitionFetchHealth> ParseFetchHealth(std::string_view json) {
  std::vector<PartitionFetchHealth> out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  // Copies into a padded buffer (the view has no padding guarantee).
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) {
    return out;
  }
  const std::map<int64_t, bool> broker_up = BrokersUp(doc);
  simdjson::dom::object topics;
  if (doc["topics"].get(topics) != simdjson::SUCCESS) return out;
  for (auto [topic_name, topic] : topics) {
    simdjson::dom::object parts;
    if (topic["partitions"].get(parts) != simdjson::SUCCESS) continue;
    AppendPartitions(topic_name, parts, broker_up, &out);
  }
  return out;
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
