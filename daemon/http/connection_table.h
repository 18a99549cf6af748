// ConnectionTable: the bookkeeping behind HttpServer's connection limits.
// It knows each open connection's client address and phase, in the order
// the connections entered it, and answers which connection to shed when a
// new one would exceed the total cap or its client's cap.
//
// Shedding keeps a new scrape getting in under a flood (issue 15): rather
// than refusing the new connection, the server closes the one that is
// least likely to be a scrape in progress. The order of victims is:
// draining (response sent, waiting for the client to hang up), then idle
// (no byte received yet), then reading (request still arriving: slow),
// then writing (response not yet taken by the client); within a phase the
// oldest first (the one longest in that phase). A busy connection (its
// handler queued or running) is never shed: it holds a worker's result.
//
// Ids are the connections' file descriptors. No sockets are touched here.
// Not thread-safe: the server's I/O thread owns it.
#ifndef RANKWATCH_DAEMON_HTTP_CONNECTION_TABLE_H_
#define RANKWATCH_DAEMON_HTTP_CONNECTION_TABLE_H_

#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>

namespace rankwatch::http {

enum class Phase {
  kDraining,
  kIdle,
  kReading,
  kWriting,
  kBusy,
};

// The address of a client, without its port; an IPv4-mapped IPv6 address
// ("::ffff:1.2.3.4") as the IPv4 one.
std::string ClientAddress(const sockaddr_storage& address);
// The key of a client's caps: its IPv4 address, or its IPv6 /64
// ("2001:db8:1:2::/64"): one host commonly has a whole /64, so counting by
// address would let it multiply every per-client cap by 2^64.
std::string ClientKey(const sockaddr_storage& address);

class ConnectionTable {
 public:
  // `max_total` connections in all, `max_per_client` from one address.
  ConnectionTable(size_t max_total, size_t max_per_client);

  size_t size() const { return entries_.size(); }
  bool Full() const { return entries_.size() >= max_total_; }
  bool ClientFull(const std::string& client) const;

  // The connection to close so that one more fits: the first in shedding
  // order among all connections, or among those of `client`; -1 when every
  // candidate is busy.
  int VictimForTotal() const;
  int VictimForClient(const std::string& client) const;

  // A new connection, kIdle; `fd` must not be in the table.
  void Add(int fd, const std::string& client);
  // Moves `fd` to `phase`, as the newest of that phase.
  void SetPhase(int fd, Phase phase);
  Phase phase(int fd) const { return entries_.at(fd).phase; }
  void Remove(int fd);

 private:
  // One list per sheddable phase, oldest first; kBusy has none.
  static constexpr size_t kListed = static_cast<size_t>(Phase::kBusy);
  using Lists = std::array<std::list<int>, kListed>;
  struct Client {
    size_t count = 0;
    Lists lists;
  };
  struct Entry {
    Phase phase = Phase::kIdle;
    Client* client = nullptr;
    std::string address;
    std::list<int>::iterator in_all;     // Valid unless kBusy.
    std::list<int>::iterator in_client;  // Valid unless kBusy.
  };

  static int FirstOf(const Lists& lists);
  void Unlist(Entry* entry);
  void List(int fd, Entry* entry);

  size_t max_total_;
  size_t max_per_client_;
  Lists all_;
  std::unordered_map<std::string, Client> clients_;
  std::unordered_map<int, Entry> entries_;
};

}  // namespace rankwatch::http

#endif  // RANKWATCH_DAEMON_HTTP_CONNECTION_TABLE_H_
