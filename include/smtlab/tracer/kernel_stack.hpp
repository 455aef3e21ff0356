// Per-task kernel stacks for recorded kernel paths: every kpath: instance was recorded by one probe process on one
// kernel stack, but each task of a simulated workload has its own (Linux: one THREAD_SIZE stack per task), so two
// tasks running the same recorded path must touch different stack lines. KpathInstanceSource (kpath_instance.hpp)
// serves an instance with its kernel stacks moved to a per-task place.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "smtlab/trace/record.hpp"

namespace smtlab {

// Linux 6.1 x86-64 without KASAN: THREAD_SIZE = 16 KiB, and with CONFIG_VMAP_STACK (Debian's) a task's stack is a
// vmalloc area aligned to THREAD_SIZE (kernel/fork.c alloc_thread_stack_node, THREAD_ALIGN).
inline constexpr Addr kKernelStackBytes = 16 * 1024;
// The vmalloc area of x86-64 4-level paging (Documentation/x86/x86_64/mm.rst: ffffc90000000000..ffffe8ffffffffff,
// 32 TiB; KASLR moves its start within it). Task stacks live there; the per-CPU entry and exception stacks
// (cpu_entry_area, fffffe0000000000) do not, and are left alone: they belong to the logical CPU, not to the task.
inline constexpr Addr kVmallocStart = 0xffff'c900'0000'0000ULL;
inline constexpr Addr kVmallocEnd = 0xffff'e900'0000'0000ULL;
// Task slot k's stacks lie k x 4 GiB above the recorded ones (chosen: far above anything a 256 MiB guest allocates
// in its vmalloc area, and 4096 slots x 4 GiB = 16 TiB keeps them inside the area; distinct slots never meet), plus
// kernelStackPosition(k) x THREAD_SIZE: a stride of 4 GiB alone would put every task's stack at the same place
// modulo 64 KiB, where NetBurst's L1D holds one line (64K aliasing, core.lsu.alias_64k), so every two tasks on
// sibling logical CPUs would evict each other's stack lines. Real stacks are THREAD_SIZE-aligned areas wherever the
// allocator found room: any of the 64 KiB / THREAD_SIZE = 4 places, one pair of tasks in 4 sharing one.
inline constexpr Addr kKernelStackSlotStride = Addr{1} << 32;
inline constexpr std::uint64_t kMaxKernelStackSlot = 4096;
inline constexpr std::uint64_t kKernelStackPositions = (Addr{64} * 1024) / kKernelStackBytes;

// Slot k's place modulo 64 KiB, in THREAD_SIZE units: 0 for slot 0 (the recording's own stack), otherwise a hash of k
// (chosen: the allocator's choice is not something the model can know; a hash makes it fixed per slot and spreads
// consecutive pids, which the study gives to tasks that often run side by side, over all places).
std::uint64_t kernelStackPosition(std::uint64_t slot);

// The THREAD_SIZE blocks of the vmalloc area that a call instruction in kernel code of `records` pushes its return
// address into (the task's stack, and any other stack the region ran on), sorted.
std::vector<Addr> kernelStackBlocks(std::span<const Instr> records);

// Moves the accesses of `in` that fall in `blocks` up by `shift`; returns how many moved.
std::uint32_t moveKernelStackAccesses(Instr& in, std::span<const Addr> blocks, Addr shift);

// How far slot k's stacks lie from the recorded ones: k x kKernelStackSlotStride + kernelStackPosition(k) x
// kKernelStackBytes. Throws TraceError for a slot above kMaxKernelStackSlot.
Addr kernelStackShift(std::uint64_t slot);

// Moves every access of `records` inside their kernel stacks by kernelStackShift(slot) (slot 0: as recorded).
// Returns the number of accesses moved. Throws TraceError for a slot above kMaxKernelStackSlot.
std::uint64_t relocateKernelStacks(std::span<Instr> records, std::uint64_t slot);

}  // namespace smtlab
