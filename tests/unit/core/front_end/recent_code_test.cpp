// The table of recently fetched code (recent_code.hpp) that the wrong path is walked from: where the
// wrong path starts after a mispredicted branch, how it goes on, what breaks the fall-through chain, and eviction.
#include <gtest/gtest.h>

#include "smtlab/core/recent_code.hpp"

namespace smtlab::test {
namespace {

Instr at(Addr pc, OpClass op, RegId dst = kNoReg, RegId src = kNoReg) {
  Instr in;
  in.pc = pc;
  in.op = op;
  in.branch = defaultBranchKind(op);
  in.dst[0] = dst;
  in.src[0] = src;
  return in;
}
Instr conditional(Addr pc, bool taken, Addr target) {
  Instr in = at(pc, OpClass::Branch);
  in.taken = taken;
  in.target = target;
  return in;
}

TEST(RecentCode, ANotTakenMispredictStartsTheWrongPathAtTheTarget) {
  // Predicted taken (that is why it mispredicted): the wrong path is the target, whether or not it is known.
  RecentCode code;
  EXPECT_EQ(code.wrongPathStart(conditional(0x400000, false, 0x401000)), 0x401000u);
}

TEST(RecentCode, ATakenMispredictStartsAtTheFallThroughSeenBefore) {
  // First pass: the branch at 0x400010 falls through to 0x400014 (a fmul). Second pass: it is taken; predicted not
  // taken, its wrong path is 0x400014, and from there the walk follows what was fetched: fmul -> its fall-through.
  RecentCode code;
  code.noteFetched(conditional(0x400010, false, 0x400100));
  code.noteFetched(at(0x400014, OpClass::FMul, fpReg(1), fpReg(2)));
  code.noteFetched(at(0x400018, OpClass::FAdd, fpReg(3), fpReg(1)));
  const Instr taken = conditional(0x400010, true, 0x400100);
  code.noteFetched(taken);
  ASSERT_EQ(code.wrongPathStart(taken), 0x400014u);
  const RecentCode::Entry* e = code.find(0x400014);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code.op, OpClass::FMul);
  EXPECT_EQ(e->code.src[0], fpReg(2));
  EXPECT_EQ(e->code.dst[0], fpReg(1));
  EXPECT_EQ(RecentCode::successor(*e), 0x400018u);
  // The branch at 0x400010 was fetched after the fadd, so the fadd's fall-through is 0x400010; the branch itself was
  // last taken: its successor is its target.
  EXPECT_EQ(RecentCode::successor(*code.find(0x400018)), 0x400010u);
  EXPECT_EQ(RecentCode::successor(*code.find(0x400010)), 0x400100u);
}

TEST(RecentCode, AWrongIndirectTargetIsUnknown) {
  RecentCode code;
  Instr ret = at(0x400000, OpClass::Return);
  ret.taken = true;
  ret.target = 0x500000;
  code.noteFetched(ret);
  EXPECT_EQ(code.wrongPathStart(ret), 0u) << "the predicted (wrong) target is not in the trace: synthetic";
}

TEST(RecentCode, ATakenBranchOrABrokenChainLeavesNoFallThrough) {
  RecentCode code;
  code.noteFetched(conditional(0x400000, true, 0x400100));
  code.noteFetched(at(0x400100, OpClass::Int));
  EXPECT_EQ(code.find(0x400000)->fallThrough, 0u) << "0x400100 is its target, not its fall-through";
  code.breakChain();  // a squash rewound fetch
  code.noteFetched(at(0x400004, OpClass::Int));
  EXPECT_EQ(code.find(0x400100)->fallThrough, 0u);
}

TEST(RecentCode, AConflictEvictsAndAResetForgets) {
  // Index = (pc ^ pc >> 12) mod 4096: pc 0x1 -> 1 and pc 0x1000 -> 0x1000 ^ 0x1 = 0x1001 -> 1.
  RecentCode code;
  code.noteFetched(at(0x1, OpClass::IMul));
  ASSERT_NE(code.find(0x1), nullptr);
  code.noteFetched(at(0x1000, OpClass::IDiv));
  EXPECT_EQ(code.find(0x1), nullptr);
  ASSERT_NE(code.find(0x1000), nullptr);
  code.reset();
  EXPECT_EQ(code.find(0x1000), nullptr);
}

}  // namespace
}  // namespace smtlab::test
