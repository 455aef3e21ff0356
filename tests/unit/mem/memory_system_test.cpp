// Memory hierarchy timing and state, checked against latencies worked out by hand on a small configuration.
#include "smtlab/mem/memory_system.hpp"

#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"
#include "smtlab/mem/address_space.hpp"

#include "small_hierarchy.hpp"

namespace smtlab {
namespace {

constexpr CoreId kCore1{1};
constexpr Asid kAsid0{0};
constexpr std::uint64_t kL1 = test::kL1d;
using test::kCore0;
using test::kDram;
using test::kL2;
using test::kLlc;
using test::kWalk;
using test::smallConfig;

Cycle at(std::uint64_t c) { return Cycle{c}; }

TEST(MemorySystem, L1HitCostsL1Latency) {
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x1000, 8, at(0));
  const MemResult r = mem.load(kCore0, kAsid0, 0x1008, 8, at(1000));
  EXPECT_EQ(r.ready, at(1000 + kL1));
  EXPECT_EQ(r.level, MemLevel::L1);
  EXPECT_FALSE(r.tlbMiss);
  EXPECT_EQ(mem.l1dStats(kCore0).accesses, 2u);
  EXPECT_EQ(mem.l1dStats(kCore0).misses, 1u);
}

TEST(MemorySystem, ColdLineWithColdTlbCostsWalkPlusLlcPlusDram) {
  MemorySystem mem(smallConfig(), 1, 2);
  const MemResult r = mem.load(kCore0, kAsid0, 0x1000, 8, at(100));
  EXPECT_EQ(r.ready, at(100 + kWalk + kLlc + kDram));
  EXPECT_EQ(r.level, MemLevel::Dram);
  EXPECT_TRUE(r.tlbMiss);
  EXPECT_EQ(mem.dramStats().reads, 1u);
}

TEST(MemorySystem, ColdLineWithWarmTlbCostsLlcPlusDram) {
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x1000, 8, at(0));                          // warms the page's DTLB entry
  const MemResult r = mem.load(kCore0, kAsid0, 0x1040, 8, at(1000));  // next line, same page
  EXPECT_EQ(r.ready, at(1000 + kLlc + kDram));
  EXPECT_EQ(r.level, MemLevel::Dram);
  EXPECT_FALSE(r.tlbMiss);
  EXPECT_EQ(mem.dtlbStats(kCore0).misses, 1u);
  EXPECT_EQ(mem.dtlbStats(kCore0).accesses, 2u);
}

TEST(MemorySystem, TlbMissCostsItsLatencyOncePerPage) {
  MemorySystem mem(smallConfig(), 1, 2);
  EXPECT_TRUE(mem.load(kCore0, kAsid0, 0x5000, 8, at(0)).tlbMiss);
  EXPECT_FALSE(mem.load(kCore0, kAsid0, 0x5f00, 8, at(1000)).tlbMiss);  // same page
  EXPECT_FALSE(mem.store(kCore0, kAsid0, 0x5800, 8, at(2000)).tlbMiss);
  const MemResult other = mem.load(kCore0, kAsid0, 0x6000, 8, at(3000));  // next page, cold line
  EXPECT_TRUE(other.tlbMiss);
  EXPECT_EQ(other.ready, at(3000 + kWalk + kLlc + kDram));
  EXPECT_EQ(mem.dtlbStats(kCore0).misses, 2u);
}

TEST(MemorySystem, AccessToLineInFlightGetsItsReadyCycleAndCountsAMerge) {
  MemorySystem mem(smallConfig(), 1, 2);
  const MemResult first = mem.load(kCore0, kAsid0, 0x1000, 8, at(0));
  ASSERT_EQ(first.ready, at(kWalk + kLlc + kDram));  // 270
  const MemResult merged = mem.load(kCore0, kAsid0, 0x1010, 8, at(5));  // waits for the walk in progress, then merges
  EXPECT_EQ(merged.ready, first.ready);
  EXPECT_EQ(merged.level, MemLevel::Dram);
  EXPECT_EQ(mem.l1dStats(kCore0).mshrMerges, 1u);
  EXPECT_EQ(mem.l2Stats(kCore0).accesses, 1u);  // the merge did not go below L1
  EXPECT_EQ(mem.dtlbStats(kCore0).misses, 1u);   // nor start a second walk
  // Data arriving within the hit latency is an ordinary hit.
  const MemResult late = mem.load(kCore0, kAsid0, 0x1000, 8, at(first.ready.value - 2));
  EXPECT_EQ(late.ready, at(first.ready.value - 2 + kL1));
  EXPECT_EQ(late.level, MemLevel::L1);
  EXPECT_EQ(mem.l1dStats(kCore0).mshrMerges, 1u);
}

