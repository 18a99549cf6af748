#include "config/yaml_reader.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/env_test_util.h"

namespace rankwatch::config {
namespace {

// Positions in the expected messages are counted by hand: 1-based line and
// column of the node's first character, as in "f.yaml:<line>:<col>".

// Only these variables are set.
std::string MessageOf(const Status& s) { return s.ok() ? "OK" : s.message(); }

// A reader over "f.yaml" with `env`, and helpers that read the value of
// key `v` of a one-key document through ReadMap, so that paths and marks
// are those of a real map value.
class YamlReaderTest : public ::testing::Test {
 protected:
  Field Root(std::string_view yaml) {
    const YAML::Node root = YAML::Load(std::string(yaml));
    return {root, "", root.Mark()};
  }

  // Runs `read` on the value of key `v` of `yaml`.
  Status ReadV(std::string_view yaml, const YamlReader::Reader& read) {
    return reader_.ReadMap(Root(yaml), {{"v", read}, {"w", Ignore()}});
  }

  static YamlReader::Reader Ignore() {
    return [](const Field&) { return Status::Ok(); };
  }

  std::string IntError(std::string_view value, int64_t min, int64_t max,
                       int64_t* out) {
    return MessageOf(ReadV(
        "v: " + std::string(value) + "\n",
        [&](const Field& f) { return reader_.ReadInt(f, min, max, out); }));
  }

