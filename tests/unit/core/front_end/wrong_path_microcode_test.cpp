// A microcoded instruction on the wrong path holds its thread's fetch while the microcode sequencer streams its uops,
// as on the right path: sysbench's loop runs into DIV r64 (36 uops) on its wrong path too.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/front_end.hpp"

namespace smtlab::test {
namespace {

Config config(std::uint32_t divUops) {
  Config c = stageConfig(1);
  c.core.fetch_width = 4;
  c.core.frontend_depth = 5;
  c.core.branch.mispredict_penalty = 14;
  c.core.wrong_path = true;
  c.core.uop_queue.entries = 128;  // the 32 real instructions and the wrong path all get past the pipe of 20
  c.core.fu.int_div.uops = divUops;
  c.mem.l1i.latency = 1;
  c.mem.next_line_prefetch = false;
  return c;
}

// 32 fetched instructions: a divide, 30 ints, then a conditional branch the cold predictor gets wrong (weakly taken;
// it is not taken, to a target never fetched): the wrong path replays the last 32 fetched op classes from the oldest,
// so its first uop is the divide's class, then ints (wrong_path.hpp).
std::vector<Instr> trace() {
  std::vector<Instr> t{instr(OpClass::IDiv, {1})};
  for (int i = 0; i < 30; ++i) t.push_back(instr(OpClass::Int, {1}));
  Instr b = instr(OpClass::Branch);
  b.branch = BranchKind::Conditional;
  b.taken = false;
  b.target = 0x400100;
  t.push_back(b);
  for (int i = 0; i < 8; ++i) t.push_back(instr(OpClass::Int, {1}));
  return t;
}

// Runs fetch and delivery until the branch is fetched (cycle `branchCycle`), then `after` more cycles; returns the
// wrong-path uops fetched.
std::uint64_t wrongPathAfter(std::uint32_t divUops, std::uint64_t after, FetchBlock* block = nullptr) {
  const Config c = config(divUops);
  StageHarness h(c);
  MemorySystem memory(c.mem, 1, 1);
  FrontEnd front(CoreId{0}, h.config, memory, h.threads, h.queues);
  memory.fetch(CoreId{0}, ThreadId{0}, Asid{1}, 0x400000, Cycle{0});  // the code line is warm
  h.attach(0, trace());
  ThreadContext& th = h.threads[0];
  std::uint64_t cycle = 1000;
  for (; cycle < 1200 && !th.waitingBranch; ++cycle) {
    front.fetch(Cycle{cycle});
    front.deliver(Cycle{cycle});
  }
  EXPECT_TRUE(th.waitingBranch);
  EXPECT_EQ(th.stats.wrongPathFetched, 0u) << "fetch stops at the mispredicted branch";
  for (const std::uint64_t end = cycle + after; cycle < end; ++cycle) {
    front.fetch(Cycle{cycle});
    front.deliver(Cycle{cycle});
  }
  if (block != nullptr) *block = th.fetchBlock;
  return th.stats.wrongPathFetched;
}

TEST(WrongPathMicrocode, AMicrocodedWrongPathInstructionHoldsFetchForItsSequence) {
  // Divide of 36 uops, fetch width 4: the sequencer holds the thread's fetch ceil(36 / 4) = 9 cycles. The cycle after
  // the branch fetches the divide (1 wrong-path uop) and nothing else; the 8 cycles after that fetch nothing; the
  // 10th cycle after the branch fetches 4 ints.
  FetchBlock block = FetchBlock::None;
  EXPECT_EQ(wrongPathAfter(36, 1), 1u);
  EXPECT_EQ(wrongPathAfter(36, 9, &block), 1u);
  EXPECT_EQ(block, FetchBlock::Microcode);
  EXPECT_EQ(wrongPathAfter(36, 10), 5u);
}

TEST(WrongPathMicrocode, ADecodedDivideDoesNotHoldFetch) {
  // Divide of 4 uops (the decoders make up to 4, kMaxDecoderUops): no sequencer. The cycle after the branch fetches
  // the divide and 3 ints (fetch width 4), the next 4 more.
  EXPECT_EQ(wrongPathAfter(4, 1), 4u);
  EXPECT_EQ(wrongPathAfter(4, 2), 8u);
}

}  // namespace
}  // namespace smtlab::test
