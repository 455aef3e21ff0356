// FrontEnd over the real memory system with latencies set here: the front-end pipe depth, the uop queue share that
// bounds delivery, the fetch choice between threads, and branch resolution.
#include "smtlab/core/front_end.hpp"

#include <gtest/gtest.h>

#include "front_end_bench.hpp"
#include "../stage_test_util.hpp"

namespace smtlab::test {
namespace {

Config frontConfig(std::uint32_t threads) {
  Config c = stageConfig(threads);
  c.core.fetch_width = 4;
  c.core.frontend_depth = 5;
  c.core.fetch_policy = FetchPolicy::RoundRobin;
  c.mem.l1i.latency = 1;
  c.mem.next_line_prefetch = false;
  return c;
}

std::vector<Instr> ints(int n) { return std::vector<Instr>(static_cast<std::size_t>(n), instr(OpClass::Int, {1})); }

TEST(FrontEnd, FetchedInstructionsReachTheUopQueueAfterTheFrontEndDepth) {
  // fetch_width 4, depth 5: 4 fetched at cycle f are deliverable at f + 5, not before.
  FrontEndBench b(frontConfig(1));
  b.h.attach(0, ints(20));
  const std::uint64_t f = b.warm(0);
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 4u);
  EXPECT_FALSE(b.front.deliver(Cycle{f + 4}));
  EXPECT_TRUE(b.front.deliver(Cycle{f + 5}));
  EXPECT_EQ(b.h.threads[0].enteredSeq.value, 4u);
  EXPECT_EQ(b.h.queues[QueueKind::UopQueue].used(0), 4u);
}

TEST(FrontEnd, DeliveryStopsAtTheThreadsUopQueueShare) {
  // A partitioned uop queue of 6 gives one of two threads 3 entries: of 4 fetched, 3 enter.
  Config c = frontConfig(2);
  c.core.uop_queue = {6, Sharing::Partitioned, 1.0};
  FrontEndBench b(c);
  b.h.attach(0, ints(20));
  const std::uint64_t f = b.warm(0);
  b.front.deliver(Cycle{f + 5});
  EXPECT_EQ(b.h.threads[0].enteredSeq.value, 3u);
}

TEST(FrontEnd, RoundRobinGivesTheFetchSlotToTheThreadsInTurn) {
  // Both threads' code line is brought in (I-cache and ITLB) long before fetch starts at cycle 1000, so both are
  // eligible from then on; fetch_threads 1. The turn starts after thread 0: 1, 0, 1, 0, ... each taking
  // fetch_width = 4, until each thread's pipe (4 x depth 5 = 20; nothing is delivered) is full: 5 turns each.
  Config c = frontConfig(2);
  FrontEndBench b(c);
  b.h.attach(0, ints(40));
  b.h.attach(1, ints(40));
  for (std::uint32_t t = 0; t < 2; ++t) b.memory.fetch(CoreId{0}, ThreadId{t}, Asid{t + 1}, 0x400000, Cycle{0});
  std::vector<int> who;
  std::uint64_t before[2] = {0, 0};
  for (std::uint64_t cycle = 1000; cycle < 1100; ++cycle) {
    b.front.fetch(Cycle{cycle});
    int fetched = 0;
    for (std::uint32_t t = 0; t < 2; ++t) {
      const std::uint64_t now = b.h.threads[t].cursor->fetchSeq().value;
      if (now != before[t]) {
        EXPECT_EQ(now - before[t], 4u) << "cycle " << cycle;
        who.push_back(static_cast<int>(t));
        ++fetched;
      }
      before[t] = now;
    }
    EXPECT_LE(fetched, 1) << "cycle " << cycle;
  }
  EXPECT_EQ(who, (std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0}));
}

TEST(FrontEnd, ASharedUopQueuesFreeEntriesGoToTheThreadsInFetchOrder) {
  // Round robin fetches 4 for thread 1 at cycles 1000, 1002, ..., 1008 and for thread 0 at 1001, ..., 1009 (the test
  // above), filling both pipes. At cycle 2000 every group is at the end of its pipe. The shared uop queue holds 4, one
  // group: each time it is emptied, the group fetched earliest enters, so the groups enter in fetch order,
  // 1, 0, 1, 0, ..., whichever thread has the lower id (the front end is one pipeline: what it fetched first arrives
  // first).
  Config c = frontConfig(2);
  c.core.uop_queue = {4, Sharing::Shared, 1.0};
  FrontEndBench b(c);
  b.h.attach(0, ints(40));
  b.h.attach(1, ints(40));
  b.warmCode();
  for (std::uint64_t cycle = 1000; cycle < 1010; ++cycle) b.front.fetch(Cycle{cycle});
  ASSERT_EQ(b.h.threads[0].pipeCount(), 20u);
  ASSERT_EQ(b.h.threads[1].pipeCount(), 20u);
  SharedCapacity& uopq = b.h.queues[QueueKind::UopQueue];
  std::vector<int> who;
  for (std::uint64_t cycle = 2000; cycle < 2010; ++cycle) {
    for (std::uint32_t t = 0; t < 2; ++t) uopq.release(t, uopq.used(t));  // rename took the whole queue
    b.front.deliver(Cycle{cycle});
    for (std::uint32_t t = 0; t < 2; ++t) {
      if (uopq.used(t) != 0) who.push_back(static_cast<int>(t));
      EXPECT_EQ(uopq.used(t) % 4, 0u) << "a group enters whole, cycle " << cycle;
    }
  }
  EXPECT_EQ(who, (std::vector<int>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0}));
}

TEST(FrontEnd, AMispredictedBranchResolvedAtDoneLetsFetchResumeAfterThePenalty) {
  Config c = frontConfig(1);
  c.core.branch.mispredict_penalty = 14;
  c.core.wrong_path = false;  // fetch simply stops at the branch (wrong_path_test.cpp covers the wrong path)
  FrontEndBench b(c);
  b.h.attach(0, ints(4));
  ThreadContext& th = b.h.threads[0];
  th.waitingBranch = true;
  th.waitingBranchSeq = SeqNum{7};
  Uop other;
  other.seq = SeqNum{6};
  b.front.mispredictResolved(0, other, Cycle{100});
  EXPECT_TRUE(th.waitingBranch) << "only the branch that fetch waits for releases it";
  Uop branch;
  branch.seq = SeqNum{7};
  b.front.mispredictResolved(0, branch, Cycle{100});
  EXPECT_FALSE(th.waitingBranch);
  EXPECT_EQ(th.fetchResumeAt, Cycle{114});
  EXPECT_EQ(th.fetchBlock, FetchBlock::Mispredict);
}

}  // namespace
}  // namespace smtlab::test