TEST(MemorySystem, FootprintThatFitsL1HasNoMissesAfterWarmup) {
  MemorySystem mem(smallConfig(), 1, 2);
  std::uint64_t t = 0;
  for (int pass = 0; pass < 10; ++pass) {
    for (Addr a = 0; a < 1024; a += 64, t += 1000) mem.load(kCore0, kAsid0, a, 8, at(t));
  }
  EXPECT_EQ(mem.l1dStats(kCore0).accesses, 160u);
  EXPECT_EQ(mem.l1dStats(kCore0).misses, 16u);  // the first pass only
}

TEST(MemorySystem, CyclicSweepOfTwiceL1MissesL1AndHitsL2) {
  MemorySystem mem(smallConfig(), 1, 2);
  std::uint64_t t = 0;
  for (Addr a = 0; a < 2048; a += 64, t += 1000) mem.load(kCore0, kAsid0, a, 8, at(t));  // warm-up pass
  const CacheStats l1 = mem.l1dStats(kCore0);
  const CacheStats l2 = mem.l2Stats(kCore0);
  for (int pass = 0; pass < 3; ++pass) {
    for (Addr a = 0; a < 2048; a += 64, t += 1000) {
      const MemResult r = mem.load(kCore0, kAsid0, a, 8, at(t));
      ASSERT_EQ(r.level, MemLevel::L2) << "address " << a;
      ASSERT_EQ(r.ready, at(t + kL2));
    }
  }
  // LRU with 4 lines cycling through each 2-way L1 set evicts every line just before its reuse.
  EXPECT_EQ(mem.l1dStats(kCore0).misses - l1.misses, 3u * 32u);
  EXPECT_EQ(mem.l2Stats(kCore0).misses - l2.misses, 0u);
  EXPECT_EQ(mem.l2Stats(kCore0).accesses - l2.accesses, 3u * 32u);
}

TEST(MemorySystem, MissesBeyondMshrsWaitForTheFirstToComplete) {
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x0, 8, at(0));  // warm the TLB
  const std::uint64_t t = 1000;
  Cycle ready[5];
  for (int i = 0; i < 5; ++i) ready[i] = mem.load(kCore0, kAsid0, 0x40 * (i + 1), 8, at(t)).ready;
  // The first four get the four L1D MSHRs and stream out of DRAM one transfer (8 cycles) apart.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ready[i], at(t + kLlc + kDram + 8 * i)) << i;
  EXPECT_EQ(mem.outstandingMisses(kCore0, at(t + 1)), 4u);
  // The fifth leaves L1 only when the first MSHR frees up, then pays the whole way down again.
  EXPECT_EQ(ready[4], at(ready[0].value + kLlc + kDram));
  EXPECT_EQ(mem.l1dStats(kCore0).mshrFullCycles, ready[0] - at(t));
  EXPECT_EQ(mem.outstandingMisses(kCore0, ready[3]), 1u);
  EXPECT_EQ(mem.outstandingMisses(kCore0, ready[4]), 0u);
}

MemConfig wideMshrConfig(double bytesPerCycle) {
  MemConfig c = smallConfig();
  c.l1d.mshrs = 16;
  c.l2.mshrs = 16;
  c.llc.mshrs = 32;
  c.dram.bytes_per_cycle = bytesPerCycle;
  return c;
}

TEST(MemorySystem, DramBandwidthSpacesBackToBackMisses) {
  MemorySystem mem(wideMshrConfig(2.0), 1, 2);  // 64 B / 2 B per cycle = 32 cycles per line
  mem.load(kCore0, kAsid0, 0x0, 8, at(0));
  const std::uint64_t t = 1000;
  for (int i = 0; i < 8; ++i) {
    const MemResult r = mem.load(kCore0, kAsid0, 0x40 * (i + 1), 8, at(t));
    EXPECT_EQ(r.ready, at(t + kLlc + kDram + 32 * i)) << i;
  }
  EXPECT_EQ(mem.dramStats().queueCycles, 32u * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7));
}

