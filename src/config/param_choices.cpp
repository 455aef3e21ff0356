// The names of the config's choice values, read from each enum's one table (config.hpp; the policies' tables in
// core/fetch_policy.hpp), the port strings of core.ports, and the "did you mean" suggestions for a misspelled key
// or value.

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "param_table.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/core/allocation_policy.hpp"
#include "smtlab/core/fetch_policy.hpp"

namespace smtlab {
namespace config_detail {
// The edit distance of a and b when it is below `limit`, else `limit`. Suggestions only want a distance below the best
// one found so far, and an unknown key is compared with every key (without bounds a fuzzed 50-byte key cost
// about 5 ms under the sanitizers in fuzz_config), so three lower bounds end the work early: the difference in
// length; the letters of one string that the other lacks (counted with repeats: one edit removes at most one such
// letter from each side); and the smallest entry of a row of the dynamic programming, which never decreases from one
// row to the next.
// `row` is reused between calls.
std::size_t editDistanceBelow(std::string_view a, std::string_view b, std::size_t limit,
                              std::vector<std::size_t>& row) {
  const std::size_t lengthGap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (lengthGap >= limit) return limit;
  std::array<std::size_t, 256> count{};
  for (const char c : a) ++count[static_cast<unsigned char>(c)];
  std::size_t onlyInB = 0;
  for (const char c : b) {
    std::size_t& n = count[static_cast<unsigned char>(c)];
    if (n == 0) {
      ++onlyInB;
    } else {
      --n;
    }
  }
  const std::size_t onlyInA = a.size() - (b.size() - onlyInB);
  if (std::max(onlyInA, onlyInB) >= limit) return limit;
  row.resize(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    std::size_t rowMin = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      rowMin = std::min(rowMin, row[j]);
      diag = up;
    }
    if (rowMin >= limit) return limit;
  }
  return std::min(row[b.size()], limit);
}

// The candidate closest to `wrong` by edit distance, if closer than `bound` (the first of equals wins); empty if none.
// Each distance is bounded by the best so far: a megabyte-long mistake costs no dynamic programming at all.
static std::string closestWithin(std::string_view wrong, std::span<const std::string_view> candidates,
                                 std::size_t bound) {
  std::string best;
  std::vector<std::size_t> row;
  for (const std::string_view c : candidates) {
    const std::size_t d = editDistanceBelow(wrong, c, bound, row);
    if (d < bound) {
      bound = d;
      best = c;
    }
  }
  return best;
}

std::vector<std::string_view> choicesOf(const Param& p) {
  std::vector<std::string_view> out;
  auto names = [&](const auto& table) {
    for (const auto& row : table) out.push_back(row.name);
  };
  if (std::holds_alternative<Sharing*>(p.field)) {
    names(kSharingTable);
  } else if (std::holds_alternative<FetchPolicy*>(p.field)) {
    names(fetchPolicyTable());
  } else if (std::holds_alternative<ThreadChoice*>(p.field)) {
    names(threadChoiceTable());
  } else if (std::holds_alternative<LongLatencyMiss*>(p.field)) {
    names(kLongLatencyMissTable);
  } else if (std::holds_alternative<MemDependence*>(p.field)) {
    names(kMemDependenceTable);
  } else if (std::holds_alternative<AllocationPolicy*>(p.field)) {
    names(allocationPolicyTable());
  } else if (std::holds_alternative<ClimbMetric*>(p.field)) {
    names(kClimbMetricTable);
  }
  return out;
}

std::string setChoice(const Param& p, std::string_view name) {
  auto pick = [&](const auto& table, auto* field) -> std::string {
    if (const auto value = enumFromName(table, name)) {
      *field = *value;
      return {};
    }
    std::vector<std::string_view> candidates;
    for (const auto& entry : table) candidates.push_back(entry.name);
    const std::string best = closestWithin(name, candidates, 3);  // suggest only close misspellings
    return fmt::format("key '{}' must be one of {}, got \"{}\"{}", p.key, typeName(p), shortToken(name),
                       best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best));
  };
  if (auto* s = std::get_if<Sharing*>(&p.field)) return pick(kSharingTable, *s);
  if (auto* fp = std::get_if<FetchPolicy*>(&p.field)) return pick(fetchPolicyTable(), *fp);
  if (auto* tc = std::get_if<ThreadChoice*>(&p.field)) return pick(threadChoiceTable(), *tc);
  if (auto* ll = std::get_if<LongLatencyMiss*>(&p.field)) return pick(kLongLatencyMissTable, *ll);
  if (auto* md = std::get_if<MemDependence*>(&p.field)) return pick(kMemDependenceTable, *md);
  if (auto* ap = std::get_if<AllocationPolicy*>(&p.field)) return pick(allocationPolicyTable(), *ap);
  if (auto* cm = std::get_if<ClimbMetric*>(&p.field)) return pick(kClimbMetricTable, *cm);
  return {};
}

