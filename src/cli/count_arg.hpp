// The one parser for counts given on the command line (-n, --warmup, --max-instructions, ...), so that every
// command accepts the same forms: digits with an optional decimal suffix k, M or G (1k = 1000, as in generator specs).
#pragma once

#include <cstdint>
#include <string_view>

namespace smtlab::cli {

// Parses a count; throws UsageError naming the option and a short prefix of the text when it is not digits with an
// optional suffix, is negative (a "-5" would otherwise wrap to about 2^64 and run for ever) or exceeds 2^64 - 1.
std::uint64_t parseCount(std::string_view text, std::string_view option = "-n");

}  // namespace smtlab::cli
