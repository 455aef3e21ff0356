// The functional-unit kinds an instruction's operation needs (latency, pipelining, microcode length and energy per
// operation). kFuKindTable is the one list: each kind's config name (core.fu.<name>, energy.<name>_nj), docs and the
// config members it reads, so the decoder, the energy model and the config keys derive from it.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "smtlab/common/enum_table.hpp"
#include "smtlab/config/config.hpp"

namespace smtlab {

enum class FuKind : std::uint8_t { IntAlu, IntMul, IntDiv, FpAdd, FpMul, FpDiv, Load, Store, None };

struct FuKindInfo {
  FuKind value;
  std::string_view name;        // core.fu.<name>, energy.<name>_nj
  std::string_view doc;         // what the unit does (key docs: "<doc>: ...")
  std::string_view latencyDoc;  // the doc of core.fu.<name>.latency
  FuConfig FuSetConfig::* config;
  double EnergyConfig::* energyNj;
};

// None (nop, pause, mark) uses no unit and has no row.
inline constexpr std::array<FuKindInfo, 8> kFuKindTable{{
    {FuKind::IntAlu, "int_alu", "integer ALU", "integer ALU op latency, cycles from issue to result",
     &FuSetConfig::int_alu, &EnergyConfig::int_alu_nj},
    {FuKind::IntMul, "int_mul", "integer multiply", "integer multiply latency, cycles", &FuSetConfig::int_mul,
     &EnergyConfig::int_mul_nj},
    {FuKind::IntDiv, "int_div", "integer divide", "integer divide latency, cycles", &FuSetConfig::int_div,
     &EnergyConfig::int_div_nj},
    {FuKind::FpAdd, "fp_add", "FP add", "FP/SIMD add latency, cycles", &FuSetConfig::fp_add, &EnergyConfig::fp_add_nj},
    {FuKind::FpMul, "fp_mul", "FP multiply", "FP/SIMD multiply latency, cycles", &FuSetConfig::fp_mul,
     &EnergyConfig::fp_mul_nj},
    {FuKind::FpDiv, "fp_div", "FP divide", "FP divide/sqrt latency, cycles", &FuSetConfig::fp_div,
     &EnergyConfig::fp_div_nj},
    {FuKind::Load, "load", "load (AGU)",
     "address-generation cycles before the L1D access (the cache latency comes on top)", &FuSetConfig::load,
     &EnergyConfig::load_nj},
    {FuKind::Store, "store", "store (AGU + data)", "cycles until a store's address and data are ready",
     &FuSetConfig::store, &EnergyConfig::store_nj},
}};
static_assert(inEnumOrder(kFuKindTable), "kFuKindTable: one row per FuKind but None, in enum order");
inline constexpr int kFuKinds = static_cast<int>(kFuKindTable.size());  // None uses no unit
static_assert(static_cast<int>(FuKind::None) == kFuKinds, "FuKind::None comes after every kind with a unit");

inline const FuConfig& fuConfig(const CoreConfig& core, FuKind kind) {
  return core.fu.*(kFuKindTable[static_cast<int>(kind)].config);
}

}  // namespace smtlab
