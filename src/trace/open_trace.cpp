#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/text_format.hpp"

namespace smtlab {

std::unique_ptr<TraceSource> openTrace(const std::string& spec) {
  if (spec.rfind("gen:", 0) == 0) return makeGenerator(spec);
  if (spec.empty()) throw TraceError("empty trace name");
  {
    std::ifstream probe(spec, std::ios::binary);
    if (!probe) throw TraceError(fmt::format("cannot open trace file '{}': {}", spec, std::strerror(errno)));
  }
  if (isNativeTrace(spec)) return std::make_unique<NativeTraceReader>(spec);
  if (spec.find(".champsimtrace") != std::string::npos) {
    throw TraceError(fmt::format("{}: ChampSim reader not built yet", spec));
  }
  return std::make_unique<TextTraceReader>(spec);
}

}  // namespace smtlab
