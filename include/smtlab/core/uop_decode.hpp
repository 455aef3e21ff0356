// The decoder's view of an instruction: which uops it becomes and which unit class each needs.
// Load-op = load + op; store = store-address + store-data; read-modify-write = load + op + STA + STD; pure load, ALU
// and branch = 1 uop; divides and other microcoded forms = a sequence whose length comes from the preset
// (core.fu.<class>.uops) unless the trace recorded the decoder's own count (Instr::uops, Instr::microcoded).
#pragma once

#include <array>
#include <cstdint>

#include "smtlab/config/config.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/trace/record.hpp"

namespace smtlab {

// More uops than this come from the microcode sequencer (MS-ROM) rather than the decoders: Intel optimization
// manual 248966, "instructions with more than four uops" are sequenced from the microcode ROM (NetBurst: Hinton 2001;
// also Sandy Bridge onwards).
inline constexpr std::uint32_t kMaxDecoderUops = 4;

// The unit class an operation's op uop issues to, and its latency/energy class.
UnitClass unitClassFor(OpClass op);
FuKind fuKindFor(OpClass op);

class UopDecoder {
 public:
  explicit UopDecoder(const CoreConfig& core);
  // Inline: runs for every fetched instruction, and almost every one (all of a generator's, most of a trace's) has no
  // recorded uop count, so it is one table read; a plan built field by field costs several times that.
  UopPlan decode(const Instr& in) const {
    const std::size_t k = tableIndex(in.op, in.hasLoad(), in.hasStore());
    if (in.uops == 0) return byShape_[k];
    return withRecordedUops(k, in);
  }

 private:
  // An instruction's plan depends on its op class, whether it loads and whether it stores, and the uop count the trace
  // recorded (if any): the first three are looked up in a table made once here (decode runs for every fetched
  // instruction, so it must be cheap), the recorded count adjusts the entry.
  static std::size_t tableIndex(OpClass op, bool load, bool store) {
    return static_cast<std::size_t>(op) * 4 + (load ? 2 : 0) + (store ? 1 : 0);
  }
  // The plan of an instruction of this shape without a recorded uop count; its structural uops into structuralOut.
  UopPlan derive(OpClass op, bool load, bool store, std::uint8_t& structuralOut) const;
  std::uint32_t fusedPairs(const UopPlan& p) const;
  // decode() of an instruction whose uop count the trace recorded (table entry k adjusted).
  UopPlan withRecordedUops(std::size_t k, const Instr& in) const;

  std::array<std::uint8_t, kOpClassCount> opUops_{};  // uops of the op part, per op class (config, copied)
  // unitClassFor / fuKindFor per op class, looked up once here: decode runs for every fetched instruction, and the
  // two switches cost more than the rest of it.
  std::array<UnitClass, kOpClassCount> opClass_{};
  std::array<FuKind, kOpClassCount> opFu_{};
  bool microFusion_ = false;                           // core.micro_fusion (uopwindow)
  std::array<UopPlan, kOpClassCount * 4> byShape_{};
  std::array<std::uint8_t, kOpClassCount * 4> structural_{};  // load + op + STA + STD of each entry
};

}  // namespace smtlab