TEST(MemorySystem, DramBandwidthKeepsFractionalTransferTimes) {
  MemorySystem mem(wideMshrConfig(3.0), 1, 2);  // 21 1/3 cycles per line: three lines take exactly 64 cycles
  mem.load(kCore0, kAsid0, 0x0, 8, at(0));
  const std::uint64_t t = 1000;
  Cycle ready[4];
  for (int i = 0; i < 4; ++i) ready[i] = mem.load(kCore0, kAsid0, 0x40 * (i + 1), 8, at(t)).ready;
  EXPECT_EQ(ready[0], at(t + kLlc + kDram));
  EXPECT_EQ(ready[3] - ready[0], 64u);
  EXPECT_EQ(ready[1] - ready[0], 22u);  // 21.33 rounded up to the next whole cycle
}

TEST(MemorySystem, DifferentAsidsDoNotShareLines) {
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, Asid{1}, 0x1000, 8, at(0));
  const MemResult other = mem.load(kCore0, Asid{2}, 0x1000, 8, at(1000));
  EXPECT_EQ(other.level, MemLevel::Dram);
  EXPECT_TRUE(other.tlbMiss);
  EXPECT_EQ(other.ready, at(1000 + kWalk + kLlc + kDram));
  const MemResult same = mem.load(kCore0, Asid{1}, 0x1000, 8, at(2000));
  EXPECT_EQ(same.level, MemLevel::L1);
  EXPECT_FALSE(same.tlbMiss);
}

TEST(MemorySystem, LlcIsSharedBetweenCoresOfOneAddressSpace) {
  MemorySystem mem(smallConfig(), 2, 2);
  mem.load(kCore0, Asid{7}, 0x1000, 8, at(0));
  const MemResult r = mem.load(kCore1, Asid{7}, 0x1000, 8, at(1000));
  EXPECT_EQ(r.level, MemLevel::LLC);
  EXPECT_TRUE(r.tlbMiss);  // core 1 has its own DTLB
  EXPECT_EQ(r.ready, at(1000 + kWalk + kLlc));
  const MemResult warm = mem.load(kCore1, Asid{7}, 0x1040, 8, at(2000));  // cold in the LLC too
  EXPECT_EQ(warm.level, MemLevel::Dram);
  EXPECT_EQ(mem.llcStats().misses, 2u);
  EXPECT_EQ(mem.l1dStats(kCore1).misses, 2u);
}

TEST(MemorySystem, DirtyEvictionsAreWrittenBack) {
  MemorySystem mem(smallConfig(), 1, 2);
  // Lines 0, 16, 32, 48, 64 all fall in L1 set 0 (8 sets) and L2 set 0 (16 sets).
  std::uint64_t t = 0;
  for (int i = 0; i < 5; ++i, t += 1000) mem.store(kCore0, kAsid0, 0x40 * 16 * i, 8, at(t));
  // 2-way L1: the stores to lines 32, 48 and 64 evict dirty lines 0, 16 and 32.
  EXPECT_EQ(mem.l1dStats(kCore0).writebacks, 3u);
  // 4-way L2: line 64 evicts line 0, made dirty there by the L1 writeback.
  EXPECT_EQ(mem.l2Stats(kCore0).writebacks, 1u);
  EXPECT_EQ(mem.dramStats().writes, 0u);  // the LLC still holds line 0 and absorbs it
}

TEST(MemorySystem, CleanEvictionsAreNotWrittenBack) {
  MemorySystem mem(smallConfig(), 1, 2);
  std::uint64_t t = 0;
  for (int i = 0; i < 5; ++i, t += 1000) mem.load(kCore0, kAsid0, 0x40 * 16 * i, 8, at(t));
  EXPECT_EQ(mem.l1dStats(kCore0).writebacks, 0u);
  EXPECT_EQ(mem.l2Stats(kCore0).writebacks, 0u);
}

