#include "smtlab/tracer/kpath_spec.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/tracer/kernel_stack.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/page_cache.hpp"

namespace smtlab {

KpathSpec parseKpathSpec(const std::string& spec) {
  const std::string rest = spec.substr(spec.find(':') + 1);
  const std::size_t comma = rest.find(',');
  KpathSpec out;
  out.name = rest.substr(0, comma);
  // Options: seed=N and stack=K, comma-separated, each at most once. from_chars takes digits only (no sign, no blanks,
  // unlike strtoull) and reports a value beyond 64 bits.
  bool haveSeed = false, haveStack = false, havePage = false;
  for (std::size_t at = comma; at != std::string::npos;) {
    const std::size_t next = rest.find(',', at + 1);
    const std::string_view opt =
        std::string_view(rest).substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
    at = next;
    auto number = [&](std::size_t skip, std::uint64_t& value) {
      const char* last = opt.data() + opt.size();
      const auto [end, ec] = std::from_chars(opt.data() + skip, last, value);
      return opt.size() > skip && ec == std::errc() && end == last;
    };
    bool ok = false;
    if (opt.starts_with("seed=") && !haveSeed) {
      ok = haveSeed = number(5, out.seed);
    } else if (opt.starts_with("stack=") && !haveStack) {
      ok = haveStack = number(6, out.stackSlot);
      if (ok && out.stackSlot > kMaxKernelStackSlot) {
        throw TraceError(fmt::format("'{}': stack={} is out of range (0..{})", shortToken(spec), out.stackSlot,
                                     kMaxKernelStackSlot));
      }
    } else if (opt.starts_with("page=") && !havePage) {
      std::uint64_t page = 0;
      ok = havePage = number(5, page);
      if (ok && page > kMaxPageCachePage) {
        throw TraceError(fmt::format("'{}': page={} is out of range (0..{})", shortToken(spec), page,
                                     kMaxPageCachePage));
      }
      if (ok) out.page = page;
    }
    if (!ok) {
      throw TraceError(fmt::format("'{}': bad option '{}' (kpath:NAME[,seed=N][,stack=K][,page=P], N a whole number "
                                   "from 0 to {}, K from 0 to {}, P from 0 to {}, each at most once)",
                                   shortToken(spec), shortToken(opt), UINT64_MAX, kMaxKernelStackSlot,
                                   kMaxPageCachePage));
    }
  }
  const auto& table = kpaths();
  if (std::none_of(table.begin(), table.end(), [&](const KpathInfo& k) { return k.name == out.name; })) {
    // A family of numbered paths (chat's batches: tcp_send_b2 ... tcp_send_b20) is named once, as a range, so that
    // the message stays one readable line.
    std::string names;
    std::vector<std::string> seen;
    for (const auto& k : table) {
      std::string item = k.name;
      const std::size_t digits = k.name.find_last_not_of("0123456789") + 1;
      if (digits < k.name.size() && digits >= 2 && k.name.compare(digits - 2, 2, "_b") == 0) {
        const std::string family = k.name.substr(0, digits);
        if (std::find(seen.begin(), seen.end(), family) != seen.end()) continue;
        seen.push_back(family);
        std::string last = k.name;
        for (const auto& other : table) {
          if (other.name.size() > family.size() && other.name.starts_with(family) &&
              other.name.find_first_not_of("0123456789", family.size()) == std::string::npos) {
            last = other.name;
          }
        }
        item = last == k.name ? k.name : fmt::format("{}..{}", k.name, last.substr(family.size()));
      }
      names += (names.empty() ? "" : " ") + item;
    }
    throw TraceError(
        fmt::format("'{}': unknown kernel path '{}' (paths: {})", shortToken(spec), shortToken(out.name), names));
  }
  return out;
}

}  // namespace smtlab
