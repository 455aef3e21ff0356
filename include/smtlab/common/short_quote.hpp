// Quoting user-supplied tokens in messages: at most a short prefix of the token, so that a mistaken 100 MB argument or
// config value gives a one-line message instead of 100 MB on stderr.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace smtlab {

// Longest prefix of a token a message quotes (bytes, before the ellipsis). Chosen: long enough for any real path,
// key, value or spec a person types, short enough that the message stays one readable line.
inline constexpr std::size_t kQuotedTokenBytes = 80;

// The token in single quotes; a longer token is cut at a UTF-8 character boundary and followed by
// "... (N bytes)". Control bytes are shown as '?' so the message stays one line, and a byte that is not part of
// well-formed UTF-8 as \xHH (0xff -> \xff), so the message is valid UTF-8 whatever the token held.
std::string shortQuote(std::string_view token, std::size_t maxBytes = kQuotedTokenBytes);

// The token itself, shortened as shortQuote does but without the quotes (for messages that quote in their own way).
std::string shortToken(std::string_view token, std::size_t maxBytes = kQuotedTokenBytes);

// Cuts every run of non-blank characters longer than `maxBytes` in a ready-made message (one from a library that
// quotes whole tokens, such as boost.program_options) the way shortToken does, and replaces control bytes and
// escapes bytes that are not UTF-8 as shortToken does.
std::string shortenLongTokens(std::string_view message, std::size_t maxBytes = 2 * kQuotedTokenBytes);

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), or 0 when `s` is empty or does not start with one (a sequence cut short included).
std::size_t utf8SequenceLength(std::string_view s);

}  // namespace smtlab
