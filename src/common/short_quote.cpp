// Short quotes of user tokens in messages (see short_quote.hpp).
#include "smtlab/common/short_quote.hpp"

#include <fmt/format.h>

namespace smtlab {

namespace {

// Position at or before `at` that does not split a UTF-8 sequence (continuation bytes are 10xxxxxx).
std::size_t utf8Boundary(std::string_view s, std::size_t at) {
  while (at > 0 && at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) --at;
  return at;
}

void appendPrintable(std::string& out, std::string_view s) {
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == '\x7f') ? '?' : c;
}

}  // namespace

std::string shortToken(std::string_view token, std::size_t maxBytes) {
  std::string out;
  if (token.size() <= maxBytes) {
    appendPrintable(out, token);
    return out;
  }
  appendPrintable(out, token.substr(0, utf8Boundary(token, maxBytes)));
  out += fmt::format("... ({} bytes)", token.size());
  return out;
}

std::string shortQuote(std::string_view token, std::size_t maxBytes) {
  std::string out = "'";
  if (token.size() <= maxBytes) {
    appendPrintable(out, token);
    out += '\'';
    return out;
  }
  // The quote closes before the note on the length: 'abc...' (N bytes).
  appendPrintable(out, token.substr(0, utf8Boundary(token, maxBytes)));
  out += fmt::format("...' ({} bytes)", token.size());
  return out;
}

std::string shortenLongTokens(std::string_view message, std::size_t maxBytes) {
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    const std::size_t end = message.find_first_of(" \t", i);
    const std::size_t stop = end == std::string_view::npos ? message.size() : end;
    out += shortToken(message.substr(i, stop - i), maxBytes);
    if (stop < message.size()) out += message[stop];
    i = stop + 1;
  }
  return out;
}

}  // namespace smtlab
