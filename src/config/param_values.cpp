// Reading and writing a config key's value through its Param (type names, TOML value text, ranges, range-checked
// setters), and the outputs built from the key table: describeConfig, configToJson, configToToml.

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "param_table.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace config_detail {
namespace {

std::string formatDouble(double d) {
  std::string s = fmt::format("{}", d);
  if (std::isfinite(d) && s.find_first_of(".eE") == std::string::npos) s += ".0";  // stays a TOML float
  if (std::isinf(d)) s = d > 0 ? "inf" : "-inf";
  if (std::isnan(d)) s = "nan";
  return s;
}

std::string quoted(std::string_view s) { return fmt::format("\"{}\"", s); }

// An integer is checked in integers: near 1e18 doubles are 128 apart, so 10^18 + 64 converted to a double equals the
// bound 10^18 and would pass. The table's bounds are whole numbers that a double holds exactly (tested), so they
// convert to integers without loss.
std::string checkIntegerRange(const Param& p, std::int64_t v) {
  if (v >= static_cast<std::int64_t>(p.min) && v <= static_cast<std::int64_t>(p.max)) return {};
  return fmt::format("key '{}' = {} is out of range {}", p.key, v, rangeText(p));
}

// A whole number given for a float key is checked as the float it becomes.
std::string checkFloatRange(const Param& p, std::int64_t v) {
  const auto d = static_cast<double>(v);
  if (d >= p.min && d <= p.max) return {};
  return fmt::format("key '{}' = {} is out of range {}", p.key, v, rangeText(p));
}

}  // namespace

std::string typeName(const Param& p) {
  return std::visit(
      [&](auto* f) -> std::string {
        using T = std::remove_pointer_t<decltype(f)>;
        if constexpr (std::is_same_v<T, bool>) {
          return "bool";
        } else if constexpr (std::is_same_v<T, double>) {
          return "float";
        } else if constexpr (std::is_integral_v<T>) {
          return "int";
        } else if constexpr (std::is_same_v<T, std::vector<PortConfig>>) {
          return "list of ports";
        } else {
          return fmt::format("{}", fmt::join(choicesOf(p), " | "));
        }
      },
      p.field);
}

std::string valueText(const Param& p) {
  return std::visit(
      [](auto* f) -> std::string {
        using T = std::remove_pointer_t<decltype(f)>;
        if constexpr (std::is_same_v<T, bool>) {
          return *f ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return formatDouble(*f);
        } else if constexpr (std::is_integral_v<T>) {
          return fmt::format("{}", *f);
        } else if constexpr (std::is_same_v<T, Sharing>) {
          return quoted(sharingName(*f));
        } else if constexpr (std::is_same_v<T, ThreadChoice>) {
          return quoted(threadChoiceName(*f));
        } else if constexpr (std::is_same_v<T, LongLatencyMiss>) {
          return quoted(longLatencyMissName(*f));
        } else if constexpr (std::is_same_v<T, std::vector<PortConfig>>) {
          std::vector<std::string> ports;
          for (const PortConfig& port : *f) ports.push_back(quoted(portText(port)));
          return fmt::format("[{}]", fmt::join(ports, ", "));
        } else if constexpr (std::is_same_v<T, MemDependence>) {
          return quoted(memDependenceName(*f));
        } else if constexpr (std::is_same_v<T, AllocationPolicy>) {
          return quoted(allocationPolicyName(*f));
        } else if constexpr (std::is_same_v<T, ClimbMetric>) {
          return quoted(climbMetricName(*f));
        } else {
          return quoted(fetchPolicyName(*f));
        }
      },
      p.field);
}

std::string rangeText(const Param& p) {
  return std::visit(
      [&](auto* f) -> std::string {
        using T = std::remove_pointer_t<decltype(f)>;
        if constexpr (std::is_same_v<T, double>) {
          return fmt::format("[{}, {}]", p.min, p.max);
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return fmt::format("[{}, {}]", static_cast<std::int64_t>(p.min), static_cast<std::int64_t>(p.max));
        } else {
          (void)f;
          return "";
        }
      },
      p.field);
}

std::string setInteger(const Param& p, std::int64_t v) {
  return std::visit(
      [&](auto* f) -> std::string {
        using T = std::remove_pointer_t<decltype(f)>;
        if constexpr (std::is_same_v<T, double>) {
          if (auto err = checkFloatRange(p, v); !err.empty()) return err;
          *f = static_cast<double>(v);  // a whole number where a float is expected is fine
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if (auto err = checkIntegerRange(p, v); !err.empty()) return err;
          *f = static_cast<T>(v);
        }
        return {};
      },
      p.field);
}

