#include "daemon/kafka/checkpoint_chain.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace rankwatch::kafka {

bool ParseDeltaKey(int32_t partition, std::string_view key,
                   int64_t* base_offset, uint32_t* seq) {
  const std::string prefix = BaseKey(partition) + ".";
  if (!key.starts_with(prefix)) return false;
  key.remove_prefix(prefix.size());
  const size_t dot = key.find('.');
  if (dot == std::string_view::npos) return false;
  const char* end = key.data() + dot;
  const auto [p1, e1] = std::from_chars(key.data(), end, *base_offset);
  if (e1 != std::errc() || p1 != end || *base_offset < 0) return false;
  const char* last = key.data() + key.size();
  const auto [p2, e2] = std::from_chars(end + 1, last, *seq);
  return e2 == std::errc() && p2 == last && *seq > 0;
}

void FoldChainRecord(int32_t partition, std::string_view key, int64_t offset,
                     const std::string_view* value,
                     std::vector<Changelog::Stored>* records) {
  const std::string base = BaseKey(partition);
  if (key != base && !(key.starts_with(base) && key.size() > base.size() &&
                       key[base.size()] == '.')) {
    return;  // Another partition's.
  }
  if (value == nullptr) {  // A tombstone.
    std::erase_if(*records,
                  [&](const Changelog::Stored& r) { return r.key == key; });
    return;
  }
  if (key == base) {
    // Superseded by this base: the older base goes, the deltas' keys stay
    // (to be deleted), their bytes do not (never applied).
    std::erase_if(*records,
                  [&](const Changelog::Stored& r) { return r.key == base; });
    for (Changelog::Stored& r : *records) {
      r.value.clear();
      r.value.shrink_to_fit();
    }
  }
  records->push_back({std::string(key), offset, std::string(*value)});
}

ChainSelection SelectChain(int32_t partition,
                           const std::vector<Changelog::Stored>& records) {
  ChainSelection chain;
  const std::string base_key = BaseKey(partition);
  for (size_t i = records.size(); i-- > 0;) {
    if (records[i].key == base_key) {
      chain.base = i;
      break;
    }
  }
  const size_t first = chain.base ? *chain.base + 1 : 0;
  // Deltas before the newest base belong to no chain: deleted too.
  for (size_t i = 0; i < first; ++i) {
    if (records[i].key.starts_with(base_key + ".")) {
      chain.delta_keys.push_back(records[i].key);
    }
  }
  const int64_t base_offset = chain.base ? records[*chain.base].offset : -1;
  for (size_t i = first; i < records.size(); ++i) {
    const Changelog::Stored& r = records[i];
    int64_t of = -1;
    uint32_t seq = 0;
    const bool parsed = ParseDeltaKey(partition, r.key, &of, &seq);
    if (r.key.starts_with(base_key + ".")) chain.delta_keys.push_back(r.key);
    // Another base's (a writer that lost the partition, a superseded
    // base's leftovers) or another partition's: not this chain.
    if (parsed && of != base_offset) continue;
    if (!chain.base || !chain.problem.empty()) continue;
    if (!r.key.starts_with(base_key + ".")) continue;
    const std::string where = "delta record '" + r.key +
                              "' (changelog offset " +
                              std::to_string(r.offset) + ")";
    if (!parsed) {
      chain.problem = where + ": not a delta key";
      continue;
    }
    StatusOr<DeltaRecord> delta = DecodeDeltaRecord(r.value);
    if (!delta.ok()) {
      chain.problem = where + ": " + delta.status().message();
    } else if (delta->partition != partition || delta->base_offset != of ||
               delta->seq != seq) {
      chain.problem = where + ": its header names another place (partition " +
                      std::to_string(delta->partition) + ", base " +
                      std::to_string(delta->base_offset) + ", delta " +
                      std::to_string(delta->seq) + ")";
    } else if (seq != chain.deltas.size() + 1) {
      chain.problem = where + ": delta " + std::to_string(seq) +
                      " where delta " +
                      std::to_string(chain.deltas.size() + 1) +
                      " was due (one is missing or out of order)";
    } else {
      chain.deltas.push_back(i);
    }
  }
  return chain;
}

void ShardChain::Restored(std::vector<std::string> keys, int64_t read_from) {
  *this = ShardChain{};
  delta_keys = std::move(keys);
  if (!delta_keys.empty()) keys_from = std::max<int64_t>(read_from, 0);
}

void ShardChain::DeltaAcked(uint32_t acked_seq, int64_t bytes,
                            std::string key) {
  seq = acked_seq;
  delta_bytes += bytes;
  // The chain's deltas lie after its base.
  if (keys_from < 0) keys_from = base_offset;
  delta_keys.push_back(std::move(key));
}

std::vector<std::string> ShardChain::BaseAcked(int64_t offset, int64_t bytes) {
  std::vector<std::string> stale = std::move(delta_keys);
  int64_t waiting = stale_from;
  if (!stale.empty() && keys_from >= 0) {
    waiting = waiting < 0 ? keys_from : std::min(waiting, keys_from);
  }
  *this = ShardChain{};
  base_offset = offset;
  base_bytes = bytes;
  stale_from = waiting;
  return stale;
}

void ShardChain::RoundFailed(uint32_t failed_seq, std::string key) {
  if (failed_seq > 0) {
    if (keys_from < 0) keys_from = base_offset;
    delta_keys.push_back(std::move(key));
  }
  base_offset = -1;
}

int64_t ShardChain::Pointer() const {
  if (stale_from < 0) return base_offset;
  return base_offset < 0 ? stale_from : std::min(stale_from, base_offset);
}

}  // namespace rankwatch::kafka
