// NetBurst replay attempts of cycles the core skipped (event skipping): the scheduler counts them per replaying uop in
// one step (Scheduler::countSkippedReplays) instead of one attempt at a time. The counts are derived here from the
// replay loop's period, as in replay_test.cpp: a skip that ends inside a train, a train squashed before the skip, and a
// train counted over several skips.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"
#include "smtlab/core/scheduler.hpp"

namespace smtlab::test {
namespace {

struct SkipPipe {
  StageHarness h;
  StubLoadStore lsu;
  StubBranches branches;
  RenameAllocate rename;
  Scheduler scheduler;
  SkipPipe(Config c, std::vector<Instr> trace, std::uint32_t loadLatency)
      : h(c), lsu(loadLatency), rename(h.config, h.threads, h.queues),
        scheduler(h.config, h.threads, h.queues, lsu, branches) {
    const auto n = static_cast<std::uint32_t>(trace.size());
    h.attach(0, std::move(trace));
    h.queueUops(0, n);
    rename.tick(Cycle{0}, false);
    scheduler.accept(rename.dispatched());
    rename.clearDispatched();
  }
  std::uint64_t replayed() const { return h.threads[0].stats.replayed; }
  std::uint64_t aluOps() const { return scheduler.issuedByUnit()[static_cast<int>(FuKind::IntAlu)]; }
};

Config skipConfig() {
  Config c = stageConfig(1);
  c.core.rename_width = 32;
  c.core.issue_width = 6;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 3);
  c.core.fu.load = {0, true};  // an L1D hit delivers mem.l1d.latency after the load issues
  setUnitCount(c.core, UnitClass::Load, 1);
  c.mem.l1d.latency = 4;
  c.core.replay = true;
  c.core.replay_period = 7;
  c.sim.replay_deferred = true;
  return c;
}

// A load into r1 and three ints that read r1: the load issues at 1, the hit time is 5, the (stub) data comes at 121.
// Each dependent is sent at 5 and comes back at 12, 19, ..., 117 (16 attempts), then issues for real at 124.
TEST(ReplaySkipped, ASkipEndingInsideATrainCountsOnlyTheAttemptsBeforeIt) {
  SkipPipe p(skipConfig(), loadWithThreeDependents(), 120);
  p.scheduler.issue(Cycle{1});
  p.scheduler.issue(Cycle{5});
  EXPECT_EQ(p.replayed(), 3u);
  // Skipped to 60: the attempts at 12, 19, ..., 54 (7 per dependent) are counted; 61 is the next one.
  p.scheduler.catchUpReplays(Cycle{60});
  EXPECT_EQ(p.replayed(), 3u + 3 * 7);
  EXPECT_EQ(p.aluOps(), 3u + 3 * 7);
  // Asked again for the same cycle: nothing more.
  p.scheduler.catchUpReplays(Cycle{60});
  EXPECT_EQ(p.replayed(), 3u + 3 * 7);
  // The core ticks at 61 (an attempt, taken in its cycle) and then skips to 124: 61 and 68..117 (8 more each).
  p.scheduler.issue(Cycle{61});
  EXPECT_EQ(p.replayed(), 3u + 3 * 8);
  p.scheduler.issue(Cycle{124});
  // The same totals as issuing every cycle (replay_test.cpp): 17 replays per dependent, 54 ALU operations.
  EXPECT_EQ(p.replayed(), 51u);
  EXPECT_EQ(p.aluOps(), 54u);
  for (int s = 1; s < 4; ++s) EXPECT_TRUE(p.h.threads[0].rob[s].issued);
}

TEST(ReplaySkipped, ASquashedUopsAttemptsAreNotCounted) {
  SkipPipe p(skipConfig(), loadWithThreeDependents(), 120);
  p.scheduler.issue(Cycle{1});
  p.scheduler.issue(Cycle{5});
  // The third dependent is squashed after its first send: its loop is emptied, the other two replay 7 times each
  // in the skipped cycles 12..54.
  p.h.threads[0].rob[3].valid = false;
  p.scheduler.catchUpReplays(Cycle{60});
  EXPECT_EQ(p.replayed(), 3u + 2 * 7);
  EXPECT_EQ(p.aluOps(), 3u + 2 * 7);
}

TEST(ReplaySkipped, ATrainCountedInSeveralSkipsEndsAtItsLastAttempt) {
  // One load and one dependent; the dependent's train (12, 19, ..., 117) is counted across three skips.
  Config c = skipConfig();
  SkipPipe p(c, {loadOf(0x1000, 1), instr(OpClass::Int, {2}, {1})}, 120);
  p.scheduler.issue(Cycle{1});
  p.scheduler.issue(Cycle{5});  // dependent A sent: attempts 12, 19, ..., 117
  EXPECT_EQ(p.replayed(), 1u);
  // Skipped to 20: 12 and 19 counted.
  p.scheduler.catchUpReplays(Cycle{20});
  EXPECT_EQ(p.replayed(), 1u + 2);
  // To 118: 26, 33, ..., 117 (14 more); the train is then done.
  p.scheduler.catchUpReplays(Cycle{118});
  EXPECT_EQ(p.replayed(), 1u + 16);
  // Nothing is booked after 117: a later skip adds nothing, and the dependent issues at 124.
  p.scheduler.catchUpReplays(Cycle{123});
  EXPECT_EQ(p.replayed(), 17u);
  p.scheduler.issue(Cycle{124});
  EXPECT_TRUE(p.h.threads[0].rob[1].issued);
  EXPECT_EQ(p.aluOps(), 18u);
}

}  // namespace
}  // namespace smtlab::test
