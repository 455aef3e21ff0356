// The instruction record: one dynamic instruction of a trace, fixed size and plain data, so readers can fill
// batches of them without allocation and the pipeline can refer to them by sequence number.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "smtlab/common/types.hpp"

namespace smtlab {

// Operation class: what execution resource the instruction needs. The names are the text format's op names.
enum class OpClass : std::uint8_t {
  Int,           // int    simple integer ALU op
  IMul,          // imul   integer multiply
  IDiv,          // idiv   integer divide
  FAdd,          // fadd   floating-point / vector add
  FMul,          // fmul   floating-point / vector multiply
  FDiv,          // fdiv   floating-point / vector divide
  Load,          // load   pure load
  Store,         // store  pure store
  Branch,        // br     conditional branch
  Jump,          // jmp    direct unconditional jump
  IndirectJump,  // ijmp   indirect jump
  Call,          // call   call (direct unless branch == IndirectCall)
  Return,        // ret    return
  Nop,           // nop
  Pause,         // pause  spin-wait hint: delays its own thread
  Mark,          // mark   no work; reported to the caller when it retires
};
inline constexpr int kOpClassCount = 16;

// Control-flow kind, for the branch predictor. Derived from the op for the text format; ChampSim traces infer it.
enum class BranchKind : std::uint8_t {
  None,
  Conditional,
  DirectJump,
  IndirectJump,
  DirectCall,
  IndirectCall,
  Return,
  Other,
};
inline constexpr int kBranchKindCount = 8;

// Register ids: r0..r63 are 0..63 (integer class), f0..f63 are 64..127 (floating point / vector class).
using RegId = std::uint8_t;
inline constexpr RegId kNoReg = 0xff;
inline constexpr int kIntRegs = 64;
inline constexpr int kFpRegs = 64;
inline constexpr int kArchRegs = kIntRegs + kFpRegs;
constexpr RegId intReg(int i) { return static_cast<RegId>(i); }
constexpr RegId fpReg(int i) { return static_cast<RegId>(kIntRegs + i); }

inline constexpr int kMaxSrcRegs = 4;
inline constexpr int kMaxDstRegs = 2;
// Every memory operand of an instruction is kept: ChampSim records carry up to four source and two destination
// memory addresses (inc/trace_instruction.h: NUM_INSTR_SOURCES = 4, NUM_INSTR_DESTINATIONS = 2), and x86 forms
// with more (gathers, string moves) are recorded by the tracer as merged pieces within these slots.
inline constexpr int kMaxLoads = 4;
inline constexpr int kMaxStores = 2;

// One memory access of an instruction; size 0 means the slot is unused.
struct MemRef {
  Addr addr = 0;
  std::uint8_t size = 0;
  constexpr bool valid() const { return size != 0; }
  constexpr bool operator==(const MemRef&) const = default;
};

struct Instr {
  Addr pc = 0;
  Addr target = 0;  // branch target (taken or not), 0 if unknown
  std::array<MemRef, kMaxLoads> loads{};
  std::array<MemRef, kMaxStores> stores{};
  std::uint32_t markId = 0;  // for OpClass::Mark
  OpClass op = OpClass::Nop;
  BranchKind branch = BranchKind::None;
  bool taken = false;
  std::array<RegId, kMaxSrcRegs> src{kNoReg, kNoReg, kNoReg, kNoReg};
  std::array<RegId, kMaxDstRegs> dst{kNoReg, kNoReg};
  // What the decoder knew of the instruction's uops. uops = 0: not recorded; the core derives the
  // count from the op class and memory operands. microcoded: the uops come from the microcode sequencer (divides,
  // string ops, complex x86 forms), which holds the thread's decode slot while it delivers them.
  std::uint8_t uops = 0;
  bool microcoded = false;

  constexpr bool isBranch() const { return branch != BranchKind::None; }
  constexpr bool hasLoad() const {
    for (const MemRef& m : loads) if (m.valid()) return true;
    return false;
  }
  constexpr bool hasStore() const {
    for (const MemRef& m : stores) if (m.valid()) return true;
    return false;
  }
  constexpr bool operator==(const Instr&) const = default;
};

// Text-format names of op classes and branch kinds, and the inverse lookups (return false when unknown).
std::string_view opClassName(OpClass op);
bool parseOpClass(std::string_view name, OpClass& out);
std::string_view branchKindName(BranchKind kind);
// The branch kind an op implies in the text format (Branch -> Conditional, Call -> DirectCall, ...).
BranchKind defaultBranchKind(OpClass op);
// "r5", "f12"; "-" for kNoReg.
std::string regName(RegId reg);
bool parseReg(std::string_view name, RegId& out);

}  // namespace smtlab
