#include "daemon/http/connection_table.h"

#include "gtest/gtest.h"

namespace rankwatch::http {
namespace {

TEST(ConnectionTableTest, CountsInTotalAndPerClient) {
  ConnectionTable table(3, 2);
  table.Add(10, "a");
  EXPECT_FALSE(table.ClientFull("a"));
  table.Add(11, "a");
  EXPECT_TRUE(table.ClientFull("a"));
  EXPECT_FALSE(table.ClientFull("b"));
  EXPECT_FALSE(table.Full());
  table.Add(12, "b");
  EXPECT_TRUE(table.Full());
  EXPECT_EQ(table.size(), 3u);
  table.Remove(10);
  EXPECT_FALSE(table.ClientFull("a"));
  EXPECT_FALSE(table.Full());
  table.Remove(10);  // Unknown: no-op.
  EXPECT_EQ(table.size(), 2u);
}

TEST(ConnectionTableTest, ShedsDrainingThenIdleThenReadingThenWriting) {
  ConnectionTable table(10, 10);
  for (int fd = 1; fd <= 5; ++fd) table.Add(fd, "a");
  table.SetPhase(1, Phase::kWriting);
  table.SetPhase(2, Phase::kReading);
  table.SetPhase(3, Phase::kBusy);
  table.SetPhase(4, Phase::kDraining);
  // 5 is idle.
  EXPECT_EQ(table.VictimForTotal(), 4);
  table.Remove(4);
  EXPECT_EQ(table.VictimForTotal(), 5);
  table.Remove(5);
  EXPECT_EQ(table.VictimForTotal(), 2);
  table.Remove(2);
  EXPECT_EQ(table.VictimForTotal(), 1);
  table.Remove(1);
  // Only the busy one is left: never shed.
  EXPECT_EQ(table.VictimForTotal(), -1);
  EXPECT_EQ(table.VictimForClient("a"), -1);
  EXPECT_EQ(table.VictimForClient("nobody"), -1);
}

TEST(ConnectionTableTest, OldestInAPhaseFirstCountedFromEnteringIt) {
  ConnectionTable table(10, 10);
  table.Add(1, "a");
  table.Add(2, "a");
  table.Add(3, "a");
  EXPECT_EQ(table.VictimForTotal(), 1);
  // 2 then 1 start their requests: 2 is the oldest slow one.
  table.SetPhase(2, Phase::kReading);
  table.SetPhase(1, Phase::kReading);
  EXPECT_EQ(table.VictimForTotal(), 3);  // Idle still goes first.
  table.Remove(3);
  EXPECT_EQ(table.VictimForTotal(), 2);
}

TEST(ConnectionTableTest, ClientVictimIsTheClientsOwn) {
  ConnectionTable table(10, 2);
  table.Add(1, "scraper");
  table.Add(2, "flood");
  table.Add(3, "flood");
  EXPECT_EQ(table.VictimForTotal(), 1);
  EXPECT_EQ(table.VictimForClient("flood"), 2);
  EXPECT_EQ(table.VictimForClient("scraper"), 1);
  EXPECT_EQ(table.phase(2), Phase::kIdle);
}

}  // namespace
}  // namespace rankwatch::http