TEST(MemorySystem, DirtyLinesMissingBelowReachDram) {
  MemConfig c = smallConfig();
  c.l2 = CacheConfig{1, 2, 12, 8};  // 8 sets, 2 ways like the L1: L2 and LLC drop a line when the L1 does
  c.llc = CacheConfig{1, 2, 40, 16};
  MemorySystem mem(c, 1, 2);
  std::uint64_t t = 0;
  for (int i = 0; i < 3; ++i, t += 1000) mem.store(kCore0, kAsid0, 0x40 * 8 * i, 8, at(t));
  // Third store evicts dirty line 0 from L1; L2 and LLC (2-way, same sets) evicted clean line 0 too: it goes to DRAM.
  EXPECT_EQ(mem.l1dStats(kCore0).writebacks, 1u);
  EXPECT_EQ(mem.dramStats().writes, 1u);
}

TEST(MemorySystem, LoadAcrossALineBoundaryTouchesBothLines) {
  MemorySystem mem(smallConfig(), 1, 2);
  const MemResult r = mem.load(kCore0, kAsid0, 0x103c, 8, at(0));
  EXPECT_EQ(mem.l1dStats(kCore0).accesses, 2u);
  EXPECT_EQ(mem.dramStats().reads, 2u);
  // Both lines leave for DRAM at cycle 70; the second transfer follows the first by 8 cycles.
  EXPECT_EQ(r.ready, at(kWalk + kLlc + kDram + 8));
  EXPECT_EQ(mem.load(kCore0, kAsid0, 0x1040, 4, at(1000)).level, MemLevel::L1);
}

TEST(MemorySystem, LoadAcrossAPageBoundaryTranslatesBothPages) {
  MemorySystem mem(smallConfig(), 1, 2);
  const MemResult r = mem.load(kCore0, kAsid0, 0x1ffc, 8, at(0));
  EXPECT_TRUE(r.tlbMiss);
  EXPECT_EQ(mem.dtlbStats(kCore0).misses, 2u);
  EXPECT_EQ(r.ready, at(kWalk + kLlc + kDram + 8));
}

TEST(MemorySystem, ThreadTaggedL1iGivesEachThreadItsOwnCopyOfALine) {
  // mem.l1i_thread_tagged (NetBurst's trace cache: a trace line carries its logical processor's id). Thread 0 fills
  // the line from DRAM; thread 1 fetching the same line then misses the L1I and finds it in the L2, which thread 0's
  // miss filled: walk + L2 latency. After that each thread hits its own copy (walk paid once per ITLB).
  MemConfig c = smallConfig();
  c.l1i_thread_tagged = true;
  MemorySystem mem(c, 1, 2);
  EXPECT_EQ(mem.fetch(kCore0, ThreadId{0}, kAsid0, 0x400000, at(0)).ready, at(kWalk + kLlc + kDram));
  const MemResult sibling = mem.fetch(kCore0, ThreadId{1}, kAsid0, 0x400010, at(1000));
  EXPECT_EQ(sibling.level, MemLevel::L2);
  EXPECT_EQ(sibling.ready, at(1000 + kWalk + kL2));
  EXPECT_EQ(mem.fetch(kCore0, ThreadId{0}, kAsid0, 0x400020, at(2000)).ready, at(2000 + 1));
  EXPECT_EQ(mem.fetch(kCore0, ThreadId{1}, kAsid0, 0x400030, at(2000)).ready, at(2000 + 1));
  EXPECT_EQ(mem.l1iStats(kCore0).misses, 2u);
  EXPECT_EQ(mem.l2Stats(kCore0).misses, 1u);  // the L2 is asked for the real line, which it holds once
}

