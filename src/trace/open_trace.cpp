#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/tracer/kernels.hpp"
#include "smtlab/tracer/kpath.hpp"

namespace smtlab {

std::unique_ptr<TraceSource> openTrace(const std::string& spec) {
  if (spec.rfind("gen:", 0) == 0) return makeGenerator(spec);
  if (spec.rfind("kernel:", 0) == 0) return openKernelTrace(spec);
  if (spec.rfind("kpath:", 0) == 0) return openKpathTrace(spec);
  if (spec.empty()) throw TraceError("empty trace name");
  // Opening a directory succeeds on Linux and only reading fails, with a vague message; name the problem.
  if (std::error_code ec; std::filesystem::is_directory(spec, ec)) {
    throw TraceError(fmt::format("cannot open trace file '{}': it is a directory", spec));
  }
  {
    std::ifstream probe(spec, std::ios::binary);
    if (!probe) throw TraceError(fmt::format("cannot open trace file '{}': {}", spec, std::strerror(errno)));
  }
  if (isNativeTrace(spec)) return std::make_unique<NativeTraceReader>(spec);
  if (isChampSimTraceName(spec)) return std::make_unique<ChampSimTraceReader>(spec);
  return std::make_unique<TextTraceReader>(spec);
}

}  // namespace smtlab
