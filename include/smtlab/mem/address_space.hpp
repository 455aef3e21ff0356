// How an address-space id turns a program's virtual address into the "physical" address the caches and TLBs see.
// Different processes never share lines; pages stay pages; a process's pages land on scattered cache sets, as a real
// OS's physical page allocation would place them.
#pragma once

#include <cstdint>

#include "smtlab/common/types.hpp"

namespace smtlab {

// A bijective 64-bit mixer (the splitmix64 finalizer); mixAsid(0) == 0.
constexpr std::uint64_t mixAsid(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline constexpr std::uint64_t kScatterMask = 0x0000'ffff'ffff'f000ULL;  // bits 12..47

// physical = virtual XOR (hash(asid) in bits 12..47) XOR ((asid mod 2^16) in bits 48..63).
// - Bits 0..11 are unchanged, so a 4 KiB (or larger) virtual page maps onto one physical page.
// - Bits 12..47 are scrambled by a per-asid constant: two processes running the same program do not collide on the
//   same cache sets line for line (a physically indexed cache would not see that either).
// - Bits 48..63 carry the asid: for user-space addresses (below 2^48) two asids that differ modulo 2^16 can never
//   produce the same physical address, so they never share a line or a TLB entry.
// Asid 0 is the identity mapping.
constexpr Addr physicalAddress(Asid asid, Addr addr) {
  return addr ^ (mixAsid(asid.value) & kScatterMask) ^ (std::uint64_t{asid.value & 0xffffU} << 48);
}

}  // namespace smtlab
