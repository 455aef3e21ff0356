// Store-to-load forwarding, memory ordering and aliasing in the load/store unit (core.lsu). Each
// expected value is derived on paper in its test from the configured latencies and the trace's dependences.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

Instr storeOf(Addr pc, Addr addr, std::vector<int> src, std::uint8_t size = 8) {
  Instr in = op(OpClass::Store, pc, {}, std::move(src));
  in.stores[0] = MemRef{addr, size};
  return in;
}
Instr loadOf(Addr pc, int dst, Addr addr, std::uint8_t size = 8) {
  Instr in = op(OpClass::Load, pc, {dst}, {});
  in.loads[0] = MemRef{addr, size};
  return in;
}

const json::object& lsuStats(const json::object& stats, std::size_t cpu) {
  return cpuStats(stats, cpu).at("lsu").as_object();
}
std::uint64_t l1dAccesses(const json::object& stats) {
  return u64(stats.at("cores").as_array()[0].as_object().at("l1d").as_object().at("accesses"));
}

// Runs one trace alone to its end (with invariant checking), then until the store buffer has drained.
struct Ran {
  std::uint64_t endCycle;
  json::object stats;
};
Ran runAlone(const Config& c, std::vector<Instr> trace) {
  Machine m(c);
  m.setChecking(true);
  m.attach(LogicalCpu{0}, cursorFor(std::move(trace)), Asid{1});
  const std::uint64_t end = runToEnd(m).endCycle[0];
  for (int guard = 0; m.core(CoreId{0}).hasWork() && guard < 1000; ++guard) m.run(Cycle{m.now().value + 10});
  return {end, m.statsJson()};
}

Config orderConfig(MemDependence mode) {
  Config c = baseConfig(1);
  c.core.fu.store = {1, true};  // address and data one cycle after issue
  setUnitCount(c.core, UnitClass::StoreAddress, 1);
  c.core.fu.load = {1, true};   // AGU
  setUnitCount(c.core, UnitClass::Load, 1);
  c.core.lsu.store_buffer = true;
  c.core.lsu.forwarding = true;
  c.core.lsu.forward_latency = 4;
  c.core.lsu.memory_dependence = mode;
  return c;
}

// n links of: store [x] <- r1; load r1 <- [x]. Each load's value feeds the next store.
std::vector<Instr> forwardChain(std::uint32_t n) {
  std::vector<Instr> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    out.push_back(storeOf(0x400000, 0x20000, {1}));
    out.push_back(loadOf(0x400004, 1, 0x20000));
  }
  return out;
}

TEST(StoreForwarding, AForwardedLoadChainPaysTheForwardingLatencyPerLink) {
  // Link k: the store issues when r1 is ready (cycle t); its address is known from then on and its data at t + 1
  // (fu.store latency 1). The load (no register source) waits for that address (memory_dependence = wait), issues
  // in the same cycle t right after the older store, and takes its data forward_latency after the store's data:
  // r1 is ready at t + 1 + F, when link k+1's store issues. So a link costs 1 + F cycles, for F = 4 and F = 10; the
  // steady state is the difference of 2n and n links (start-up and the cold miss of the first drain cancel). No
  // load touches the L1D: its accesses are the n stores' drains alone.
  constexpr std::uint32_t n = 400;
  for (std::uint32_t f : {4u, 10u}) {
    Config c = orderConfig(MemDependence::Wait);
    c.core.lsu.forward_latency = f;
    const Ran once = runAlone(c, forwardChain(n));
    const Ran twice = runAlone(c, forwardChain(2 * n));
    EXPECT_NEAR(double(twice.endCycle - once.endCycle) / n, 1.0 + f, 0.01) << "forward_latency " << f;
    EXPECT_EQ(u64(lsuStats(once.stats, 0).at("loads_forwarded")), n);
    EXPECT_EQ(l1dAccesses(once.stats), n) << "only the stores' drains access the L1D";
    EXPECT_EQ(u64(cpuStats(once.stats, 0).at("loads_by_level").as_object().at("l1")), n);
  }
}

