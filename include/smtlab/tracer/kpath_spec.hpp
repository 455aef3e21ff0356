// The `kpath:NAME[,seed=N][,stack=K][,page=P]` source spec as Source(), openTrace() and `smtlab run` take it, parsed and checked against
// the path table before anything boots: a bad spec is one TraceError and costs no QEMU run. Kept apart from the
// recording (kpath.cpp) so that the fuzz target source_spec reaches it without tracing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace smtlab {

struct KpathSpec {
  std::string name;        // a name of kpaths()
  std::uint64_t seed = 0;  // picks the instance: splitmix64(seed) mod instances
  std::uint64_t stackSlot = 0;  // stack=K: the task's kernel stack slot (kernel_stack.hpp), 0..kMaxKernelStackSlot
  std::optional<std::uint64_t> page;  // page=P: the first page of the simulated page cache it copies (page_cache.hpp)
};

// Throws TraceError naming the spec for an unknown path, an option other than seed=N, stack=K or page=P, a K above
// kMaxKernelStackSlot, a P above kMaxPageCachePage, or an N or K that is not a decimal number below 2^64 (no sign,
// no spaces: a lenient parse would turn "-1" or a 21-digit number into another seed silently).
KpathSpec parseKpathSpec(const std::string& spec);

}  // namespace smtlab
