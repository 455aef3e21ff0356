// Parsing of generator specs "gen:NAME,key=value,...": typed lookups that remember which keys a generator asked
// for, so that a key nobody asked for is reported as unknown together with the keys the generator takes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace smtlab {

class GeneratorSpec {
 public:
  // Splits the spec; throws TraceError on a missing "gen:" prefix, a missing name, an item without '=' or a
  // duplicate key.
  explicit GeneratorSpec(std::string spec, std::uint64_t maxCycleLines = 0);

  const std::string& name() const { return name_; }
  const std::string& text() const { return spec_; }

  // Typed lookups; each returns the default when the key is absent and throws TraceError naming the key and the spec
  // when the value is malformed or outside [lo, hi].
  std::uint64_t integer(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi);
  // Byte sizes: suffixes k, m, g (case-insensitive) multiply by 1024, 1024^2, 1024^3.
  std::uint64_t size(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi);
  // Instruction counts: suffixes k, m, g multiply by 10^3, 10^6, 10^9.
  std::uint64_t count(std::string_view key, std::uint64_t def);
  double real(std::string_view key, double def, double lo, double hi);
  // One of `choices`; returns its index.
  std::size_t choice(std::string_view key, std::string_view def, const std::vector<std::string_view>& choices);

  // True when the spec gives `key` (so a message can say whether a value was given or is the default).
  bool has(std::string_view key) const;
  // Throws TraceError if the spec holds a key no lookup asked for.
  void finish() const;
  [[noreturn]] void fail(std::string_view key, const std::string& what) const;
  // GeneratorOptions::max_cycle_lines (0: no cap).
  std::uint64_t maxCycleLines() const { return max_cycle_lines_; }

 private:
  struct Item {
    std::string key, value;
    bool used = false;
  };
  const Item* find(std::string_view key);
  std::uint64_t scaled(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi,
                       std::uint64_t unit);

  std::string spec_;
  std::string name_;
  std::vector<Item> items_;
  std::vector<std::string> asked_;
  std::uint64_t max_cycle_lines_ = 0;
};

}  // namespace smtlab
