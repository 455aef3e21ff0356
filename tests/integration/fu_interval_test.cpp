// A functional unit's busy interval (core.fu.<unit>.interval) and per-thread interval (thread_interval): the cycle
// the last of N independent divides retires, derived on paper from exact_trace_test.cpp's timing rules on the scalar
// machine (fetch one instruction per cycle, rename 3 cycles later, issue one later at the earliest, complete at issue
// + latency, retire in the completion cycle). The first fetch misses everything and arrives at 30 + 40 + 200 = 270,
// so divide k of a thread alone is fetched at 270 + k and ready to issue at 274 + k.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

constexpr std::uint64_t kFirstIssue = 274;  // 270 (cold fetch) + 3 (front end) + 1

// n independent divides (each writes its own register and reads r60, which nothing writes).
std::vector<Instr> divides(int n) {
  std::vector<Instr> out;
  for (int k = 0; k < n; ++k) out.push_back(op(OpClass::IDiv, 0x400000 + 4 * static_cast<Addr>(k), {1 + k}, {60}));
  return out;
}

// The scalar machine with one divider of latency L, busy interval I, per-thread interval T.
Config divider(std::uint32_t latency, std::uint32_t interval, std::uint32_t threadInterval, bool pipelined = false,
               std::uint32_t threads = 1) {
  Config c = widthOneConfig();
  c.core.threads = threads;
  c.core.fu.int_div = {latency, pipelined, interval, threadInterval};
  setUnitCount(c.core, UnitClass::IntDiv, 1);
  return c;
}

// Both threads of one core (one process: the same address space) run n divides each, started warm: a first run of
// one int per thread at the divides' code line fills the L1I and both ITLBs, the core then idles past any drain, and
// both traces are attached in the same cycle X (an idle core becoming two-threaded does not drain). Returns the two
// end cycles relative to X, earlier first (which thread leads is the fetch policy's business, not this file's).
std::vector<std::uint64_t> pairEnds(const Config& config, int n) {
  Machine m(config);
  m.setChecking(true);
  for (std::uint32_t cpu = 0; cpu < 2; ++cpu) {
    m.attach(LogicalCpu{cpu}, cursorFor({op(OpClass::Int, 0x400000, {1}, {60})}), Asid{1});
  }
  runToEnd(m);
  for (std::uint32_t cpu = 0; cpu < 2; ++cpu) m.detach(LogicalCpu{cpu});
  const std::uint64_t x = m.now().value + 500;  // past the 100-cycle drain of the warm-up's 2 -> 1 change
  m.run(Cycle{x});
  EXPECT_EQ(m.now().value, x);
  m.attach(LogicalCpu{0}, cursorFor(divides(n)), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor(divides(n)), Asid{1});
  std::vector<std::uint64_t> ends = runToEnd(m).endCycle;
  for (auto& e : ends) e -= x;
  std::sort(ends.begin(), ends.end());
  return ends;
}

// (a) One thread: with I < T the thread's own interval sets the pace, one divide every T cycles; divide k issues at
// 274 + k T (it is ready at 274 + k, earlier) and the last completes at 274 + (N - 1) T + L.
TEST(FuInterval, OneThreadIssuesOneDividePerThreadInterval) {
  // Broadwell's DIV r64: L 32, I 15, T 21. Five divides issue at 274, 295, 316, 337, 358; the last completes at 390.
  EXPECT_EQ(endCycleAlone(divider(32, 15, 21), divides(5)), kFirstIssue + 4 * 21 + 32);
  EXPECT_EQ(endCycleAlone(divider(32, 15, 21), divides(1)), kFirstIssue + 32);
  // Below T the busy interval does not matter to one thread: the same with I = 1 (or a pipelined unit) and I = T.
  EXPECT_EQ(endCycleAlone(divider(32, 1, 21), divides(5)), 390u);
  EXPECT_EQ(endCycleAlone(divider(32, 0, 21, true), divides(5)), 390u);
  EXPECT_EQ(endCycleAlone(divider(32, 21, 21), divides(5)), 390u);
  // Above T the unit is the limit again: I = 25 issues at 274 + 25 k, the last completes at 274 + 100 + 32.
  EXPECT_EQ(endCycleAlone(divider(32, 25, 21), divides(5)), kFirstIssue + 4 * 25 + 32);
  // The latency only delays results: L = 50 moves the end by 18 and not the issue times.
  EXPECT_EQ(endCycleAlone(divider(50, 15, 21), divides(5)), 390u + 18);
}

// (b) Two threads on one core, N divides each, started warm in cycle X (pairEnds): every fetch hits, so the round-
// robin fetch alternates one instruction per cycle from X: the leading thread's divide k is ready to issue at
// X + 4 + 2k, the other's at X + 5 + 2k, always before its turn below. The leader issues at X + 4; the other can take
// the divider at X + 4 + I (ready since X + 5 <= X + 4 + I). From then on every issue is forced, whatever the issue
// order: a thread that just issued is blocked for T > I cycles, so the threads alternate.
//   - Unit-bound, I < T < 2I: when the other thread issues at t + I, the leader's turn (t + T) has come by t + 2I,
//     when the unit frees: the divider issues every I cycles, alternating: one divide per I for the pair against one
//     per T alone (a gain of T/I - 1). Leader's k-th at X + 4 + 2kI, the other's at X + 4 + (2k+1)I; they end at
//     X + 4 + (2N-2)I + L and X + 4 + (2N-1)I + L.
//   - Thread-bound, T >= 2I: each thread keeps its own pace, one divide per T, the other offset by I; the unit is
//     idle T - 2I cycles in T: two divides per T for the pair (twice one thread). Ends X + 4 + (N-1)T + L and that
//     + I.
constexpr std::uint64_t kWarmIssue = 4;  // fetched at X, renamed at X + 3, issued at X + 4

