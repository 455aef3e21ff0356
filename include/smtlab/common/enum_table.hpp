// One table per enum: each value's name (as config files, JSON statistics and Python show it) and a one-line doc,
// in enum order, so that name functions, parsers, docs and bindings all derive from one list instead of being kept
// in step by hand. A table row type needs `value` and `name`; a factory or other columns may follow.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace smtlab {

template <class E>
struct EnumInfo {
  E value;
  std::string_view name;
  std::string_view doc;
};

// True when row i holds the enumerator with value i: then a value's row is found by indexing, and a table that
// skips or repeats a value fails the static_assert beside it.
template <class Table>
constexpr bool inEnumOrder(const Table& table) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (static_cast<std::size_t>(table[i].value) != i) return false;
  }
  return true;
}

// The row of `value`, or nullptr for a value outside the table (a corrupted enum).
template <class Table, class E>
constexpr const auto* enumRow(const Table& table, E value) {
  const auto i = static_cast<std::size_t>(value);
  return i < table.size() ? &table[i] : nullptr;
}

template <class Table, class E>
constexpr std::string_view enumName(const Table& table, E value) {
  const auto* row = enumRow(table, value);
  return row != nullptr ? row->name : std::string_view("?");
}

// The value named `name`, or nothing.
template <class Table>
constexpr auto enumFromName(const Table& table, std::string_view name) -> std::optional<decltype(table[0].value)> {
  for (const auto& row : table) {
    if (row.name == name) return row.value;
  }
  return std::nullopt;
}

}  // namespace smtlab
