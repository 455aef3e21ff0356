// Command-line counts (see count_arg.hpp).
#include "count_arg.hpp"

#include <limits>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"

namespace smtlab::cli {

std::uint64_t parseCount(std::string_view text, std::string_view option) {
  const std::string quoted = shortQuote(text);
  if (text.empty()) throw UsageError(fmt::format("option {}: empty count", option));
  if (text.front() == '-') {
    throw UsageError(fmt::format("option {}: count {} is negative; give a count of 0 or more", option, quoted));
  }
  std::uint64_t mult = 1;
  std::string_view digits = text;
  switch (digits.back()) {
    case 'k': case 'K': mult = 1000; break;
    case 'm': case 'M': mult = 1000000; break;
    case 'g': case 'G': mult = 1000000000; break;
    default: break;
  }
  if (mult > 1) digits.remove_suffix(1);
  if (digits.empty()) throw UsageError(fmt::format("option {}: count {} has no digits", option, quoted));
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t n = 0;
  bool tooLarge = false;
  for (char c : digits) {
    if (c < '0' || c > '9') {
      throw UsageError(fmt::format("option {}: {} is not a count (digits with an optional suffix k, M or G: "
                                   "1k = 1000, 2M = 2000000)",
                                   option, quoted));
    }
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (n > (kMax - d) / 10) tooLarge = true;
    if (!tooLarge) n = n * 10 + d;
  }
  if (tooLarge || n > kMax / mult) {
    throw UsageError(fmt::format("option {}: count {} is out of range (at most {})", option, quoted, kMax));
  }
  return n * mult;
}

}  // namespace smtlab::cli
