// The native format's record encoding, shared by its reader (native_format.cpp) and writer (native_writer.cpp):
// the flag bits, the version that introduced each, and the predictions both sides make. docs/traces.md gives the
// layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "smtlab/trace/record.hpp"

namespace smtlab::native {

// Record layout (docs/traces.md, "Native format"): flag byte F0, optional flag byte F1, then the optional parts in a
// fixed order. Every part is present only when it differs from what the decoder can predict.
inline constexpr unsigned kF0OpMask = 0x0f;
inline constexpr unsigned kF0Taken = 0x10;
inline constexpr unsigned kF0PcPredicted = 0x20;
inline constexpr unsigned kF0Regs = 0x40;
inline constexpr unsigned kF0HasF1 = 0x80;
inline constexpr unsigned kF1Target = 0x01;
inline constexpr unsigned kF1Load0 = 0x02;
inline constexpr unsigned kF1Load1 = 0x04;
inline constexpr unsigned kF1Store0 = 0x08;
// What each version changed in the records (version 4 changed only the zstd framing: kNativeFirstChecksumVersion).
inline constexpr std::uint32_t kFirstExtensionVersion = 2;  // the extension byte M: loads[2..3] and stores[1]
inline constexpr std::uint32_t kFirstUopVersion = 3;        // the uop count and microcoded flag, in M
inline constexpr unsigned kF1V1Store1 = 0x10;    // version 1: the second store
inline constexpr unsigned kF1MoreMemory = 0x10;  // version 2 on: an extension byte follows F1 (kMore*, kExt*)
inline constexpr unsigned kF1Mark = 0x20;
inline constexpr unsigned kF1Kind = 0x40;
inline constexpr unsigned kF1Sizes = 0x80;
inline constexpr unsigned kMoreLoad2 = 0x01;
inline constexpr unsigned kMoreLoad3 = 0x02;
inline constexpr unsigned kMoreStore1 = 0x04;
// Version 3 on: the decoder's uops in the same extension byte. A uop count that the rule below predicts
// costs one bit; any other count a byte at the end of the record; none (not recorded) nothing.
inline constexpr unsigned kExtUopsPredicted = 0x08;
inline constexpr unsigned kExtUopsByte = 0x10;
inline constexpr unsigned kExtMicrocoded = 0x20;
inline constexpr unsigned kV2ExtBits = kMoreLoad2 | kMoreLoad3 | kMoreStore1;
inline constexpr unsigned kV3ExtBits = kV2ExtBits | kExtUopsPredicted | kExtUopsByte | kExtMicrocoded;
// Memory slots in encoding order: loads 0..kMaxLoads-1, then stores.
inline constexpr int kMemSlots = kMaxLoads + kMaxStores;
static_assert(kMaxLoads == 4 && kMaxStores == 2, "the version-2 encoding has bits for 4 loads and 2 stores");
// Worst case of version 3: F0, F1, extension byte, pc varint (10), register mask and 6 ids, kind, target (10),
// 6 memory operands of varint (10) + size, mark id (5), uop count (1) = 103 bytes.
inline constexpr std::size_t kMaxRecordBytes = 104;
// The most bytes the decoder reads for one record, whatever the bytes are: as above, but with the mark id's varint
// read to the 10 bytes any varint may take before it is refused (a mark id above 32 bits is refused after reading).
// With this many bytes buffered the decoder reads a record without checking for the buffer's end.
inline constexpr std::size_t kMaxDecodeBytes = kMaxRecordBytes + 5;
// F0, F1, M; pc; register mask and ids; kind; target; memory operands; mark; uop count.
static_assert(kMaxDecodeBytes >= 3 + 10 + 7 + 1 + 10 + 6 * (10 + 1) + 10 + 1);
inline constexpr std::size_t kBufferBytes = 1 << 16;

inline std::uint64_t zigzag(std::uint64_t delta) {
  const auto s = static_cast<std::int64_t>(delta);
  return (static_cast<std::uint64_t>(s) << 1) ^ static_cast<std::uint64_t>(s >> 63);
}
inline std::uint64_t unzigzag(std::uint64_t z) { return (z >> 1) ^ (~(z & 1) + 1); }

inline void putVarint(std::vector<unsigned char>& b, std::uint64_t v) {
  while (v >= 0x80) {
    b.push_back(static_cast<unsigned char>(v | 0x80));
    v >>= 7;
  }
  b.push_back(static_cast<unsigned char>(v));
}

inline void putLe(unsigned char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline std::uint64_t getLe(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

// The pc the encoder expects next: the target after a taken branch, else the next 4-byte slot.
inline Addr guessNextPc(const Instr& in) { return in.taken && in.target != 0 ? in.target : in.pc + 4; }

// The uop count the encoder expects (version 3), so that the common forms cost one bit: the unfused-domain rule of
// docs/tracing.md (one uop for the work unless the op is a pure load or store, one per load, two per store:
// store-address + store-data). Only a compression guess: any other count is stored as a byte.
inline unsigned predictUops(OpClass op, unsigned loads, unsigned stores) {
  const unsigned n = (op == OpClass::Load || op == OpClass::Store ? 0 : 1) + loads + 2 * stores;
  return n == 0 ? 1 : n;
}
inline unsigned predictUops(const Instr& in) {
  unsigned loads = 0, stores = 0;
  for (const MemRef& m : in.loads) loads += m.valid() ? 1 : 0;
  for (const MemRef& m : in.stores) stores += m.valid() ? 1 : 0;
  return predictUops(in.op, loads, stores);
}


}  // namespace smtlab::native
