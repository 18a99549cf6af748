#include "daemon/page/handlers.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "daemon/stream/pipeline/pipeline.h"
#include "daemon/stream/pipeline/snapshot.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/testing/subprocess.h"

namespace rankwatch::page {
namespace {

// The source the daemon gives RegisterHandlers (daemon.cc): under `mu`, a
// look when the pipeline has news, then the copies.
SummarySource LockedSource(std::mutex* mu, stream::Pipeline* pipeline,
                           const kafka::IngestState* kafka) {
  return [=](SummaryState* out) {
    std::lock_guard<std::mutex> lock(*mu);
    pipeline->RefreshLook();
    stream::TakeSnapshot(*pipeline, &out->pipeline);
    if (kafka != nullptr) out->kafka = *kafka;
  };
}

// ASCII lower case, byte for byte (UTF-8 sequences unchanged), so that
// positions in the copy are positions in the original.
std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// The text of each inline <script> and <style> element of `html`, found
// here rather than with csp.h's FindInlineBlocks (the code under test):
// from the '>' closing each start tag to the next end tag, tags in any case;
// scripts first, then styles outside them (a script may say "<style>").
struct Elements {
  std::vector<std::string> scripts, styles;
};

Elements InlineElements(const std::string& html) {
  std::string lower = AsciiLower(html);
  Elements out;
  for (const std::string tag : {"script", "style"}) {
    std::vector<std::string>& texts =
        tag == "script" ? out.scripts : out.styles;
    std::vector<std::pair<size_t, size_t>> found;  // [begin, end) of texts.
    // "<tag" followed by a blank or '>' (not "<tags"). No std::regex: GCC
    // 12 warns inside it at -O1.
    const std::string open = "<" + tag;
    for (size_t at = lower.find(open); at != std::string::npos;
         at = lower.find(open, at + 1)) {
      const size_t next = at + open.size();
      if (next >= lower.size() ||
          (lower[next] != '>' &&
           !std::isspace(static_cast<unsigned char>(lower[next])))) {
        continue;
      }
      const size_t open_end = lower.find('>', at);
      const size_t close = lower.find("</" + tag + ">", open_end);
      if (open_end == std::string::npos || close == std::string::npos) {
        ADD_FAILURE() << "<" << tag << "> without end in the page";
        break;
      }
      if (!found.empty() && open_end < found.back().second) continue;
      found.emplace_back(open_end + 1, close);
      texts.push_back(html.substr(open_end + 1, close - open_end - 1));
    }
    // Blanked, so that the next tag is not looked for inside these.
    for (const auto& [begin, end] : found) {
      std::fill(lower.begin() + begin, lower.begin() + end, ' ');
    }
  }
  return out;
}

// The CSP hash source of `text` by the openssl command-line tool, not by
// the code under test: 'sha256-' + the output of
//   openssl dgst -sha256 -binary | openssl base64 -A
// fed `text` on stdin.
std::string OpensslHashSource(const std::string& text) {
  const testing::CommandResult r = testing::RunCommand(
      {"/bin/sh", "-c", "openssl dgst -sha256 -binary | openssl base64 -A"},
      std::chrono::seconds(30), text);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), 44u) << r.out;  // Base64 of 32 bytes.
  return "'sha256-" + r.out + "'";
}

