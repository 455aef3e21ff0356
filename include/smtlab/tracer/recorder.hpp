// `smtlab trace record`: runs an x86-64 Linux program under qemu-x86_64 with smtlab's TCG plugin and decodes the raw
// streams into native traces, one per guest thread, plus a JSON manifest that ties the threads to one address space.
// Bounded: a default instruction cap, a free-disk reserve watched while QEMU runs, raw files removed on every exit
// path (SIGINT/SIGTERM/SIGHUP included); outputs appear only complete (OutputFile), never as an empty success.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smtlab/common/error.hpp"
#include "smtlab/tracer/raw_trace.hpp"

namespace smtlab {

// Chosen: 200 M instructions is a few seconds under QEMU, about 1 GB of raw stream at its ~5 bytes/instruction
// (docs/tracing.md) and far more than a simulation of one program needs; `--max-instructions` raises it.
inline constexpr std::uint64_t kDefaultRecordMaxInstructions = 200'000'000;
// Chosen: recording stops (and fails) when the output's file system has less than this free, so a recording never
// takes the last of a disk that other programs need.
inline constexpr std::uint64_t kDefaultRecordMinFreeBytes = 512ull << 20;

struct RecordOptions {
  std::string outPrefix = "trace";   // thread 0 -> PREFIX.trace, thread K -> PREFIX.tK.trace, PREFIX.json
  std::vector<std::string> command;  // program (searched on PATH when it has no '/') and its arguments
  std::uint64_t skip = 0;
  // Per thread; 0 = no cap (the disk reserve still applies). The program is stopped when its main thread has enough.
  std::uint64_t maxInstructions = kDefaultRecordMaxInstructions;
  std::uint64_t minFreeBytes = kDefaultRecordMinFreeBytes;  // free space to leave on the output's file system
  std::uint64_t maxRawBytes = 0;  // raw stream budget (all threads); 0 = only the free-space reserve bounds it
  bool collapseRep = false;
  bool keepRaw = false;
  bool quiet = false;
  std::string cpu = "max";  // QEMU CPU model (-cpu)
  // Run a private copy of the program as "./NAME" from a folder /tmp/smtlab-record-XXXXXX (the same path length
  // everywhere) with an empty environment. The initial stack holds the environment, the arguments and the path the
  // program was started by, and static glibc's start-up reads its absolute path (/proc/self/exe) and copies its
  // folder to the heap: without this, stack and heap addresses in the trace move with the caller's environment and
  // the program's folder, and the start-up runs a different number of instructions. With it, one binary under one
  // name with the same arguments gives the same trace wherever and by whomever it is recorded (a program that reads
  // files beside itself or its environment cannot be recorded this way). The kernel: cache records this way.
  bool fixedEnvironment = false;
  // The program's standard input and output are /dev/null (its stderr stays smtlab's): for recordings made on the
  // way to something else (the kernel: cache), whose output would otherwise land in smtlab's own stdout.
  bool detachProgramIo = false;
};

struct RecordedThread {
  std::string path;
  std::uint64_t instructions = 0;
  std::uint64_t rawBytes = 0;
  std::uint64_t traceBytes = 0;
};

// How the recorded program ended.
enum class RecordEnd {
  Exit,            // it exited by itself (exitStatus is its status)
  Signal,          // it was killed by signal `signal` (SIGSEGV, SIGABRT, ...): the trace holds what ran until then
  MaxInstructions  // its main thread reached the cap and smtlab stopped it: the trace is complete up to the cap
};

struct RecordResult {
  std::vector<RecordedThread> threads;
  std::string manifest;
  std::uint32_t asid = 0;
  RecordEnd end = RecordEnd::Exit;
  int exitStatus = 0;          // the program's exit status (128 + signal when killed; 0 when stopped at the cap)
  int signal = 0;              // with RecordEnd::Signal
  std::uint64_t untracedChildren = 0;  // child processes the program forked; they ran untraced
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

// SIGINT, SIGTERM or SIGHUP arrived while recording: QEMU was killed and every partial file removed.
class RecordInterrupted : public TraceError {
 public:
  RecordInterrupted(const std::string& what, int signal) : TraceError(what), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// "SIGSEGV" for 11, ...; "signal N" for an unknown one.
std::string signalName(int signal);

// Throws TraceError (tracer unavailable, bad program, bad output path, not enough disk, QEMU or plugin failure, no
// instruction recorded) with one clear message, and RecordInterrupted; in every failure no file is left behind.
// While it runs it owns the process's SIGINT/SIGTERM/SIGHUP handlers (restored after): one recording at a time.
RecordResult recordProgram(const RecordOptions& options);

}  // namespace smtlab
