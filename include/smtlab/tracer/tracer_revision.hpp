// What a cached recording was made with: the tracer revision, bumped whenever the plugins or the raw-stream decoder
// change what a recording of the same program holds. The kernel: and kpath: caches keep a stamp beside each cached
// recording and record again when it is missing or older, so a fix reaches traces recorded before it.
#pragma once

#include <string>
#include <string_view>

namespace smtlab {

// 1 (no stamp): QEMU 7.2's abandoned page-crossing instruction is recorded as a phantom record
//    (tools/qemu-tracer/abandoned_insn.h).
// 2: the plugins leave it out.
// 3: a kpath: region's records hold no timer tick or IPI that hit its user code (kpath.cpp,
//    removeUserModeInterrupts): at revision 2 one getppid instance held a 6,000-instruction tick.
// 4: a reschedule or wake-up IPI's kpath: instance holds no interrupt taken at the handler's exit (interrupts.hpp,
//    removeNestedInterrupts): at revision 3, on one host, every resched_ipi instance held a tick, 2,626-7,468
//    instructions against the handler's 134-148, and the study's pipe latency read -19.7 % instead of about -1.5 %.
//    A revision although only the splitter differs, so that a cache split by revision 3 is split again.
// (Not bumped when the kpath: splitter changes together with the probe's sources, workloads/kpath: the cache is
// recorded again for those anyway, and the kernel: traces stay valid. So for the interrupt runs of interrupts.hpp.)
inline constexpr int kTracerRevision = 4;

// The stamp of a cached file is "<file>.tracer": a line "tracer-revision N", then an optional tag naming how the
// recording was made that the tracer revision does not say (kernel: traces: kFixedEnvironmentTag). True when it says
// kTracerRevision and, if `requiredTag` is given, holds that tag; false when it is missing, unreadable, malformed,
// names another revision or lacks the tag.
bool tracerStampCurrent(const std::string& cachedFile, std::string_view requiredTag = {});
// Writes the stamp (with `tag` when given) under a private name and renames it, so a reader never sees half a stamp.
// Throws TraceError naming the file when it cannot be written.
void writeTracerStamp(const std::string& cachedFile, std::string_view tag = {});

// The kernel: cache's tag: recorded with RecordOptions::fixedEnvironment. Without it a trace moves with the caller's
// environment and the cache's path, so two build trees hold different traces; a cached trace without the tag is
// recorded again when the tracer can.
inline constexpr std::string_view kFixedEnvironmentTag = "fixed-environment";

}  // namespace smtlab
