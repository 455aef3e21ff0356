// smtlab._core.Config: the machine configuration, loaded and overridden through the same key table (and with the same
// errors) as the smtlab program's --config and --set.
#include <string>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "binding.hpp"
#include "conversions.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab::python {

namespace {

void applyMapping(Config& config, const py::handle& overrides, std::string_view origin) {
  if (overrides.is_none()) return;
  if (!py::isinstance<py::dict>(overrides)) {
    throw py::type_error("config overrides must be a dict {\"core.rob.entries\": 96, ...}, not " +
                         py::type::handle_of(overrides).attr("__name__").cast<std::string>());
  }
  for (const auto& kv : overrides.cast<py::dict>()) {
    if (!py::isinstance<py::str>(kv.first)) throw py::type_error("config override keys must be str");
    const std::string key = utf8Text(kv.first, "config key", true);
    applyOverride(config, key, overrideText(kv.second, key), origin);
  }
}

Config loadWithOverrides(const std::optional<std::string>& name, const py::object& overrides) {
  Config config = loadConfig(name.value_or(""));
  applyMapping(config, overrides, "override");
  validateConfig(config);
  return config;
}

py::object getKey(const Config& config, const std::string& key) {
  const boost::json::value all = configToJson(config);
  const boost::json::value* node = &all;
  std::string_view rest = key;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::string_view part = rest.substr(0, dot);
    const boost::json::object* obj = node->if_object();
    const boost::json::value* next = obj != nullptr ? obj->if_contains(part) : nullptr;
    if (next == nullptr) throw ConfigError(fmt::format("config: no key '{}' (Config.describe() lists them)", key));
    node = next;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  return jsonToPython(*node);
}

}  // namespace

void bindConfig(py::module_& m) {
  py::class_<Config> cls(m, "Config",
                         "A machine configuration: defaults overlaid with a TOML file (a path or a preset name such "
                         "as 'netburst') and key=value overrides. Keys and errors are those of `smtlab config show`.");
  cls.def(py::init([]() { return loadConfig(""); }), "The defaults.")
      .def_static("load", &loadWithOverrides, py::arg("name_or_path") = py::none(), py::arg("overrides") = py::none(),
                  "Loads a preset name or TOML file (None: the defaults), applies the overrides dict "
                  "({'core.rob.entries': 96}) and validates. Raises ConfigError naming the file and key.")
      .def(
          "set",
          [](Config& self, const py::object& keyObject, const py::object& value) {
            const std::string key = utf8Text(keyObject, "config key", true);
            Config updated = self;  // all or nothing, as update()
            applyOverride(updated, key, overrideText(value, key), "set");
            self = std::move(updated);
            return &self;
          },
          py::arg("key"), py::arg("value"), py::return_value_policy::reference_internal,
          "Sets one key (bool, int, float or str value, as in --set key=value); returns self. Raises ConfigError.")
      .def(
          "update",
          [](Config& self, const py::object& overrides) {
            // Applied to a copy that replaces the config only when every key was accepted: a dict whose second key is
            // bad leaves the config as it was, not half updated.
            Config updated = self;
            applyMapping(updated, overrides, "override");
            self = std::move(updated);
          },
          py::arg("overrides"),
          "Sets every key of a dict {key: value}, all or none: raises ConfigError (or TypeError) on the first bad one "
          "and leaves the config unchanged.")
      .def("get", [](const Config& self, const py::object& key) { return getKey(self, utf8Text(key, "config key", true)); },
           py::arg("key"), "The value of one key ('core.rob.entries'). Raises ConfigError if unknown.")
      .def("validate", [](const Config& self) { validateConfig(self); },
           "Checks ranges and consistency; raises ConfigError.")
      .def("to_dict", [](const Config& self) { return jsonToPython(configToJson(self)); },
           "The effective config as nested dicts, as written beside every result.")
      .def("to_toml", &configToToml, "The effective config as TOML text that loads back to the same config.")
      .def(
          "describe",
          [](const Config& self) {
            py::list out;
            for (const ParamInfo& p : describeConfig(self)) {
              out.append(py::dict(py::arg("key") = p.key, py::arg("type") = p.type, py::arg("value") = p.value,
                                  py::arg("doc") = p.doc));
            }
            return out;
          },
          "Every key with its type, current value (TOML text) and one-line doc, in declaration order.")
      .def("copy", [](const Config& self) { return Config(self); }, "An independent copy.")
      .def("__copy__", [](const Config& self) { return Config(self); })
      .def("__deepcopy__", [](const Config& self, const py::object&) { return Config(self); }, py::arg("memo"))
      .def_readonly("source", &Config::source, "Where the config came from (file, overrides), for messages.")
      .def_property_readonly(
          "cores", [](const Config& c) { return c.system.packages * c.system.cores; },
          "Physical cores of the machine: system.packages x system.cores (cores per package).")
      .def_property_readonly("packages", [](const Config& c) { return c.system.packages; },
                             "Physical packages (sockets), each with its own LLC.")
      .def_property_readonly("threads", [](const Config& c) { return c.core.threads; }, "Hardware threads per core.")
      .def_property_readonly(
          "logical_cpus", [](const Config& c) { return c.system.packages * c.system.cores * c.core.threads; },
          "packages x cores x threads.")
      .def_property_readonly("freq_ghz", [](const Config& c) { return c.system.freq_ghz; }, "Core clock in GHz.")
      .def("__repr__", [](const Config& c) {
        return fmt::format("<smtlab.Config {} packages x {} cores x {} threads, from {}>", c.system.packages,
                           c.system.cores, c.core.threads,
                           c.source.empty() ? "defaults" : c.source);
      })
      .def(py::pickle(
          [](const Config& c) {
            py::list values;
            for (const ParamInfo& p : describeConfig(c)) values.append(py::make_tuple(p.key, p.value));
            return py::make_tuple(values, c.source);
          },
          [](const py::tuple& state) {
            if (state.size() != 2) throw py::value_error("Config: bad pickle state");
            Config c = loadConfig("");
            for (const auto& item : state[0].cast<py::list>()) {
              const auto kv = item.cast<std::pair<std::string, std::string>>();
              applyOverride(c, kv.first, kv.second, "pickle");
            }
            c.source = state[1].cast<std::string>();
            return c;
          }));

  m.def("load_config", &loadWithOverrides, py::arg("name_or_path") = py::none(), py::arg("overrides") = py::none(),
        "Same as Config.load: a preset name or TOML file (None: defaults) plus a dict of overrides, validated.");
}

}  // namespace smtlab::python
