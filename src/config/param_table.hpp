// The single declaration of every config key (name, type, range, choices, doc), private to the config layer.
// params.cpp declares the keys once; loading, overrides, validation, describeConfig, JSON and TOML output all use it
// (param_values.cpp reads and writes a key's value, param_choices.cpp names the values of choice keys).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "smtlab/config/config.hpp"

namespace smtlab::config_detail {

// Points at the member of one Config that a key sets.
using FieldRef = std::variant<std::uint32_t*, std::uint64_t*, double*, bool*, Sharing*, FetchPolicy*, ThreadChoice*, LongLatencyMiss*,
                              MemDependence*, AllocationPolicy*, ClimbMetric*, std::vector<PortConfig>*>;

struct Param {
  std::string key;  // "core.rob.entries"
  std::string doc;  // one line, with units
  FieldRef field;
  double min = 0;  // inclusive range for integers and floats (ignored for bools and choices)
  double max = 0;
};

// Every key of `config`, in declaration order, pointing into `config` (so the table must not outlive it).
std::vector<Param> paramTable(Config& config);

// The section a key belongs to: everything before its last dot ("core.rob" for "core.rob.entries", "" for "seed").
std::string_view sectionOf(std::string_view key);

// "int", "float", "bool", or "a | b | c" for a choice.
std::string typeName(const Param& p);
// The names a choice key accepts (empty for other keys).
std::vector<std::string_view> choicesOf(const Param& p);
// The current value as TOML text (strings quoted).
std::string valueText(const Param& p);
// "[1, 4096]" for numbers, "" for bools and choices.
std::string rangeText(const Param& p);

// Sets an integer / float / bool / choice field; the caller has checked the type. Returns an error text (without
// origin) when the value is out of range or not a known choice, else an empty string.
std::string setInteger(const Param& p, std::int64_t v);
std::string setFloat(const Param& p, double v);
std::string setBool(const Param& p, bool v);
std::string setChoice(const Param& p, std::string_view name);

// The edit distance of a and b when it is below `limit`, else `limit` (cheap lower bounds end the work early).
// `row` is scratch space reused between calls.
std::size_t editDistanceBelow(std::string_view a, std::string_view b, std::size_t limit, std::vector<std::size_t>& row);

// The closest key by edit distance (or by suffix: "rob.entries" -> "core.rob.entries"), or "" if none is close.
std::string suggestKey(std::string_view wrong, std::span<const Param> params);

}  // namespace smtlab::config_detail