TEST(MemorySystem, PrefetchedCodeWaitsInTheStreamingBufferNotTheL1i) {
  // core.fetch_prefetch's reads (prefetchCode): the line comes from the L2 (warmed here by a data load of the same
  // physical line: walk + LLC + DRAM at cycle 0) at the L2's latency plus the ITLB walk, and is not put in the L1I:
  // the trace cache holds a line only once it is built. Reaching it (fetchStreamed) counts an L1I access and miss
  // with no request below, returns the buffer's ready cycle, and fills the L1I: the next fetch hits.
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x400000, 8, at(0));
  const std::uint64_t l2Accesses = mem.l2Stats(kCore0).accesses;
  const MemResult p = mem.prefetchCode(kCore0, ThreadId{0}, kAsid0, 0x400000, at(1000));
  EXPECT_EQ(p.ready, at(1000 + kWalk + kL2));
  EXPECT_EQ(p.level, MemLevel::L2);
  EXPECT_EQ(mem.l2Stats(kCore0).accesses, l2Accesses + 1);
  EXPECT_EQ(mem.l1iStats(kCore0).accesses, 0u);  // the L1I was looked into, not accessed
  const MemResult s = mem.fetchStreamed(kCore0, ThreadId{0}, kAsid0, 0x400010, p.ready, p.level);
  EXPECT_EQ(s.ready, p.ready);
  EXPECT_EQ(mem.l1iStats(kCore0).accesses, 1u);
  EXPECT_EQ(mem.l1iStats(kCore0).misses, 1u);
  EXPECT_EQ(mem.l2Stats(kCore0).accesses, l2Accesses + 1);  // nothing more from the L2
  EXPECT_EQ(mem.fetch(kCore0, ThreadId{0}, kAsid0, 0x400020, at(2000)).ready, at(2000 + kL1i));
  // A line the L1I holds is not read again: level L1, no L2 access.
  EXPECT_EQ(mem.prefetchCode(kCore0, ThreadId{0}, kAsid0, 0x400000, at(3000)).level, MemLevel::L1);
  EXPECT_EQ(mem.l2Stats(kCore0).accesses, l2Accesses + 1);
}

TEST(MemorySystem, PrefetchedCodeIsNotAHitForAFetchThatDidNotReadItsBuffer) {
  // A prefetched line the thread never took from its buffer (dropped on a redirect) is not in the L1I: a plain fetch
  // of it misses the L1I and reads the L2 again (ITLB warm by then: the L2's latency alone).
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x400000, 8, at(0));
  mem.prefetchCode(kCore0, ThreadId{0}, kAsid0, 0x400000, at(1000));
  const MemResult f = mem.fetch(kCore0, ThreadId{0}, kAsid0, 0x400000, at(2000));
  EXPECT_EQ(f.level, MemLevel::L2);
  EXPECT_EQ(f.ready, at(2000 + kL2));
}

TEST(MemorySystem, ThreadTaggedCopiesShareTheSetsWays) {
  // The tag leaves the set index alone: the L1I has 8 sets of 2 ways, so lines 512 B apart share a set. Thread 0's
  // and thread 1's copies of line A fill both ways; thread 0 then fetches line B of the same set, which evicts the
  // least recently used copy (thread 0's A): thread 0's A misses again (to the L2), thread 1's A still hits.
  MemConfig c = smallConfig();
  c.l1i_thread_tagged = true;
  MemorySystem mem(c, 1, 2);
  const Addr a = 0x400000, b = a + 8 * 64;
  mem.fetch(kCore0, ThreadId{0}, kAsid0, a, at(0));
  mem.fetch(kCore0, ThreadId{1}, kAsid0, a, at(1000));
  mem.fetch(kCore0, ThreadId{0}, kAsid0, b, at(2000));
  EXPECT_EQ(mem.fetch(kCore0, ThreadId{1}, kAsid0, a, at(3000)).level, MemLevel::L1);
  EXPECT_EQ(mem.fetch(kCore0, ThreadId{0}, kAsid0, a, at(4000)).level, MemLevel::L2);
}

TEST(MemorySystem, FetchUsesPerThreadItlbAndSharedL1i) {
  MemorySystem mem(smallConfig(), 1, 2);
  const MemResult cold = mem.fetch(kCore0, ThreadId{0}, kAsid0, 0x400000, at(0));
  EXPECT_EQ(cold.ready, at(kWalk + kLlc + kDram));
  EXPECT_TRUE(cold.tlbMiss);
  const MemResult sibling = mem.fetch(kCore0, ThreadId{1}, kAsid0, 0x400010, at(1000));
  EXPECT_TRUE(sibling.tlbMiss);  // the ITLB is replicated
  EXPECT_EQ(sibling.level, MemLevel::L1);
  EXPECT_EQ(sibling.ready, at(1000 + kWalk + 1));  // L1I latency 1
  EXPECT_EQ(mem.itlbStats(kCore0, ThreadId{0}).misses, 1u);
  EXPECT_EQ(mem.itlbStats(kCore0, ThreadId{1}).misses, 1u);
  EXPECT_EQ(mem.l1iStats(kCore0).misses, 1u);
  EXPECT_EQ(mem.l1dStats(kCore0).accesses, 0u);
  // Code and data meet in the unified L2.
  const MemResult data = mem.load(kCore0, kAsid0, 0x400000, 8, at(2000));
  EXPECT_EQ(data.level, MemLevel::L2);
}

