// Trace sources: anything that fills batches of instruction records (a file of any supported format, a generator).
// The pipeline never calls a source per instruction; a TraceCursor reads batches and keeps a bounded rewind window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "smtlab/trace/record.hpp"

namespace smtlab {

class TraceSource {
 public:
  virtual ~TraceSource() = default;
  // Fills up to out.size() records in order; returns how many. 0 means the trace has ended.
  // Throws TraceError naming the file and record on bad input.
  virtual std::size_t read(std::span<Instr> out) = 0;
  // Starts the trace again from its first record (used when a run needs more instructions than a trace holds).
  virtual void rewind() = 0;
  // File name or generator spec, for messages and statistics.
  virtual std::string describe() const = 0;
  // Number of records if known in advance (native header, generator with count=), else nullopt.
  virtual std::optional<std::uint64_t> length() const { return std::nullopt; }
};

// Opens a trace file whose format is recognised by its content (native magic, ChampSim when named
// *.champsimtrace[.xz|.gz]) or else read as the text format. Throws TraceError with the file name on failure.
// A source spec of any kind (gen:, kernel:, ...) is opened by openTrace (sim/open_trace.hpp).
std::unique_ptr<TraceSource> openTraceFile(const std::string& path);

}  // namespace smtlab
