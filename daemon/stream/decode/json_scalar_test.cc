#include "daemon/stream/decode/json_scalar.h"

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace rankwatch::stream {
namespace {

namespace ondemand = simdjson::ondemand;
using ondemand::json_type;

// One JSON literal, parsed as the only entry of an array: where the decoder
// meets scalars, inside a document. Not copyable (the value points into the
// document).
class Literal {
 public:
  explicit Literal(std::string_view literal)
      : json_("[" + std::string(literal) + "]") {
    ondemand::array array;
    if (parser_.iterate(json_).get(doc_) || doc_.get_array().get(array)) {
      ADD_FAILURE() << "cannot start on " << literal;
      return;
    }
    for (auto entry : array) {
      if (entry.get(value_) || value_.type().get(type_)) {
        ADD_FAILURE() << "no value in " << literal;
      }
      break;  // The one entry; the rest of the array is not read.
    }
  }
  Literal(const Literal&) = delete;
  Literal& operator=(const Literal&) = delete;

  ondemand::value& value() { return value_; }
  json_type type() const { return type_; }
  // Whether `s` points into the document's input: read without a copy.
  bool InInput(std::string_view s) const {
    return s.data() >= json_.data() &&
           s.data() + s.size() <= json_.data() + json_.size();
  }

 private:
  simdjson::padded_string json_;
  ondemand::parser parser_;
  ondemand::document doc_;
  ondemand::value value_;
  json_type type_ = json_type::null;
};

// "ok", "malformed: <simdjson error>", "rejected" or "out_of_range".
std::string Outcome(const ScalarResult& r) {
  switch (r.outcome) {
    case ScalarOutcome::kOk:
      return "ok";
    case ScalarOutcome::kMalformed:
      return std::string("malformed: ") + simdjson::error_message(r.error);
    case ScalarOutcome::kRejected:
      return "rejected";
    case ScalarOutcome::kOutOfRange:
      return "out_of_range";
  }
  return "?";
}

std::string Malformed(simdjson::error_code e) {
  return std::string("malformed: ") + simdjson::error_message(e);
}

// ---- ClassifyNumber
// -----------------------------------------------------------

TEST(ClassifyNumberTest, Integers) {
  for (std::string_view t :
       {"0", "1", "-0", "-1", "12", "1234567890",
        "123456789012345678901234567890123456789012345678901234567890",
        "-99999999999999999999"}) {
    EXPECT_EQ(ClassifyNumber(t), NumberKind::kInteger) << t;
  }
}

TEST(ClassifyNumberTest, FractionOrExponentMakesAFloat) {
  for (std::string_view t :
       {"1.5", "-1.5", "0.0", "2.0", "-0.0", "1e3", "1E3", "1e+3", "1e-3",
        "1E+400", "1e999", "0e0", "-1E-0", "1.5e-3", "12.10"}) {
    EXPECT_EQ(ClassifyNumber(t), NumberKind::kFloat) << t;
  }
}

TEST(ClassifyNumberTest, NotTheJsonGrammar) {
  for (std::string_view t :
       {"",      "-",    "+1", "01",  "-01", "00",       "1.",  ".5",
        "-.5",   "1.e3", "1e", "1e+", "1E-", "e3",       "12x", "1.5.5",
        "1e3.5", "0x10", "1 ", " 1",  "--1", "Infinity", "NaN", "1,5"}) {
    EXPECT_EQ(ClassifyNumber(t), NumberKind::kInvalid) << '"' << t << '"';
  }
}

// ---- ScalarText and CheckScalar
// -------------------------------------------------

TEST(ScalarTextTest, DropsTrailingWhitespace) {
  Literal l("12 \t\r\n ");
  EXPECT_EQ(ScalarText(l.value()), "12");
  Literal t("true\n");
  EXPECT_EQ(ScalarText(t.value()), "true");
  Literal f("-1.50e3");
  EXPECT_EQ(ScalarText(f.value()), "-1.50e3");
}

TEST(CheckScalarTest, WellFormedScalars) {
  for (std::string_view s :
       {"true", "false", "null", "0", "-1.5e3", R"("a\"b")", "[1, 2]", "{}"}) {
    Literal l(s);
    EXPECT_EQ(CheckScalar(l.value(), l.type()), simdjson::SUCCESS) << s;
  }
}

TEST(CheckScalarTest, BrokenScalarsNameWhatIsBroken) {
  const struct {
    std::string_view literal;
    simdjson::error_code error;
  } kCases[] = {
      {"tru", simdjson::T_ATOM_ERROR},   {"trueish", simdjson::T_ATOM_ERROR},
      {"fals", simdjson::F_ATOM_ERROR},  {"nul", simdjson::N_ATOM_ERROR},
      {"nulll", simdjson::N_ATOM_ERROR}, {"12x", simdjson::NUMBER_ERROR},
      {"01", simdjson::NUMBER_ERROR},    {"-", simdjson::NUMBER_ERROR},
      {"1.", simdjson::NUMBER_ERROR},
  };
  for (const auto& c : kCases) {
    Literal l(c.literal);
    EXPECT_EQ(CheckScalar(l.value(), l.type()), c.error) << c.literal;
  }
}

// ---- Strings and keys
// ---------------------------------------------------------

// Each text in a buffer with simdjson's padding after it, as documents
// are (the scan reads up to 7 bytes past the closing quote).
TEST(RawStringWithoutEscapesTest, StopsAtTheClosingQuote) {
  const auto scan = [](std::string text, std::string_view* out) {
    static std::string padded;
    padded = text + std::string(simdjson::SIMDJSON_PADDING, ' ');
    return RawStringWithoutEscapes(padded.data(), out);
  };
  std::string_view out;
  ASSERT_TRUE(scan(R"(abc", "x")", &out));
  EXPECT_EQ(out, "abc");
  ASSERT_TRUE(scan(R"(")", &out));
  EXPECT_EQ(out, "");
  EXPECT_FALSE(scan(R"(a\"b")", &out));
  // Every position of the quote and of a backslash within and across the
  // 8-byte words, after bytes of the high half (UTF-8) that must not count.
  for (size_t n = 0; n <= 24; ++n) {
    const std::string body(n, '\xc3');
    ASSERT_TRUE(scan(body + "\"x\\", &out)) << n;
    EXPECT_EQ(out.size(), n);
    EXPECT_FALSE(scan(body + "\\\"", &out)) << n;
  }
  // A quote right after a backslash's neighbour byte ('\x5b', '\x5d'; '\x21',
  // '\x23' beside '"'): only the exact bytes stop the scan.
  ASSERT_TRUE(scan("[]!#\"", &out));
  EXPECT_EQ(out, "[]!#");
}

TEST(GetStringTest, PlainStringsAreNotCopied) {
  Literal l(R"("doc-17")");
  std::string_view s;
  ASSERT_EQ(GetString(l.value(), &s), simdjson::SUCCESS);
  EXPECT_EQ(s, "doc-17");
  EXPECT_TRUE(l.InInput(s));
}

TEST(GetStringTest, EscapesAreUnescaped) {
  Literal l(R"("a\"b\\c\u00e9")");
  std::string_view s;
  ASSERT_EQ(GetString(l.value(), &s), simdjson::SUCCESS);
  EXPECT_EQ(s, "a\"b\\c\xC3\xA9");  // U+00E9 is C3 A9 in UTF-8.
  EXPECT_FALSE(l.InInput(s));
}

TEST(NextFieldTest, ReadsPlainAndEscapedKeys) {
  simdjson::padded_string json(std::string(R"({"plain": 1, "k\u0065y": 2})"));
  ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  ASSERT_EQ(parser.iterate(json).get(doc), simdjson::SUCCESS);
  ASSERT_EQ(doc.get_object().get(object), simdjson::SUCCESS);
  std::string keys;
  for (auto result : object) {
    simdjson::error_code error = simdjson::SUCCESS;
    const std::string_view key = NextField(result, &error);
    ASSERT_EQ(error, simdjson::SUCCESS);
    int64_t v = 0;
    ASSERT_EQ(FieldOf(result).value().get_int64().get(v), simdjson::SUCCESS);
    keys += std::string(key) + "=" + std::to_string(v) + ";";
  }
  EXPECT_EQ(keys, "plain=1;key=2;");
}

// ---- ReadIdText
// ---------------------------------------------------------------

// "ok <id>" or the outcome.
std::string Id(std::string_view literal) {
  Literal l(literal);
  std::string_view id = "unset";
  const ScalarResult r = ReadIdText(l.value(), l.type(), &id);
  return r.ok() ? "ok " + std::string(id) : Outcome(r);
}

TEST(ReadIdTextTest, StringsAndIntegerLiterals) {
  EXPECT_EQ(Id(R"("q-123")"), "ok q-123");
  EXPECT_EQ(Id(R"("")"), "ok ");  // Empty: the caller rejects it.
  EXPECT_EQ(Id("123"), "ok 123");
  EXPECT_EQ(Id("-0"), "ok -0");  // The literal text, not the value 0.
  EXPECT_EQ(Id("123456789012345678901234567890"),
            "ok 123456789012345678901234567890");
  EXPECT_EQ(Id("42 \n"), "ok 42");
}

TEST(ReadIdTextTest, OtherTypesAreRejected) {
  for (std::string_view s :
       {"1.0", "1e3", "1E+400", "true", "false", "null", "[1]", "{}"}) {
    EXPECT_EQ(Id(s), "rejected") << s;
  }
}

TEST(ReadIdTextTest, BrokenLiteralsAreMalformed) {
  EXPECT_EQ(Id("12x"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Id("01"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Id("007 "), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Id("-"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Id("tru"), Malformed(simdjson::T_ATOM_ERROR));
  EXPECT_EQ(Id("nul"), Malformed(simdjson::N_ATOM_ERROR));
}

// ---- ReadEpochMillis
// ----------------------------------------------------------

// "ok <ms>" or the outcome.
std::string Millis(std::string_view literal) {
  Literal l(literal);
  int64_t ms = -12345;
  const ScalarResult r = ReadEpochMillis(l.value(), l.type(), &ms);
  return r.ok() ? "ok " + std::to_string(ms) : Outcome(r);
}

TEST(ReadEpochMillisTest, Integers) {
  EXPECT_EQ(Millis("1763805600123"), "ok 1763805600123");
  EXPECT_EQ(Millis("0"), "ok 0");
  EXPECT_EQ(Millis("-0"), "ok 0");
  EXPECT_EQ(Millis("9223372036854775807"), "ok 9223372036854775807");
  EXPECT_EQ(Millis("-1"), "rejected");
  // 2^63 does not fit int64.
  EXPECT_EQ(Millis("9223372036854775808"), "rejected");
  EXPECT_EQ(Millis("123456789012345678901234567890"), "rejected");
  // Around the one-pass form (1 to 18 digits, no leading zero): 18 and 19
  // digits, leading zeros (not JSON), a sign, a fraction, a stray byte.
  // simdjson's message for NUMBER_ERROR, which the reader returns.
  const std::string kNumberError = "malformed: Problem while parsing a number";
  EXPECT_EQ(Millis("999999999999999999"), "ok 999999999999999999");
  EXPECT_EQ(Millis("1000000000000000000"), "ok 1000000000000000000");
  EXPECT_EQ(Millis("7"), "ok 7");
  EXPECT_EQ(Millis("01"), kNumberError);
  EXPECT_EQ(Millis("00"), kNumberError);
  EXPECT_EQ(Millis("-1763805600123"), "rejected");
  EXPECT_EQ(Millis("1763805600123.9"), "ok 1763805600123");
  EXPECT_EQ(Millis("1763805600123x"), kNumberError);
}

TEST(ReadEpochMillisTest, FloatsTruncateTowardZero) {
  EXPECT_EQ(Millis("1.5e12"), "ok 1500000000000");
  EXPECT_EQ(Millis("1.9"), "ok 1");
  EXPECT_EQ(Millis("0.5"), "ok 0");
  EXPECT_EQ(Millis("-0.0"), "ok 0");  // -0.0 >= 0.
  EXPECT_EQ(Millis("1e3"), "ok 1000");
  // 9.2e18 = 2^19 * 23 * 5^17 is a double exactly, below 2^63.
  EXPECT_EQ(Millis("9.2e18"), "ok 9200000000000000000");
  EXPECT_EQ(Millis("-0.5"), "rejected");
  EXPECT_EQ(Millis("9.3e18"), "rejected");  // >= 2^63 ~ 9.223e18.
  EXPECT_EQ(Millis("1E+400"), "rejected");  // No double holds it.
}

TEST(ReadEpochMillisTest, Rfc3339Strings) {
  // date -u -d 2025-11-22T10:00:00Z +%s -> 1763805600.
  EXPECT_EQ(Millis(R"("2025-11-22T10:00:00.123Z")"), "ok 1763805600123");
  EXPECT_EQ(Millis(R"("2025-11-22T11:00:00+01:00")"), "ok 1763805600000");
  EXPECT_EQ(Millis(R"("1970-01-01T00:00:00Z")"), "ok 0");
  EXPECT_EQ(Millis(R"("1969-12-31T23:59:59.999Z")"), "rejected");  // < 0.
  EXPECT_EQ(Millis(R"("yesterday")"), "rejected");
  EXPECT_EQ(Millis(R"("1763805600123")"), "rejected");
}

// The ISO 8601 forms of UBI producers: no zone (UTC), and offsets without
// a colon (Java's "+0000") or minutes.
TEST(ReadEpochMillisTest, Iso8601FormsBeyondRfc3339) {
  // date -u -d 2025-11-22T10:00:00Z +%s -> 1763805600.
  EXPECT_EQ(Millis(R"("2025-11-22T10:00:00")"), "ok 1763805600000");
  EXPECT_EQ(Millis(R"("2025-11-22T10:00:00.123")"), "ok 1763805600123");
  EXPECT_EQ(Millis(R"("2025-11-22T10:00:00.123456789")"), "ok 1763805600123");
  EXPECT_EQ(Millis(R"("2025-11-22T10:00:00.123+0000")"), "ok 1763805600123");
  EXPECT_EQ(Millis(R"("2025-11-22T11:30:00+0130")"), "ok 1763805600000");
  EXPECT_EQ(Millis(R"("2025-11-22T08:00:00-02")"), "ok 1763805600000");
  EXPECT_EQ(Millis(R"("2025-11-22 10:00:00")"), "ok 1763805600000");
  for (std::string_view bad :
       {R"("2025-11-22T10:00")", R"("2025-11-22T10:00:00+1")",
        R"("2025-11-22T10:00:00+01:0")", R"("2025-11-22T10:00:00+01000")",
        R"("2025-11-22T10:00:00UTC")", R"("2025-11-22T10:00:00.")",
        R"("2025-11-22T25:00:00")", R"("2025-11-22T10:00:00+2400")"}) {
    EXPECT_EQ(Millis(bad), "rejected") << bad;
  }
}

TEST(ReadEpochMillisTest, OtherTypesAndBrokenLiterals) {
  EXPECT_EQ(Millis("true"), "rejected");
  EXPECT_EQ(Millis("null"), "rejected");
  EXPECT_EQ(Millis("[1]"), "rejected");
  EXPECT_EQ(Millis("nul"), Malformed(simdjson::N_ATOM_ERROR));
  EXPECT_EQ(Millis("12x"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Millis("01"), Malformed(simdjson::NUMBER_ERROR));
}

// ---- CheckFiniteNumber
// --------------------------------------------------------

std::string Finite(std::string_view literal) {
  Literal l(literal);
  return Outcome(CheckFiniteNumber(l.value(), l.type()));
}

TEST(CheckFiniteNumberTest, FiniteNumbers) {
  for (std::string_view s : {"12.1", "-1e-3", "0", "-0", "1e308", "1.5"}) {
    EXPECT_EQ(Finite(s), "ok") << s;
  }
  // 10^299 (300 characters): converted, and finite.
  EXPECT_EQ(Finite("1" + std::string(299, '0')), "ok");
}

TEST(CheckFiniteNumberTest, OverflowingNumbersAreRejected) {
  EXPECT_EQ(Finite("1e999"), "rejected");
  EXPECT_EQ(Finite("1E+400"), "rejected");
  EXPECT_EQ(Finite("-1e309"), "rejected");  // DBL_MAX ~ 1.8e308.
  EXPECT_EQ(Finite("1" + std::string(309, '0')), "rejected");  // 10^309.
}

TEST(CheckFiniteNumberTest, OtherTypesAndBrokenLiterals) {
  EXPECT_EQ(Finite(R"("1.5")"), "rejected");
  EXPECT_EQ(Finite("null"), "rejected");
  EXPECT_EQ(Finite("true"), "rejected");
  EXPECT_EQ(Finite("{}"), "rejected");
  EXPECT_EQ(Finite("01"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Finite("-"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Finite("fals"), Malformed(simdjson::F_ATOM_ERROR));
}

// ---- ReadScalarText
// -----------------------------------------------------------

std::string Text(std::string_view literal) {
  Literal l(literal);
  std::string_view text = "unset";
  const ScalarResult r = ReadScalarText(l.value(), l.type(), &text);
  return r.ok() ? "ok <" + std::string(text) + ">" : Outcome(r);
}

TEST(ReadScalarTextTest, LiteralText) {
  EXPECT_EQ(Text(R"("de")"), "ok <de>");
  EXPECT_EQ(Text(R"("")"), "ok <>");
  EXPECT_EQ(Text("3"), "ok <3>");
  EXPECT_EQ(Text("1.50 "), "ok <1.50>");  // Not the value 1.5.
  EXPECT_EQ(Text("-0"), "ok <-0>");
  EXPECT_EQ(Text("true"), "ok <true>");
  EXPECT_EQ(Text("false"), "ok <false>");
  EXPECT_EQ(Text("null"), "ok <>");
}

TEST(ReadScalarTextTest, ContainersAndBrokenLiterals) {
  EXPECT_EQ(Text("[1]"), "rejected");
  EXPECT_EQ(Text(R"({"a": 1})"), "rejected");
  EXPECT_EQ(Text("fals"), Malformed(simdjson::F_ATOM_ERROR));
  EXPECT_EQ(Text("nul"), Malformed(simdjson::N_ATOM_ERROR));
  EXPECT_EQ(Text("1.5.5"), Malformed(simdjson::NUMBER_ERROR));
}

// ---- ReadNullableInt32
// --------------------------------------------------------

// "ok <n>", "ok null" or the outcome.
std::string Int32(std::string_view literal) {
  Literal l(literal);
  std::optional<int32_t> v = -77;
  const ScalarResult r = ReadNullableInt32(l.value(), l.type(), &v);
  if (!r.ok()) return Outcome(r);
  return v ? "ok " + std::to_string(*v) : "ok null";
}

TEST(ReadNullableInt32Test, Integers) {
  EXPECT_EQ(Int32("2"), "ok 2");
  EXPECT_EQ(Int32("-3"), "ok -3");
  EXPECT_EQ(Int32("-0"), "ok 0");
  EXPECT_EQ(Int32("2147483647"), "ok 2147483647");    // 2^31 - 1.
  EXPECT_EQ(Int32("-2147483648"), "ok -2147483648");  // -2^31.
  EXPECT_EQ(Int32("2147483648"), "out_of_range");
  EXPECT_EQ(Int32("-2147483649"), "out_of_range");
  EXPECT_EQ(Int32("99999999999999999999"), "out_of_range");  // > 2^64.
}

TEST(ReadNullableInt32Test, IntegralFloats) {
  EXPECT_EQ(Int32("2.0"), "ok 2");
  EXPECT_EQ(Int32("2e0"), "ok 2");
  EXPECT_EQ(Int32("-1.0"), "ok -1");
  EXPECT_EQ(Int32("2147483647.0"), "ok 2147483647");
  EXPECT_EQ(Int32("2147483648.0"), "out_of_range");
  EXPECT_EQ(Int32("3e9"), "out_of_range");
  EXPECT_EQ(Int32("1.5"), "rejected");
  EXPECT_EQ(Int32("1e-1"), "rejected");
  EXPECT_EQ(Int32("1E+400"), "rejected");  // Not a finite double.
}

TEST(ReadNullableInt32Test, NullAndOtherTypes) {
  EXPECT_EQ(Int32("null"), "ok null");
  EXPECT_EQ(Int32(R"("2")"), "rejected");
  EXPECT_EQ(Int32("true"), "rejected");
  EXPECT_EQ(Int32("[2]"), "rejected");
  EXPECT_EQ(Int32("nul"), Malformed(simdjson::N_ATOM_ERROR));
  EXPECT_EQ(Int32("2x"), Malformed(simdjson::NUMBER_ERROR));
  EXPECT_EQ(Int32("-"), Malformed(simdjson::NUMBER_ERROR));
}

}  // namespace
}  // namespace rankwatch::stream
