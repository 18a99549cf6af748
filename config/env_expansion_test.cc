#include "config/env_expansion.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "config/env_test_util.h"

namespace rankwatch::config {
namespace {

// The expansion of `text`, or "error: <message>".
std::string Expand(std::string_view text,
                   std::map<std::string, std::string> vars = {}) {
  StatusOr<std::string> out = ExpandEnv(text, FakeEnv(std::move(vars)));
  if (out.ok()) return *out;
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  return "error: " + out.status().message();
}

constexpr std::string_view kLoneDollar =
    "error: '$' must start ${NAME} or ${NAME:-default} (write '$$' for a "
    "literal '$')";

TEST(EnvExpansionTest, TextWithoutDollarIsUnchanged) {
  EXPECT_EQ(Expand(""), "");
  EXPECT_EQ(Expand("plain {text} with : and -"), "plain {text} with : and -");
}

TEST(EnvExpansionTest, VariablesAreSubstituted) {
  const std::map<std::string, std::string> env = {
      {"HOST", "broker"}, {"PORT", "9093"}, {"_x1", "u"}};
  EXPECT_EQ(Expand("${HOST}", env), "broker");
  EXPECT_EQ(Expand("${HOST}:${PORT}", env), "broker:9093");
  EXPECT_EQ(Expand("a${_x1}b${_x1}", env), "aubu");
}

TEST(EnvExpansionTest, ValuesAreNotExpandedAgain) {
  EXPECT_EQ(Expand("${A}", {{"A", "${B}"}, {"B", "no"}}), "${B}");
  EXPECT_EQ(Expand("${A}", {{"A", "pa$$"}}), "pa$$");
  EXPECT_EQ(Expand("${A}", {{"A", "$"}}), "$");
}

TEST(EnvExpansionTest, DefaultWhenUnsetOrEmpty) {
  EXPECT_EQ(Expand("${W:-5m}"), "5m");
  EXPECT_EQ(Expand("${W:-5m}", {{"W", ""}}), "5m");
  EXPECT_EQ(Expand("${W:-5m}", {{"W", "1h"}}), "1h");
  EXPECT_EQ(Expand("${W:-}"), "");
  EXPECT_EQ(Expand("x${W:-}y"), "xy");
  // The default is taken as written, up to the first '}': not expanded,
  // and a second ":-" is part of it.
  EXPECT_EQ(Expand("${W:-$$}"), "$$");
  EXPECT_EQ(Expand("${W:-a:-b}"), "a:-b");
  EXPECT_EQ(Expand("${W:-a}b}"), "ab}");
  EXPECT_EQ(Expand("${W:-${X}"), "${X");
}

TEST(EnvExpansionTest, SetButEmptyWithoutDefaultIsEmpty) {
  EXPECT_EQ(Expand("[${E}]", {{"E", ""}}), "[]");
}

TEST(EnvExpansionTest, MissingVariableIsAnError) {
  EXPECT_EQ(Expand("${KAFKA_PASSWORD}"),
            "error: environment variable KAFKA_PASSWORD is not set");
  EXPECT_EQ(Expand("${A}${B}", {{"A", "1"}}),
            "error: environment variable B is not set");
  // A "-" without ":" is not a default: the name is then invalid.
  EXPECT_EQ(Expand("${A-b}"), "error: invalid environment variable name 'A-b'");
}

TEST(EnvExpansionTest, EmptyLookupMeansNothingIsSet) {
  EXPECT_EQ(ExpandEnv("${W:-2m}", EnvLookup()).value(), "2m");
  EXPECT_EQ(ExpandEnv("${W}", EnvLookup()).status().message(),
            "environment variable W is not set");
}

TEST(EnvExpansionTest, DoubleDollarIsALiteralDollar) {
  EXPECT_EQ(Expand("$$"), "$");
  EXPECT_EQ(Expand("$$$$"), "$$");
  EXPECT_EQ(Expand("$${X}"), "${X}");
  EXPECT_EQ(Expand("/tmp/$$HOME/$${X}$$"), "/tmp/$HOME/${X}$");
  EXPECT_EQ(Expand("$$${X}", {{"X", "v"}}), "$v");
}

TEST(EnvExpansionTest, MalformedReferences) {
  EXPECT_EQ(Expand("$HOME"), kLoneDollar);
  EXPECT_EQ(Expand("a$"), kLoneDollar);
  EXPECT_EQ(Expand("$"), kLoneDollar);
  EXPECT_EQ(Expand("$$$"), kLoneDollar);
  EXPECT_EQ(Expand("$(X)"), kLoneDollar);
  EXPECT_EQ(Expand("${HOME"),
            "error: unterminated '${' (write '$$' for a literal '$')");
  EXPECT_EQ(Expand("${"),
            "error: unterminated '${' (write '$$' for a literal '$')");
  EXPECT_EQ(Expand("${}"), "error: invalid environment variable name ''");
  EXPECT_EQ(Expand("${:-d}"), "error: invalid environment variable name ''");
  EXPECT_EQ(Expand("${1X}"), "error: invalid environment variable name '1X'");
  EXPECT_EQ(Expand("${A B}"), "error: invalid environment variable name 'A B'");
  // The name is shown printable, on one line.
  EXPECT_EQ(Expand("${a\nb}"),
            "error: invalid environment variable name 'a\\nb'");
}

TEST(EnvExpansionTest, SystemEnvReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("RANKWATCH_ENV_EXPANSION_TEST_VAR", "7m", 1), 0);
  EXPECT_EQ(SystemEnv("RANKWATCH_ENV_EXPANSION_TEST_VAR"), "7m");
  EXPECT_EQ(ExpandEnv("${RANKWATCH_ENV_EXPANSION_TEST_VAR}", SystemEnv).value(),
            "7m");
  ASSERT_EQ(setenv("RANKWATCH_ENV_EXPANSION_TEST_VAR", "", 1), 0);
  EXPECT_EQ(SystemEnv("RANKWATCH_ENV_EXPANSION_TEST_VAR"), "");
  ASSERT_EQ(unsetenv("RANKWATCH_ENV_EXPANSION_TEST_VAR"), 0);
  EXPECT_EQ(SystemEnv("RANKWATCH_ENV_EXPANSION_TEST_VAR"), std::nullopt);
}

}  // namespace
}  // namespace rankwatch::config
