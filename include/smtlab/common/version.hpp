// The smtlab version, as `smtlab --version`, `smtlab.__version__` and the "smtlab_version" of JSON results report it.
// Its one source is the project() line of the top-level CMakeLists.txt (pyproject.toml reads the same line).
#pragma once

#include <string_view>

namespace smtlab {

std::string_view version();

}  // namespace smtlab