TEST(StoreForwarding, APartialOverlapBlocksTheLoadUntilTheStoreHasWrittenTheCache) {
  // store 8 bytes at x; load 8 bytes at x + 4: the store covers only half of the load, so nothing is forwarded and
  // the load waits until the store has drained into the L1D (after its retirement), then reads the cache. With
  // NetBurst's rule (forward_same_address) even a covered load that starts elsewhere (4 bytes at x + 4) blocks.
  const std::vector<Instr> partial = {storeOf(0x400000, 0x30000, {}), loadOf(0x400004, 1, 0x30004)};
  const Ran p = runAlone(orderConfig(MemDependence::Wait), partial);
  EXPECT_EQ(u64(lsuStats(p.stats, 0).at("forward_stalls")), 1u);
  EXPECT_EQ(u64(lsuStats(p.stats, 0).at("loads_forwarded")), 0u);
  EXPECT_EQ(l1dAccesses(p.stats), 2u);  // the store's write, then the load's read

  const std::vector<Instr> inside = {storeOf(0x400000, 0x30000, {}), loadOf(0x400004, 1, 0x30004, 4)};
  const Ran general = runAlone(orderConfig(MemDependence::Wait), inside);
  EXPECT_EQ(u64(lsuStats(general.stats, 0).at("loads_forwarded")), 1u);
  Config netburstRule = orderConfig(MemDependence::Wait);
  netburstRule.core.lsu.forward_same_address = true;
  const Ran strict = runAlone(netburstRule, inside);
  EXPECT_EQ(u64(lsuStats(strict.stats, 0).at("loads_forwarded")), 0u);
  EXPECT_EQ(u64(lsuStats(strict.stats, 0).at("forward_stalls")), 1u);
  EXPECT_GT(strict.endCycle, general.endCycle);
}

// n iterations of: r2 = div r2 (10 cycles, unpipelined: the divides form a chain); store [a_i] <- r2 (its address
// waits for the divide); load r3 <- [b_i] (no register source); r4 = r3 + 1. conflict: b_i = a_i, else b_i is
// another line. Every store resolves 10 cycles after the last, while its load is ready right after rename (rename
// runs ahead of the divide chain by up to the ROB's and the issue queue's sizes).
std::vector<Instr> divStoreLoad(std::uint32_t n, bool conflict) {
  std::vector<Instr> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Addr a = 0x40000 + 8 * Addr{i % 8};  // one line: the stores' drain is never the bottleneck
    out.push_back(op(OpClass::IDiv, 0x400000, {2}, {2}));
    out.push_back(storeOf(0x400004, a, {2}));
    out.push_back(loadOf(0x400008, 3, conflict ? a : a + 0x100));
    out.push_back(op(OpClass::Int, 0x40000c, {4}, {3}));
  }
  return out;
}

std::uint64_t lsuCount(MemDependence mode, bool conflict, const char* key, std::uint32_t n) {
  Config c = orderConfig(mode);
  c.core.fu.int_div = {10, false};
  setUnitCount(c.core, UnitClass::IntDiv, 1);
  return u64(lsuStats(runAlone(c, divStoreLoad(n, conflict)).stats, 0).at(key));
}

TEST(MemoryDependence, ALoadBehindAnUnknownStoreAddressWaitsWithoutPrediction) {
  // wait: every load finds its own iteration's store unresolved (the divide chain is slower than rename), so each
  // of the n loads waits once, and none is ever flushed.
  constexpr std::uint32_t n = 200;
  EXPECT_EQ(lsuCount(MemDependence::Wait, true, "store_address_waits", n), n);
  EXPECT_EQ(lsuCount(MemDependence::Wait, true, "memory_order_flushes", n), 0u);
  // off: memory order is not modelled: nothing waits.
  EXPECT_EQ(lsuCount(MemDependence::Off, true, "store_address_waits", n), 0u);
}

TEST(MemoryDependence, ALoadThatWentAheadOfAConflictingStoreIsFlushed) {
  // speculate: every load goes before its store resolves; when the store's address turns out to be the load's, the
  // load and everything younger are flushed and fetched again. The refetched load finds the store resolved (it
  // forwards), but the next iteration's load again goes before its own store: n flushes for n iterations. Without a
  // conflict nothing is flushed.
  constexpr std::uint32_t n = 200;
  EXPECT_EQ(lsuCount(MemDependence::Speculate, true, "memory_order_flushes", n), n);
  EXPECT_EQ(lsuCount(MemDependence::Speculate, false, "memory_order_flushes", n), 0u);
  // predictor: the first conflict sets the load PC's bit; the flush removes every younger load that had gone
  // ahead, and all later incarnations of that PC wait for older store addresses: exactly 1 flush.
  EXPECT_EQ(lsuCount(MemDependence::Predictor, true, "memory_order_flushes", n), 1u);
  EXPECT_EQ(lsuCount(MemDependence::Predictor, false, "memory_order_flushes", n), 0u);
  EXPECT_EQ(lsuCount(MemDependence::Predictor, false, "store_address_waits", n), 0u);
}

TEST(Aliasing, ALoadMatchingAnOlderStoreInTheLow12BitsOnlyWaitsWith4kAliasing) {
  // store [0x50000]; load [0x51000]: different addresses (no forwarding, no overlap) with equal bits 0..11. With
  // alias_4k the load waits until the store has written the L1D, as if dependent (Intel optimization manual, "4K
  // aliasing"); without it, the load reads the cache at once.
  const std::vector<Instr> trace = {storeOf(0x400000, 0x50000, {}), loadOf(0x400004, 1, 0x51000)};
  Config on = orderConfig(MemDependence::Wait);
  on.core.lsu.alias_4k = true;
  const Ran aliased = runAlone(on, trace);
  const Ran plain = runAlone(orderConfig(MemDependence::Wait), trace);
  EXPECT_EQ(u64(lsuStats(aliased.stats, 0).at("alias_4k_stalls")), 1u);
  EXPECT_EQ(u64(lsuStats(plain.stats, 0).at("alias_4k_stalls")), 0u);
  EXPECT_EQ(u64(lsuStats(plain.stats, 0).at("forward_stalls")), 0u);
  EXPECT_GT(aliased.endCycle, plain.endCycle);
}

