// A read-only store of instruction records in about a third of their memory: a record's fixed fields in 40 bytes,
// and only the memory operands it has, in side arrays. Recorded kernel-path instances are held this way (a long
// study run loads most of a recording's 55 M records, 128 bytes each as Instr). Lossless: get() returns exactly
// the record that was added.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "smtlab/trace/record.hpp"

namespace smtlab {

class PackedRecords {
 public:
  PackedRecords() = default;
  explicit PackedRecords(std::span<const Instr> records);

  std::size_t size() const { return fixed_.size(); }
  // Record i (i < size()).
  Instr get(std::size_t i) const;
  // Records [first, first + out.size()) into out.
  void copy(std::size_t first, std::span<Instr> out) const;
  // Every record, unpacked.
  std::vector<Instr> all() const;
  // Bytes held.
  std::size_t bytes() const;

 private:
  struct Fixed {
    Addr pc;
    Addr target;
    std::uint32_t markId;
    std::uint32_t memFirst;  // index of its first memory operand in addrs_ / sizes_
    std::array<RegId, kMaxSrcRegs> src;
    std::array<RegId, kMaxDstRegs> dst;
    OpClass op;
    BranchKind branch;
    std::uint8_t flags;    // bit 0 taken, bit 1 microcoded
    std::uint8_t uops;
    std::uint8_t memMask;  // bits 0..3: loads[k] present, bits 4..5: stores[k] present
  };
  static_assert(kMaxLoads + kMaxStores <= 8, "one byte of operand-present bits");
  std::vector<Fixed> fixed_;
  std::vector<Addr> addrs_;
  std::vector<std::uint8_t> sizes_;
};

}  // namespace smtlab
