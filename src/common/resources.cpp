#include "smtlab/common/resources.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <system_error>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"

namespace smtlab {
namespace fs = std::filesystem;

namespace {

#ifdef SMTLAB_RELOCATABLE
// The package folder if `dir` (where a binary of smtlab lies) is inside one: the program lies in <package>/bin/, the
// Python module in <package>/. A package folder holds configs/ (installed with every package).
fs::path packageAbove(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& candidate : {dir, dir.parent_path()}) {
    if (fs::is_directory(candidate / "configs", ec)) return candidate;
  }
  return {};
}

fs::path findPackageRoot() {
  std::error_code ec;
  // The program: /proc/self/exe is this binary. In the Python module it is the interpreter, which lies elsewhere.
  if (const fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    if (fs::path root = packageAbove(exe.parent_path()); !root.empty()) return root;
  }
  // The Python module (or any shared object holding this code): the file dladdr names for one of its functions.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&findPackageRoot), &info) != 0 && info.dli_fname != nullptr &&
      *info.dli_fname != '\0') {
    const fs::path self = fs::weakly_canonical(fs::path(info.dli_fname), ec);
    if (!ec) {
      if (fs::path root = packageAbove(self.parent_path()); !root.empty()) return root;
    }
  }
  return {};
}
#endif

}  // namespace

bool relocatableBuild() {
#ifdef SMTLAB_RELOCATABLE
  return true;
#else
  return false;
#endif
}

fs::path resourceRoot() {
#ifdef SMTLAB_RELOCATABLE
  static const fs::path root = findPackageRoot();
  if (root.empty()) {
    throw Error("cannot find the installed smtlab package's folder (configs/ beside the program's bin/ or beside the "
                "Python module); reinstall the package");
  }
  return root;
#elif defined(SMTLAB_SOURCE_ROOT)
  return SMTLAB_SOURCE_ROOT;
#else
  return fs::current_path();  // a build that says nothing: relative paths, as run from the source tree
#endif
}

fs::path resourcePath(std::string_view relative) { return resourceRoot() / fs::path(relative); }

fs::path tracerPluginDir() {
#ifdef SMTLAB_RELOCATABLE
  return resourceRoot() / "libexec";
#elif defined(SMTLAB_PLUGIN_DIR)
  return SMTLAB_PLUGIN_DIR;
#else
  return {};
#endif
}

fs::path defaultCacheDir(std::string_view name) {
#if !defined(SMTLAB_RELOCATABLE) && defined(SMTLAB_BUILD_ROOT)
  return fs::path(SMTLAB_BUILD_ROOT) / fs::path(name);
#else
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    return fs::path(xdg) / "smtlab" / fs::path(name);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache" / "smtlab" / fs::path(name);
  }
  throw Error(fmt::format("no folder for the {} cache: set HOME or XDG_CACHE_HOME (or the cache's own variable)",
                          name));
#endif
}

}  // namespace smtlab
