// `smtlab config show|check`: prints every config key with its value and doc (as aligned text, JSON or TOML), or
// checks that a config file loads and is consistent.

#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: smtlab config show [-c FILE|PRESET] [--set KEY=VALUE ...] [--json | --toml]\n"
    "       smtlab config check FILE|PRESET [--set KEY=VALUE ...]\n"
    "\n"
    "show   prints every key with its effective value and a one-line doc (the defaults without -c).\n"
    "       The text form is valid TOML (dotted keys), so it can be saved and edited as a config file.\n"
    "       --json prints the nested JSON written beside results; --toml prints a sectioned TOML file.\n"
    "check  loads and validates a config and says OK, or names the bad key.\n"
    "Presets (netburst, broadwell, modern) are found in $SMTLAB_CONFIG_DIR or the source tree's configs/.\n";

// Usage errors are one line (main prints "smtlab config: error: ..."); the usage text is one --help away.
constexpr std::string_view kSeeHelp = " (see smtlab config --help)";

struct Options {
  std::string config;
  std::vector<std::string> overrides;
  bool json = false;
  bool toml = false;
};

Options parseOptions(const std::vector<std::string>& args, std::size_t first) {
  Options o;
  auto needValue = [&](std::size_t& i, std::string_view flag) -> const std::string& {
    if (i + 1 >= args.size()) throw UsageError(fmt::format("{} needs a value{}", flag, kSeeHelp));
    return args[++i];
  };
  auto setConfig = [&](const std::string& value) {
    if (!o.config.empty()) {
      throw UsageError(fmt::format("more than one config given ({} and {}){}", shortQuote(o.config),
                                   shortQuote(value), kSeeHelp));
    }
    o.config = value;
  };
  for (std::size_t i = first; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-c" || a == "--config") {
      setConfig(needValue(i, a));
    } else if (a.starts_with("--config=")) {
      setConfig(a.substr(9));
    } else if (a == "--set" || a == "-s") {
      o.overrides.push_back(needValue(i, a));
    } else if (a.starts_with("--set=")) {
      o.overrides.push_back(a.substr(6));
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--toml") {
      o.toml = true;
    } else if (!a.starts_with("-") && o.config.empty()) {
      setConfig(a);
    } else {
      throw UsageError(fmt::format("unknown argument {}{}", shortQuote(a), kSeeHelp));
    }
  }
  if (o.json && o.toml) {
    throw UsageError(fmt::format("--json and --toml exclude each other: give one of them{}", kSeeHelp));
  }
  return o;
}

Config effectiveConfig(const Options& o) {
  Config config = loadConfig(o.config);
  for (const std::string& assignment : o.overrides) applyOverride(config, assignment, "--set");
  if (!o.overrides.empty()) validateConfig(config);
  return config;
}

void writeJson(std::ostream& out, const boost::json::value& v, int indent) {
  const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  if (v.is_object()) {
    const auto& obj = v.as_object();
    out << "{";
    bool first = true;
    for (const auto& [key, value] : obj) {
      out << (first ? "\n" : ",\n") << pad << "  " << boost::json::serialize(boost::json::string(key)) << ": ";
      writeJson(out, value, indent + 1);
      first = false;
    }
    out << (obj.empty() ? "}" : "\n" + pad + "}");
  } else if (v.is_double()) {
    out << fmt::format("{}", v.as_double());  // shortest round-trip digits, not boost's 3.1E0
  } else {
    out << boost::json::serialize(v);
  }
}

// The text form reads in a 120-column terminal and stays valid TOML. Every key is `key = value  # doc` with the keys
// and the values in aligned columns; the doc wraps onto comment lines under its column. The value column is as wide
// as the longest short value (at most kValueColumn): a longer value (core.ports) overflows and its doc starts on the
// next line, and an array that would not fit in kLineWidth is written one element per line.
constexpr std::size_t kLineWidth = 118;
constexpr std::size_t kValueColumn = 16;

