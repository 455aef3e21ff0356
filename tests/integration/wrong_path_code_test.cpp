// The wrong path from the thread's own code, with register dependences: after a mispredict the front
// end walks the code it fetched lately from the predicted target, and those uops wait for their real producers, so a
// wrong path whose inputs come from a long divide takes fetch and queue slots but almost no issue slots.
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// Block X at 0x401000: seven `int r2 <- r1` and a jump back to its start (so a walk through X loops in X). Then, at
// 0x402000, the producer of r1 (`producer`), a chain of eight 3-cycle multiplies on r5, and a conditional branch on r5
// that is not taken with target X: the cold predictor says weakly taken, so it mispredicts and the wrong path is X.
// The chain keeps the branch unresolved for ~8 x 3 cycles after it is fetched, so its wrong path has time to issue
// (the wrong path lives until the branch's result, wrong_path_resolve_test.cpp). Then right-path work.
std::vector<Instr> trace(OpClass producer) {
  std::vector<Instr> t;
  for (int i = 0; i < 7; ++i) t.push_back(opAt(0x401000 + 4 * i, OpClass::Int, 2, 1));
  Instr jmp = opAt(0x40101c, OpClass::Jump, -1, -1);
  jmp.taken = true;
  jmp.target = 0x401000;
  t.push_back(jmp);
  t.push_back(opAt(0x402000, producer, 1, 1));
  for (int i = 0; i < 8; ++i) t.push_back(opAt(0x402004 + 4 * i, OpClass::IMul, 5, 5));
  Instr br = opAt(0x402024, OpClass::Branch, -1, 5);
  br.taken = false;
  br.target = 0x401000;
  t.push_back(br);
  for (int i = 0; i < 8; ++i) t.push_back(opAt(0x402028 + 4 * i, OpClass::Int, 3, 60));
  return t;
}

struct WrongPath {
  std::uint64_t fetched, fromCode, issued, mispredicts;
};
WrongPath run(OpClass producer) {
  Config c = widthOneConfig();
  c.core.wrong_path = true;
  c.core.branch.mispredict_penalty = 10;
  c.core.fu.int_div = {60, false};
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(trace(producer)), Asid{1});
  runToEnd(m);
  const auto stats = m.statsJson();
  const auto& s = cpuStats(stats, 0);
  return {u64(s.at("wrong_path_fetched")), u64(s.at("wrong_path_from_code")), u64(s.at("wrong_path_issued")),
          u64(s.at("mispredicts"))};
}

TEST(WrongPathCode, TheWrongPathIsTheThreadsCodeAtThePredictedTarget) {
  // Every wrong-path uop here is walked from the table: X is known, and its jump keeps the walk inside X.
  const WrongPath w = run(OpClass::Int);
  ASSERT_EQ(w.mispredicts, 1u);
  // The branch is fetched at f, after the eight multiplies (f - 8 .. f - 1). The first is renamed at f - 5
  // (frontend_depth 3) and issues at f - 4; the chain completes at f - 4 + 8 x 3 = f + 20, when the branch issues; it
  // resolves at f + 21. The wrong path is fetched one per cycle in between: f + 1 .. f + 20.
  EXPECT_EQ(w.fetched, 20u);
  EXPECT_EQ(w.fromCode, w.fetched);
}

TEST(WrongPathCode, WrongPathUopsWaitForTheirRealProducer) {
  // Producer a 60-cycle divide: the branch resolves after the multiply chain (~8 x 3 cycles after the divide's
  // issue), ~35 cycles before r1 is ready. The seven ints of each X round read r1: none can issue; only X's jumps (no
  // sources), at most one in eight of the uops fetched (rounded up).
  const WrongPath slow = run(OpClass::IDiv);
  ASSERT_EQ(slow.mispredicts, 1u);
  ASSERT_GE(slow.fetched, 8u);
  EXPECT_GE(slow.issued, 1u) << "the jump of the first walk through X has no sources and issues";
  EXPECT_LE(slow.issued, slow.fetched / 8) << "at most the jumps fetched";
  // Producer a 1-cycle int, done long before the wrong path is renamed: the same ints issue as soon as a slot is
  // free (without dependences both runs would issue alike). A uop fetched at c is renamed at c + 3 and can issue from
  // c + 4: the wrong path (fetched from f + 1) issues in cycles f + 5 .. f + 19, 15 cycles less the five that the
  // older multiplies take (f + 5, f + 8, ..., f + 17); at f + 20 the branch takes the slot: 10 issued.
  const WrongPath fast = run(OpClass::Int);
  EXPECT_EQ(fast.issued, 15u - 5);
}

}  // namespace
}  // namespace smtlab::test
