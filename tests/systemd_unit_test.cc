// deploy/systemd/rankwatch.service restarts rankwatch on any abnormal exit
// and reloads it with SIGHUP (issue 14). systemd's rules (systemd.service(5),
// Restart=): with Restart=on-failure a death by SIGHUP, SIGINT, SIGTERM or
// SIGPIPE, or exit 0, counts as clean and is not restarted, and rankwatch
// answers SIGTERM from anyone by exiting 0; a unit stopped by `systemctl
// stop` is never restarted, whatever Restart= says. So the unit must say
// Restart=always, and only the configuration error (exit 2) is exempt.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testing/paths.h"

using rankwatch::testing::SourceTree;

namespace rankwatch {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// [Service] key -> values in order (a key may repeat).
std::map<std::string, std::vector<std::string>> ServiceSection() {
  std::ifstream in(std::filesystem::path(SourceTree()) /
                   "deploy/systemd/rankwatch.service");
  EXPECT_TRUE(in.good());
  std::map<std::string, std::vector<std::string>> keys;
  std::string section;
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[') {
      section = line;
      continue;
    }
    const size_t eq = line.find('=');
    if (section != "[Service]" || eq == std::string::npos) continue;
    keys[Trim(line.substr(0, eq))].push_back(Trim(line.substr(eq + 1)));
  }
  return keys;
}

std::vector<std::string> Words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

TEST(SystemdUnitTest, RestartsOnAnyAbnormalExitButNotAConfigError) {
  auto service = ServiceSection();
  ASSERT_EQ(service["Restart"].size(), 1u);
  // "always": also after a death by SIGTERM/SIGHUP/SIGINT/SIGPIPE and an
  // exit 0 that systemd did not ask for (on-failure skips all of these).
  EXPECT_EQ(service["Restart"][0], "always");
  ASSERT_EQ(service["RestartPreventExitStatus"].size(), 1u);
  EXPECT_EQ(Words(service["RestartPreventExitStatus"][0]),
            std::vector<std::string>{"2"});  // Usage/configuration error.
  ASSERT_EQ(service["RestartSec"].size(), 1u);
  // `systemctl stop` sends SIGTERM, on which rankwatch commits and exits 0.
  EXPECT_EQ(service["KillSignal"], std::vector<std::string>{"SIGTERM"});
}

TEST(SystemdUnitTest, ReloadSendsSighupToTheMainProcess) {
  auto service = ServiceSection();
  EXPECT_EQ(service["ExecReload"],
            std::vector<std::string>{"/bin/kill -HUP $MAINPID"});
}

}  // namespace
}  // namespace rankwatch
