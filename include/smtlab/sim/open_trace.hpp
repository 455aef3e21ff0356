// Opening a trace source by its spec, for every kind at once: the trace layer's formats (files, gen:) and the
// tracer's sources (kernel:, kpath:, exec:). It lives here, above both layers, so that the trace layer knows nothing
// of the tracer; every caller (run loop, program, Python module) opens sources through it.
#pragma once

#include <memory>
#include <string>

#include "smtlab/trace/source.hpp"

namespace smtlab {

// Opens a trace argument: the source its prefix names ("gen:NAME[,key=value...]", "kernel:NAME",
// "kpath:NAME[,seed=N]", "exec:PROGRAM ARGS..."), otherwise a file (openTraceFile). Throws TraceError (UsageError
// for a bad exec: command) with the spec or file name on failure.
std::unique_ptr<TraceSource> openTrace(const std::string& spec);

}  // namespace smtlab
