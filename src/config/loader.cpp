// Finding preset files, overlaying TOML files and `key=value` overrides onto a Config through the key table.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "param_table.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/resources.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;
using config_detail::Param;

const Param* findParam(std::span<const Param> params, std::string_view key) {
  for (const Param& p : params) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

// The keys inside a section ("core.rob" -> core.rob.entries, ...); empty when `key` is not a section.
std::vector<std::string_view> keysUnder(std::span<const Param> params, std::string_view section) {
  std::vector<std::string_view> out;
  for (const Param& p : params) {
    std::string_view k = p.key;
    if (k.size() > section.size() && k.starts_with(section) && k[section.size()] == '.') out.push_back(k);
  }
  return out;
}

std::string describeNode(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return fmt::format("string \"{}\"", shortToken(n.value<std::string>().value_or("")));
    case toml::node_type::integer:
      return fmt::format("integer {}", n.value<std::int64_t>().value_or(0));
    case toml::node_type::floating_point:
      return fmt::format("float {}", n.value<double>().value_or(0.0));
    case toml::node_type::boolean:
      return fmt::format("boolean {}", n.value<bool>().value_or(false));
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      if (const toml::array* a = n.as_array(); a != nullptr && !a->empty() && a->is_array_of_tables()) {
        return "an array of tables ([[...]])";
      }
      return "an array";
    default:
      return "a date/time";
  }
}

// Sets the key from a TOML value; returns an error text (without the origin) or "".
std::string setFromNode(const Param& p, const toml::node& n) {
  return std::visit(
      [&](auto* f) -> std::string {
        using T = std::remove_pointer_t<decltype(f)>;
        std::string_view expected;
        if constexpr (std::is_same_v<T, bool>) {
          if (n.is_boolean()) return config_detail::setBool(p, *n.value<bool>());
          expected = "a boolean (true or false)";
        } else if constexpr (std::is_same_v<T, double>) {
          if (n.is_floating_point()) return config_detail::setFloat(p, *n.value<double>());
          if (n.is_integer()) return config_detail::setInteger(p, *n.value<std::int64_t>());
          expected = "a number";
        } else if constexpr (std::is_integral_v<T>) {
          if (n.is_integer()) return config_detail::setInteger(p, *n.value<std::int64_t>());
          expected = "an integer";
        } else if constexpr (std::is_same_v<T, std::vector<PortConfig>>) {
          // core.ports: an array of strings, one port each.
          const toml::array* a = n.as_array();
          if (a == nullptr || a->empty() || a->size() > kMaxPorts) {
            return fmt::format("key '{}' must be an array of 1 to {} port strings such as [\"int_alu:2 branch\", "
                               "\"load\"], got {}",
                               p.key, kMaxPorts, describeNode(n));
          }
          std::vector<PortConfig> ports(a->size());
          for (std::size_t i = 0; i < a->size(); ++i) {
            const toml::node& item = *a->get(i);
            if (!item.is_string()) {
              return fmt::format("key '{}' port {}: must be a string of unit classes, got {}", p.key, i,
                                 describeNode(item));
            }
            if (auto err = parsePort(*item.value<std::string>(), ports[i]); !err.empty()) {
              return fmt::format("key '{}' port {}: {}", p.key, i, err);
            }
          }
          *f = std::move(ports);
          return {};
        } else {
          if (n.is_string()) return config_detail::setChoice(p, *n.value<std::string>());
          return fmt::format("key '{}' must be one of {}, got {}", p.key, config_detail::typeName(p), describeNode(n));
        }
        return fmt::format("key '{}' must be {}, got {}", p.key, expected, describeNode(n));
      },
      p.field);
}

// Why `key` is not a key: a section given a value, or an unknown key with the closest real one. One line: a section
// is named with one of its keys as an example rather than with all of them (core has over a hundred).
std::string notAKeyMessage(std::span<const Param> params, std::string_view key, const toml::node* value) {
  // There are no unit counts: issue ports (core.ports) give the units. A config that sets a count is refused with a
  // pointer to core.ports, so that the count is not silently ignored.
  if (key.starts_with("core.fu.") && key.ends_with(".count")) {
    return fmt::format("key {} was removed: issue ports replace unit counts; list the ports that feed the unit in "
                       "core.ports, e.g. core.ports = [\"int_alu branch\", \"int_alu\", \"load\", ...] "
                       "(docs/config.md, \"Issue ports\")",
                       shortQuote(key));
  }
  if (const auto inside = keysUnder(params, key); !inside.empty() && value != nullptr) {
    return fmt::format("'{}' is a section, not a key, so it cannot be {}: set the keys inside it, as a [{}] table "
                       "or as dotted keys such as {} = {} ({} keys; smtlab config show lists them)",
                       key, describeNode(*value), key, inside.front(),
                       config_detail::valueText(*findParam(params, inside.front())), inside.size());
  }
  const std::string suggestion = config_detail::suggestKey(key, params);
  return fmt::format("unknown key {}{}", shortQuote(key),
                     suggestion.empty() ? "" : fmt::format(" (did you mean '{}'?)", suggestion));
}

