// The decoder's view of an instruction (issue 10 §2): which uops it becomes and which unit class each needs.
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
  UopPlan decode(const Instr& in) const;

 private:
  std::array<std::uint8_t, kOpClassCount> opUops_{};  // uops of the op part, per op class (config, copied)
  bool microFusion_ = false;                           // core.micro_fusion (uopwindow)
};

}  // namespace smtlab
