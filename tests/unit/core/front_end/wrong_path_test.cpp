// The front end's wrong path: after a mispredicted branch its thread keeps fetching synthetic uops of
// its recent mix into its pipe and the uop queue, ICOUNT counts them, and they are squashed when the branch resolves.
#include <gtest/gtest.h>

#include "front_end_bench.hpp"
#include "../stage_test_util.hpp"
#include "smtlab/core/front_end.hpp"

namespace smtlab::test {
namespace {

Config wrongPathConfig(std::uint32_t threads) {
  Config c = stageConfig(threads);
  c.core.fetch_width = 4;
  c.core.frontend_depth = 5;
  c.core.fetch_policy = FetchPolicy::RoundRobin;
  c.core.branch.mispredict_penalty = 14;
  c.core.wrong_path = true;
  c.mem.l1i.latency = 1;
  c.mem.next_line_prefetch = false;
  return c;
}

// A conditional branch the cold predictor gets wrong: its counters start weakly taken, and it is not taken.
Instr mispredicted() {
  Instr b = instr(OpClass::Branch);
  b.branch = BranchKind::Conditional;
  b.taken = false;
  b.target = 0x400100;
  return b;
}

std::vector<Instr> branchThenInts(OpClass before, int n) {
  std::vector<Instr> t{instr(before, {1}), mispredicted()};
  for (int i = 0; i < n; ++i) t.push_back(instr(OpClass::Int, {1}));
  return t;
}

TEST(WrongPath, AMispredictingThreadFillsItsPipeWithWrongPathUopsUntilResolution) {
  // fetch_width 4, depth 5: the thread's pipe holds 4 x 5 = 20. Cycle 1000 fetches the imul and the mispredicted
  // branch (fetch stops at it: 2 real). From 1001 on, wrong-path uops fill the rest of the pipe: 4, 4, 4, 4, 2 = 18
  // by cycle 1005, and nothing of the real stream after the branch (fetchSeq stays 2).
  FrontEndBench b(wrongPathConfig(1));
  b.warmCode();
  b.h.attach(0, branchThenInts(OpClass::IMul, 20));
  ThreadContext& th = b.h.threads[0];
  for (std::uint64_t cycle = 1000; cycle <= 1010; ++cycle) b.front.fetch(Cycle{cycle});
  EXPECT_EQ(th.cursor->fetchSeq().value, 2u);
  EXPECT_TRUE(th.waitingBranch);
  EXPECT_EQ(th.stats.wrongPathFetched, 18u);
  EXPECT_EQ(th.wrongPath.pipeCount(), 18u);
  EXPECT_EQ(th.stats.fetched, 2u) << "wrong-path uops are not trace instructions";
  // The mix replays the last 32 fetched op classes from the oldest: 30 never-filled (Int), then imul, branch.
  EXPECT_EQ(th.wrongPath.at(0).op, OpClass::Int);

  // Delivery: the real two were fetched at 1000 (available at 1005), the first 4 wrong-path uops at 1001 (1006).
  b.front.deliver(Cycle{1005});
  EXPECT_EQ(th.enteredSeq.value, 2u);
  EXPECT_EQ(th.wrongPath.entered, 0u);
  b.front.deliver(Cycle{1006});
  EXPECT_EQ(th.wrongPath.entered, 4u);
  EXPECT_EQ(b.h.queues[QueueKind::UopQueue].used(0), 6u);

  // The branch issues and will be done at 1020. The wrong path goes on until that result is known and is squashed
  // then (a core checks the branch when it executes; mispredict_penalty is the refill after it).
  Uop branch;
  branch.seq = SeqNum{1};
  b.front.mispredictResolved(0, branch, Cycle{1020});
  EXPECT_TRUE(th.waitingBranch);
  EXPECT_FALSE(b.front.resolveWrongPaths(Cycle{1019}));
  EXPECT_TRUE(b.front.resolveWrongPaths(Cycle{1020}));
  EXPECT_FALSE(th.waitingBranch);
  EXPECT_TRUE(th.wrongPath.empty());
  EXPECT_EQ(b.h.queues[QueueKind::UopQueue].used(0), 2u) << "only the two real instructions stay queued";
  // The right path is fetched from then on, as without a wrong path: 1020 + 14.
  EXPECT_EQ(th.fetchResumeAt, Cycle{1034});
  EXPECT_EQ(th.fetchBlock, FetchBlock::Mispredict);
}

TEST(WrongPath, TheWrongPathReplaysTheThreadsRecentOpMix) {
  // 32 fetched instructions before the branch: 31 imuls and the branch. The wrong path replays them from the oldest
  // of the last 32, so its first 31 uops are imuls and the 32nd is a branch's op class. (A uop queue of 128, so that
  // the 32 real ones and 32 wrong-path ones all get past the pipe of 20.)
  Config c = wrongPathConfig(1);
  c.core.uop_queue.entries = 128;
  FrontEndBench b(c);
  b.warmCode();
  std::vector<Instr> t(31, instr(OpClass::IMul, {1}));
  t.push_back(mispredicted());
  for (int i = 0; i < 40; ++i) t.push_back(instr(OpClass::Int, {1}));
  b.h.attach(0, t);
  ThreadContext& th = b.h.threads[0];
  for (std::uint64_t cycle = 1000; cycle < 1200 && th.wrongPath.tail < 32; ++cycle) {
    b.front.fetch(Cycle{cycle});
    b.front.deliver(Cycle{cycle});
  }
  ASSERT_EQ(th.cursor->fetchSeq().value, 32u);
  ASSERT_GE(th.wrongPath.tail, 32u);
  for (std::uint64_t i = 0; i < 31; ++i) EXPECT_EQ(th.wrongPath.at(i).op, OpClass::IMul) << i;
  EXPECT_EQ(th.wrongPath.at(31).op, OpClass::Branch);
}

TEST(WrongPath, IcountCountsWrongPathUops) {
  // ICOUNT gives the slot to the thread with fewer uops in the front end (nothing is delivered here, so: the pipe).
  // Thread 0 mispredicts on its first branch; thread 1 fetches ints. With wrong-path uops counted, whichever thread
  // wins the tie at 1000, by the end of cycle 1005 the counts went: t0 fetches {imul, branch} = 2 and t1 4 (in
  // either order over 1000-1001); 1002: t0 (2 < 4) fetches 4 wrong-path -> 6; 1003: t1 (4 < 6) -> 8; 1004: t0 (6 <
  // 8) -> 10; 1005: t1 (8 < 10) -> 12. Not counted, thread 0 would stay at 2 and win every cycle: t1 stuck at 4.
  Config c = wrongPathConfig(2);
  c.core.fetch_policy = FetchPolicy::ICount;
  FrontEndBench b(c);
  b.warmCode();
  b.h.attach(0, branchThenInts(OpClass::IMul, 40));
  b.h.attach(1, std::vector<Instr>(40, instr(OpClass::Int, {1})));
  for (std::uint64_t cycle = 1000; cycle <= 1005; ++cycle) b.front.fetch(Cycle{cycle});
  EXPECT_EQ(b.h.threads[1].cursor->fetchSeq().value, 12u);
  EXPECT_EQ(b.h.threads[0].wrongPath.pipeCount(), 8u);
}

TEST(WrongPath, ASquashThatKeepsTheBranchKeepsItsRedirect) {
  // A squash of younger work (a memory-order flush, say) takes the wrong-path uops, but the branch has issued and
  // will not report again: its resolution at 1020 and the redirect 14 cycles later must still come, or the thread
  // would wait forever.
  FrontEndBench b(wrongPathConfig(1));
  b.warmCode();
  b.h.attach(0, branchThenInts(OpClass::Int, 20));
  ThreadContext& th = b.h.threads[0];
  for (std::uint64_t cycle = 1000; cycle <= 1003; ++cycle) b.front.fetch(Cycle{cycle});
  Uop branch;
  branch.seq = SeqNum{1};
  b.front.mispredictResolved(0, branch, Cycle{1020});
  th.wrongPath.squash(0, b.h.queues);
  EXPECT_TRUE(th.wrongPath.empty());
  EXPECT_FALSE(b.front.resolveWrongPaths(Cycle{1019}));
  EXPECT_TRUE(b.front.resolveWrongPaths(Cycle{1020}));
  EXPECT_FALSE(th.waitingBranch);
  EXPECT_EQ(th.fetchResumeAt, Cycle{1034});
}

TEST(WrongPath, OffTheThreadStopsFetchingAtTheMispredict) {
  Config c = wrongPathConfig(1);
  c.core.wrong_path = false;
  FrontEndBench b(c);
  b.warmCode();
  b.h.attach(0, branchThenInts(OpClass::Int, 20));
  for (std::uint64_t cycle = 1000; cycle <= 1010; ++cycle) b.front.fetch(Cycle{cycle});
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 2u);
  EXPECT_EQ(b.h.threads[0].stats.wrongPathFetched, 0u);
  EXPECT_TRUE(b.h.threads[0].wrongPath.empty());
}

TEST(WrongPath, AResetLeavesNoWrongPathWriterInTheRenameMap) {
  // Ring positions start again at 0 after a reset (a new trace on the thread, as at an OS task switch), so an entry of
  // the wrong-path rename map from before it would look live (index >= head = 0) and name a slot of a squashed uop as a
  // producer: a later wrong-path uop would then park on it and wait for the slot's next issue, and the statistics would
  // depend on how the scheduler reuses slots. Invariant: after reset, no register has a wrong-path writer.
  WrongPathState wp;
  wp.allocate(64);
  for (int i = 0; i < 40; ++i) wp.fetchOne(Cycle{1});
  // As rename does for a uop writing r (rename_allocate.cpp, renameWrongPath): ring index + 1.
  wp.renamed = 40;
  for (std::size_t r = 0; r < wp.renameMap.size(); ++r) wp.renameMap[r] = 1 + (r % 40);
  wp.reset();
  EXPECT_EQ(wp.head, 0u);
  for (std::size_t r = 0; r < wp.renameMap.size(); ++r) {
    EXPECT_EQ(wp.renameMap[r], 0u) << "register " << r << " still names ring index " << wp.renameMap[r] - 1;
  }
}

}  // namespace
}  // namespace smtlab::test