// An optional sign, then digits (with TOML's '_' separators): what a person means as an integer.
bool looksLikeInteger(std::string_view s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if ((c < '0' || c > '9') && c != '_') return false;
  }
  return true;
}

std::string where(const std::string& file, const toml::node& n) {
  const auto& begin = n.source().begin;
  return begin.line > 0 ? fmt::format("{}:{}", file, begin.line) : file;
}

void overlayTable(const toml::table& table, const std::string& prefix, std::span<const Param> params,
                  const std::string& file) {
  for (auto&& [name, node] : table) {
    const std::string key = prefix.empty() ? std::string(name.str()) : fmt::format("{}.{}", prefix, name.str());
    if (const Param* p = findParam(params, key)) {
      if (auto err = setFromNode(*p, node); !err.empty()) {
        throw ConfigError(fmt::format("{}: {}", where(file, node), err));
      }
      continue;
    }
    // Recurse into unknown tables too, so a misspelled [core.robb] reports core.robb.entries and its suggestion.
    if (const toml::table* sub = node.as_table(); sub != nullptr && !sub->empty()) {
      overlayTable(*sub, key, params, file);
      continue;
    }
    const bool section = !keysUnder(params, key).empty();
    if (section && node.is_table()) continue;  // an empty [core.rob] table is harmless
    const std::string why = notAKeyMessage(params, key, section ? &node : nullptr);
    throw ConfigError(fmt::format("{}: {}", where(file, node), why));
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

bool hasToml(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") return true;
  }
  return false;
}

// The first `configs/` folder holding presets in `start` or one of its parents.
std::optional<fs::path> configsAbove(fs::path start) {
  std::error_code ec;
  start = fs::weakly_canonical(start, ec);
  if (ec) return std::nullopt;
  for (fs::path dir = start;; dir = dir.parent_path()) {
    if (hasToml(dir / "configs")) return dir / "configs";
    if (dir == dir.parent_path()) return std::nullopt;
  }
}

// Folders searched for presets, in order of precedence.
std::vector<fs::path> presetDirs() {
  std::vector<fs::path> dirs;
  auto add = [&](const fs::path& d) {
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  if (const char* env = std::getenv("SMTLAB_CONFIG_DIR"); env != nullptr && *env != '\0') add(env);
  // This build's own presets: the source tree's configs/, or the installed package's (common/resources.hpp), before
  // any configs/ found above the program or the working folder (an installed program run inside a checkout reads
  // the presets it was installed with).
  try {
    add(resourcePath("configs"));
  } catch (const Error&) {
    // an installed package that cannot find its folder: the searches below still may
  }
  std::error_code ec;
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    if (auto d = configsAbove(exe.parent_path())) add(*d);
  }
  if (const fs::path cwd = fs::current_path(ec); !ec) {
    if (auto d = configsAbove(cwd)) add(*d);
  }
  return dirs;
}

}  // namespace

namespace {

// The message for a config that the user may not read: names the folder on its path that cannot be searched (the
// first one, from the root down for an absolute path, from the working folder for a relative one, which the process
// is in already whatever the folders above it allow), or the file itself when it cannot be read.
std::string permissionDenied(std::string_view asked, const fs::path& path) {
  fs::path folder;
  for (const fs::path& part : path.parent_path()) {
    folder /= part;
    if (::access(folder.c_str(), X_OK) != 0) {
      return fmt::format("config {}: permission denied: cannot enter folder {} (on the way to {})", shortQuote(asked),
                         shortQuote(folder.string()), shortQuote(path.string()));
    }
  }
  return fmt::format("config {}: permission denied: cannot read {}", shortQuote(asked), shortQuote(path.string()));
}

// `path` when the user may read it, else the permission error.
std::string readableConfig(std::string_view asked, const fs::path& path) {
  if (::access(path.c_str(), R_OK) != 0 && errno == EACCES) throw ConfigError(permissionDenied(asked, path));
  return path.string();
}

}  // namespace

