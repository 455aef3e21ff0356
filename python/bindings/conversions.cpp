// Conversions between Python values and what the library takes or gives (declared in conversions.hpp).
#include "conversions.hpp"

#include <string>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab::python {

py::object jsonToPython(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::null:
      return py::none();
    case boost::json::kind::bool_:
      return py::bool_(value.get_bool());
    case boost::json::kind::int64:
      return py::int_(value.get_int64());
    case boost::json::kind::uint64:
      return py::int_(value.get_uint64());
    case boost::json::kind::double_:
      return py::float_(value.get_double());
    case boost::json::kind::string: {
      const boost::json::string& s = value.get_string();
      return py::str(s.data(), s.size());
    }
    case boost::json::kind::array: {
      const boost::json::array& a = value.get_array();
      py::list out(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) out[i] = jsonToPython(a[i]);
      return out;
    }
    case boost::json::kind::object: {
      py::dict out;
      for (const auto& kv : value.get_object()) {
        out[py::str(kv.key().data(), kv.key().size())] = jsonToPython(kv.value());
      }
      return out;
    }
  }
  return py::none();
}

std::string utf8Text(const py::handle& value, std::string_view what, bool config) {
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(fmt::format("{} must be str, not {}", what,
                                     py::type::handle_of(value).attr("__name__").cast<std::string>()));
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    const std::string message = fmt::format("{} {} is not valid text: it holds a lone surrogate (bytes decoded with "
                                            "errors='surrogateescape'?), which has no UTF-8 form",
                                            what, py::repr(value).cast<std::string>());
    if (config) throw ConfigError(message);
    throw py::value_error(message);
  }
  return {data, static_cast<std::size_t>(size)};
}

std::string overrideText(const py::handle& value, std::string_view key) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>() ? "true" : "false";
  // numpy scalars, which sweep and analysis code computes values with (numpy.int64(96), numpy.bool_(True),
  // numpy.float32(0.5)), by their dtype's kind rather than by importing numpy here.
  if (py::hasattr(value, "dtype") && py::hasattr(value, "item") && py::hasattr(value, "ndim") &&
      py::hasattr(value.attr("dtype"), "kind") && py::int_(value.attr("ndim")).cast<long>() == 0) {
    const std::string kind = value.attr("dtype").attr("kind").cast<std::string>();
    if (kind == "b" || kind == "i" || kind == "u" || kind == "f") return overrideText(value.attr("item")(), key);
  }
  if (py::isinstance<py::int_>(value)) return py::str(value).cast<std::string>();
  if (py::isinstance<py::float_>(value)) return py::repr(value).cast<std::string>();
  if (py::isinstance<py::str>(value)) return utf8Text(value, fmt::format("the value of config key '{}'", key), true);
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    // A list of strings (core.ports) becomes a TOML array of basic strings.
    std::string out = "[";
    for (const auto& item : value) {
      if (!py::isinstance<py::str>(item)) {
        throw py::type_error("config key '" + std::string(key) + "': a list value must hold str items, not " +
                             py::type::handle_of(item).attr("__name__").cast<std::string>());
      }
      out += out.size() > 1 ? ", \"" : "\"";
      for (char ch : utf8Text(item, fmt::format("an item of config key '{}'", key), true)) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
      }
      out += '"';
    }
    return out + "]";
  }
  throw py::type_error("config key '" + std::string(key) + "': value must be bool, int, float, str or a list of str, not " +
                       py::type::handle_of(value).attr("__name__").cast<std::string>());
}

std::uint64_t unsignedArg(const py::handle& value, std::string_view func, std::string_view arg, std::uint64_t max) {
  if (py::isinstance<py::bool_>(value) || PyIndex_Check(value.ptr()) == 0) {
    throw py::type_error(fmt::format("{}: {} must be an integer, not {}", func, arg,
                                     py::type::handle_of(value).attr("__name__").cast<std::string>()));
  }
  const auto index = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  // Quote at most a short prefix: 2**100000 is a valid int whose digits would flood the message.
  std::string text = py::repr(index).cast<std::string>();
  if (text.size() > 24) text = text.substr(0, 20) + "...";
  const int negative = PyObject_RichCompareBool(index.ptr(), py::int_(0).ptr(), Py_LT);
  if (negative < 0) throw py::error_already_set();
  if (negative == 1) {
    throw UsageError(fmt::format("{}: {}={} is negative; it must be in 0..{}", func, arg, text, max));
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(index.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr) {
    PyErr_Clear();  // above 2^64-1
    throw UsageError(fmt::format("{}: {}={} is out of range 0..{}", func, arg, text, max));
  }
  if (v > max) throw UsageError(fmt::format("{}: {}={} is out of range 0..{}", func, arg, text, max));
  return v;
}

}  // namespace smtlab::python
