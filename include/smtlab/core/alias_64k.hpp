// NetBurst's 64K aliasing (Intel's VTune reference, "64K Aliasing Conflicts": one L1D line per virtual address
// modulo 64 KB can be resident; the reason Linux offsets user stacks under
// Hyper-Threading, "Hyper-Threading speeds Linux"). The Pentium 4's L1D is looked up by virtual address bits below
// 64 KiB, so two lines that agree in bits 6..15 (with 64-byte lines) cannot both be there. The model keeps, per core,
// the last line used at each position modulo 64 KiB (by both threads, with its address space; a kernel-half line is
// one line in every address space): an access to another line at that position conflicts, and the caller turns an
// L1D hit into a miss served by the L2. The cache model's own contents are left alone; only the timing of the
// conflicting access changes.
#pragma once

#include <cstdint>
#include <vector>

#include "smtlab/common/state_io.hpp"
#include "smtlab/common/types.hpp"
#include "smtlab/mem/address_space.hpp"

namespace smtlab {

class Alias64k {
 public:
  explicit Alias64k(std::uint32_t lineBytes);
  void visitState(StateIo& io) { io(slots_); }
  // Records an access to the line of `addr`; true if the position held another line (a conflict).
  bool touch(Asid asid, Addr addr) {
    const LineAddr line = LineAddr::of(addr, lineShift_);
    Slot& s = slots_[line.value & mask_];  // the line's position modulo 64 KiB
    // A kernel-half line is one line in every address space (address_space.hpp: global pages, physical = virtual):
    // siblings running kernel code under two processes share it, they do not evict each other. A user line is the
    // address space's own, so the same user address in two processes is two lines at one position.
    const bool conflict = s.valid && (s.line != line || (s.asid != asid.value && !isKernelAddress(addr)));
    // Field by field: a whole-Slot assignment went through a copy on the stack whose last 8 bytes were read back
    // across its two stores, which the CPU cannot forward (13 % of executeLoad()'s samples in a perf profile).
    [[maybe_unused]] const auto& [slotLine, slotAsid, slotValid] = s;  // compiles only while these are all the fields
    s.line = line;
    s.asid = asid.value;
    s.valid = true;
    return conflict;
  }

 private:
  struct Slot {
    LineAddr line;
    std::uint32_t asid = 0;
    bool valid = false;
  };
  std::uint32_t lineShift_ = 6;
  std::uint64_t mask_ = 0;  // lines per 64 KiB, minus one: masks a line number, not an address
  std::vector<Slot> slots_;
};

}  // namespace smtlab
