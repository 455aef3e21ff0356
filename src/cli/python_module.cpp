// Finds the Python interpreter and package that go with this smtlab program and execs `python -m smtlab.<module>`.
#include "python_module.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab::cli {

namespace {

namespace fs = std::filesystem;

// The source tree holding this executable (a build folder inside it), found as src/config/loader.cpp finds
// configs/: the first parent with python/smtlab/__init__.py.
std::optional<fs::path> sourceTreeAboveExe() {
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  dir = fs::weakly_canonical(dir.parent_path(), ec);
  if (ec) return std::nullopt;
  for (;; dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "python" / "smtlab" / "__init__.py", ec)) return dir;
    if (dir == dir.parent_path()) return std::nullopt;
  }
}

// True if the tree's package has its compiled module, i.e. it can be imported from the tree with PYTHONPATH.
bool hasBuiltModule(const fs::path& package) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(package, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("_core") && entry.path().extension() == ".so") return true;
  }
  return false;
}

}  // namespace

[[noreturn]] void execPythonModule(const std::string& module, const std::vector<std::string>& args,
                                   const std::string& what) {
  const std::optional<fs::path> tree = sourceTreeAboveExe();
  std::error_code ec;

  // The interpreter: $SMTLAB_PYTHON, else the tree's virtual environment, else python3 from PATH.
  std::string python = "python3";
  if (const char* env = std::getenv("SMTLAB_PYTHON"); env != nullptr && *env != '\0') {
    python = env;
  } else if (tree && fs::exists(*tree / ".venv" / "bin" / "python", ec)) {
    python = (*tree / ".venv" / "bin" / "python").string();
  }

  // The in-tree package goes with the in-tree program; an installed package is used when the tree has no module. A
  // PYTHONPATH the user set comes first, so it can point at another build of the package.
  if (tree && hasBuiltModule(*tree / "python" / "smtlab")) {
    std::string path = (*tree / "python").string();
    if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') {
      path = fmt::format("{}:{}", old, path);
    }
    if (setenv("PYTHONPATH", path.c_str(), 1) != 0) {
      throw Error(fmt::format("cannot set PYTHONPATH: {}", std::strerror(errno)));
    }
  }

  std::vector<std::string> argStrings = {python, "-m", module};
  argStrings.insert(argStrings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argStrings.size() + 1);
  for (std::string& a : argStrings) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(python.c_str(), argv.data());  // returns only on failure
  throw Error(fmt::format("cannot run '{}' for {} (set SMTLAB_PYTHON to a Python with smtlab and its "
                          "dependencies): {}",
                          python, what, std::strerror(errno)));
}

}  // namespace smtlab::cli
