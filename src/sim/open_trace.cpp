#include "smtlab/sim/open_trace.hpp"

#include <span>
#include <string_view>

#include "smtlab/trace/generators.hpp"
#include "smtlab/tracer/exec_source.hpp"
#include "smtlab/tracer/kernels.hpp"
#include "smtlab/tracer/kpath.hpp"

namespace smtlab {
namespace {

struct SourceKind {
  std::string_view prefix;  // the spec starts with it; the opener gets the whole spec
  std::unique_ptr<TraceSource> (*open)(const std::string& spec);
};

// Every kind of source a spec names by its prefix, registered here and nowhere else; a spec with none of these
// prefixes is a trace file.
std::span<const SourceKind> sourceKinds() {
  static constexpr SourceKind kinds[] = {
      {"gen:", [](const std::string& spec) { return makeGenerator(spec); }},
      {"kernel:", openKernelTrace},
      {"kpath:", openKpathTrace},
      {"exec:", [](const std::string& spec) -> std::unique_ptr<TraceSource> {
         return std::make_unique<ExecTraceSource>(spec);
       }},
  };
  return kinds;
}

}  // namespace

std::unique_ptr<TraceSource> openTrace(const std::string& spec) {
  for (const SourceKind& kind : sourceKinds()) {
    if (spec.starts_with(kind.prefix)) return kind.open(spec);
  }
  return openTraceFile(spec);
}

}  // namespace smtlab
