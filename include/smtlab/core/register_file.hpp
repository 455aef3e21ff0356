// Physical register files (integer and FP/vector) and the stack engine's view of the stack pointer.
// A merged register file holds both committed and speculative values: every hardware thread's architectural
// registers occupy entries permanently, and each renamed writer takes one more entry per destination register of its
// class until the NEXT writer of the same architectural register retires (then the old mapping is no longer
// reachable and its entry returns to the free list: the MIPS R10000's rule, Yeager, IEEE Micro 16(2) 1996, used by
// every merged-register-file core since, NetBurst and Intel's cores from Sandy Bridge on among them). So the
// entries beyond the architectural ones held by a thread equal its in-flight destination registers: that count is
// what the SharedCapacity of each file guards, under the same sharing policies as the queues.
#pragma once

#include <cstdint>

#include "smtlab/common/state_io.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/capacity.hpp"
#include "smtlab/trace/record.hpp"

namespace smtlab {

// The stack pointer's name in every trace format: r4, x86's register number of RSP (the tracer maps rsp/esp/sp to
// r4; the ChampSim reader maps ChampSim's REG_STACK_POINTER = 6 to r4; text traces and generators follow the same
// convention).
inline constexpr RegId kStackPointerReg = intReg(4);

constexpr bool readsReg(const Instr& in, RegId r) {
  for (RegId s : in.src) if (s == r) return true;
  return false;
}
constexpr bool writesReg(const Instr& in, RegId r) {
  for (RegId d : in.dst) if (d == r) return true;
  return false;
}

// push, pop, call, ret (and push/pop of memory operands): they read and write the stack pointer and access the stack
// (a load or a store), or are a call/return. With a stack engine their stack-pointer update is done at decode.
constexpr bool isStackUpdate(const Instr& in) {
  if (!readsReg(in, kStackPointerReg) || !writesReg(in, kStackPointerReg)) return false;
  return in.op == OpClass::Call || in.op == OpClass::Return || in.hasLoad() || in.hasStore();
}

// Register-file entries an instruction takes at rename: one per destination register of each class. A stack update
// under the stack engine writes no stack-pointer register (the decoder keeps the offset).
struct RegNeed {
  std::uint8_t intRegs = 0;
  std::uint8_t fpRegs = 0;
};
constexpr RegNeed registersNeeded(const Instr& in, bool stackUpdateAtDecode) {
  RegNeed need;
  for (RegId d : in.dst) {
    if (d == kNoReg || (stackUpdateAtDecode && d == kStackPointerReg)) continue;
    if (d < kIntRegs) ++need.intRegs;
    else ++need.fpRegs;
  }
  return need;
}

class RegisterFiles {
 public:
  RegisterFiles() = default;
  explicit RegisterFiles(const Config& config);

  // True when at least one file is limited (otherwise rename never asks).
  bool enabled() const { return intOn_ || fpOn_; }
  void visitState(StateIo& io) { io(int_, fp_, intHeld_, fpHeld_); }
  // True when every limited file has room for an instruction's largest need (kMaxDstRegs) for this thread: rename
  // asks this first, so the per-instruction need is only computed when a file is nearly full (blockCause runs several
  // times per cycle).
  bool roomForAny(std::uint32_t thread) const {
    return (!intOn_ || int_.check(thread, kMaxDstRegs) == CapacityVerdict::Ok) &&
           (!fpOn_ || fp_.check(thread, kMaxDstRegs) == CapacityVerdict::Ok);
  }
  CapacityVerdict check(std::uint32_t thread, RegNeed need) const {
    if (intOn_ && need.intRegs != 0) {
      const CapacityVerdict v = int_.check(thread, need.intRegs);
      if (v != CapacityVerdict::Ok) return v;
    }
    if (fpOn_ && need.fpRegs != 0) return fp_.check(thread, need.fpRegs);
    return CapacityVerdict::Ok;
  }
  void take(std::uint32_t thread, RegNeed need) {
    if (intOn_ && need.intRegs != 0) int_.take(thread, need.intRegs);
    if (fpOn_ && need.fpRegs != 0) fp_.take(thread, need.fpRegs);
  }
  // A writer retired (its previous mapping's entry is freed) or was squashed (its own entry is freed).
  void release(std::uint32_t thread, RegNeed need) {
    if (intOn_ && need.intRegs != 0) int_.release(thread, need.intRegs);
    if (fpOn_ && need.fpRegs != 0) fp_.release(thread, need.fpRegs);
  }
  void setActive(std::uint32_t activeMask) {
    if (intOn_) int_.setActive(activeMask);
    if (fpOn_) fp_.setActive(activeMask);
  }

  bool intLimited() const { return intOn_; }
  bool fpLimited() const { return fpOn_; }
  // The renaming entries (beyond the architectural ones) of each file, with their per-thread use and limits.
  const SharedCapacity& intFile() const { return int_; }
  const SharedCapacity& fpFile() const { return fp_; }
  // For an adaptive allocation policy, which sets the threads' shares of a limited file (allocation_policy.hpp).
  SharedCapacity& intFile() { return int_; }
  SharedCapacity& fpFile() { return fp_; }
  // Entries holding committed state (all threads; a replicated file: per thread).
  std::uint32_t intArchitectural() const { return intHeld_; }
  std::uint32_t fpArchitectural() const { return fpHeld_; }

 private:
  SharedCapacity int_;
  SharedCapacity fp_;
  bool intOn_ = false;
  bool fpOn_ = false;
  std::uint32_t intHeld_ = 0;
  std::uint32_t fpHeld_ = 0;
};

}  // namespace smtlab
