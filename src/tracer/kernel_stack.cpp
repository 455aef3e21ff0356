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

Addr slotShift(std::uint64_t slot) {
  if (slot > kMaxKernelStackSlot) {
    throw TraceError(fmt::format("kernel stack slot {} is out of range (0..{})", slot, kMaxKernelStackSlot));
  }
  return slot * kKernelStackSlotStride;
}

}  // namespace

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
  const Addr shift = slotShift(slot);
  if (shift == 0) return 0;
  const std::vector<Addr> blocks = kernelStackBlocks(records);
  std::uint64_t moved = 0;
  for (Instr& in : records) moved += moveKernelStackAccesses(in, blocks, shift);
  return moved;
}

KernelStackSource::KernelStackSource(std::shared_ptr<const KernelPathRecords> instance, std::uint64_t slot,
                                     std::string name)
    : instance_(std::move(instance)), shift_(slotShift(slot)), name_(std::move(name)) {}

std::size_t KernelStackSource::read(std::span<Instr> out) {
  const std::vector<Instr>& records = instance_->records;
  const std::size_t n = std::min(out.size(), records.size() - pos_);
  std::copy_n(records.begin() + static_cast<std::ptrdiff_t>(pos_), n, out.begin());
  pos_ += n;
  if (shift_ != 0 && !instance_->stackBlocks.empty()) {
    for (std::size_t i = 0; i < n; ++i) moveKernelStackAccesses(out[i], instance_->stackBlocks, shift_);
  }
  return n;
}

}  // namespace smtlab
