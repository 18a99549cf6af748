// The Content-Security-Policy of the status page, with CSP Level 3 hash
// sources instead of 'unsafe-inline': the browser runs the page's inline
// <script> and applies its inline <style> only when their bytes hash to a
// source the policy lists, so markup injected into the page (through a
// value it renders, say) could neither run script nor restyle it. Style
// attributes and on*= handler attributes are refused altogether; the page
// sets styles through CSSOM and handlers with addEventListener.
//
// The hashes are computed from the page's bytes (SHA-256 and base64 through
// OpenSSL's libcrypto), once, when the handler is made: nothing to keep in
// step by hand when page.html changes.
//
// Stateless functions; thread-safe.
#ifndef RANKWATCH_DAEMON_PAGE_CSP_H_
#define RANKWATCH_DAEMON_PAGE_CSP_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rankwatch::page {

// The text of the page's inline elements, in document order: what lies
// between the start tag's '>' and the end tag, as the browser hashes it.
struct InlineBlocks {
  std::vector<std::string_view> scripts;
  std::vector<std::string_view> styles;
};

// Finds the <script> and <style> elements of `html` (lower-case tags, as
// page.html writes them; the views point into `html`). An element without
// its end tag is an InvalidArgument error.
[[nodiscard]] StatusOr<InlineBlocks> FindInlineBlocks(std::string_view html);

// The hash source of `text`: 'sha256-<base64 of its SHA-256>', quotes
// included.
[[nodiscard]] StatusOr<std::string> Sha256Source(std::string_view text);

// The policy for `html`: nothing by default; script and style only from
// the inline elements it has, each by its hash; images only as data: URLs;
// fetches only to the page's own origin; no <base>, no form submission, no
// framing by another page.
[[nodiscard]] StatusOr<std::string> PageContentSecurityPolicy(
    std::string_view html);

}  // namespace rankwatch::page

#endif  // RANKWATCH_DAEMON_PAGE_CSP_H_
