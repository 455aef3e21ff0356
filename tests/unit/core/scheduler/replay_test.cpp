// NetBurst replay in the scheduler (core.replay): a load's dependents are sent when an L1D hit would deliver; on a
// miss they issue again every replay_period cycles until the data has arrived, taking a unit each time.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"
#include "smtlab/core/scheduler.hpp"

namespace smtlab::test {
namespace {

struct ReplayPipe {
  StageHarness h;
  StubLoadStore lsu;
  StubBranches branches;
  RenameAllocate rename;
  Scheduler scheduler;
  ReplayPipe(Config c, std::vector<Instr> trace, std::uint32_t loadLatency)
      : h(c), lsu(loadLatency), rename(h.config, h.threads, h.queues),
        scheduler(h.config, h.threads, h.queues, lsu, branches) {
    const auto n = static_cast<std::uint32_t>(trace.size());
    h.attach(0, std::move(trace));
    h.queueUops(0, n);
    rename.tick(Cycle{0}, false);
    scheduler.accept(rename.dispatched());
    rename.clearDispatched();
  }
  // The cycle each instruction finally issued (its `issued` flag flips; a replay leaves it unset).
  std::vector<std::uint64_t> issueCycles(std::size_t n) {
    std::vector<std::uint64_t> at(n, 0);
    for (std::uint64_t cycle = 1; cycle <= 1000; ++cycle) {
      scheduler.issue(Cycle{cycle});
      bool all = true;
      for (std::size_t s = 0; s < n; ++s) {
        if (h.threads[0].rob[s].issued && at[s] == 0) at[s] = cycle;
        all &= h.threads[0].rob[s].issued;
      }
      if (all) break;
    }
    return at;
  }
};

Config replayConfig(bool on) {
  Config c = stageConfig(1);
  c.core.rename_width = 32;
  c.core.issue_width = 6;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 3);  // was core.fu.int_alu.count = 3
  c.core.fu.load = {0, true};  // no AGU cycles: an L1D hit delivers mem.l1d.latency after issue
  setUnitCount(c.core, UnitClass::Load, 1);  // was core.fu.load.count = 1
  c.mem.l1d.latency = 4;
  c.core.replay = on;
  c.core.replay_period = 7;
  return c;
}

// A load into r1 and K = 3 ints that read r1.
TEST(Replay, DependentsOfAMissingLoadIssueAgainEveryPeriodUntilTheData) {
  // Renamed at 0, the load issues at 1; an L1D hit would deliver at 1 + 4 = 5, but the (stub) memory delivers at
  // 1 + 120 = 121. The three dependents (3 ALUs: all in the same cycle) go at 5, 12, 19, ..., 5 + 7k; the first
  // attempt at or after 121 is k = ceil(116 / 7) = 17, cycle 124. So each issues 18 times: 17 replays, 51 in all,
  // and the ALUs count 54 operations.
  ReplayPipe p(replayConfig(true), loadWithThreeDependents(), 120);
  const auto at = p.issueCycles(4);
  EXPECT_EQ(at, (std::vector<std::uint64_t>{1, 124, 124, 124}));
  EXPECT_EQ(p.h.threads[0].stats.replayed, 51u);
  EXPECT_EQ(p.scheduler.issuedByUnit()[static_cast<int>(FuKind::IntAlu)], 54u);
}

TEST(Replay, OffDependentsWaitForTheData) {
  // Without replay they issue once, when the data is there: cycle 121.
  ReplayPipe p(replayConfig(false), loadWithThreeDependents(), 120);
  EXPECT_EQ(p.issueCycles(4), (std::vector<std::uint64_t>{1, 121, 121, 121}));
  EXPECT_EQ(p.h.threads[0].stats.replayed, 0u);
  EXPECT_EQ(p.scheduler.issuedByUnit()[static_cast<int>(FuKind::IntAlu)], 3u);
}

TEST(Replay, AnL1HitNeedsNoReplay) {
  // The stub's 4-cycle load is exactly the hit time the scheduler assumed: the dependents issue once, at 5.
  ReplayPipe p(replayConfig(true), loadWithThreeDependents(), 4);
  EXPECT_EQ(p.issueCycles(4), (std::vector<std::uint64_t>{1, 5, 5, 5}));
  EXPECT_EQ(p.h.threads[0].stats.replayed, 0u);
}

TEST(Replay, ReplaysTakeUnitsFromOtherWork) {
  // One ALU. The dependent replays at 5, 12, ..., 117 and issues at 124 (as above: 17 replays). Six independent
  // ints renamed after it are ready at 1 and younger, so at 5 the replaying dependent takes the ALU first: the ints
  // issue at 1, 2, 3, 4, then 6 and 7 (without replay the last would issue at 6).
  Config c = replayConfig(true);
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 1);  // was core.fu.int_alu.count = 1
  std::vector<Instr> t{loadOf(0x1000, 1), instr(OpClass::Int, {2}, {1})};
  for (int i = 0; i < 6; ++i) t.push_back(instr(OpClass::Int, {10 + i}));
  ReplayPipe p(c, t, 120);
  const auto at = p.issueCycles(8);
  EXPECT_EQ(at, (std::vector<std::uint64_t>{1, 124, 1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(p.h.threads[0].stats.replayed, 17u);
}

// The loop is a fixed pipe (replay.hpp): a uop sent without its data comes back to its port every period ahead of
// what the scheduler sends. One ALU; a load (r1, data at 121) and its dependent D, and between them in program order a
// multiply (its own port, latency 10: issues at 1, result at 11) feeding a chain of 20 ints (each reads the last).
// D goes at the hit time 5 (the ALU is free: the chain waits for the multiply) and comes back at 12, 19, ..., 117
// (17 attempts without data) and issues for real at 124. The chain (older than D) starts at 11 and takes the ALU
// every cycle except those D's booked attempts take: 11 I1, 12 D, 13..18 I2..I7, 19 D, 20..25 I8..I13, 26 D,
// 27..32 I14..I19, 33 D, 34 I20. (A scheduler that served the older chain first would end it at 30.)
TEST(Replay, BookedAttemptsTakeTheirPortAheadOfOlderWork) {
  Config c = replayConfig(true);
  setUnitCount(c.core, UnitClass::IntAlu, 1);
  c.core.fu.int_mul = {10, true};
  std::vector<Instr> t{loadOf(0x1000, 1), instr(OpClass::IMul, {10}, {11})};
  for (int i = 0; i < 20; ++i) t.push_back(instr(OpClass::Int, {10}, {10}));
  t.push_back(instr(OpClass::Int, {2}, {1}));
  ReplayPipe p(c, t, 120);
  const auto at = p.issueCycles(t.size());
  EXPECT_EQ(at[1], 1u);
  EXPECT_EQ(at[2], 11u);
  EXPECT_EQ(at[8], 18u);   // I7
  EXPECT_EQ(at[9], 20u);   // I8, after D's attempt at 19
  EXPECT_EQ(at[21], 34u);  // I20
  EXPECT_EQ(at[22], 124u);
  EXPECT_EQ(p.h.threads[0].stats.replayed, 17u);
}

// With sim.replay_deferred the booked attempts are not wake-up points: the scheduler names the real attempt (124) as
// its next wake-up after D is first sent at 5, and when it is next asked to issue, at 124, it counts the 16 attempts
// 12..117 it skipped over: the same 51 replays and 54 ALU operations as issuing every cycle (first test).
// In the reference mode the next wake-up is the first booked attempt, 12.
TEST(Replay, DeferredAttemptsAreCountedWhenTheSchedulerNextIssues) {
  for (const bool deferred : {true, false}) {
    Config c = replayConfig(true);
    c.sim.replay_deferred = deferred;
    ReplayPipe p(c, loadWithThreeDependents(), 120);
    p.scheduler.issue(Cycle{1});
    p.scheduler.issue(Cycle{5});
    EXPECT_EQ(p.h.threads[0].stats.replayed, 3u) << deferred;
    Cycle next = Cycle::never();
    p.scheduler.earliestWake(Cycle{5}, next);
    EXPECT_EQ(next, Cycle{deferred ? 124u : 12u}) << deferred;
    p.scheduler.issue(Cycle{124});
    EXPECT_EQ(p.h.threads[0].stats.replayed, 51u) << deferred;
    EXPECT_EQ(p.scheduler.issuedByUnit()[static_cast<int>(FuKind::IntAlu)], 54u) << deferred;
    for (int s = 1; s < 4; ++s) EXPECT_TRUE(p.h.threads[0].rob[s].issued) << deferred;
  }
}

}  // namespace
}  // namespace smtlab::test