std::string findConfigFile(const std::string& nameOrPath) {
  std::error_code ec;
  if (nameOrPath.empty()) throw ConfigError("config: empty file or preset name");
  if (fs::is_regular_file(nameOrPath, ec)) return readableConfig(nameOrPath, nameOrPath);
  if (ec == std::errc::permission_denied) throw ConfigError(permissionDenied(nameOrPath, nameOrPath));
  if (fs::exists(nameOrPath, ec)) {
    throw ConfigError(fmt::format("config {}: not a regular file", shortQuote(nameOrPath)));
  }

  const std::vector<fs::path> dirs = presetDirs();
  const bool looksLikePreset = nameOrPath.find('/') == std::string::npos;
  if (looksLikePreset) {
    const std::string file = nameOrPath.ends_with(".toml") ? nameOrPath : nameOrPath + ".toml";
    for (const fs::path& dir : dirs) {
      if (fs::is_regular_file(dir / file, ec)) return readableConfig(nameOrPath, dir / file);
      // A presets folder that cannot be searched is said, not passed over for another folder's preset.
      if (ec == std::errc::permission_denied) throw ConfigError(permissionDenied(nameOrPath, dir / file));
    }
  }
  std::set<std::string> presets;
  std::vector<std::string> searched;
  for (const fs::path& dir : dirs) {
    searched.push_back(dir.string());
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".toml") presets.insert(entry.path().stem().string());
    }
  }
  std::string message = fmt::format("config {}: no such file", shortQuote(nameOrPath));
  if (looksLikePreset) {
    message += searched.empty() ? ", and no configs/ folder with presets was found"
                                : fmt::format(", and no such preset in {}", fmt::join(searched, ", "));
  }
  message += presets.empty() ? "" : fmt::format("; presets: {}", fmt::join(presets, ", "));
  throw ConfigError(message + " (SMTLAB_CONFIG_DIR names a presets folder)");
}

Config loadConfig(const std::string& nameOrPath) {
  Config config;
  if (nameOrPath.empty()) {
    config.source = "defaults";
    validateConfig(config);
    return config;
  }
  const std::string path = findConfigFile(nameOrPath);
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw ConfigError(fmt::format("{}:{}:{}: {}", path, begin.line, begin.column, e.description()));
  }
  {
    const auto params = config_detail::paramTable(config);
    overlayTable(table, "", params, path);
  }
  config.source = path;
  validateConfig(config);
  return config;
}

void applyOverride(Config& config, std::string_view assignment, std::string_view origin) {
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    throw ConfigError(
        fmt::format("{} {}: expected key=value (e.g. core.rob.entries=96)", origin, shortToken(assignment)));
  }
  applyOverride(config, trim(assignment.substr(0, eq)), trim(assignment.substr(eq + 1)), origin);
}

void applyOverride(Config& config, std::string_view key, std::string_view value, std::string_view origin) {
  const std::string label = fmt::format("{} {}={}", origin, shortToken(key), shortToken(value));
  const auto params = config_detail::paramTable(config);
  const Param* p = findParam(params, key);
  if (p == nullptr) {
    const bool section = !keysUnder(params, key).empty();
    // Describe the value as TOML reads it (integer 12, not string "12") when it parses as one value.
    toml::table parsedValue;
    const toml::node* described = nullptr;
    try {
      parsedValue = toml::parse(fmt::format("v = {}", value));
      if (parsedValue.size() == 1) described = parsedValue.get("v");
    } catch (const toml::parse_error&) {
    }
    const toml::value<std::string> asString{std::string(value)};
    if (described == nullptr) described = &asString;
    throw ConfigError(fmt::format("{}: {}", label, notAKeyMessage(params, key, section ? described : nullptr)));
  }

  // The value as a TOML value (3, 0.5, true, "x"); anything else, such as a bare word, is a string.
  std::string err;
  bool parsed = false;
  try {
    const toml::table t = toml::parse(fmt::format("v = {}", value));
    if (const toml::node* n = t.get("v"); n != nullptr && t.size() == 1) {
      err = setFromNode(*p, *n);
      parsed = true;
    }
  } catch (const toml::parse_error&) {
  }
  if (!parsed && looksLikeInteger(value) && !std::holds_alternative<Sharing*>(p->field) &&
      !std::holds_alternative<FetchPolicy*>(p->field) && !std::holds_alternative<bool*>(p->field)) {
    // Digits that TOML cannot hold (beyond 64 bits) are a number out of range, not a string.
    err = fmt::format("key '{}' = {} is out of range {}", p->key, shortToken(value), config_detail::rangeText(*p));
    parsed = true;
  }
  if (!parsed) err = setFromNode(*p, toml::value<std::string>{std::string(value)});
  if (!err.empty()) throw ConfigError(fmt::format("{}: {}", label, err));

  config.source = config.source.empty() ? label : fmt::format("{} {}", config.source, label);
}

}  // namespace smtlab
