#include "smtlab/common/error.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/trace_input.hpp"
#include "smtlab/tracer/exec_source.hpp"
#include "smtlab/tracer/kernels.hpp"
#include "smtlab/tracer/kpath.hpp"

namespace smtlab {

std::unique_ptr<TraceSource> openTrace(const std::string& spec) {
  if (spec.rfind("gen:", 0) == 0) return makeGenerator(spec);
  if (spec.rfind("kernel:", 0) == 0) return openKernelTrace(spec);
  if (spec.rfind("kpath:", 0) == 0) return openKpathTrace(spec);
  if (spec.rfind("exec:", 0) == 0) return std::make_unique<ExecTraceSource>(spec);
  if (spec.empty()) throw TraceError("empty trace name");
  // The file is opened once and its format sniffed from the first bytes kept in memory: a pipe, FIFO or /dev/stdin
  // gives its data only once (docs/traces.md, "Pipes and FIFOs").
  auto input = TraceInput::open(spec);
  if (hasNativeMagic(input->head())) return std::make_unique<NativeTraceReader>(std::move(input));
  if (isChampSimTraceName(spec)) return std::make_unique<ChampSimTraceReader>(std::move(input));
  return std::make_unique<TextTraceReader>(std::move(input));
}

}  // namespace smtlab