// A dependent chain of n loads of one 8-byte slot at `base` (a stack slot: each load's address waits for the last).
std::vector<Instr> loadChain(std::uint32_t n, Addr base) {
  std::vector<Instr> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    Instr in = op(OpClass::Load, 0x400000 + 4 * (i % 8), {1}, {1});
    in.loads[0] = MemRef{base, 8};
    out.push_back(in);
  }
  return out;
}

json::object twoStacks(bool alias64k, Addr apart, Addr base = 0x7fff0000) {
  Config c = baseConfig(2);
  c.core.lsu.alias_64k = alias64k;
  Machine m(c);
  m.setChecking(true);
  m.attach(LogicalCpu{0}, cursorFor(loadChain(300, base)), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor(loadChain(300, base + apart)), Asid{2});
  runToEnd(m);
  return m.statsJson();
}

TEST(Aliasing, TwoThreadsWhoseStacksAre64KiBApartConflictWith64kAliasing) {
  // Both threads run the same chain of 300 dependent loads of their own stack slot, 64 KiB apart: the same position
  // in the L1D modulo 64 KiB. Their chains advance in step, so between two loads of one thread the other thread
  // has used the position: with alias_64k every load after the first (cold) one finds the other line there and is
  // served by the L2 (the conflict count and the L2-served loads are 299 per thread, give or take the start). Off,
  // or with the stacks 64 KiB + 64 bytes apart (another position), every load after the cold one hits the L1D.
  constexpr std::uint64_t n = 300;
  const auto on = twoStacks(true, 0x10000);
  const auto off = twoStacks(false, 0x10000);
  const auto shifted = twoStacks(true, 0x10000 + 64);
  for (std::size_t cpu = 0; cpu < 2; ++cpu) {
    const std::uint64_t conflicts = u64(lsuStats(on, cpu).at("alias_64k_conflicts"));
    EXPECT_GE(conflicts, n - 2) << cpu;
    EXPECT_LE(conflicts, n - 1) << cpu;
    EXPECT_GE(u64(cpuStats(on, cpu).at("loads_by_level").as_object().at("l2")), n - 2) << cpu;
    EXPECT_EQ(u64(lsuStats(off, cpu).at("alias_64k_conflicts")), 0u) << cpu;
    EXPECT_GE(u64(cpuStats(off, cpu).at("loads_by_level").as_object().at("l1")), n - 1) << cpu;
    EXPECT_EQ(u64(lsuStats(shifted, cpu).at("alias_64k_conflicts")), 0u) << cpu;
  }
  EXPECT_LT(ipcOf(on, 0), ipcOf(off, 0));
}

TEST(Aliasing, OneAddressInTwoAddressSpacesConflictsInUserSpaceButNotInTheKernelHalf) {
  // The same two chains as above, both at one address, the threads in two address spaces (asids 1 and 2). A user
  // address is each process's own line (address_space.hpp: two physical lines), so the two lines share one position
  // and evict each other as in the test above: n - 2 or n - 1 conflicts per thread. A kernel-half address is one line
  // in every address space (global pages): both threads load the same line, which never conflicts with itself, so
  // 0 conflicts and every load after the cold one hits the L1D (n - 1 or n per thread, the first thread to reach it
  // in the cycle of the other's cold miss counting its load as the in-flight line's).
  constexpr std::uint64_t n = 300;
  constexpr Addr kKernelStackSlot = 0xffff'c900'0001'3f00ULL;  // a kernel stack slot (vmalloc area)
  const auto user = twoStacks(true, 0);
  const auto kernel = twoStacks(true, 0, kKernelStackSlot);
  for (std::size_t cpu = 0; cpu < 2; ++cpu) {
    const std::uint64_t conflicts = u64(lsuStats(user, cpu).at("alias_64k_conflicts"));
    EXPECT_GE(conflicts, n - 2) << cpu;
    EXPECT_LE(conflicts, n - 1) << cpu;
    EXPECT_EQ(u64(lsuStats(kernel, cpu).at("alias_64k_conflicts")), 0u) << cpu;
    EXPECT_GE(u64(cpuStats(kernel, cpu).at("loads_by_level").as_object().at("l1")), n - 1) << cpu;
  }
}

}  // namespace
}  // namespace smtlab::test