std::string setFloat(const Param& p, double v) {
  if (auto* f = std::get_if<double*>(&p.field)) {
    if (!(v >= p.min && v <= p.max)) {
      return fmt::format("key '{}' = {} is out of range {}", p.key, formatDouble(v), rangeText(p));
    }
    **f = v;
  }
  return {};
}

std::string setBool(const Param& p, bool v) {
  if (auto* f = std::get_if<bool*>(&p.field)) **f = v;
  return {};
}

}  // namespace config_detail

using config_detail::Param;
using config_detail::paramTable;
using config_detail::sectionOf;

std::vector<ParamInfo> describeConfig(const Config& config) {
  Config copy = config;
  std::vector<ParamInfo> out;
  for (const Param& p : paramTable(copy)) {
    out.push_back(ParamInfo{p.key, config_detail::typeName(p), config_detail::valueText(p), p.doc});
  }
  return out;
}

boost::json::value configToJson(const Config& config) {
  Config copy = config;
  boost::json::object root;
  for (const Param& p : paramTable(copy)) {
    boost::json::object* node = &root;
    std::string_view rest = p.key;
    for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      boost::json::value& child = (*node)[rest.substr(0, dot)];
      if (!child.is_object()) child = boost::json::object{};
      node = &child.as_object();
      rest.remove_prefix(dot + 1);
    }
    boost::json::value leaf = std::visit(
        [](auto* f) -> boost::json::value {
          using T = std::remove_pointer_t<decltype(f)>;
          if constexpr (std::is_same_v<T, Sharing>) {
            return boost::json::string(sharingName(*f));
          } else if constexpr (std::is_same_v<T, FetchPolicy>) {
            return boost::json::string(fetchPolicyName(*f));
          } else if constexpr (std::is_same_v<T, ThreadChoice>) {
            return boost::json::string(threadChoiceName(*f));
          } else if constexpr (std::is_same_v<T, LongLatencyMiss>) {
            return boost::json::string(longLatencyMissName(*f));
          } else if constexpr (std::is_same_v<T, std::vector<PortConfig>>) {
            boost::json::array ports;
            for (const PortConfig& port : *f) ports.emplace_back(boost::json::string(portText(port)));
            return ports;
          } else if constexpr (std::is_same_v<T, MemDependence>) {
            return boost::json::string(memDependenceName(*f));
          } else if constexpr (std::is_same_v<T, AllocationPolicy>) {
            return boost::json::string(allocationPolicyName(*f));
          } else if constexpr (std::is_same_v<T, ClimbMetric>) {
            return boost::json::string(climbMetricName(*f));
          } else {
            return boost::json::value(*f);
          }
        },
        p.field);
    (*node)[rest] = std::move(leaf);
  }
  return root;
}

std::string configToToml(const Config& config) {
  Config copy = config;
  const auto params = paramTable(copy);

  // Sections in order of first appearance; TOML needs top-level keys before the first [table].
  std::vector<std::string_view> sections;
  for (const Param& p : params) {
    const auto s = sectionOf(p.key);
    if (std::find(sections.begin(), sections.end(), s) == sections.end()) sections.push_back(s);
  }
  std::stable_partition(sections.begin(), sections.end(), [](std::string_view s) { return s.empty(); });

  std::string out = fmt::format("# smtlab config (from {}); `smtlab config show` documents every key.\n",
                                config.source.empty() ? "code" : config.source);
  for (std::string_view section : sections) {
    std::vector<std::pair<std::string, const Param*>> lines;
    std::size_t width = 0;
    for (const Param& p : params) {
      if (sectionOf(p.key) != section) continue;
      std::string_view name = p.key;
      if (!section.empty()) name.remove_prefix(section.size() + 1);
      lines.emplace_back(fmt::format("{} = {}", name, config_detail::valueText(p)), &p);
      width = std::max(width, lines.back().first.size());
    }
    out += section.empty() ? "\n" : fmt::format("\n[{}]\n", section);
    for (const auto& [text, p] : lines) out += fmt::format("{:<{}}  # {}\n", text, width, p->doc);
  }
  return out;
}

}  // namespace smtlab
