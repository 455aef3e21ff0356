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

// Control bytes become '?' (the message stays one line); a byte that is not part of well-formed UTF-8 becomes \xHH,
// so that a message is valid UTF-8 text (a terminal, a log, a Python str) and still shows which byte it was.
void appendPrintable(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8SequenceLength(s.substr(i));
    if (n == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
      ++i;
    } else if (n == 1) {
      out += (static_cast<unsigned char>(s[i]) < 0x20 || s[i] == '\x7f') ? '?' : s[i];
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
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

std::size_t utf8SequenceLength(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty()) return 0;
  const unsigned char b0 = byte(0);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace smtlab
