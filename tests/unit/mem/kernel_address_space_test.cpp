// The kernel half is one region shared by every address space (global pages); user addresses stay apart per asid.
// Expected latencies are worked out by hand on the small hierarchy of small_hierarchy.hpp (memory_system_test.cpp's).
#include <gtest/gtest.h>

#include "smtlab/mem/address_space.hpp"
#include "smtlab/mem/memory_system.hpp"

#include "small_hierarchy.hpp"

namespace smtlab {
namespace {

using test::kCore0;
constexpr ThreadId kThread0{0};
constexpr Addr kKernelLine = 0xffff'ffff'8100'0040ULL;  // a line of the kernel image (Linux: __START_KERNEL_map + ..)
constexpr Addr kKernelStack = 0xffff'c900'0001'3f80ULL;  // a vmalloc'ed kernel stack line
constexpr Addr kUserLine = 0x0000'5555'5555'4040ULL;     // a line of a PIE program's text

using test::kDram;
using test::kL1d;
using test::kL1i;
using test::kLlc;
using test::kWalk;
using test::smallConfig;

TEST(KernelAddressSpace, KernelHalfIsTheSameForEveryAsid) {
  for (const std::uint32_t a : {0u, 1u, 2u, 7u, 0xfffeu, 0xffffu, 0x10000u, 0xffff'ffffu}) {
    EXPECT_EQ(physicalAddress(Asid{a}, kKernelLine), kKernelLine) << "asid " << a;
    EXPECT_EQ(physicalAddress(Asid{a}, kKernelStack), kKernelStack) << "asid " << a;
    EXPECT_EQ(physicalAddress(Asid{a}, kKernelHalfBase), kKernelHalfBase) << "asid " << a;
  }
  // The last user-half address is not global: it moves with the asid like any user address.
  EXPECT_NE(physicalAddress(Asid{1}, 0x0000'7fff'ffff'f000ULL), physicalAddress(Asid{2}, 0x0000'7fff'ffff'f000ULL));
}

TEST(KernelAddressSpace, NoUserAddressOfAnyAsidReachesTheKernelHalf) {
  // User addresses' bits 48..63 are asid mod 0xffff (0..0xfffe), the kernel half's are 0xffff.
  for (const std::uint32_t a : {0u, 1u, 0xfffeu, 0xffffu, 0x1fffeu, 0x1ffffu, 0xffff'ffffu}) {
    for (const Addr v : {Addr{0}, kUserLine, Addr{0x0000'7fff'ffff'ffc0ULL}}) {
      const Addr p = physicalAddress(Asid{a}, v);
      EXPECT_NE(p >> 48, 0xffffu) << "asid " << a << " addr " << v;
      EXPECT_EQ(p >> 48, a % 0xffffu) << "asid " << a;
      EXPECT_EQ(p & 0xfff, v & 0xfff);  // page offsets survive
    }
  }
}

TEST(KernelAddressSpace, KernelLineFromTwoAsidsIsOneCacheLineAndOneTlbEntry) {
  MemorySystem mem(smallConfig(), 1, 2);
  // Process 1 touches the kernel line cold: DTLB walk, then LLC miss to DRAM.
  const MemResult first = mem.load(kCore0, Asid{1}, kKernelLine, 8, Cycle{100});
  EXPECT_EQ(first.ready, Cycle{100 + kWalk + kLlc + kDram});
  EXPECT_TRUE(first.tlbMiss);
  // Process 2 (another asid, e.g. after a context switch) touches the same kernel line: L1 hit, TLB hit.
  const MemResult second = mem.load(kCore0, Asid{2}, kKernelLine, 8, Cycle{1000});
  EXPECT_EQ(second.ready, Cycle{1000 + kL1d});
  EXPECT_EQ(second.level, MemLevel::L1);
  EXPECT_FALSE(second.tlbMiss);
  EXPECT_EQ(mem.l1dStats(kCore0).misses, 1u);
  EXPECT_EQ(mem.dramStats().reads, 1u);
}

TEST(KernelAddressSpace, KernelCodeFetchedByTwoAsidsIsOneLine) {
  MemorySystem mem(smallConfig(), 1, 2);
  const MemResult first = mem.fetch(kCore0, kThread0, Asid{1}, kKernelLine, Cycle{100});
  EXPECT_EQ(first.ready, Cycle{100 + kWalk + kLlc + kDram});
  // The same logical CPU runs another process's system call: the kernel text line and its ITLB entry are still there.
  const MemResult second = mem.fetch(kCore0, kThread0, Asid{2}, kKernelLine, Cycle{1000});
  EXPECT_EQ(second.ready, Cycle{1000 + kL1i});
  EXPECT_FALSE(second.tlbMiss);
}

TEST(KernelAddressSpace, UserLinesOfTwoAsidsStayApart) {
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, Asid{1}, kUserLine, 8, Cycle{100});
  // The same virtual line of another process is another physical line on another page: a walk and a DRAM access.
  const MemResult other = mem.load(kCore0, Asid{2}, kUserLine, 8, Cycle{1000});
  EXPECT_EQ(other.ready, Cycle{1000 + kWalk + kLlc + kDram});
  EXPECT_EQ(other.level, MemLevel::Dram);
  EXPECT_TRUE(other.tlbMiss);
  EXPECT_EQ(mem.dramStats().reads, 2u);
  // ... while process 1's own line is still an L1 hit.
  const MemResult own = mem.load(kCore0, Asid{1}, kUserLine, 8, Cycle{2000});
  EXPECT_EQ(own.ready, Cycle{2000 + kL1d});
}

}  // namespace
}  // namespace smtlab
