#include "smtlab/tracer/kernel_stack.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/mem/address_space.hpp"

namespace smtlab {

namespace {

constexpr Addr blockOf(Addr a) { return a & ~(kKernelStackBytes - 1); }

constexpr bool inVmalloc(Addr a) { return a >= kVmallocStart && a < kVmallocEnd; }

bool isKernelCall(const Instr& in) {
  return (in.branch == BranchKind::DirectCall || in.branch == BranchKind::IndirectCall) && isKernelAddress(in.pc);
}

}  // namespace

Addr kernelStackShift(std::uint64_t slot) {
  if (slot > kMaxKernelStackSlot) {
    throw TraceError(fmt::format("kernel stack slot {} is out of range (0..{})", slot, kMaxKernelStackSlot));
  }
  return slot * kKernelStackSlotStride + kernelStackPosition(slot) * kKernelStackBytes;
}

std::uint64_t kernelStackPosition(std::uint64_t slot) {
  if (slot == 0) return 0;
  return mixAsid(slot) % kKernelStackPositions;  // the splitmix64 finalizer (address_space.hpp): any bijective mixer
}

std::vector<Addr> kernelStackBlocks(std::span<const Instr> records) {
  // A call's store is its return address, pushed at the stack pointer: its block is a stack. Few blocks per
  // instance, so a small sorted vector.
  std::vector<Addr> blocks;
  for (const Instr& in : records) {
    if (!isKernelCall(in)) continue;
    for (const MemRef& s : in.stores) {
      if (s.valid() && inVmalloc(s.addr)) blocks.push_back(blockOf(s.addr));
    }
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  return blocks;
}

std::uint32_t moveKernelStackAccesses(Instr& in, std::span<const Addr> blocks, Addr shift) {
  std::uint32_t moved = 0;
  auto move = [&](MemRef& m) {
    if (m.valid() && inVmalloc(m.addr) && std::binary_search(blocks.begin(), blocks.end(), blockOf(m.addr))) {
      m.addr += shift;
      ++moved;
    }
  };
  for (MemRef& m : in.loads) move(m);
  for (MemRef& m : in.stores) move(m);
  return moved;
}

std::uint64_t relocateKernelStacks(std::span<Instr> records, std::uint64_t slot) {
  const Addr shift = kernelStackShift(slot);
  if (shift == 0) return 0;
  const std::vector<Addr> blocks = kernelStackBlocks(records);
  std::uint64_t moved = 0;
  for (Instr& in : records) moved += moveKernelStackAccesses(in, blocks, shift);
  return moved;
}

}  // namespace smtlab