TEST(FuInterval, TwoThreadsShareTheUnitOnePerIntervalWhenItBinds) {
  // Broadwell: I 15, T 21 < 30. Leader at +4, +34, +64, +94 (ends +126); the other at +19, +49, +79, +109 (ends +141).
  const auto ends = pairEnds(divider(32, 15, 21, false, 2), 4);
  EXPECT_EQ(ends[0], kWarmIssue + 6 * 15 + 32);
  EXPECT_EQ(ends[1], kWarmIssue + 7 * 15 + 32);
  // Alone (cold), four divides end at 274 + 3 x 21 + 32 = 369: 8 divides issued over 7 x 15 cycles for the pair
  // against 4 over 3 x 21 for one thread, i.e. one per 15 instead of one per 21.
  EXPECT_EQ(endCycleAlone(divider(32, 15, 21), divides(4)), kFirstIssue + 3 * 21 + 32);
  // I = 20, T = 21: still unit-bound, one per 20: the last of 8 issues at +4 + 140.
  EXPECT_EQ(pairEnds(divider(32, 20, 21, false, 2), 4)[1], kWarmIssue + 7 * 20 + 32);
}

TEST(FuInterval, TwoThreadsKeepTheirOwnPaceWhenTheThreadIntervalBinds) {
  // I 8, T 21 >= 16: leader at +4, +25, +46, +67 (ends +99, as alone); the other at +12, +33, +54, +75 (ends +107).
  const auto ends = pairEnds(divider(32, 8, 21, false, 2), 4);
  EXPECT_EQ(ends[0], kWarmIssue + 3 * 21 + 32);
  EXPECT_EQ(ends[1], kWarmIssue + 8 + 3 * 21 + 32);
  // The boundary T = 2I (10, 20): both rules agree, the leader every 20 from +4, the other every 20 from +14.
  const auto edge = pairEnds(divider(32, 10, 20, false, 2), 4);
  EXPECT_EQ(edge[0], kWarmIssue + 3 * 20 + 32);
  EXPECT_EQ(edge[1], kWarmIssue + 10 + 3 * 20 + 32);
}

// (c) interval = 0 derives the busy time from `pipelined` as before the key existed: 1 cycle, or the latency.
// Four divides of latency 10 (exact_trace_test.cpp's four_idiv.txt): unpipelined they issue at 274, 284, 294, 304
// (end 314); pipelined at 274..277 (end 287).
TEST(FuInterval, ZeroIntervalKeepsThePipelinedRule) {
  EXPECT_EQ(endCycleAlone(divider(10, 0, 0, false), divides(4)), kFirstIssue + 3 * 10 + 10);
  EXPECT_EQ(endCycleAlone(divider(10, 0, 0, true), divides(4)), kFirstIssue + 3 + 10);
  EXPECT_EQ(endCycleAlone(widthOneConfig(), readTextFile("four_idiv.txt")), 314u);  // the defaults: interval 0
  // A non-zero interval overrides `pipelined` either way.
  EXPECT_EQ(endCycleAlone(divider(10, 10, 0, true), divides(4)), 314u);
  EXPECT_EQ(endCycleAlone(divider(10, 1, 0, false), divides(4)), 287u);
  EXPECT_EQ(endCycleAlone(divider(10, 4, 0, false), divides(4)), kFirstIssue + 3 * 4 + 10);
  // Two threads and no per-thread limit: the unpipelined unit takes one divide per latency from X + 4 whoever
  // issues (both threads' divides are ready by X + 12), so the last of 8 completes at X + 4 + 7 x 10 + 10.
  EXPECT_EQ(pairEnds(divider(10, 0, 0, false, 2), 4)[1], kWarmIssue + 7 * 10 + 10);
}

}  // namespace
}  // namespace smtlab::test

namespace smtlab::test {
namespace {

// Event skipping must not skip a cycle in which a thread could fetch but lost the fetch slot. Two cold threads, one
// divide each (latency 10, unpipelined), attached in the same cycle (no drain), round-robin fetch of one thread per
// cycle. Cycle 0: thread 1 is served first; its ITLB walk (30) and the cold line (40 + 200) hold it until 270.
// Cycle 1: thread 0 gets the slot; its own ITLB walk ends at 31 and finds the line already in flight (ready 270), so
// it also waits until 270. Cycle 270: thread 1 fetches its divide (rename 273, issue 274, done and retired 284);
// cycle 271: thread 0 fetches (rename 274; the divider is busy until 284, so issue 284, done and retired 294). Had
// cycle 1 been skipped, thread 0 would start its walk only at 270 and end 31 cycles later.
TEST(EventSkipping, AThreadThatLostTheFetchSlotGetsItNextCycle) {
  Config c = widthOneConfig();
  c.core.threads = 2;
  Machine m(c);
  m.setChecking(true);
  m.attach(LogicalCpu{0}, cursorFor({op(OpClass::IDiv, 0x400000, {1}, {60})}), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor({op(OpClass::IDiv, 0x400000, {1}, {60})}), Asid{1});
  const std::vector<std::uint64_t> ends = runToEnd(m).endCycle;
  EXPECT_EQ(ends[1], 284u);
  EXPECT_EQ(ends[0], 294u);
}

}  // namespace
}  // namespace smtlab::test
