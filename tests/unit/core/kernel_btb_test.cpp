// The BTB is tagged by address space for user code, but kernel-half branches are one entry for every process (the
// kernel's code is mapped identically in every address space; see address_space.hpp).
#include <gtest/gtest.h>

#include "smtlab/core/branch_predictor.hpp"

namespace smtlab {
namespace {

Instr indirectJump(Addr pc, Addr target) {
  Instr j;
  j.pc = pc;
  j.op = OpClass::IndirectJump;
  j.branch = BranchKind::IndirectJump;
  j.taken = true;
  j.target = target;
  return j;
}

TEST(KernelBtb, KernelBranchLearnedInOneAddressSpaceIsPredictedInAnother) {
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState th = bp.makeThreadState();
  // A kernel indirect call site (e.g. a syscall table dispatch): first seen by process 1, BTB cold.
  const Instr j = indirectJump(0xffff'ffff'8100'2000ULL, 0xffff'ffff'8120'0000ULL);
  EXPECT_EQ(bp.predictAndTrain(j, 1, th), BranchOutcome::Mispredict);
  // Process 2 runs the same kernel code: the entry process 1 trained gives the target.
  EXPECT_EQ(bp.predictAndTrain(j, 2, th), BranchOutcome::Correct);
}

TEST(KernelBtb, UserBranchLearnedInOneAddressSpaceIsNotSeenByAnother) {
  BranchPredictor bp(BranchConfig{});
  ThreadBranchState th = bp.makeThreadState();
  const Instr j = indirectJump(0x0000'5555'5555'2000ULL, 0x0000'5555'5555'3000ULL);
  EXPECT_EQ(bp.predictAndTrain(j, 1, th), BranchOutcome::Mispredict);
  EXPECT_EQ(bp.predictAndTrain(j, 1, th), BranchOutcome::Correct);  // process 1's own entry
  EXPECT_EQ(bp.predictAndTrain(j, 2, th), BranchOutcome::Mispredict);  // process 2: no entry of its own yet
}

}  // namespace
}  // namespace smtlab
