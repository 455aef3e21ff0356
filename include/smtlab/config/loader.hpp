// Loading, overriding, validating and describing a Config. Every key is declared once in src/config/params.cpp
// (visitParams) with its type, range and one-line doc; TOML files, `--set key=value` overrides, `smtlab config show`
// and the JSON written beside each result all go through that one table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "smtlab/config/config.hpp"

namespace smtlab {

// Finds a config: an existing path as given, else a preset name ("netburst" or "netburst.toml") in the presets
// folder (SMTLAB_CONFIG_DIR in the environment, else the configs/ folder of the source tree). Throws ConfigError.
std::string findConfigFile(const std::string& nameOrPath);

// Defaults overlaid with the TOML file (found by findConfigFile); an empty name gives the defaults.
// Unknown keys, wrong types and out-of-range values throw ConfigError naming the key and the file.
Config loadConfig(const std::string& nameOrPath);

// Applies one "key=value" override (value in TOML syntax or a bare word/number). `origin` names where it came from
// for messages ("--set", a sweep file, ...).
void applyOverride(Config& config, std::string_view assignment, std::string_view origin = "--set");
// Same with key and value given apart.
void applyOverride(Config& config, std::string_view key, std::string_view value, std::string_view origin);

// Checks ranges and consistency (e.g. a partitioned queue with fewer entries than threads); throws ConfigError.
void validateConfig(const Config& config);

struct ParamInfo {
  std::string key;    // "core.rob.entries"
  std::string type;   // "int", "float", "bool", "string", or "a | b | c" for a choice
  std::string value;  // the current value as TOML text
  std::string doc;    // one line
};
// Every key with its current value and doc, in declaration order.
std::vector<ParamInfo> describeConfig(const Config& config);

// The effective config as nested JSON objects ({"core": {"rob": {"entries": 126, ...}}}).
boost::json::value configToJson(const Config& config);
// The effective config as a TOML document that loadConfig reads back to the same Config.
std::string configToToml(const Config& config);

// Names of enums as they appear in config files (from each enum's table in config.hpp / core/fetch_policy.hpp).
std::string_view sharingName(Sharing s);
std::string_view fetchPolicyName(FetchPolicy p);
std::string_view allocationPolicyName(AllocationPolicy p);  // core/allocation_policy.hpp's table
std::string_view climbMetricName(ClimbMetric m);
std::string_view threadChoiceName(ThreadChoice c);
std::string_view longLatencyMissName(LongLatencyMiss m);
std::string_view unitClassName(UnitClass c);
// Every unit class name in kUnitClassTable order (the order of port strings).
std::vector<std::string_view> unitClassNames();

// One issue port as its core.ports text ("int_alu:2 branch:2 store_data:2"), and back: parsePort returns an error
// text (without the key or file) or "".
std::string portText(const PortConfig& port);
std::string parsePort(std::string_view text, PortConfig& out);

std::string_view memDependenceName(MemDependence m);

}  // namespace smtlab
