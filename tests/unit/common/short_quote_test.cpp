// Quoting user tokens in messages: control bytes become '?', bytes that are not well-formed UTF-8 become \xHH, and
// well-formed UTF-8 (accents, symbols, emoji) is kept, so that every message is one line of valid UTF-8 text.
#include "smtlab/common/short_quote.hpp"

#include <string>

#include <gtest/gtest.h>

namespace smtlab {
namespace {

TEST(ShortQuote, BytesThatAreNotUtf8AreEscapedAsHex) {
  EXPECT_EQ(shortQuote("6\xff" "4"), "'6\\xff4'");
  EXPECT_EQ(shortToken("co\xfe\xffre"), "co\\xfe\\xffre");
  // A lead byte with its continuation missing, a lone continuation byte, an overlong '/' (C0 AF), a UTF-16
  // surrogate (ED A0 80) and a code point above U+10FFFF (F4 90 80 80) are each not UTF-8.
  EXPECT_EQ(shortToken("a\xc3"), "a\\xc3");
  EXPECT_EQ(shortToken("\x80x"), "\\x80x");
  EXPECT_EQ(shortToken("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(shortToken("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(shortToken("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
}

TEST(ShortQuote, WellFormedUtf8IsKeptAndControlBytesAreQuestionMarks) {
  EXPECT_EQ(shortToken("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(shortToken("a\nb\tc\x7f"), "a?b?c?");
}

TEST(ShortQuote, ReadyMadeMessagesAreEscapedToo) {
  EXPECT_EQ(shortenLongTokens("unknown op 'in\xfft' in line 2"), "unknown op 'in\\xfft' in line 2");
}

}  // namespace
}  // namespace smtlab
