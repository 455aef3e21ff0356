// `smtlab trace record`: runs an x86-64 Linux program under qemu-x86_64 with smtlab's TCG plugin and decodes the raw
// streams into native traces, one per guest thread, plus a JSON manifest that ties the threads to one address space.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smtlab/tracer/raw_trace.hpp"

namespace smtlab {

struct RecordOptions {
  std::string outPrefix = "trace";   // thread 0 -> PREFIX.trace, thread K -> PREFIX.tK.trace, PREFIX.json
  std::vector<std::string> command;  // program (searched on PATH when it has no '/') and its arguments
  std::uint64_t skip = 0;
  std::uint64_t maxInstructions = 0;  // per thread; 0 = all. The program is stopped when its main thread has enough
  bool collapseRep = false;
  bool keepRaw = false;
  bool quiet = false;
  std::string cpu = "max";  // QEMU CPU model (-cpu)
};

struct RecordedThread {
  std::string path;
  std::uint64_t instructions = 0;
  std::uint64_t rawBytes = 0;
  std::uint64_t traceBytes = 0;
};

struct RecordResult {
  std::vector<RecordedThread> threads;
  std::string manifest;
  std::uint32_t asid = 0;
  int exitStatus = 0;          // the program's exit status (128 + signal when killed)
  double traceSeconds = 0;     // running under QEMU
  double decodeSeconds = 0;    // raw stream -> native traces
  std::uint64_t instructions() const;
};

// nullopt when tracing works here; otherwise why not (no qemu-x86_64, plugin not built, no capstone).
std::optional<std::string> tracerUnavailableReason();
// The plugin: $SMTLAB_QEMU_PLUGIN, else the one this build made, else next to the smtlab executable.
std::string tracerPluginPath();
// qemu-x86_64: $SMTLAB_QEMU, else found on PATH; empty when none.
std::string qemuPath();

// Throws TraceError (tracer unavailable, program not found, QEMU or plugin failure) with one clear message.
RecordResult recordProgram(const RecordOptions& options);

}  // namespace smtlab
