// Wrong path and replay on whole machines: wrong-path uops take the sibling's slots one for one, a machine with
// wrong_path = false keeps the simpler rule (a mispredict hands the front end to the sibling), and NetBurst replay
// takes issue slots that the sibling loses.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// One integer ALU: the resource both threads compete for. Branches execute on it too (FuKind::IntAlu). Its latency is
// 4 (pipelined: still one uop per cycle): a branch's result comes 4 cycles after it issues, and a wrong path lives
// until that result (wrong_path_resolve_test.cpp), so A's wrong-path uops compete for the ALU in the 3 cycles
// between. (With latency 1 a branch of gen:branchy, whose source is ready, resolves the cycle after it issues,
// before any younger wrong-path uop could issue: its wrong path then takes fetch, queue and ROB slots only.)
Config oneAluPair(bool wrongPath) {
  Config c = baseConfig(2);
  c.core.fu.int_alu = {4, true};
  setUnitCount(c.core, UnitClass::IntAlu, 1);  // the branches' port too (was core.fu.int_alu.count = 1)
  c.core.wrong_path = wrongPath;
  return c;
}

struct AluShare {
  double a, b, wrongPath, replayed;  // per cycle of the measured window
};
AluShare measure(const Config& c, const std::vector<std::string>& specs) {
  const auto stats = runCycles(c, specs, 20000, 200000);
  const auto& a = cpuStats(stats, 0);
  const auto& b = cpuStats(stats, 1);
  const double cycles = num(a.at("cycles"));
  return {num(a.at("instructions")) / cycles, num(b.at("instructions")) / cycles,
          num(a.at("wrong_path_issued")) / cycles, (num(a.at("replayed")) + num(b.at("replayed"))) / cycles};
}

// Thread A: gen:branchy (3 ints and a branch whose direction is a coin toss: about every other branch mispredicts).
// Thread B: gen:alu, independent ints. Every op of both, and every wrong-path uop of A (its mix is ints and branches),
// needs the one ALU. B alone would use it every cycle (IPC 1); B's supply (about 2 ints per cycle from alternate
// fetch slots of 4) always exceeds 1, so the ALU is busy every cycle. Conservation of that one slot per cycle:
//   IPC(A) + IPC(B) + wrong-path uops issued per cycle = 1
// (A's real instructions are never squashed here, so issued = retired up to the window's edges: ~64 of 200000).
const std::vector<std::string> kBranchyVsAlu = {"gen:branchy,count=0", "gen:alu,count=0"};

TEST(WrongPathShare, WrongPathUopsTakeTheSiblingsAluSlotsOneForOne) {
  const AluShare on = measure(oneAluPair(true), kBranchyVsAlu);
  EXPECT_NEAR(on.a + on.b + on.wrongPath, 1.0, 0.01);
  // The mechanism is there: A's wrong path takes ALU cycles. At most the 3 cycles between a branch's issue and its
  // result per mispredict, and A mispredicts at most one branch in 4 instructions: well under half the cycles.
  EXPECT_GT(on.wrongPath, 0.0);
  EXPECT_LT(on.wrongPath, 0.5);
  const AluShare off = measure(oneAluPair(false), kBranchyVsAlu);
  EXPECT_EQ(off.wrongPath, 0.0);
  EXPECT_NEAR(off.a + off.b, 1.0, 0.01);
  // So the sibling's IPC drops by the wrong path's share (less what A itself runs slower with it): B loses at least
  // half of the wrong path's slots.
  EXPECT_LT(on.b, off.b - 0.5 * on.wrongPath);
}

TEST(WrongPathShare, AloneTheMispredictingThreadGetsTheSameResultsWithItsWrongPath) {
  // Single thread: wrong-path uops are younger than everything real and lose every same-cycle choice by age, so
  // with an idle sibling they only delay work behind them... which is none. IPC within 1%.
  Config on = baseConfig(1);
  Config off = on;
  off.core.wrong_path = false;
  const double a = ipcOf(runCounted(on, {"gen:branchy,count=0"}, 50000, 5000), 0);
  const double b = ipcOf(runCounted(off, {"gen:branchy,count=0"}, 50000, 5000), 0);
  EXPECT_NEAR(a, b, 0.01 * b);
}

// Thread A: independent loads that miss the L1D (a new line 64 KiB + 64 bytes apart each time), each followed by one
// int that reads the loaded value. Thread B: gen:alu. A's int is the load's direct dependent: under replay it issues
// at the L1-hit time and every replay_period after until the data (a miss to the L2 or beyond: several replays per
// load). B keeps the one ALU busy every cycle, so per cycle
//   A's ints (half its instructions) + B + replays = 1.
json::object runLoadsVsAlu(const Config& c) {
  std::vector<Instr> a;
  for (std::uint64_t i = 0; i < 60000; ++i) {
    Instr ld;
    ld.op = OpClass::Load;
    ld.pc = 0x400000;
    ld.dst[0] = 1;
    ld.loads[0] = MemRef{0x10000000 + i * (65536 + 64) % (256ull << 20), 8};
    a.push_back(ld);
    Instr use;
    use.op = OpClass::Int;
    use.pc = 0x400004;
    use.dst[0] = 2;
    use.src[0] = 1;
    a.push_back(use);
  }
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(std::move(a)), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor("gen:alu,count=0"), Asid{2});
  auto runTo = [&](std::uint64_t until) {
    while (m.now().value < until) {
      for (const Event& e : m.run(Cycle{until})) {
        if (e.kind == EventKind::SourceEnded) ADD_FAILURE() << "thread A's trace ended inside the window";
      }
    }
  };
  runTo(20000);
  m.resetStats();
  runTo(120000);
  return m.statsJson();
}

TEST(ReplayShare, ReplaysOfAMissingLoadsDependentTakeTheSiblingsAluSlots) {
  Config c = oneAluPair(false);
  c.core.fu.int_alu = {1, true};  // the one ALU of latency 1 this law was written with (the latency does not enter it)
  c.core.replay = true;
  c.core.replay_period = 7;
  auto share = [](const json::object& stats) {
    const auto& a = cpuStats(stats, 0);
    const auto& b = cpuStats(stats, 1);
    const double cycles = num(a.at("cycles"));
    return AluShare{num(a.at("instructions")) / cycles, num(b.at("instructions")) / cycles, 0.0,
                    num(a.at("replayed")) / cycles};
  };
  const AluShare on = share(runLoadsVsAlu(c));
  EXPECT_NEAR(0.5 * on.a + on.b + on.replayed, 1.0, 0.01);
  EXPECT_GT(on.replayed, 0.05);
  c.core.replay = false;
  const AluShare off = share(runLoadsVsAlu(c));
  EXPECT_EQ(off.replayed, 0.0);
  EXPECT_NEAR(0.5 * off.a + off.b, 1.0, 0.01);
  EXPECT_LT(on.b, off.b - 0.5 * on.replayed);
}

}  // namespace
}  // namespace smtlab::test
