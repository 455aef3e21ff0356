// Where the files that smtlab reads at run time lie: the presets (configs/), the published tables (data/reference/),
// the workloads' sources (workloads/), the kernel script (scripts/kpath_kernel.sh) and the QEMU tracer plugins.
//
// A build from the source tree reads them in the tree it was built from, whose path is compiled in. An installed
// package (`pip install .`, built with SMTLAB_RELOCATABLE) carries them inside the package with the same relative
// paths and finds them from where its own code lies (the program in <package>/bin/, the Python module in
// <package>/), so an installation does not depend on the checkout or the build folder it was made from
// (docs/python.md, "Installing").
#pragma once

#include <filesystem>
#include <string_view>

namespace smtlab {

// True in an installed package's build (SMTLAB_RELOCATABLE): nothing of the source tree is compiled in.
bool relocatableBuild();

// The folder the resources' relative paths start from: the source tree (a tree build) or the package folder (an
// installed one). Throws Error naming what was looked for when an installed package cannot find its folder.
std::filesystem::path resourceRoot();

// A resource by its path relative to resourceRoot(), e.g. "workloads/kernels". Not checked for existence: the caller
// says what is missing in its own terms.
std::filesystem::path resourcePath(std::string_view relative);

// The folder a QEMU tracer plugin file lies in: the tree build's tools/qemu-tracer/ (compiled in), or the installed
// package's libexec/. Empty when this build has none.
std::filesystem::path tracerPluginDir();

// The default folder of a cache that smtlab fills itself (the kernels' traces, the kernel-path recordings): the build
// folder's NAME/ for a tree build (beside what it caches), $XDG_CACHE_HOME/smtlab/NAME (else ~/.cache/smtlab/NAME)
// for an installed package, whose folder may not be writable and is replaced by the next install.
std::filesystem::path defaultCacheDir(std::string_view name);

}  // namespace smtlab
