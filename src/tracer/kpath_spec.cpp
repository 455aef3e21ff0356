#include "smtlab/tracer/kpath_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <system_error>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/tracer/kpath.hpp"

namespace smtlab {

KpathSpec parseKpathSpec(const std::string& spec) {
  const std::string rest = spec.substr(spec.find(':') + 1);
  const std::size_t comma = rest.find(',');
  KpathSpec out;
  out.name = rest.substr(0, comma);
  if (comma != std::string::npos) {
    const std::string_view opt = std::string_view(rest).substr(comma + 1);
    // from_chars takes digits only (no sign, no blanks, unlike strtoull) and reports a value beyond 64 bits.
    const bool ok = opt.starts_with("seed=") && opt.size() > 5 && [&] {
      const char* last = opt.data() + opt.size();
      const auto [end, ec] = std::from_chars(opt.data() + 5, last, out.seed);
      return ec == std::errc() && end == last;
    }();
    if (!ok) {
      throw TraceError(fmt::format("'{}': bad option '{}' (kpath:NAME[,seed=N], N a whole number from 0 to {})",
                                   shortToken(spec), shortToken(opt), UINT64_MAX));
    }
  }
  const auto& table = kpaths();
  if (std::none_of(table.begin(), table.end(), [&](const KpathInfo& k) { return k.name == out.name; })) {
    std::string names;
    for (const auto& k : table) names += (names.empty() ? "" : " ") + k.name;
    throw TraceError(
        fmt::format("'{}': unknown kernel path '{}' (paths: {})", shortToken(spec), shortToken(out.name), names));
  }
  return out;
}

}  // namespace smtlab
