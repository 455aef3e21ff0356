// Scheduler with a stub load/store unit and a stub front end: issue bounds (width, unit counts), latency chains
// through the wake-up lists, load completion from the load/store port, branch resolution to the front end.
#include "smtlab/core/scheduler.hpp"

#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/rename_allocate.hpp"

namespace smtlab::test {
namespace {

// Renames everything in one go (rename_width = 32) at cycle 0 and hands it to the scheduler, as Core does.
struct Pipe {
  StageHarness h;
  StubLoadStore lsu;
  StubBranches branches;
  RenameAllocate rename;
  Scheduler scheduler;
  Pipe(Config c, std::vector<Instr> trace, std::uint32_t loadLatency = 4)
      : h(withWideRename(c)),
        lsu(loadLatency),
        rename(h.config, h.threads, h.queues),
        scheduler(h.config, h.threads, h.queues, lsu, branches) {
    const auto n = static_cast<std::uint32_t>(trace.size());
    h.attach(0, std::move(trace));
    h.queueUops(0, n);
    rename.tick(Cycle{0}, false);
    scheduler.accept(rename.dispatched());
    rename.clearDispatched();
  }
  static Config withWideRename(Config c) {
    c.core.rename_width = 32;
    return c;
  }
  const Uop& uop(std::uint64_t seq) { return h.threads[0].rob[seq]; }
  // Issues cycles 1.. until everything issued; returns the cycle each instruction issued (doneAt - its latency is
  // not used: the test reads issue cycles from when `issued` flips).
  std::vector<std::uint64_t> issueCycles(std::size_t n, std::uint64_t maxCycle = 1000) {
    std::vector<std::uint64_t> at(n, 0);
    for (std::uint64_t cycle = 1; cycle <= maxCycle; ++cycle) {
      scheduler.issue(Cycle{cycle});
      bool all = true;
      for (std::size_t s = 0; s < n; ++s) {
        if (uop(s).issued && at[s] == 0) at[s] = cycle;
        all &= uop(s).issued;
      }
      if (all) break;
    }
    return at;
  }
};

TEST(Scheduler, IndependentIntsIssueThreePerCycleOnThreeAlus) {
  // 7 independent ints, 3 ALUs, issue width 6, all ready at cycle 1 (renamed at 0): 3 at 1, 3 at 2, 1 at 3.
  Config c = stageConfig(1);
  c.core.issue_width = 6;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 3);
  std::vector<Instr> t;
  for (int i = 0; i < 7; ++i) t.push_back(instr(OpClass::Int, {1 + i}));
  Pipe p(c, t);
  EXPECT_EQ(p.issueCycles(7), (std::vector<std::uint64_t>{1, 1, 1, 2, 2, 2, 3}));
}

TEST(Scheduler, IssueWidthBoundsIssueAcrossUnits) {
  // issue_width 2 with plenty of units: 5 independent ints issue 2, 2, 1 over cycles 1..3.
  Config c = stageConfig(1);
  c.core.issue_width = 2;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 8);
  std::vector<Instr> t;
  for (int i = 0; i < 5; ++i) t.push_back(instr(OpClass::Int, {1 + i}));
  Pipe p(c, t);
  EXPECT_EQ(p.issueCycles(5), (std::vector<std::uint64_t>{1, 1, 2, 2, 3}));
}

TEST(Scheduler, ADependentIssuesWhenItsProducersLatencyHasPassed) {
  // imul (latency 3) issues at 1, done at 4; the add that reads it issues at 4; an add reading that one at 5.
  Config c = stageConfig(1);
  c.core.fu.int_mul = {3, true};
  setUnitCount(c.core, UnitClass::IntMul, 1);
  Pipe p(c, {instr(OpClass::IMul, {1}), instr(OpClass::Int, {2}, {1}), instr(OpClass::Int, {3}, {2})});
  EXPECT_EQ(p.issueCycles(3), (std::vector<std::uint64_t>{1, 4, 5}));
  EXPECT_EQ(p.uop(0).doneAt, Cycle{4});
}

TEST(Scheduler, ALoadCompletesWhenTheLoadStorePortSaysAndWakesItsConsumer) {
  // The stub memory answers in 50 cycles: the load issues at 1, its data is ready at 51, the consumer issues at 51.
  Config c = stageConfig(1);
  Pipe p(c, {loadOf(0x1000, 1), instr(OpClass::Int, {2}, {1})}, 50);
  EXPECT_EQ(p.issueCycles(2), (std::vector<std::uint64_t>{1, 51}));
  ASSERT_EQ(p.lsu.loads.size(), 1u);
  EXPECT_EQ(p.lsu.loads[0].second, 0u);
  EXPECT_EQ(p.uop(0).doneAt, Cycle{51});
}

TEST(Scheduler, OnlyAMispredictedBranchIsReportedToTheFrontEnd) {
  // Two branches, the second marked mispredicted by fetch; branches take 1 cycle on an ALU: resolved at 1 + 1 = 2.
  Config c = stageConfig(1);
  Pipe p(c, {instr(OpClass::Branch), instr(OpClass::Branch)});
  p.h.threads[0].rob[1].mispredicted = true;
  p.h.threads[0].unresolvedBranches = 2;
  p.issueCycles(2);
  ASSERT_EQ(p.branches.resolved.size(), 1u);
  EXPECT_EQ(p.branches.resolved[0], (StubBranches::Call{0, 1, 2}));
  EXPECT_EQ(p.h.threads[0].unresolvedBranches, 0u);
}

TEST(Scheduler, AnUnpipelinedDividerTakesOneOperationPerLatency) {
  // One divider, latency 10, not pipelined: independent divides issue at 1, 11, 21; the scheduler says it can next
  // do something at the divider's free cycle.
  Config c = stageConfig(1);
  c.core.fu.int_div = {10, false};
  setUnitCount(c.core, UnitClass::IntDiv, 1);
  Pipe p(c, {instr(OpClass::IDiv, {1}), instr(OpClass::IDiv, {2}), instr(OpClass::IDiv, {3})});
  p.scheduler.issue(Cycle{1});
  Cycle next = Cycle::never();
  p.scheduler.earliestWake(Cycle{1}, next);
  EXPECT_EQ(next, Cycle{2});  // ready instructions are retried next cycle
  EXPECT_EQ(p.issueCycles(3), (std::vector<std::uint64_t>{1, 11, 21}));
}

}  // namespace
}  // namespace smtlab::test
