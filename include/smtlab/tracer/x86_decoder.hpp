// Static decoding of x86-64 instruction bytes (capstone) into what a trace record needs: op class, registers read and
// written on smtlab's register file, branch kind and direct target. Used by the raw-stream decoder, once per distinct
// instruction (cached by pc and bytes), never per dynamic instance.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "smtlab/trace/record.hpp"

namespace smtlab {

// Register ids the x86 mapping uses (docs/tracing.md): rax..r15 are r0..r15 in encoding order (rax rcx rdx rbx rsp
// rbp rsi rdi r8..r15), the flags are r16; xmm/ymm/zmm N are fN (0..31), x87 st(N) are f(32+N), mask kN are f(40+N).
inline constexpr RegId kX86FlagsReg = intReg(16);

struct X86Insn {
  Addr pc = 0;
  std::uint8_t length = 0;
  OpClass op = OpClass::Int;   // class when it touches no memory, or a computing op with memory operands
  BranchKind branch = BranchKind::None;
  bool isMove = false;         // pure data movement: Load when it loads, Store when it only stores
  bool isRep = false;          // rep/repe/repne-prefixed string op (one dynamic record per iteration)
  bool valid = true;           // false: capstone could not decode the bytes (kept as an Int with no registers)
  Addr target = 0;             // direct branch target, 0 if indirect or not a branch
  std::array<RegId, kMaxSrcRegs> src{kNoReg, kNoReg, kNoReg, kNoReg};
  std::array<RegId, kMaxDstRegs> dst{kNoReg, kNoReg};
  std::string text;            // "mnemonic operands", for tests and messages
  // Uops of the instruction form (docs/tracing.md "Uops per instruction"): the unfused-domain count of
  // the reference table, and whether the microcode sequencer delivers them. 0: not known (undecodable bytes).
  std::uint8_t uops = 0;
  bool microcoded = false;
};

// Building a trace record from a decoded instruction, shared by the user-mode and the system-mode decoders.
// addAccess adds one memory access; contiguous pieces of one wide access (QEMU splits 16/32-byte accesses into
// 8-byte ones) are merged back. False when every slot of its kind is taken (the caller counts it as dropped).
bool addAccess(Instr& r, bool store, Addr addr, std::uint8_t size);
// Sets the record's pc, registers, branch kind, op class, uop count and microcoded flag from the decoded instruction;
// a pure move becomes a Load or a Store by the accesses already added.
void applyDecoded(const X86Insn& d, Instr& r);

// True when this build can decode (compiled with capstone).
bool x86DecoderAvailable();

class X86Decoder {
 public:
  // Throws TraceError when smtlab was built without capstone.
  X86Decoder();
  ~X86Decoder();
  X86Decoder(const X86Decoder&) = delete;
  X86Decoder& operator=(const X86Decoder&) = delete;

  // Decodes one instruction at `pc` from its bytes.
  X86Insn decode(Addr pc, std::span<const std::uint8_t> bytes) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smtlab
