#include "daemon/page/csp.h"

#include <string>

#include "gtest/gtest.h"

namespace rankwatch::page {
namespace {

TEST(CspTest, Sha256SourceMatchesReferences) {
  // The CSP Level 3 specification's own example (section "Hash usage"):
  // <script>alert('Hello, world.');</script> is allowed by this source.
  EXPECT_EQ(Sha256Source("alert('Hello, world.');").value(),
            "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='");
  // printf '' | openssl dgst -sha256 -binary | openssl base64 -A
  EXPECT_EQ(Sha256Source("").value(),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
  // The page's UTF-8 bytes as they are (the browser hashes the UTF-8
  // encoding): printf 'a – ■ χ²' | openssl dgst -sha256 -binary |
  // openssl base64 -A
  EXPECT_EQ(Sha256Source("a – ■ χ²").value(),
            "'sha256-Vi9xGdmV9ejlIP/kh7jUImLOrLadM8gcZT4SX/kTefI='");
}

TEST(CspTest, FindsEachInlineElementInOrder) {
  const std::string html =
      "<!doctype html><head><style>a { color: red }</style>"
      "<style media=\"print\">\nb {}\n</style></head><body>"
      "<scripts>not a script</scripts>"
      "<script>const s = \"<style>\";</script>"
      "<p>text</p><script type=\"module\"></script></body>";
  StatusOr<InlineBlocks> blocks = FindInlineBlocks(html);
  ASSERT_TRUE(blocks.ok()) << blocks.status().ToString();
  ASSERT_EQ(blocks->styles.size(), 2u);
  EXPECT_EQ(blocks->styles[0], "a { color: red }");
  EXPECT_EQ(blocks->styles[1], "\nb {}\n");
  // The "<style>" inside the script's text is the script's, not an element.
  ASSERT_EQ(blocks->scripts.size(), 2u);
  EXPECT_EQ(blocks->scripts[0], "const s = \"<style>\";");
  EXPECT_EQ(blocks->scripts[1], "");
}

TEST(CspTest, RefusesAnElementWithoutEndTag) {
  StatusOr<InlineBlocks> blocks =
      FindInlineBlocks("<style>a {}</style><script>let x = 1;");
  ASSERT_FALSE(blocks.ok());
  EXPECT_EQ(blocks.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(blocks.status().message().find("<script> at byte 19"),
            std::string::npos)
      << blocks.status().message();
}

TEST(CspTest, PolicyHasNoUnsafeInlineAndNoneForAMissingKind) {
  // printf 'x()' | openssl dgst -sha256 -binary | openssl base64 -A
  StatusOr<std::string> policy =
      PageContentSecurityPolicy("<html><script>x()</script></html>");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_EQ(*policy,
            "default-src 'none'; "
            "script-src 'sha256-D6IGS8VMvCoyaR/l0h9tERrBTATY01CoPS7l6xDv0kI='; "
            "style-src 'none'; img-src data:; connect-src 'self'; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
}

}  // namespace
}  // namespace rankwatch::page
