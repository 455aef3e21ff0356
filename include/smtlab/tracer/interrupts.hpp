// Asynchronous interrupts inside a recorded kpath: region. The guest's timer, its IPIs and its devices interrupt
// whatever runs, so a region holds, besides the path it marks, the interrupts that happened to land in it. These
// functions find them by where Linux 6.1 (x86-64) enters and leaves an interrupt, addresses from the guest's
// /proc/kallsyms (workloads/kpath/probe.c print_symbols), and take them out (docs/tracing.md, "Interrupts in a
// region").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "smtlab/tracer/system_trace.hpp"

namespace smtlab {

struct InterruptVectors {
  // The APIC's own vectors' entry points: asm_sysvec_apic_timer_interrupt, asm_sysvec_reschedule_ipi,
  // asm_sysvec_call_function_single.
  std::vector<Addr> system;
  // Device interrupts enter through one stub per vector (push the vector, jump to asm_common_interrupt), laid out
  // from irq_entries_start up to spurious_entries_start: [deviceBegin, deviceEnd). Empty when not known.
  Addr deviceBegin = 0, deviceEnd = 0;
  // native_irq_return_iret: the iretq through which every interrupt returns, to kernel or user mode (entry_64.S).
  // 0 when not known: a run then ends at the next user-mode record (removeInterrupts).
  Addr iret = 0;

  bool isDevice(Addr pc) const { return pc >= deviceBegin && pc < deviceEnd; }
  bool isEntry(Addr pc) const;
};

struct InterruptRun {
  std::size_t begin = 0, end = 0;  // records [begin, end): the vector's first instruction up to the interrupt return
  bool device = false;             // entered through a device stub
  bool fromUser = false;           // it interrupted user-mode code (after a user record, or it returns to one)
};

// The top-level interrupt runs of `region`, in order; an interrupt nested in another (a tick in a device handler's
// softirq) is part of the outer run. A run opens at a record at an entry point (for a device stub, its first
// record: the stub's jump after the push is no new entry) and closes at the interrupt return
// that balances it (each entry inside opens one more level). A run that does not close inside the region is a run
// only if it interrupted user code (a user-mode record before it), and then ends at the next user-mode record;
// otherwise its records are looked through for runs as if it were not there.
std::vector<InterruptRun> interruptRuns(const SystemRegion& region, const InterruptVectors& vectors);

// Takes out of `region` every interrupt run that interrupted its user code (not part of the path the region marks:
// the model charges the tick and the IPIs itself) and, when `devices` is given, every device interrupt's run
// wherever it landed, also nested in a kernel-mode interrupt that stays (a tick whose softirq took the disk's
// completion), appending each device run to *devices as a region of its own (same id). Without `devices`
// an interrupt taken in kernel mode is nested in the path's own kernel run and stays. Returns the runs taken out.
std::uint64_t removeInterrupts(SystemRegion& region, const InterruptVectors& vectors,
                               std::vector<SystemRegion>* devices = nullptr);

// For an instance that is itself an interrupt (its first record is the vector's entry: the reschedule IPI, the
// wake-up IPI of a halted CPU): takes out every interrupt delivered inside it after that first record, from its entry
// to the return that balances it. Such a one is another event that was pending when the handler's exit enabled
// interrupts (a tick; on one host every reschedule IPI instance held one, apparently because a vCPU spinning under
// TCG took the IPI only when its own timer fired), which the model charges itself. An unbalanced one stays. Returns
// the runs taken out.
std::uint64_t removeNestedInterrupts(SystemRegion& region, const InterruptVectors& vectors);

}  // namespace smtlab
