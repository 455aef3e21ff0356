// The raw stream of the full-system QEMU plugin (tools/qemu-tracer/smtlab_system_tracer.c): per virtual CPU, the
// blocks and memory accesses recorded between a probe's begin and end markers. SystemStreamSplitter cuts it at the
// markers into regions, each a real instruction stream with a user/kernel flag per record; docs/tracing.md ("System
// mode") gives the byte layout.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "smtlab/trace/record.hpp"
#include "smtlab/tracer/raw_trace.hpp"

namespace smtlab {

// Marker payloads (the low half of the marker nop's displacement): bits 0-14 the region id, bit 15 an end.
inline constexpr std::uint32_t kMarkerEndBit = 0x8000;
// Linux on x86-64 runs kernel code only in the upper canonical half.
inline constexpr Addr kKernelHalf = 0xffff800000000000ull;

struct SystemRegion {
  std::uint32_t id = 0;
  std::vector<Instr> instrs;
  std::vector<std::uint8_t> kernel;  // per record: 1 when it ran in kernel mode (privileged)
  std::uint64_t kernelInstructions() const;
};

struct SplitStats {
  std::uint64_t regions = 0;     // complete regions handed to the sink
  std::uint64_t broken = 0;      // begun but never ended on this CPU (a begin inside a region, a mismatched end)
  std::uint64_t cut = 0;         // blocks left early by an exception (the faulting instruction is not emitted)
  std::uint64_t instructions = 0;
  std::uint64_t droppedAccesses = 0;  // beyond a record's 2 loads + 2 stores
  std::uint64_t deliveryAccesses = 0;  // made by the CPU delivering an interrupt or exception, not by an instruction
  std::uint64_t interrupts = 0;  // interrupts taken out of regions (interrupts.hpp, removeInterrupts)
  std::uint64_t deviceInterrupts = 0;  // device interrupts that became DEVICE_IRQ instances (kpath.cpp)
  bool limitReached = false;     // the plugin stopped at its byte limit
};

// Reads one CPU's stream (PREFIX.cpuK.raw) and hands each complete region to `sink`, in stream order. A stream cut
// short ends at its last complete entry (an open region is dropped and counted as broken); other damage is a
// TraceError naming the file and byte offset.
SplitStats splitSystemStream(const RawBlockTable& blocks, const std::string& path,
                             const std::function<void(SystemRegion&&)>& sink);

// Maximal runs of kernel-mode records of a region, each as a region of its own (same id): interrupts taken inside
// a user-mode region.
std::vector<SystemRegion> kernelExcursions(const SystemRegion& region);

// Looks for PREFIX.cpuK.raw, K = 0, 1, ... (stops at the first missing one).
std::vector<std::string> systemCpuFiles(const std::string& prefix);

}  // namespace smtlab
