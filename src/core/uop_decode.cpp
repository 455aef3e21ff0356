#include "smtlab/core/uop_decode.hpp"

#include <algorithm>

namespace smtlab {

UnitClass unitClassFor(OpClass op) {
  switch (op) {
    case OpClass::IMul:
      return UnitClass::IntMul;
    case OpClass::IDiv:
      return UnitClass::IntDiv;
    case OpClass::FAdd:
      return UnitClass::FpAdd;
    case OpClass::FMul:
      return UnitClass::FpMul;
    case OpClass::FDiv:
      return UnitClass::FpDiv;
    case OpClass::Load:
      return UnitClass::Load;
    case OpClass::Store:
      return UnitClass::StoreAddress;
    case OpClass::Branch:
    case OpClass::Jump:
    case OpClass::IndirectJump:
    case OpClass::Call:
    case OpClass::Return:
      return UnitClass::Branch;
    default:
      return UnitClass::IntAlu;
  }
}

FuKind fuKindFor(OpClass op) {
  switch (op) {
    case OpClass::IMul:
      return FuKind::IntMul;
    case OpClass::IDiv:
      return FuKind::IntDiv;
    case OpClass::FAdd:
      return FuKind::FpAdd;
    case OpClass::FMul:
      return FuKind::FpMul;
    case OpClass::FDiv:
      return FuKind::FpDiv;
    case OpClass::Load:
      return FuKind::Load;
    case OpClass::Store:
      return FuKind::Store;
    case OpClass::Nop:
    case OpClass::Mark:
    case OpClass::Pause:
      return FuKind::None;
    default:
      return FuKind::IntAlu;
  }
}

UopDecoder::UopDecoder(const CoreConfig& core) : microFusion_(core.micro_fusion) {
  for (int i = 0; i < kOpClassCount; ++i) {
    const auto op = static_cast<OpClass>(i);
    // Pure loads and stores are their memory uops (their core.fu.<kind>.uops is not read); nop/pause/mark one slot.
    const FuKind kind = fuKindFor(op);
    const bool fromConfig = kind != FuKind::None && kind != FuKind::Load && kind != FuKind::Store;
    const std::uint32_t n = fromConfig ? fuConfig(core, kind).uops : 1;
    opUops_[i] = static_cast<std::uint8_t>(std::clamp<std::uint32_t>(n, 1, 255));
    opClass_[i] = unitClassFor(op);
    opFu_[i] = kind;
  }
  for (int i = 0; i < kOpClassCount; ++i) {
    for (int mem = 0; mem < 4; ++mem) {
      const std::size_t k = tableIndex(static_cast<OpClass>(i), (mem & 2) != 0, (mem & 1) != 0);
      byShape_[k] = derive(static_cast<OpClass>(i), (mem & 2) != 0, (mem & 1) != 0, structural_[k]);
    }
  }
}

UopPlan UopDecoder::derive(OpClass op, bool load, bool store, std::uint8_t& structuralOut) const {
  UopPlan p;
  p.valid = true;
  p.load = load;
  p.storeAddress = p.storeData = store;
  const bool pureMemory = op == OpClass::Load || op == OpClass::Store;
  p.op = !pureMemory || (!p.load && !p.storeAddress);  // a "store" record without an address still takes a slot
  p.opClass = opClass_[static_cast<int>(op)];
  p.opFu = opFu_[static_cast<int>(op)];
  p.opNeedsPort = p.opFu != FuKind::None;
  if (p.op && pureMemory) {
    // A load/store op class without its memory operand: one plain integer uop (nothing to access).
    p.opClass = UnitClass::IntAlu;
    p.opFu = FuKind::IntAlu;
  }
  const std::uint32_t structural = p.load + p.op + p.storeAddress + p.storeData;
  const std::uint32_t opUops = p.op ? opUops_[static_cast<int>(op)] : 0;
  const std::uint32_t total = std::min<std::uint32_t>(structural + (opUops > 0 ? opUops - 1 : 0), 255);
  p.total = static_cast<std::uint8_t>(total);
  p.helpers = static_cast<std::uint8_t>(total - structural);
  p.microcoded = total > kMaxDecoderUops;
  p.fused = static_cast<std::uint8_t>(std::max<std::uint32_t>(1, total - fusedPairs(p)));
  structuralOut = static_cast<std::uint8_t>(structural);
  return p;
}

std::uint32_t UopDecoder::fusedPairs(const UopPlan& p) const {
  // Micro-fusion (Intel optimization manual 248966, "Micro-fusion"; Agner Fog's microarchitecture guide, from the
  // Pentium M on): a load-op's load + op and a store's STA + STD are one uop in the fused domain (decode, uop queue,
  // rename, ROB, retire) and two in the unfused domain (scheduler, ports). A read-modify-write is then 2 fused uops.
  if (!microFusion_) return 0;
  return (p.load && p.op ? 1u : 0u) + (p.storeAddress && p.storeData ? 1u : 0u);
}

UopPlan UopDecoder::withRecordedUops(std::size_t k, const Instr& in) const {
  UopPlan p = byShape_[k];
  // The decoder's own count, when the trace recorded it, overrides the derivation (never fewer uops than the
  // structural ones the scheduler needs: a fused count is unfused here).
  const std::uint32_t structural = structural_[k];
  const std::uint32_t total = std::max<std::uint32_t>(in.uops, structural);  // in.uops <= 255
  p.total = static_cast<std::uint8_t>(total);
  p.helpers = static_cast<std::uint8_t>(total - structural);
  p.microcoded = in.microcoded;
  p.fused = static_cast<std::uint8_t>(std::max<std::uint32_t>(1, total - fusedPairs(p)));
  return p;
}

}  // namespace smtlab
