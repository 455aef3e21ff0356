#include "generator_spec.hpp"

#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"

namespace smtlab {

GeneratorSpec::GeneratorSpec(std::string spec, std::uint64_t maxCycleLines)
    : spec_(std::move(spec)), max_cycle_lines_(maxCycleLines) {
  std::string_view rest(spec_);
  if (rest.substr(0, 4) != "gen:") {
    throw TraceError(fmt::format("generator spec {} must start with 'gen:'", shortQuote(spec_)));
  }
  rest.remove_prefix(4);
  const std::size_t comma = rest.find(',');
  name_ = std::string(rest.substr(0, comma));
  if (name_.empty()) throw TraceError(fmt::format("generator spec {}: missing generator name", shortQuote(spec_)));
  if (comma == std::string_view::npos) return;
  rest.remove_prefix(comma + 1);
  while (true) {
    const std::size_t next = rest.find(',');
    const std::string_view item = rest.substr(0, next);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw TraceError(
          fmt::format("generator spec {}: item {} is not key=value", shortQuote(spec_), shortQuote(item)));
    }
    Item it{std::string(item.substr(0, eq)), std::string(item.substr(eq + 1))};
    for (const Item& other : items_) {
      if (other.key == it.key) {
        throw TraceError(fmt::format("generator spec {}: duplicate key {}", shortQuote(spec_), shortQuote(it.key)));
      }
    }
    items_.push_back(std::move(it));
    if (next == std::string_view::npos) break;
    rest.remove_prefix(next + 1);
  }
}

void GeneratorSpec::fail(std::string_view key, const std::string& what) const {
  throw TraceError(fmt::format("generator spec {}: key {}: {}", shortQuote(spec_), shortQuote(key), what));
}

const GeneratorSpec::Item* GeneratorSpec::find(std::string_view key) {
  asked_.emplace_back(key);
  for (Item& it : items_) {
    if (it.key == key) {
      it.used = true;
      if (it.value.empty()) fail(key, "missing value");
      return &it;
    }
  }
  return nullptr;
}

std::uint64_t GeneratorSpec::scaled(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi,
                                    std::uint64_t unit) {
  const Item* it = find(key);
  if (!it) return def;
  std::string_view v = it->value;
  std::uint64_t mult = 1;
  if (unit > 1 && !v.empty()) {
    switch (v.back()) {
      case 'k': case 'K': mult = unit; break;
      case 'm': case 'M': mult = unit * unit; break;
      case 'g': case 'G': mult = unit * unit * unit; break;
      default: break;
    }
    if (mult > 1) v.remove_suffix(1);
  }
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || end != v.data() + v.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    fail(key,
         fmt::format("{} is not a number{}", shortQuote(it->value), unit > 1 ? " (suffixes k, m, g allowed)" : ""));
  }
  if (ec == std::errc::result_out_of_range || n > hi / mult || n * mult < lo || n * mult > hi) {
    fail(key, fmt::format("{} is out of range [{}, {}]", shortToken(it->value), lo, hi));
  }
  return n * mult;
}

std::uint64_t GeneratorSpec::integer(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi) {
  return scaled(key, def, lo, hi, 1);
}

std::uint64_t GeneratorSpec::size(std::string_view key, std::uint64_t def, std::uint64_t lo, std::uint64_t hi) {
  return scaled(key, def, lo, hi, 1024);
}

std::uint64_t GeneratorSpec::count(std::string_view key, std::uint64_t def) {
  return scaled(key, def, 0, ~std::uint64_t{0}, 1000);
}

double GeneratorSpec::real(std::string_view key, double def, double lo, double hi) {
  const Item* it = find(key);
  if (!it) return def;
  double x = 0;
  const std::string& v = it->value;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (end != v.data() + v.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
    fail(key, fmt::format("{} is not a number", shortQuote(v)));
  }
  if (ec == std::errc::result_out_of_range || !(x >= lo && x <= hi)) {
    fail(key, fmt::format("{} is out of range [{}, {}]", shortToken(v), lo, hi));
  }
  return x;
}

std::size_t GeneratorSpec::choice(std::string_view key, std::string_view def,
                                  const std::vector<std::string_view>& choices) {
  const Item* it = find(key);
  const std::string_view v = it ? std::string_view(it->value) : def;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == v) return i;
  }
  fail(key, fmt::format("{} is not one of {}", shortQuote(v), fmt::join(choices, ", ")));
}

bool GeneratorSpec::has(std::string_view key) const {
  for (const Item& it : items_) {
    if (it.key == key) return true;
  }
  return false;
}

void GeneratorSpec::finish() const {
  for (const Item& it : items_) {
    if (!it.used) {
      throw TraceError(fmt::format("generator spec {}: unknown key {} ({} takes: {})", shortQuote(spec_),
                                   shortQuote(it.key), name_,
                                   fmt::join(asked_, ", ")));
    }
  }
}

}  // namespace smtlab