// The words of `text` in lines of at most `width` characters (a longer word gets a line of its own).
std::vector<std::string> wrapWords(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t space = text.find(' ', pos);
    const std::string_view word = text.substr(pos, space == std::string_view::npos ? text.npos : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(std::move(line));
  return lines;
}

// The elements of a TOML array written by configToToml (`["a", "b"]`), each as its TOML text; empty if `value` is not
// an array. Commas inside quoted strings do not split.
std::vector<std::string> arrayElements(std::string_view value) {
  std::vector<std::string> out;
  if (value.size() < 2 || value.front() != '[' || value.back() != ']') return out;
  std::string current;
  bool quoted = false;
  for (std::size_t i = 1; i + 1 < value.size(); ++i) {
    const char ch = value[i];
    if (quoted && ch == '\\' && i + 2 < value.size()) {
      current += ch;
      current += value[++i];
      continue;
    }
    if (ch == '"') quoted = !quoted;
    if (ch == ',' && !quoted) {
      out.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (!current.empty() || ch != ' ') current += ch;
  }
  if (!current.empty()) out.push_back(std::move(current));
  return out;
}

void writeText(std::ostream& out, const Config& config) {
  const auto params = describeConfig(config);
  std::size_t keyWidth = 0;
  std::size_t valueWidth = 0;
  for (const auto& p : params) {
    keyWidth = std::max(keyWidth, p.key.size());
    if (p.value.size() <= kValueColumn) valueWidth = std::max(valueWidth, p.value.size());
  }
  const std::size_t docColumn = keyWidth + 3 + valueWidth + 2;  // `key = value  # doc`
  const std::string docIndent(docColumn, ' ');
  out << fmt::format("# smtlab config: {}\n", config.source);
  std::string section = "\x01";  // no key has this section, so the first key prints a header
  for (const auto& p : params) {
    const auto dot = p.key.rfind('.');
    const std::string keySection = dot == std::string::npos ? "" : p.key.substr(0, dot);
    if (keySection != section) {
      section = keySection;
      out << fmt::format("\n# [{}]\n", section.empty() ? "top level" : section);
    }
    const std::vector<std::string> doc = wrapWords(p.doc, kLineWidth - docColumn - 2);
    std::size_t docLine = 0;
    if (p.value.size() <= valueWidth) {
      out << fmt::format("{:<{}} = {:<{}}  # {}\n", p.key, keyWidth, p.value, valueWidth, doc[docLine++]);
    } else if (const auto elements = arrayElements(p.value);
               keyWidth + 3 + p.value.size() > kLineWidth && !elements.empty()) {
      out << fmt::format("{:<{}} = [\n", p.key, keyWidth);
      for (const std::string& e : elements) out << fmt::format("{:<{}}{},\n", "", keyWidth + 5, e);
      out << fmt::format("{:<{}}]\n", "", keyWidth + 3);
    } else {
      out << fmt::format("{:<{}} = {}\n", p.key, keyWidth, p.value);
    }
    for (; docLine < doc.size(); ++docLine) out << docIndent << "# " << doc[docLine] << "\n";
  }
}

}  // namespace

int configCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? 2 : 0;  // no subcommand is a usage error
  }
  const std::string& sub = args[0];
  // `smtlab config show --help` (or check's): the usage, which covers both.
  if (std::any_of(args.begin() + 1, args.end(), [](const std::string& a) { return a == "-h" || a == "--help"; })) {
    std::cout << kUsage;
    return 0;
  }
  if (sub == "show") {
    const Options o = parseOptions(args, 1);
    const Config config = effectiveConfig(o);
    if (o.json) {
      writeJson(std::cout, configToJson(config), 0);
      std::cout << "\n";
    } else if (o.toml) {
      std::cout << configToToml(config);
    } else {
      writeText(std::cout, config);
    }
    return 0;
  }
  if (sub == "check") {
    const Options o = parseOptions(args, 1);
    if (o.config.empty()) throw UsageError(fmt::format("config check: which file or preset?{}", kSeeHelp));
    if (o.json || o.toml) throw UsageError(fmt::format("config check: --json and --toml are for show{}", kSeeHelp));
    const Config config = effectiveConfig(o);
    std::cout << fmt::format("{}: OK ({} package{} x {} core{} x {} thread{}, {} keys)\n", config.source,
                             config.system.packages, config.system.packages == 1 ? "" : "s", config.system.cores,
                             config.system.cores == 1 ? "" : "s", config.core.threads,
                             config.core.threads == 1 ? "" : "s", describeConfig(config).size());
    return 0;
  }
  throw UsageError(fmt::format("unknown subcommand {} (show, check){}", shortQuote(sub), kSeeHelp));
}

}  // namespace smtlab::cli
