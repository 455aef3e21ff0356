// Finds the Python interpreter and package that go with this smtlab program and runs the module smtlab.<module> in it.
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

  // Not `python -m MODULE`: a Python without the package would answer with a bare "No module named smtlab". A short
  // launcher imports the module first and, if that fails, says in one message what is missing and how to point
  // smtlab at a Python that has it; then it runs the module as `-m` would (argv[0] = module, cwd on sys.path).
  static constexpr const char* kLauncher =
      "import importlib, runpy, sys\n"
      "module, what = sys.argv[1], sys.argv[2]\n"
      "del sys.argv[1:3]\n"
      "def missing(e):\n"
      "    sys.stderr.write(f'smtlab: error: {what} runs in Python, but {sys.executable} cannot import '\n"
      "        f'{e.name or module} ({e}). Point smtlab at a Python that has the smtlab package and its '\n"
      "        f'dependencies: set SMTLAB_PYTHON=/path/to/venv/bin/python (a virtual environment where smtlab is '\n"
      "        f'installed with pip install), or run the smtlab program of a built source tree, which uses the '\n"
      "        f'tree\\'s .venv.\\n')\n"
      "    sys.exit(2)\n"
      "try:\n"
      "    importlib.import_module(module)\n"
      "except ImportError as e:\n"
      "    missing(e)\n"
      "sys.argv[0] = module\n"
      "try:\n"
      "    runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
      "except ModuleNotFoundError as e:\n"  // a dependency (pandas, dask...) imported by the module's __main__
      "    missing(e)\n";
  std::vector<std::string> argStrings = {python, "-c", kLauncher, module, what};
  argStrings.insert(argStrings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argStrings.size() + 1);
  for (std::string& a : argStrings) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(python.c_str(), argv.data());  // returns only on failure
  throw Error(fmt::format("{} runs in Python, but '{}' cannot be started ({}). Point smtlab at a Python that has "
                          "the smtlab package: set SMTLAB_PYTHON=/path/to/venv/bin/python",
                          what, python, std::strerror(errno)));
}

}  // namespace smtlab::cli
