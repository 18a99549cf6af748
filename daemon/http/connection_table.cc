#include "daemon/http/connection_table.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace rankwatch::http {

ConnectionTable::ConnectionTable(size_t max_total, size_t max_per_client)
    : max_total_(max_total), max_per_client_(max_per_client) {}

bool ConnectionTable::ClientFull(const std::string& client) const {
  const auto it = clients_.find(client);
  return it != clients_.end() && it->second.count >= max_per_client_;
}

int ConnectionTable::FirstOf(const Lists& lists) {
  for (const std::list<int>& list : lists) {
    if (!list.empty()) return list.front();
  }
  return -1;
}

int ConnectionTable::VictimForTotal() const { return FirstOf(all_); }

int ConnectionTable::VictimForClient(const std::string& client) const {
  const auto it = clients_.find(client);
  return it == clients_.end() ? -1 : FirstOf(it->second.lists);
}

void ConnectionTable::Add(int fd, const std::string& client) {
  Client& c = clients_[client];
  ++c.count;
  Entry& entry = entries_[fd];
  entry.client = &c;  // unordered_map nodes are stable.
  entry.address = client;
  entry.phase = Phase::kIdle;
  List(fd, &entry);
}

void ConnectionTable::SetPhase(int fd, Phase phase) {
  Entry& entry = entries_.at(fd);
  Unlist(&entry);
  entry.phase = phase;
  List(fd, &entry);
}

void ConnectionTable::Remove(int fd) {
  const auto it = entries_.find(fd);
  if (it == entries_.end()) return;
  Unlist(&it->second);
  if (--it->second.client->count == 0) clients_.erase(it->second.address);
  entries_.erase(it);
}

void ConnectionTable::Unlist(Entry* entry) {
  if (entry->phase == Phase::kBusy) return;
  const auto i = static_cast<size_t>(entry->phase);
  all_[i].erase(entry->in_all);
  entry->client->lists[i].erase(entry->in_client);
}

void ConnectionTable::List(int fd, Entry* entry) {
  if (entry->phase == Phase::kBusy) return;
  const auto i = static_cast<size_t>(entry->phase);
  entry->in_all = all_[i].insert(all_[i].end(), fd);
  entry->in_client =
      entry->client->lists[i].insert(entry->client->lists[i].end(), fd);
}

std::string ClientAddress(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr,
              text, sizeof(text));
  } else if (address.ss_family == AF_INET6) {
    const in6_addr& a6 =
        reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
      inet_ntop(AF_INET, &a6.s6_addr[12], text, sizeof(text));
    } else {
      inet_ntop(AF_INET6, &a6, text, sizeof(text));
    }
  }
  return text;
}

std::string ClientKey(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET6) {
    in6_addr prefix = reinterpret_cast<const sockaddr_in6&>(address).sin6_addr;
    if (!IN6_IS_ADDR_V4MAPPED(&prefix)) {
      std::memset(&prefix.s6_addr[8], 0, 8);
      char text[INET6_ADDRSTRLEN] = "";
      inet_ntop(AF_INET6, &prefix, text, sizeof(text));
      return std::string(text) + "/64";
    }
  }
  return ClientAddress(address);
}

}  // namespace rankwatch::http