// A policy's directives: name to sources, in the order written.
std::map<std::string, std::vector<std::string>> ParsePolicy(
    const std::string& policy) {
  std::map<std::string, std::vector<std::string>> directives;
  std::stringstream all(policy);
  std::string directive;
  while (std::getline(all, directive, ';')) {
    std::stringstream words(directive);
    std::string name, source;
    if (!(words >> name)) continue;
    EXPECT_EQ(directives.count(name), 0u) << name << " twice in " << policy;
    std::vector<std::string>& sources = directives[name];
    while (words >> source) sources.push_back(source);
  }
  return directives;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(StatusHandlersTest, PageIsSelfContainedHtml) {
  const http::HttpResponse r = PageHandler()(http::HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(r.body, std::string(kPageHtml));
  EXPECT_NE(r.body.find("api/v1/summary"), std::string::npos);
  // Nothing from elsewhere: no external script, style, font or image.
  EXPECT_EQ(r.body.find("src=\"http"), std::string::npos);
  EXPECT_EQ(r.body.find("href=\"http"), std::string::npos);
  EXPECT_EQ(r.body.find("@import"), std::string::npos);
}

// Issue 24: no 'unsafe-inline'; the page's one inline script and one inline
// style each allowed by its SHA-256, as the openssl tool computes it over
// the element's text in the body served; everything else as strict as the
// policy was before.
TEST(StatusHandlersTest, PolicyAllowsThePagesInlineBlocksByHashOnly) {
  const http::HttpResponse r = PageHandler()(http::HttpRequest{});
  ASSERT_EQ(r.status, 200) << r.body;
  std::vector<std::string> policies;
  for (const auto& [name, value] : r.headers) {
    if (name == "Content-Security-Policy") policies.push_back(value);
  }
  ASSERT_EQ(policies.size(), 1u);
  const std::string& policy = policies[0];
  // Neither 'unsafe-inline' nor 'unsafe-hashes' (style attributes by hash)
  // nor 'unsafe-eval'.
  EXPECT_EQ(policy.find("unsafe"), std::string::npos) << policy;

  const Elements blocks = InlineElements(r.body);
  const std::vector<std::string>& scripts = blocks.scripts;
  const std::vector<std::string>& styles = blocks.styles;
  ASSERT_EQ(scripts.size(), 1u);  // page.html: one <script>, one <style>.
  ASSERT_EQ(styles.size(), 1u);
  EXPECT_GT(scripts[0].size(), 1000u);  // The whole script, not a prefix.
  EXPECT_GT(styles[0].size(), 500u);
  std::vector<std::string> script_sources, style_sources;
  for (const std::string& s : scripts) {
    script_sources.push_back(OpensslHashSource(s));
  }
  for (const std::string& s : styles) {
    style_sources.push_back(OpensslHashSource(s));
  }

  std::map<std::string, std::vector<std::string>> directives =
      ParsePolicy(policy);
  EXPECT_EQ(Sorted(directives["script-src"]), Sorted(script_sources)) << policy;
  EXPECT_EQ(Sorted(directives["style-src"]), Sorted(style_sources)) << policy;
  const std::vector<std::string> none = {"'none'"};
  EXPECT_EQ(directives["default-src"], none);
  EXPECT_EQ(directives["img-src"], std::vector<std::string>{"data:"});
  EXPECT_EQ(directives["connect-src"], std::vector<std::string>{"'self'"});
  EXPECT_EQ(directives["base-uri"], none);
  EXPECT_EQ(directives["form-action"], none);
  EXPECT_EQ(directives["frame-ancestors"], none);
  EXPECT_EQ(directives.size(), 8u) << policy;
}

// What the policy refuses must not be in the markup: style="..." and
// on*="..." attributes (the script sets styles through CSSOM and handlers
// with addEventListener; the browser test catches what it would create).
TEST(StatusHandlersTest, MarkupHasNoStyleOrHandlerAttributes) {
  std::string markup = AsciiLower(std::string(kPageHtml));
  const Elements blocks = InlineElements(markup);
  for (const auto* texts : {&blocks.scripts, &blocks.styles}) {
    for (const std::string& text : *texts) {
      markup.erase(markup.find(text), text.size());
    }
  }
  EXPECT_LT(markup.size(), 5000u);  // The blocks are gone.
  // An attribute: a blank, its name, optional blanks, '='.
  const auto attribute = [&markup](auto name_char, size_t min_length,
                                   std::string_view prefix) {
    for (size_t i = 0; i + 1 < markup.size(); ++i) {
      if (!std::isspace(static_cast<unsigned char>(markup[i]))) continue;
      size_t j = i + 1;
      if (markup.compare(j, prefix.size(), prefix) != 0) continue;
      j += prefix.size();
      const size_t name_start = j;
      while (j < markup.size() && name_char(markup[j])) ++j;
      if (j - name_start < min_length) continue;
      while (j < markup.size() &&
             std::isspace(static_cast<unsigned char>(markup[j]))) {
        ++j;
      }
      if (j < markup.size() && markup[j] == '=') return markup.substr(i, 40);
    }
    return std::string();
  };
  const auto none = [](char) { return false; };
  const auto letter = [](char c) { return c >= 'a' && c <= 'z'; };
  EXPECT_EQ(attribute(none, 0, "style"), "");
  EXPECT_EQ(attribute(letter, 1, "on"), "");
}

TEST(StatusHandlersTest, SummaryIsJsonStampedWithTheClock) {
  config::Config c;
  FakeClock clock(1'700'000'000'000);
  clock.Advance(42);
  auto p = stream::Pipeline::Create(c, &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const http::HttpResponse r = SummaryHandler(
      [&](SummaryState* out) { stream::TakeSnapshot(**p, &out->pipeline); },
      &clock)(http::HttpRequest{});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  simdjson::dom::parser parser;
  simdjson::dom::element d;
  ASSERT_EQ(parser.parse(r.body).get(d), simdjson::SUCCESS) << r.body;
  EXPECT_EQ(int64_t(d["generated_ms"]), 1'700'000'000'042);
  EXPECT_EQ(int64_t(d["monotonic_ms"]), 42);
  EXPECT_EQ(d["variants"].get_array().size(), 0u);
  EXPECT_TRUE(d["pipeline"]["watermark_ms"].is_null());
}

// A FakeClock's time, noting whether `mu` was held when it was read.
class LockWitnessClock : public Clock {
 public:
  explicit LockWitnessClock(std::mutex* mu) : mu_(mu) {}
  int64_t NowMillis() const override {
    Witness();
    return clock_.NowMillis();
  }
  int64_t MonotonicMillis() const override {
    Witness();
    return clock_.MonotonicMillis();
  }
  bool saw_locked() const { return saw_locked_; }

 private:
  void Witness() const {
    if (mu_->try_lock()) {
      mu_->unlock();
    } else {
      saw_locked_ = true;
    }
  }
  std::mutex* mu_;
  FakeClock clock_{1'700'000'000'000};
  mutable bool saw_locked_ = false;
};

// The handler renders what its source copied, the Kafka status included,
// asking the source once per request, and stamps and renders without the
// lock the source takes.
TEST(StatusHandlersTest, SummaryRendersTheCopiesItsSourceTakes) {
  config::Config c;
  std::mutex mu;
  LockWitnessClock clock(&mu);  // The handler's; the pipeline has its own.
  FakeClock pipeline_clock(1'700'000'000'000);
  auto p = stream::Pipeline::Create(c, &pipeline_clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  kafka::IngestState kafka;
  kafka.topics = {"res", "judg"};
  kafka.consuming = true;
  kafka.partitions = {{"res", 0, 5, 10, 15}, {"judg", 0, 7, 3, 10}};
  int calls = 0;
  const SummarySource locked = LockedSource(&mu, p->get(), &kafka);
  const http::HttpResponse r = SummaryHandler(
      [&](SummaryState* out) {
        ++calls;
        locked(out);
      },
      &clock)(http::HttpRequest{});
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(clock.saw_locked());
  simdjson::dom::parser parser;
  simdjson::dom::element d;
  ASSERT_EQ(parser.parse(r.body).get(d), simdjson::SUCCESS) << r.body;
  EXPECT_EQ(std::string_view(d["pipeline"]["topics"].at(0)["kafka_topic"]),
            "res");
  EXPECT_EQ(std::string_view(d["pipeline"]["topics"].at(1)["kafka_topic"]),
            "judg");
  EXPECT_EQ(int64_t(d["kafka"]["total_lag"]), 5 + 7);
  // Consuming but given no partitions: the second reason of the predicate.
  EXPECT_TRUE(bool(d["kafka"]["consuming"]));
  EXPECT_FALSE(bool(d["kafka"]["assigned"]));
  EXPECT_EQ(std::string_view(d["kafka"]["reason"]), "not_assigned");
}

// Issue 27: the A/B tables and the means count the same lists. Requests
// finalized by the watermark (no look since) are in the means; the handler
// takes a look first, so the experiment's arms have them too.
TEST(StatusHandlersTest, SummaryComparesTheListsItsMeansCount) {
  config::Config c;
  c.join.window = std::chrono::seconds(1);
  c.join.allowed_lateness = std::chrono::seconds(0);
  c.events.min_timestamp_ms = 0;
  c.experiments = {{"x", "A", {"B"}}};
  FakeClock clock(1'700'000'000'000);
  auto p = stream::Pipeline::Create(c, &clock);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  stream::Pipeline& pipeline = **p;
  int64_t offset = 0;
  const auto list = [&](const std::string& id, const std::string& variant,
                        int64_t t) {
    pipeline.OnPayload(stream::Topic::kResults,
                       R"({"request_id":")" + id + R"(","variant":")" +
                           variant + R"(","timestamp":)" + std::to_string(t) +
                           R"(,"results":["d1"]})",
                       {0, offset++});
  };
  for (int i = 0; i < 3; ++i) list("a" + std::to_string(i), "A", 1000);
  for (int i = 0; i < 2; ++i) list("b" + std::to_string(i), "B", 1000);
  // An event 10 s later moves the watermark past the five: finalized.
  list("late", "A", 11'000);
  std::mutex mu;
  const http::HttpResponse r = SummaryHandler(
      LockedSource(&mu, &pipeline, nullptr), &clock)(http::HttpRequest{});
  simdjson::dom::parser parser;
  simdjson::dom::element d;
  ASSERT_EQ(parser.parse(r.body).get(d), simdjson::SUCCESS) << r.body;
  // The means: 3 lists of A, 2 of B (series 0, window all)...
  std::map<std::string, int64_t> means;
  for (simdjson::dom::element v : d["variants"]) {
    means[std::string(std::string_view(v["variant"]))] =
        int64_t(v["series"].at(0)["windows"].at(0)["count"]);
  }
  EXPECT_EQ(means["A"], 3);
  EXPECT_EQ(means["B"], 2);
  // ...and the first comparison (series 0, window all) has the same arms.
  simdjson::dom::element first = d["experiments"].at(0)["comparisons"].at(0);
  EXPECT_EQ(int64_t(first["baseline_arm"]["count"]), 3) << r.body;
  EXPECT_EQ(int64_t(first["treatment_arm"]["count"]), 2) << r.body;
}

}  // namespace
}  // namespace rankwatch::page
