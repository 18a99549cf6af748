#include "daemon/page/csp.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <cstddef>
#include <utility>

namespace rankwatch::page {

namespace {

// Where the next start tag `<name` begins at or after `from` (the name
// followed by '>', '/' or white space, so that "<scripts" is no match), or
// npos.
size_t FindStartTag(std::string_view html, std::string_view name, size_t from) {
  const std::string open = "<" + std::string(name);
  for (size_t at = html.find(open, from); at != std::string_view::npos;
       at = html.find(open, at + 1)) {
    const size_t next = at + open.size();
    if (next >= html.size()) return std::string_view::npos;
    const char c = html[next];
    if (c == '>' || c == '/' || c == ' ' || c == '\t' || c == '\n' ||
        c == '\r' || c == '\f') {
      return at;
    }
  }
  return std::string_view::npos;
}

// The element starting at `at` (a start tag of `name`): its text into
// *text, the position after its end tag into *end.
Status ReadElement(std::string_view html, std::string_view name, size_t at,
                   std::string_view* text, size_t* end) {
  const size_t open_end = html.find('>', at);
  const std::string close = "</" + std::string(name);
  const size_t close_at = open_end == std::string_view::npos
                              ? std::string_view::npos
                              : html.find(close, open_end + 1);
  if (close_at == std::string_view::npos) {
    return Status::InvalidArgument("status page: <" + std::string(name) +
                                   "> at byte " + std::to_string(at) +
                                   " has no end tag");
  }
  *text = html.substr(open_end + 1, close_at - open_end - 1);
  const size_t close_end = html.find('>', close_at);
  *end = close_end == std::string_view::npos ? html.size() : close_end + 1;
  return Status::Ok();
}

// OpenSSL's reason for its oldest queued error, clearing the queue.
std::string OpenSslReason() {
  const unsigned long code = ERR_peek_error();
  ERR_clear_error();
  if (code == 0) return "no reason given";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

}  // namespace

StatusOr<InlineBlocks> FindInlineBlocks(std::string_view html) {
  InlineBlocks blocks;
  size_t pos = 0;
  while (true) {
    // The earlier of the next <script> and <style>: a tag name inside the
    // other element's text (a script that writes "<style") is skipped with
    // that element.
    const size_t script = FindStartTag(html, "script", pos);
    const size_t style = FindStartTag(html, "style", pos);
    if (script == std::string_view::npos && style == std::string_view::npos) {
      return blocks;
    }
    const bool is_script = script < style;
    std::string_view text;
    RW_RETURN_IF_ERROR(ReadElement(html, is_script ? "script" : "style",
                                   is_script ? script : style, &text, &pos));
    (is_script ? blocks.scripts : blocks.styles).push_back(text);
  }
}

StatusOr<std::string> Sha256Source(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &digest_size, EVP_sha256(),
                 nullptr) != 1) {
    return Status::Internal("status page: SHA-256 failed: " + OpenSslReason());
  }
  // Base64 of 32 bytes: 44 characters, and EVP_EncodeBlock's final NUL.
  unsigned char base64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
  const int n = EVP_EncodeBlock(base64, digest, static_cast<int>(digest_size));
  return "'sha256-" +
         std::string(reinterpret_cast<const char*>(base64),
                     static_cast<size_t>(n)) +
         "'";
}

StatusOr<std::string> PageContentSecurityPolicy(std::string_view html) {
  StatusOr<InlineBlocks> blocks = FindInlineBlocks(html);
  if (!blocks.ok()) return blocks.status();
  // No element of a kind: 'none' (an empty source list means the same, less
  // plainly).
  auto sources =
      [](const std::vector<std::string_view>& texts) -> StatusOr<std::string> {
    if (texts.empty()) return std::string("'none'");
    std::string out;
    for (std::string_view text : texts) {
      StatusOr<std::string> hash = Sha256Source(text);
      if (!hash.ok()) return hash.status();
      out += (out.empty() ? "" : " ") + *hash;
    }
    return out;
  };
  StatusOr<std::string> script_src = sources(blocks->scripts);
  if (!script_src.ok()) return script_src.status();
  StatusOr<std::string> style_src = sources(blocks->styles);
  if (!style_src.ok()) return style_src.status();
  return "default-src 'none'; script-src " + *script_src + "; style-src " +
         *style_src +
         "; img-src data:; connect-src 'self'; base-uri 'none'; "
         "form-action 'none'; frame-ancestors 'none'";
}

}  // namespace rankwatch::page
