#include "smtlab/common/error.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/trace_input.hpp"

namespace smtlab {

std::unique_ptr<TraceSource> openTraceFile(const std::string& path) {
  if (path.empty()) throw TraceError("empty trace name");
  // The file is opened once and its format sniffed from the first bytes kept in memory: a pipe, FIFO or /dev/stdin
  // gives its data only once (docs/traces.md, "Pipes and FIFOs").
  auto input = TraceInput::open(path);
  if (hasNativeMagic(input->head())) return std::make_unique<NativeTraceReader>(std::move(input));
  if (isChampSimTraceName(path)) return std::make_unique<ChampSimTraceReader>(std::move(input));
  return std::make_unique<TextTraceReader>(std::move(input));
}

}  // namespace smtlab
