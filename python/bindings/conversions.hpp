// Conversions between Python values and what the library takes or gives, shared by the *_binding.cpp files:
// boost::json values (the statistics, the effective config) to plain Python objects, Python scalars to config override
// text, and checked non-negative integer arguments.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>
#include <pybind11/pybind11.h>

namespace smtlab::python {

namespace py = pybind11;

// boost::json -> dict / list / str / int / float / bool / None, recursively.
py::object jsonToPython(const boost::json::value& value);

// A Python scalar as the text of a TOML value for applyOverride: bool -> true/false, int and float -> digits, str as
// given (applyOverride reads it as TOML if it parses, else as a bare word). Raises TypeError for anything else.
std::string overrideText(const py::handle& value, std::string_view key);

// A Python str as UTF-8 text, for argument `what` (as "config key"). A str holding a lone surrogate (a byte string
// decoded with errors="surrogateescape", as os.fsdecode does for a non-UTF-8 file name) has no UTF-8 form, and pybind11's
// own conversion answers it with "incompatible function arguments" or "Unable to cast Python instance": this raises
// an error naming the argument and showing the text with Python's escapes instead: ConfigError for a config key or value
// (`config` true, as every other bad key or value), else ValueError. Raises TypeError for a non-str.
std::string utf8Text(const py::handle& value, std::string_view what, bool config = false);

// A non-negative Python integer given as argument `arg` of `func`, at most `max`. pybind11's own conversion to an
// unsigned type answers a negative or too-large value with "incompatible function arguments" (a TypeError that names
// no argument), and a signed one would let -1 wrap to 2^64-1: so integers arrive as objects and are checked here.
// Raises TypeError (not an integer; bool is refused) or UsageError, a ValueError (negative, above max), naming both.
std::uint64_t unsignedArg(const py::handle& value, std::string_view func, std::string_view arg,
                          std::uint64_t max = ~std::uint64_t{0});

}  // namespace smtlab::python
