// The reference kernels as real programs (workloads/kernels/*.c): `kernel:NAME` compiles one (-O2, generic x86-64,
// static), traces it once under the QEMU tracer into a cache directory and reads the cached native trace. Without
// the tracer a generator look-alike stands in (docs/tracing.md lists both).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "smtlab/trace/source.hpp"

namespace smtlab {

struct KernelInfo {
  std::string name;          // kernel:NAME
  std::string source;        // file in workloads/kernels
  std::vector<std::string> args;
  int thread = 0;            // which guest thread's trace (msgpass_recv is thread 1)
  std::string fallback;      // generator look-alike when the tracer is unavailable
  std::string what;          // one line for listings
  // The trace starts after the program's first `pause`, which it executes once its setup is done (chains.c builds
  // its cycle first): the records up to and including the pause are dropped, so the trace is the kernel's loop.
  bool fromMarker = false;
};

const std::vector<KernelInfo>& kernels();
// $SMTLAB_KERNEL_CACHE, else build/kernels of this build tree.
std::string kernelCacheDir();

// Opens "kernel:NAME": the cached trace (traced now if missing or older than its source and the tracer is
// available), else the generator look-alike (a note on stderr says so once). Throws TraceError for unknown names.
std::unique_ptr<TraceSource> openKernelTrace(const std::string& spec);
// Makes sure the cached trace of a kernel exists (compiling and tracing it); returns its path. Throws TraceError
// when the tracer or the C compiler is unavailable.
std::string ensureKernelTrace(const KernelInfo& kernel);

}  // namespace smtlab