std::string suggestKey(std::string_view wrong, std::span<const Param> params) {
  // A key given without its section ("rob.entries") matches the end of exactly one real key.
  std::string suffixMatch;
  int suffixMatches = 0;
  for (const Param& p : params) {
    std::string_view k = p.key;
    if (k.size() > wrong.size() && k.ends_with(wrong) && k[k.size() - wrong.size() - 1] == '.') {
      suffixMatch = p.key;
      ++suffixMatches;
    }
  }
  if (suffixMatches == 1) return suffixMatch;

  std::vector<std::string_view> keys;
  for (const Param& p : params) keys.push_back(p.key);
  return closestWithin(wrong, keys, std::max<std::size_t>(3, wrong.size() / 4 + 1));  // beyond this not a typo
}

}  // namespace config_detail

std::string_view sharingName(Sharing s) { return enumName(kSharingTable, s); }
std::string_view longLatencyMissName(LongLatencyMiss m) { return enumName(kLongLatencyMissTable, m); }
std::string_view memDependenceName(MemDependence m) { return enumName(kMemDependenceTable, m); }
std::string_view threadChoiceName(ThreadChoice c) { return enumName(threadChoiceTable(), c); }
std::string_view fetchPolicyName(FetchPolicy p) { return enumName(fetchPolicyTable(), p); }
std::string_view allocationPolicyName(AllocationPolicy p) { return enumName(allocationPolicyTable(), p); }
std::string_view climbMetricName(ClimbMetric m) { return enumName(kClimbMetricTable, m); }
std::string_view unitClassName(UnitClass c) { return enumName(kUnitClassTable, c); }

std::vector<std::string_view> unitClassNames() {
  std::vector<std::string_view> out;
  for (const auto& row : kUnitClassTable) out.push_back(row.name);
  return out;
}

std::string portText(const PortConfig& port) {
  std::vector<std::string> parts;
  for (const auto& [cls, name, doc] : kUnitClassTable) {
    const int rate = port.rate[static_cast<int>(cls)];
    if (rate == 1) parts.emplace_back(name);
    if (rate > 1) parts.push_back(fmt::format("{}:{}", name, rate));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string parsePort(std::string_view text, PortConfig& out) {
  out = PortConfig{};
  bool any = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ' || text[pos] == '\t' || text[pos] == ',') {
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != ',') ++end;
    const std::string_view word = text.substr(pos, end - pos);
    pos = end;
    const auto colon = word.find(':');
    const std::string_view name = word.substr(0, colon);
    int rate = 1;
    if (colon != std::string_view::npos) {
      const std::string_view digits = word.substr(colon + 1);
      rate = 0;
      for (char ch : digits) rate = (ch >= '0' && ch <= '9' && rate < 100) ? rate * 10 + (ch - '0') : 1000;
      if (digits.empty() || rate < 1 || rate > 8) {
        return fmt::format("{}: the rate after ':' must be a whole number of uops per cycle from 1 to 8",
                           shortQuote(word));
      }
    }
    const auto found = enumFromName(kUnitClassTable, name);
    if (!found) {
      return fmt::format("unknown unit class {} (classes: {})", shortQuote(name), fmt::join(unitClassNames(), ", "));
    }
    std::uint8_t& slot = out.rate[static_cast<int>(*found)];
    if (slot != 0) return fmt::format("unit class '{}' is listed twice", name);
    slot = static_cast<std::uint8_t>(rate);
    any = true;
  }
  if (!any) return "a port must feed at least one unit class";
  return {};
}

}  // namespace smtlab