TEST(MemorySystem, NextLinePrefetchBringsTheNextLineIntoL2) {
  MemConfig c = smallConfig();
  c.next_line_prefetch = true;
  MemorySystem mem(c, 1, 2);
  mem.load(kCore0, kAsid0, 0x1000, 8, at(0));
  EXPECT_EQ(mem.l2Stats(kCore0).prefetches, 1u);
  const MemResult next = mem.load(kCore0, kAsid0, 0x1040, 8, at(1000));
  EXPECT_EQ(next.level, MemLevel::L2);
  EXPECT_EQ(next.ready, at(1000 + kL2));
  EXPECT_EQ(mem.l2Stats(kCore0).prefetches, 1u);  // an L2 hit does not prefetch
  // The last line of a page does not prefetch into the next page.
  mem.load(kCore0, kAsid0, 0x1fc0, 8, at(2000));
  EXPECT_EQ(mem.l2Stats(kCore0).prefetches, 1u);
  EXPECT_EQ(mem.load(kCore0, kAsid0, 0x2000, 8, at(3000)).level, MemLevel::Dram);  // was not prefetched
  EXPECT_EQ(mem.l2Stats(kCore0).prefetches, 2u);                                    // this miss prefetches 0x2040
  EXPECT_EQ(mem.load(kCore0, kAsid0, 0x2040, 8, at(4000)).level, MemLevel::L2);
}

TEST(MemorySystem, NoPrefetchWhenDisabled) {
  MemorySystem mem(smallConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x1000, 8, at(0));
  EXPECT_EQ(mem.l2Stats(kCore0).prefetches, 0u);
  EXPECT_EQ(mem.load(kCore0, kAsid0, 0x1040, 8, at(1000)).level, MemLevel::Dram);
}

TEST(MemorySystem, BadGeometryIsAConfigErrorNamingTheKey) {
  MemConfig c = smallConfig();
  c.l1d = CacheConfig{48, 8, 4, 10};  // 96 sets
  try {
    MemorySystem mem(c, 1, 2);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mem.l1d.size_kb"), std::string::npos) << e.what();
  }
  MemConfig t = smallConfig();
  t.dtlb.entries = 12;  // 6 sets
  EXPECT_THROW(MemorySystem(t, 1, 2), ConfigError);
  MemConfig d = smallConfig();
  d.dram.bytes_per_cycle = 0.0;
  EXPECT_THROW(MemorySystem(d, 1, 2), ConfigError);
}

TEST(MemorySystem, OutOfRangeCoreOrThreadIsAUsageError) {
  MemorySystem mem(smallConfig(), 2, 2);
  EXPECT_THROW(mem.load(CoreId{2}, kAsid0, 0, 8, at(0)), UsageError);
  EXPECT_THROW(mem.fetch(kCore0, ThreadId{2}, kAsid0, 0, at(0)), UsageError);
}

TEST(AddressSpace, KeepsPageOffsetsAndSeparatesAsids) {
  EXPECT_EQ(physicalAddress(Asid{0}, 0x7fff'1234'5678ULL), 0x7fff'1234'5678ULL);
  for (std::uint32_t a = 1; a < 50; ++a) {
    const Addr p = physicalAddress(Asid{a}, 0x7fff'1234'5678ULL);
    EXPECT_EQ(p & 0xfff, 0x678u);
    EXPECT_NE(p, physicalAddress(Asid{a + 1}, 0x7fff'1234'5678ULL));
    EXPECT_EQ(p >> 48, a);  // the asid lives above the user address space
  }
}

// Write-through L1D (mem.l1d_write_through, NetBurst): stores do not allocate in the L1D and reach the L2 through the
// write-combining buffers.
MemConfig writeThroughConfig() {
  MemConfig c = smallConfig();
  c.l1d_write_through = true;
  c.wc_buffers = 6;
  c.wc_write_cycles = 2;
  return c;
}

