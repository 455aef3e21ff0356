// How an address-space id turns a program's virtual address into the "physical" address the caches and TLBs see.
// Different processes never share user lines; pages stay pages; a process's pages land on scattered cache sets, as a
// real OS's physical page allocation would place them. The kernel half is one region every process maps the same
// (global pages), so kernel code and data are shared across address spaces as on real hardware.
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

// The kernel half of x86-64's 4-level-paging address space (canonical high addresses; Linux maps the kernel there and
// the kpath: traces recorded under qemu-system carry such addresses). Linux maps it identically in every process's
// page tables and marks the kernel image's pages global (they survive a CR3 switch), so one kernel line is one cache
// line and one TLB entry whichever process touches it.
inline constexpr Addr kKernelHalfBase = 0xffff'8000'0000'0000ULL;

// The asid tag of user addresses is asid mod kUserAsidTags (0..0xfffe): 0xffff in bits 48..63 is left to the kernel
// half, so no user address of any asid can land on a kernel line.
inline constexpr std::uint64_t kUserAsidTags = 0xffffU;

constexpr bool isKernelAddress(Addr addr) { return addr >= kKernelHalfBase; }

// Kernel half (addr >= kKernelHalfBase): physical = virtual for every asid (global).
// User addresses: physical = virtual XOR (hash(asid) in bits 12..47) XOR ((asid mod 0xffff) in bits 48..63).
// - Bits 0..11 are unchanged, so a 4 KiB (or larger) virtual page maps onto one physical page.
// - Bits 12..47 are scrambled by a per-asid constant: two processes running the same program do not collide on the
//   same cache sets line for line (a physically indexed cache would not see that either).
// - Bits 48..63 carry the asid: for user-space addresses (below 2^48) two asids that differ modulo 0xffff can never
//   produce the same physical address, so they never share a line or a TLB entry; nor can they reach the kernel
//   half, whose bits 48..63 are 0xffff. (Non-canonical addresses between 2^48 and the kernel half do not occur on
//   x86-64; they are mapped like user addresses.)
// Asid 0 is the identity mapping.
constexpr Addr physicalAddress(Asid asid, Addr addr) {
  if (isKernelAddress(addr)) return addr;
  return addr ^ (mixAsid(asid.value) & kScatterMask) ^ ((std::uint64_t{asid.value} % kUserAsidTags) << 48);
}

}  // namespace smtlab