  std::string file_name_ = "f.yaml";
  EnvLookup env_ = FakeEnv({{"N", "5"}, {"X", "hi"}, {"EMPTY", ""}});
  YamlReader reader_{file_name_, env_};
};

TEST_F(YamlReaderTest, ErrorAtNamesFileLineColumnAndPath) {
  YAML::Mark mark;
  mark.line = 2;  // 0-based, as yaml-cpp counts.
  mark.column = 4;
  const Status s = reader_.ErrorAt(mark, "join.window", "bad");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "f.yaml:3:5: join.window: bad");
  EXPECT_EQ(reader_.ErrorAt(YAML::Mark(), "", "bad").message(),
            "f.yaml:1:1: bad");
  EXPECT_EQ(reader_.ErrorAt(YAML::Mark::null_mark(), "a", "bad").message(),
            "f.yaml: a: bad");
  EXPECT_EQ(reader_.ErrorAt(YAML::Mark::null_mark(), "", "bad").message(),
            "f.yaml: bad");
}

TEST_F(YamlReaderTest, DescribeNamesTheNodeType) {
  EXPECT_EQ(Describe(YAML::Load("x")), "'x'");
  // A newline is shown escaped; a backslash is kept as it is.
  EXPECT_EQ(Describe(YAML::Load("\"a\\nb\"")), "'a\\nb'");
  EXPECT_EQ(Describe(YAML::Load("'a\\b'")), "'a\\b'");
  EXPECT_EQ(Describe(YAML::Load("{a: 1}")), "a map");
  EXPECT_EQ(Describe(YAML::Load("[1]")), "a list");
  EXPECT_EQ(Describe(YAML::Load("~")), "null");
  EXPECT_EQ(Describe(YAML::Node(YAML::NodeType::Undefined)), "nothing");
}

TEST_F(YamlReaderTest, ListItemPathAndMark) {
  // "v: [a, ~]": the list at column 4, 'a' at 5; the null item points at
  // its list.
  const YAML::Node list = YAML::Load("v: [a, ~]")["v"];
  const Field f = {list, "v", list.Mark()};
  const Field a = ListItem(f, list[0], 0);
  EXPECT_EQ(a.path, "v[0]");
  EXPECT_EQ(a.mark.column, 4);
  const Field null = ListItem(f, list[1], 1);
  EXPECT_EQ(null.path, "v[1]");
  EXPECT_EQ(null.mark.column, 3);
}

TEST_F(YamlReaderTest, ReadMapDispatchesEachKey) {
  int64_t n = 0;
  std::string name;
  ASSERT_TRUE(
      reader_
          .ReadMap(Root("n: 7\nname: x\n"), {{"n", reader_.IntInto(0, &n)},
                                             {"name", reader_.NameInto(&name)}})
          .ok());
  EXPECT_EQ(n, 7);
  EXPECT_EQ(name, "x");
}

TEST_F(YamlReaderTest, ReadMapRefusesUnknownAndDuplicateKeys) {
  int64_t n = 0;
  std::string name;
  const auto read = [&](std::string_view yaml) {
    return MessageOf(reader_.ReadMap(
        Root(yaml),
        {{"n", reader_.IntInto(0, &n)}, {"name", reader_.NameInto(&name)}}));
  };
  // "nme" is one insertion from "name"; "zzz" is close to nothing.
  EXPECT_EQ(read("n: 1\nnme: x\n"),
            "f.yaml:2:1: nme: unknown key (did you mean 'name'?)");
  EXPECT_EQ(read("zzz: 1\n"),
            "f.yaml:1:1: zzz: unknown key (expected one of: n, name)");
  EXPECT_EQ(read("n: 1\nname: a\nn: 2\n"),
            "f.yaml:3:1: n: duplicate key (first on line 1)");
  EXPECT_EQ(read("[1, 2]\n"), "f.yaml:1:1: expected a map, got a list");
  EXPECT_EQ(read("? [a]\n: 1\n"),
            "f.yaml:1:3: expected a key name, got a list");
}

TEST_F(YamlReaderTest, NestedMapsExtendThePath) {
  std::string name;
  const YamlReader::Reader section = [&](const Field& f) {
    return reader_.ReadMap(f, {{"name", reader_.NameInto(&name)}});
  };
  EXPECT_EQ(
      MessageOf(reader_.ReadMap(Root("sec:\n  nme: 1\n"), {{"sec", section}})),
      "f.yaml:2:3: sec.nme: unknown key (did you mean 'name'?)");
  EXPECT_EQ(MessageOf(reader_.ReadMap(Root("sec:\n  name: ''\n"),
                                      {{"sec", section}})),
            "f.yaml:2:9: sec.name: must not be empty");
}

TEST_F(YamlReaderTest, ReadInt) {
  int64_t v = -99;
  EXPECT_EQ(IntError("7", 0, 10, &v), "OK");
  EXPECT_EQ(v, 7);
  EXPECT_EQ(IntError("${N}", 0, 10, &v), "OK");
  EXPECT_EQ(v, 5);
  EXPECT_EQ(IntError("-5", -5, 10, &v), "OK");
  EXPECT_EQ(v, -5);
  v = -99;
  EXPECT_EQ(IntError("-1", 0, 10, &v), "f.yaml:1:4: v: must be >= 0, got -1");
  EXPECT_EQ(IntError("-6", -5, 10, &v), "f.yaml:1:4: v: must be >= -5, got -6");
  EXPECT_EQ(IntError("0", 1, 10, &v), "f.yaml:1:4: v: must be > 0, got 0");
  EXPECT_EQ(IntError("11", 0, 10, &v), "f.yaml:1:4: v: must be <= 10, got 11");
  EXPECT_EQ(IntError("9223372036854775808", 0, 10, &v),
            "f.yaml:1:4: v: integer '9223372036854775808' is out of range");
  EXPECT_EQ(IntError("1.5", 0, 10, &v),
            "f.yaml:1:4: v: expected an integer, got '1.5'");
  EXPECT_EQ(IntError("0x10", 0, 10, &v),
            "f.yaml:1:4: v: expected an integer, got '0x10'");
  EXPECT_EQ(IntError("+1", 0, 10, &v),
            "f.yaml:1:4: v: expected an integer, got '+1'");
  EXPECT_EQ(IntError("\"\"", 0, 10, &v),
            "f.yaml:1:4: v: expected an integer, got ''");
  EXPECT_EQ(IntError("${EMPTY}", 0, 10, &v),
            "f.yaml:1:4: v: expected an integer, got ''");
  EXPECT_EQ(IntError("[1]", 0, 10, &v),
            "f.yaml:1:4: v: expected an integer, got a list");
  EXPECT_EQ(v, -99);  // Left alone on every error.
  // An empty value is marked on the next line by yaml-cpp: the error
  // points at its key instead.
  EXPECT_EQ(MessageOf(ReadV(
                "v:\nw: 1\n",
                [&](const Field& f) { return reader_.ReadInt(f, 0, 10, &v); })),
            "f.yaml:1:1: v: expected an integer, got null");
}

TEST_F(YamlReaderTest, ReadIntUpToTheLargestOfItsType) {
  int8_t small = 0;
  EXPECT_EQ(MessageOf(ReadV("v: 127", reader_.IntInto(0, &small))), "OK");
  EXPECT_EQ(small, 127);
  EXPECT_EQ(MessageOf(ReadV("v: 128", reader_.IntInto(0, &small))),
            "f.yaml:1:4: v: must be <= 127, got 128");
  int32_t i32 = 0;
  EXPECT_EQ(MessageOf(ReadV("v: 2147483648", reader_.IntInto(0, &i32))),
            "f.yaml:1:4: v: must be <= 2147483647, got 2147483648");
  int64_t i64 = 0;
  EXPECT_EQ(
      MessageOf(ReadV("v: 9223372036854775807", reader_.IntInto(1, &i64))),
      "OK");
  EXPECT_EQ(i64, INT64_MAX);
}

TEST_F(YamlReaderTest, ReadNumber) {
  double d = -1;
  const auto read = [&](std::string_view value) {
    return MessageOf(ReadV("v: " + std::string(value), [&](const Field& f) {
      return reader_.ReadNumber(f, &d);
    }));
  };
  EXPECT_EQ(read("0.5"), "OK");
  EXPECT_EQ(d, 0.5);
  EXPECT_EQ(read("-2.5e3"), "OK");
  EXPECT_EQ(d, -2500);
  EXPECT_EQ(read("7"), "OK");
  EXPECT_EQ(d, 7);
  for (std::string_view bad : {"inf", "nan", "1e999", "abc", "1.5x", "+1"}) {
    EXPECT_EQ(read(bad), "f.yaml:1:4: v: expected a number, got '" +
                             std::string(bad) + "'");
  }
}

TEST_F(YamlReaderTest, ReadBool) {
  bool b = false;
  EXPECT_EQ(MessageOf(ReadV("v: true", reader_.BoolInto(&b))), "OK");
  EXPECT_TRUE(b);
  EXPECT_EQ(MessageOf(ReadV("v: false", reader_.BoolInto(&b))), "OK");
  EXPECT_FALSE(b);
  // YAML 1.1's other spellings mean a string in YAML 1.2: refused, not
  // guessed.
  for (std::string_view bad : {"yes", "on", "1", "True", "''"}) {
    EXPECT_EQ(MessageOf(ReadV("v: " + std::string(bad), reader_.BoolInto(&b))),
              "f.yaml:1:4: v: expected true or false, got '" +
                  std::string(bad == "''" ? "" : bad) + "'");
  }
}

TEST_F(YamlReaderTest, ReadDuration) {
  Duration d{-1};
  EXPECT_EQ(MessageOf(ReadV("v: 1m30s", reader_.DurationInto(true, &d))), "OK");
  EXPECT_EQ(d, Duration(90'000));
  EXPECT_EQ(MessageOf(ReadV("v: 0s", reader_.DurationInto(false, &d))), "OK");
  EXPECT_EQ(d, Duration(0));
  EXPECT_EQ(MessageOf(ReadV("v: 0s", reader_.DurationInto(true, &d))),
            "f.yaml:1:4: v: must be > 0");
  EXPECT_EQ(MessageOf(ReadV("v: 30", reader_.DurationInto(true, &d))),
            "f.yaml:1:4: v: expected a duration like 30s, 5m, 1h, got '30' "
            "(a unit is needed: 30s or 30ms?)");
  EXPECT_EQ(MessageOf(ReadV("v: 3651d", reader_.DurationInto(true, &d))),
            "f.yaml:1:4: v: must be at most 3650d");
  EXPECT_EQ(MessageOf(ReadV("v: {}", reader_.DurationInto(true, &d))),
            "f.yaml:1:4: v: expected a duration like 30s, 5m, 1h, got a map");
}

TEST_F(YamlReaderTest, ReadTimestamp) {
  int64_t ms = -99;
  const auto read = [&](std::string_view value) {
    return MessageOf(ReadV("v: " + std::string(value), [&](const Field& f) {
      return reader_.ReadTimestamp(f, &ms);
    }));
  };
  EXPECT_EQ(read("0"), "OK");
  EXPECT_EQ(ms, 0);
  // date -u -d '2020-01-01T00:00:00Z' +%s -> 1577836800
  EXPECT_EQ(read("2020-01-01T00:00:00Z"), "OK");
  EXPECT_EQ(ms, 1'577'836'800'000);
  EXPECT_EQ(read("1577836800001"), "OK");
  EXPECT_EQ(ms, 1'577'836'800'001);
  const std::string expected =
      "f.yaml:1:4: v: expected an RFC 3339 date-time like "
      "2025-01-01T00:00:00Z or epoch milliseconds, got '";
  EXPECT_EQ(read("yesterday"), expected + "yesterday'");
  EXPECT_EQ(read("'-'"), expected + "-'");  // Quoted: a plain - is YAML.
  EXPECT_EQ(read("99999999999999999999"),
            "f.yaml:1:4: v: integer '99999999999999999999' is out of range");
  EXPECT_EQ(read("-1"),
            "f.yaml:1:4: v: must not be before 1970-01-01T00:00:00Z, got "
            "'-1'");
  EXPECT_EQ(read("1969-12-31T23:59:59Z"),
            "f.yaml:1:4: v: must not be before 1970-01-01T00:00:00Z, got "
            "'1969-12-31T23:59:59Z'");
  EXPECT_EQ(read("253402300800000"),
            "f.yaml:1:4: v: must not be after 9999-12-31T23:59:59.999Z "
            "(253402300799999), got '253402300800000'");
}

constexpr std::array<std::string_view, 3> kColours = {"red", "green", "blue"};

std::string_view ColourName(std::string_view c) { return c; }

TEST_F(YamlReaderTest, ReadChoice) {
  std::string_view colour;
  const auto read = [&](std::string_view value) {
    return MessageOf(ReadV("v: " + std::string(value), [&](const Field& f) {
      return reader_.ReadChoice(f, "colour", kColours, ColourName, &colour);
    }));
  };
  EXPECT_EQ(read("green"), "OK");
  EXPECT_EQ(colour, "green");
  EXPECT_EQ(read("pink"),
            "f.yaml:1:4: v: unknown colour 'pink' (expected one of: red, "
            "green, blue)");
  EXPECT_EQ(read("Red"),
            "f.yaml:1:4: v: unknown colour 'Red' (expected one of: red, "
            "green, blue)");
  EXPECT_EQ(read("[red]"),
            "f.yaml:1:4: v: expected a name (one of: red, green, blue), got a "
            "list");
}

TEST_F(YamlReaderTest, ReadNameList) {
  std::vector<std::string> names = {"stale"};
  const auto read = [&](std::string_view value) {
    return MessageOf(ReadV("v: " + std::string(value), [&](const Field& f) {
      return reader_.ReadNameList(f, "colour", &names);
    }));
  };
  EXPECT_EQ(read("[a, '${X}']"), "OK");
  EXPECT_EQ(names, (std::vector<std::string>{"a", "hi"}));
  EXPECT_EQ(read("[]"), "OK");
  EXPECT_TRUE(names.empty());
  // "v: [a, a]": the second 'a' is at column 8.
  EXPECT_EQ(read("[a, a]"), "f.yaml:1:8: v[1]: duplicate colour 'a'");
  EXPECT_EQ(read("[a, '']"), "f.yaml:1:8: v[1]: must not be empty");
  EXPECT_EQ(read("[a, ~]"), "f.yaml:1:4: v[1]: expected a string, got null");
  EXPECT_EQ(read("a"), "f.yaml:1:4: v: expected a list, got 'a'");
}

TEST_F(YamlReaderTest, BlockListItemsPointAtThemselves) {
  std::vector<int64_t> values;
  const Status s = ReadV("v:\n  - 1\n  - x\n", [&](const Field& f) {
    return reader_.ForEachItem(f, [&](const Field& item) {
      int64_t value = 0;
      RW_RETURN_IF_ERROR(reader_.ReadInt(item, 0, 10, &value));
      values.push_back(value);
      return Status::Ok();
    });
  });
  EXPECT_EQ(MessageOf(s), "f.yaml:3:5: v[1]: expected an integer, got 'x'");
  EXPECT_EQ(values, std::vector<int64_t>{1});
}

TEST_F(YamlReaderTest, TextExpandsTheEnvironment) {
  std::string s;
  EXPECT_EQ(MessageOf(ReadV("v: ${X}-$$", reader_.StringInto(&s))), "OK");
  EXPECT_EQ(s, "hi-$");
  EXPECT_EQ(MessageOf(ReadV("v: ${EMPTY}", reader_.StringInto(&s))), "OK");
  EXPECT_EQ(s, "");
  EXPECT_EQ(MessageOf(ReadV("v: ${EMPTY}", reader_.NameInto(&s))),
            "f.yaml:1:4: v: must not be empty");
  EXPECT_EQ(MessageOf(ReadV("v: ${MISSING}", reader_.StringInto(&s))),
            "f.yaml:1:4: v: environment variable MISSING is not set");
  EXPECT_EQ(MessageOf(ReadV("v: a$b", reader_.StringInto(&s))),
            "f.yaml:1:4: v: '$' must start ${NAME} or ${NAME:-default} "
            "(write '$$' for a literal '$')");
  EXPECT_EQ(MessageOf(ReadV("v: {a: 1}", reader_.StringInto(&s))),
            "f.yaml:1:4: v: expected a string, got a map");
  // Keys are not expanded.
  EXPECT_EQ(MessageOf(reader_.ReadMap(Root("${X}: 1"), {{"hi", Ignore()}})),
            "f.yaml:1:1: ${X}: unknown key (expected one of: hi)");
}

TEST_F(YamlReaderTest, CheckSingleDocument) {
  for (std::string_view one : {"", "a: 1\n", "---\na: 1\n", "---\n", "~\n"}) {
    EXPECT_EQ(MessageOf(reader_.CheckSingleDocument(std::string(one))), "OK")
        << one;
  }
  EXPECT_EQ(MessageOf(reader_.CheckSingleDocument("a: 1\n---\nb: 2\n")),
            "f.yaml:3:1: expected one YAML document, found a second one");
  EXPECT_EQ(MessageOf(reader_.CheckSingleDocument(",")),
            "f.yaml:1:1: YAML syntax error: unexpected ','");
}

}  // namespace
}  // namespace rankwatch::config