TEST(MemorySystemWriteThrough, AStoreMissDoesNotBringItsLineIntoTheL1dButTheL2OwnsIt) {
  for (const bool writeThrough : {false, true}) {
    SCOPED_TRACE(writeThrough ? "write-through" : "write-back");
    MemorySystem mem(writeThrough ? writeThroughConfig() : smallConfig(), 1, 2);
    mem.load(kCore0, kAsid0, 0x1000, 8, at(0));  // warms the page's DTLB entry
    const MemResult st = mem.store(kCore0, kAsid0, 0x1040, 8, at(1000));  // next line: cold
    const MemResult ld = mem.load(kCore0, kAsid0, 0x1048, 8, at(2000));
    EXPECT_EQ(st.level, writeThrough ? MemLevel::L2 : MemLevel::Dram);
    if (writeThrough) {
      // In a free write-combining buffer at once; its request for ownership brought the line into the L2 (by
      // 1000 + LLC 40 + DRAM 200), not the L1D: the load misses the L1D and hits the L2.
      EXPECT_EQ(st.ready, at(1000));
      EXPECT_EQ(ld.level, MemLevel::L2);
      EXPECT_EQ(ld.ready, at(2000 + kL2));
      EXPECT_EQ(mem.writeCombiningStats(kCore0).writes, 1u);
    } else {
      // Write-allocate: the store's fill put the line in the L1D.
      EXPECT_EQ(st.ready, at(1000 + kLlc + kDram));
      EXPECT_EQ(ld.level, MemLevel::L1);
      EXPECT_EQ(ld.ready, at(2000 + kL1));
      EXPECT_EQ(mem.writeCombiningStats(kCore0).writes, 0u);
    }
    EXPECT_EQ(mem.l1dStats(kCore0).accesses, 3u);
    EXPECT_EQ(mem.l1dStats(kCore0).misses, writeThrough ? 3u : 2u);
    EXPECT_EQ(mem.l2Stats(kCore0).accesses, writeThrough ? 3u : 2u);  // the L2 saw the load after the store too
  }
}

TEST(MemorySystemWriteThrough, AStoreHitUpdatesTheL1dCopyAndIsInABufferAtOnce) {
  MemorySystem mem(writeThroughConfig(), 1, 2);
  mem.load(kCore0, kAsid0, 0x1000, 8, at(0));
  const MemResult st = mem.store(kCore0, kAsid0, 0x1008, 8, at(1000));
  EXPECT_EQ(st.level, MemLevel::L1);
  EXPECT_EQ(st.ready, at(1000));
  const MemResult ld = mem.load(kCore0, kAsid0, 0x1010, 8, at(2000));
  EXPECT_EQ(ld.level, MemLevel::L1);
  EXPECT_EQ(ld.ready, at(2000 + kL1));
}

TEST(MemorySystemWriteThrough, TheCoresThreadsShareItsBuffersAndEachCoreHasItsOwn) {
  // One buffer per core: two stores to different lines from the same core wait for each other (the first line is
  // owned at 1000 + L2 12, written 1012 .. 1014); the same stores on two cores do not.
  MemConfig c = writeThroughConfig();
  c.wc_buffers = 1;
  MemorySystem mem(c, 2, 2);
  for (const CoreId core : {kCore0, kCore1}) mem.load(core, kAsid0, 0x1000, 8, at(0));  // lines in each L2
  mem.load(kCore0, kAsid0, 0x1040, 8, at(0));
  mem.load(kCore1, kAsid0, 0x1040, 8, at(0));
  mem.store(kCore0, kAsid0, 0x1000, 8, at(1000));
  EXPECT_EQ(mem.store(kCore0, kAsid0, 0x1040, 8, at(1000)).ready, at(1000 + kL2 + 2));
  EXPECT_EQ(mem.store(kCore1, kAsid0, 0x1000, 8, at(1000)).ready, at(1000));
  EXPECT_EQ(mem.writeCombiningStats(kCore0).flushes, 1u);
  EXPECT_EQ(mem.writeCombiningStats(kCore1).flushes, 0u);
}

}  // namespace
}  // namespace smtlab
