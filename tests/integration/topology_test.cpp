// Machine topology, OS costs and page walks: a package has its own LLC; logical CPUs are numbered as
// docs/model.md "Topology" says; a TLB flush drops exactly one address space's entries; a page walk through the
// caches costs the sum of its loads. Every expected number is derived in the comments from the netburst preset.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "smtlab/mem/memory_system.hpp"
#include "smtlab/mem/page_walker.hpp"

namespace smtlab::test {
namespace {

// netburst (configs/netburst.toml): l1d 8 KB 4-way latency 2, l2 256 KB 8-way latency 18, llc 1 MB 8-way latency
// 32, dram latency 208, 2 bytes/cycle (a 64 B line occupies the channel 32 cycles), DTLB 64 entries fully
// associative, fixed walk 30 cycles. The next-line prefetch is switched off so that every DRAM read is a demand.
Config netburst() {
  Config c = loadConfig("netburst");
  c.mem.next_line_prefetch = false;
  return c;
}

// An idle-channel DRAM read from a cold hierarchy: the LLC finds the miss after its latency, DRAM adds its own
// (memory_system.cpp llcAccess): 32 + 208. The L1 and L2 latencies are totals of hits, not added on a miss.
constexpr std::uint64_t kColdLoad = 32 + 208;

constexpr std::uint64_t kLine = 64;
constexpr std::uint64_t kLlcLines = 1024 * 1024 / kLine;  // 16384

// --- packages -------------------------------------------------------------------------------------------------

TEST(Topology, ALineLoadedOnOnePackageMissesOnTheOther) {
  const Config c = netburst();
  for (const std::uint32_t packages : {1U, 2U}) {
    SCOPED_TRACE(packages);
    MemorySystem mem(c.mem, 2, 1, packages);
    const Addr a = 0x1234'5640;
    const MemResult first = mem.load(CoreId{0}, Asid{1}, a, 8, Cycle{0});
    EXPECT_EQ(first.level, MemLevel::Dram);
    // Core 1: its own L1D, L2 and DTLB miss (30 cycles of fixed walk first). With one package the shared LLC has
    // the line: 30 + 32. With two, core 1's package has its own LLC, which misses: 30 + 32 + 208.
    const Cycle now{10000};
    const MemResult second = mem.load(CoreId{1}, Asid{1}, a, 8, now);
    if (packages == 1) {
      EXPECT_EQ(second.level, MemLevel::LLC);
      EXPECT_EQ(second.ready.value - now.value, 30U + 32U);
      EXPECT_EQ(mem.llcStats(0).misses, 1U);
    } else {
      EXPECT_EQ(second.level, MemLevel::Dram);
      EXPECT_EQ(second.ready.value - now.value, 30U + kColdLoad);
      EXPECT_EQ(mem.llcStats(0).misses, 1U);
      EXPECT_EQ(mem.llcStats(1).misses, 1U);
      EXPECT_EQ(mem.packageOf(CoreId{0}), 0U);
      EXPECT_EQ(mem.packageOf(CoreId{1}), 1U);
    }
  }
}

TEST(Topology, EachPackageHasTheFullLlcCapacity) {
  // Core 0 streams 1 MB (exactly one LLC: an aligned 1 MB block covers each of the 2048 sets 8 times, and the asid's
  // address scrambling only permutes pages inside such a block), then core 1 streams another 1 MB. Then core 0
  // reads its first 64 KB again: gone from its L1D and L2 (256 KB, LRU, the last 256 KB of the stream are there).
  // With two packages core 1 filled its own LLC, so all 1024 lines hit core 0's LLC. With one shared LLC, core 1's
  // 8 lines per set evicted core 0's (LRU), so all 1024 lines come from DRAM.
  const Config c = netburst();
  for (const std::uint32_t packages : {1U, 2U}) {
    SCOPED_TRACE(packages);
    MemorySystem mem(c.mem, 2, 1, packages);
    std::uint64_t t = 0;
    for (std::uint64_t i = 0; i < kLlcLines; ++i) mem.load(CoreId{0}, Asid{1}, 0x1000'0000 + i * kLine, 8, Cycle{t++});
    for (std::uint64_t i = 0; i < kLlcLines; ++i) mem.load(CoreId{1}, Asid{1}, 0x2000'0000 + i * kLine, 8, Cycle{t++});
    int llcHits = 0;
    int dram = 0;
    for (std::uint64_t i = 0; i < 1024; ++i) {
      const MemResult r = mem.load(CoreId{0}, Asid{1}, 0x1000'0000 + i * kLine, 8, Cycle{1'000'000 + t++});
      llcHits += r.level == MemLevel::LLC ? 1 : 0;
      dram += r.level == MemLevel::Dram ? 1 : 0;
    }
    EXPECT_EQ(llcHits, packages == 2 ? 1024 : 0);
    EXPECT_EQ(dram, packages == 2 ? 0 : 1024);
  }
}

TEST(Topology, MachineJsonHasOneLlcPerPackageAndTheirSum) {
  Config c = netburst();
  c.system.packages = 2;
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor("gen:mix,count=20000,seed=3"), Asid{1});
  m.attach(LogicalCpu{2}, cursorFor("gen:mix,count=20000,seed=4"), Asid{2});
  runToEnd(m);
  const json::object s = m.statsJson();
  const json::array& packages = s.at("packages").as_array();
  ASSERT_EQ(packages.size(), 2U);
  const std::uint64_t a = u64(packages[0].at("llc").at("accesses"));
  const std::uint64_t b = u64(packages[1].at("llc").at("accesses"));
  EXPECT_GT(a, 0U);  // both packages ran a trace, so both LLCs were used
  EXPECT_GT(b, 0U);
  EXPECT_EQ(u64(s.at("llc").at("accesses")), a + b);
}

// --- logical CPU numbering ---------------------------------------------------------------------------------------

struct Place {
  std::uint32_t package, core, thread;
};

TEST(Topology, LinuxNumberingMapsCpusToPackageCoreThread) {
  // 2 packages x 2 cores x 2 threads = 8 logical CPUs; core = the machine's core index (package * 2 + core).
  // Siblings adjacent (APIC-ID order, Linux 2.4/2.5): cpu = core * 2 + thread.
  // Cores first (ACPI MADT order, modern kernels): cpu = thread * 4 + core, so cpu N and N + 4 are siblings.
  const std::vector<Place> adjacent = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1},
                                       {1, 2, 0}, {1, 2, 1}, {1, 3, 0}, {1, 3, 1}};
  const std::vector<Place> coresFirst = {{0, 0, 0}, {0, 1, 0}, {1, 2, 0}, {1, 3, 0},
                                         {0, 0, 1}, {0, 1, 1}, {1, 2, 1}, {1, 3, 1}};
  for (const bool siblingsAdjacent : {true, false}) {
    SCOPED_TRACE(siblingsAdjacent);
    Config c = netburst();
    c.system.packages = 2;
    c.system.cores = 2;
    c.system.siblings_adjacent = siblingsAdjacent;
    Machine m(c);
    ASSERT_EQ(m.logicalCpus(), 8U);
    const auto& want = siblingsAdjacent ? adjacent : coresFirst;
    for (std::uint32_t cpu = 0; cpu < 8; ++cpu) {
      const CpuInfo& info = m.cpu(LogicalCpu{cpu});
      EXPECT_EQ(info.id.value, cpu);
      EXPECT_EQ(info.package, want[cpu].package) << "cpu " << cpu;
      EXPECT_EQ(info.core.value, want[cpu].core) << "cpu " << cpu;
      EXPECT_EQ(info.thread.value, want[cpu].thread) << "cpu " << cpu;
      ASSERT_EQ(info.siblings.size(), 1U);
      EXPECT_EQ(info.siblings[0].value, siblingsAdjacent ? (cpu ^ 1U) : (cpu + 4) % 8) << "cpu " << cpu;
    }
  }
}

TEST(Topology, EventsNameTheLogicalCpuOfTheirThread) {
  // Cores first: the trace on cpu 4 runs on core 0, thread 1; its end must come back as cpu 4, not core*2+thread.
  Config c = netburst();
  c.system.packages = 2;
  c.system.cores = 2;
  c.system.siblings_adjacent = false;
  Machine m(c);
  m.attach(LogicalCpu{4}, cursorFor("gen:mix,count=1000,seed=3"), Asid{1});
  std::set<std::uint32_t> ended;
  for (int i = 0; i < 100 && ended.empty(); ++i) {
    for (const Event& e : m.run(Cycle{m.now().value + 100000})) {
      if (e.kind == EventKind::SourceEnded) ended.insert(e.cpu.value);
    }
  }
  EXPECT_EQ(ended, std::set<std::uint32_t>{4});
  EXPECT_EQ(m.threadStats(LogicalCpu{4}).instructions, 1000U);
}

// --- TLB flush ---------------------------------------------------------------------------------------------------

TEST(Topology, TlbFlushMakesTheNextAccessToEachPageOfThatAddressSpaceMiss) {
  // 10 pages of asid 1 and 5 of asid 2 fit the 64-entry DTLB. Flushing asid 1 drops exactly its 10 entries; touching
  // all 15 pages again then misses 10 times (asid 1) and hits 5 times (asid 2).
  const Config c = netburst();
  MemorySystem mem(c.mem, 1, 2);
  std::uint64_t t = 0;
  auto touch = [&](std::uint32_t asid, int pages) {
    for (int p = 0; p < pages; ++p) mem.load(CoreId{0}, Asid{asid}, 0x4000'0000 + Addr(p) * 4096, 8, Cycle{t += 1000});
  };
  touch(1, 10);
  touch(2, 5);
  EXPECT_EQ(mem.dtlbStats(CoreId{0}).misses, 15U);
  EXPECT_EQ(mem.flushTlb(CoreId{0}, ThreadId{0}, Asid{1}), 10U);
  touch(1, 10);
  touch(2, 5);
  EXPECT_EQ(mem.dtlbStats(CoreId{0}).misses, 25U);
  EXPECT_EQ(mem.dtlbStats(CoreId{0}).flushed, 10U);
  // Flushed entries are refilled before any valid one is evicted: 64 - 15 = 49 new pages of asid 3 evict nothing.
  touch(3, 49);
  touch(2, 5);
  EXPECT_EQ(mem.dtlbStats(CoreId{0}).misses, 25U + 49U);
}

TEST(Topology, MachineFlushTlbDoesNothingWithTaggedTlbs) {
  for (const bool tagged : {false, true}) {
    SCOPED_TRACE(tagged);
    Config c = netburst();
    c.mem.tlb_tagged = tagged;
    Machine m(c);
    m.attach(LogicalCpu{0}, cursorFor("gen:mix,count=5000,seed=3"), Asid{7});
    runToEnd(m);
    const std::uint32_t dropped = m.flushTlb(LogicalCpu{0}, Asid{7});
    if (tagged) {
      EXPECT_EQ(dropped, 0U);
    } else {
      // Every page the trace touched is in a TLB (it fits: the entries can only be the trace's own).
      EXPECT_GT(dropped, 0U);
      EXPECT_EQ(m.flushTlb(LogicalCpu{0}, Asid{7}), 0U);  // nothing of asid 7 is left
    }
  }
}

// --- page walks through the caches ----------------------------------------------------------------------------

Config walking(std::uint32_t levels, std::uint32_t pwc) {
  Config c = netburst();
  c.mem.page_walk.caches = true;
  c.mem.page_walk.levels = levels;
  c.mem.page_walk.pwc_entries = pwc;
  return c;
}

TEST(PageWalk, ColdTwoLevelWalkCostsTwoColdLoads) {
  // 32-bit paging: PDE then PTE, each a cold load through L1D, L2, LLC to DRAM (kColdLoad, idle channel: each
  // request starts after the previous one's data is back), then the data's own cold load: 3 x 240 = 720.
  // With the fixed walk it was 30 + 240.
  MemorySystem walk(walking(2, 0).mem, 1, 1);
  EXPECT_EQ(walk.load(CoreId{0}, Asid{1}, 0x0804'9000, 4, Cycle{0}).ready.value, 3 * kColdLoad);
  EXPECT_EQ(walk.pageWalkStats(CoreId{0}).loads, 2U);
  MemorySystem fixed(netburst().mem, 1, 1);
  EXPECT_EQ(fixed.load(CoreId{0}, Asid{1}, 0x0804'9000, 4, Cycle{0}).ready.value, 30 + kColdLoad);
}

TEST(PageWalk, WarmPageWalkCacheLeavesOnlyTheLastLevel) {
  // 4 levels (x86-64). First walk: 4 cold entry loads + the cold data = 5 x 240.
  // Then a page 8 pages further on: same PML4E, PDPTE and PDE lines (same 2 MB region), but its PTE is 8 x 8 B =
  // one 64 B line further, so the PTE line is cold; the data line is cold too.
  //  - with a page-walk cache the PDE comes from it: PTE 240 + data 240 = 480;
  //  - without one the three upper entries are L1D hits (latency 2 each): 3 x 2 + 240 + 240 = 486.
  const Addr a = 0x7f12'3456'0000;
  const Addr b = a + 8 * 4096;
  for (const std::uint32_t pwc : {0U, 16U}) {
    SCOPED_TRACE(pwc);
    MemorySystem mem(walking(4, pwc).mem, 1, 1);
    EXPECT_EQ(mem.load(CoreId{0}, Asid{1}, a, 8, Cycle{0}).ready.value, 5 * kColdLoad);
    const Cycle now{100000};
    EXPECT_EQ(mem.load(CoreId{0}, Asid{1}, b, 8, now).ready.value - now.value,
              pwc > 0 ? 2 * kColdLoad : 3 * 2 + 2 * kColdLoad);
    EXPECT_EQ(mem.pageWalkStats(CoreId{0}).loads, pwc > 0 ? 5U : 8U);
    EXPECT_EQ(mem.pageWalkStats(CoreId{0}).pwcHits, pwc > 0 ? 1U : 0U);
  }
}

TEST(PageWalk, NeighbouringPageSharesTheLastLevelLine) {
  // The next page's PTE is the next 8 bytes of the same line: the whole walk hits the L1D (4 x 2) and only the data
  // is cold: 8 + 240.
  MemorySystem mem(walking(4, 0).mem, 1, 1);
  const Addr a = 0x7f12'3456'0000;
  mem.load(CoreId{0}, Asid{1}, a, 8, Cycle{0});
  const Cycle now{100000};
  EXPECT_EQ(mem.load(CoreId{0}, Asid{1}, a + 4096, 8, now).ready.value - now.value, 4 * 2 + kColdLoad);
}

TEST(PageWalk, TablesArePerAddressSpaceAndNeverCanonicalData) {
  const PageWalker w(walking(4, 0).mem, 1);
  const Addr a = 0x7f12'3456'0000;
  for (std::uint32_t level = 0; level < 4; ++level) {
    // Two processes never share a table line.
    EXPECT_NE(w.entryAddress(Asid{1}, a, level) / kLine, w.entryAddress(Asid{2}, a, level) / kLine);
    // Deterministic.
    EXPECT_EQ(w.entryAddress(Asid{1}, a, level), w.entryAddress(Asid{1}, a, level));
  }
  // Asid 0 is the identity mapping: its tables sit in the non-canonical region (bit 47 set, bits 48-63 clear).
  const Addr t = w.entryAddress(Asid{0}, a, 0);
  EXPECT_EQ(t >> 47, 1U);
}

TEST(PageWalk, TwoThreadsWalksCompeteForTheCaches) {
  // Two threads of one core chasing pointers over 64 MB in different address spaces: with walks through the caches
  // the walks' loads are cache accesses (L1D accesses rise above the fixed-walk run's by at least one per walk).
  auto l1dAccesses = [](const Config& c) {
    Machine m(c);
    m.attach(LogicalCpu{0}, cursorFor("gen:chase,footprint=64m,work=1,count=3000,seed=1"), Asid{1});
    m.attach(LogicalCpu{1}, cursorFor("gen:chase,footprint=64m,work=1,count=3000,seed=2"), Asid{2});
    runToEnd(m);
    const json::object s = m.statsJson();
    return std::pair{u64(s.at("cores").at(0).at("l1d").at("accesses")),
                     u64(s.at("cores").at(0).at("page_walk").at("walks"))};
  };
  const auto [fixedAccesses, fixedWalks] = l1dAccesses(netburst());
  const auto [walkAccesses, walks] = l1dAccesses(walking(2, 0));
  EXPECT_EQ(fixedWalks, 0U);
  EXPECT_GT(walks, 1000U);  // 64 MB is 16384 pages against a 64-entry DTLB: nearly every chase load misses it
  EXPECT_GE(walkAccesses, fixedAccesses + walks);
}

TEST(PageWalk, EventSkippingStaysIdenticalWithPackagesAndWalks) {
  Config c = walking(4, 16);
  c.system.packages = 2;
  const std::vector<std::string> specs = {"gen:chase,footprint=16m,work=2,count=0,seed=1", "gen:mix,count=0,seed=3",
                                          "gen:mix,footprint=64m,hot=0.5,count=0,seed=9", "gen:branchy,count=0"};
  c.sim.skip = true;
  auto a = runCounted(c, specs, 20000, 2000);
  c.sim.skip = false;
  auto b = runCounted(c, specs, 20000, 2000);
  for (auto* s : {&a, &b}) {
    s->erase("host_seconds");
    s->erase("instructions_per_host_second");
    s->erase("config");
  }
  EXPECT_EQ(json::serialize(a), json::serialize(b));
}

}  // namespace
}  // namespace smtlab::test
