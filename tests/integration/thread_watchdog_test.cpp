// The per-thread watchdog: a thread that retires nothing for core.watchdog_cycles while its sibling retires is stopped
// with a DeadlockError naming it (the core-wide watchdog never fires then, so without it a starved thread would run for
// ever), and a thread held at its retire limit is not.
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// A 3000-cycle unpipelined divide at the head of thread 1's window, then ints that need its result: thread 1 cannot
// retire anything before cycle 3000 (the divide alone takes that long once issued), while thread 0 runs ALU work and
// retires from its first few cycles on.
std::vector<Instr> slowHead() {
  std::vector<Instr> trace = {op(OpClass::IDiv, 0x400000, {1}, {60})};
  for (int i = 1; i <= 20; ++i) trace.push_back(op(OpClass::Int, 0x400000 + 4 * i, {2 + i % 8}, {1}));
  return trace;
}

Config twoThreads(std::uint64_t watchdog) {
  Config c = baseConfig(2);
  c.core.watchdog_cycles = watchdog;
  c.core.fu.int_div = {3000, false};
  return c;
}

std::uint64_t cycleIn(const std::string& what) {
  const auto at = what.find("(cycle ");
  return at == std::string::npos ? 0 : std::stoull(what.substr(at + 7));
}

TEST(ThreadWatchdog, AThreadThatRetiresNothingWhileItsSiblingRetiresIsStopped) {
  Machine m(twoThreads(1000));
  m.attach(LogicalCpu{0}, cursorFor("gen:alu,count=0"), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor(slowHead(), "slow-head"), Asid{2});
  try {
    m.run(Cycle{100000});
    FAIL() << "no DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    std::cout << "[ info ] " << what << "\n";
    EXPECT_NE(what.find("thread 1 retired nothing"), std::string::npos) << what;
    EXPECT_NE(what.find("while a sibling retired"), std::string::npos) << what;
    EXPECT_NE(what.find("slow-head"), std::string::npos) << what;
    // Attached at 0, so it fires after cycle 1000; and before 3000, when the divide could first have retired.
    EXPECT_GT(cycleIn(what), 1000u) << what;
    EXPECT_LT(cycleIn(what), 3000u) << what;
  }
  // The sibling did retire (its code comes from DRAM here, a few instructions per 240-cycle line): else the core-wide
  // watchdog would have fired, with another message.
  EXPECT_GT(m.threadStats(LogicalCpu{0}).instructions, 0u);
}

TEST(ThreadWatchdog, ASlowButProgressingThreadRunsToItsEnd) {
  // The same pair with the default watchdog (2,000,000 cycles): the divide ends after 3000-odd cycles and the 20
  // ints follow, so thread 1 retires all 21 instructions well within 100,000 cycles.
  Machine m(twoThreads(Config{}.core.watchdog_cycles));
  m.attach(LogicalCpu{0}, cursorFor("gen:alu,count=0"), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor(slowHead(), "slow-head"), Asid{2});
  while (m.now().value < 100000) m.run(Cycle{100000});
  EXPECT_EQ(m.threadStats(LogicalCpu{1}).instructions, 21u);
}

TEST(ThreadWatchdog, AThreadHeldAtItsRetireLimitIsNotStarved) {
  // Thread 1 stops retiring at 100 instructions by request while thread 0 goes on for 20 watchdog periods.
  Machine m(twoThreads(1000));
  m.attach(LogicalCpu{0}, cursorFor("gen:alu,count=0"), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor("gen:alu,count=0,seed=2"), Asid{2});
  m.setRetireLimit(LogicalCpu{1}, 100);
  std::string error;
  try {
    while (m.now().value < 20000) m.run(Cycle{20000});
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "");
  EXPECT_EQ(m.threadStats(LogicalCpu{1}).instructions, 100u);
  EXPECT_GT(m.threadStats(LogicalCpu{0}).instructions, 10000u);
}

TEST(ThreadWatchdog, WaitsForTheMemorySystemAreNotDeadlocks) {
  // mem.dram.latency may be up to 1,000,000 cycles, half the default watchdog: an instruction fetch (an ITLB walk and
  // an instruction-cache miss, two DRAM trips) or a load queued behind the sibling's misses then waits beyond 2,000,000
  // cycles with a known end. A watchdog that counted such a wait would stop this pair near cycle 2,000,094 with a
  // "deadlock" whose own message says thread 1's load executes until cycle 2,000,158.
  Config c = loadConfig("netburst");
  c.mem.dram.latency = 1000000;
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor("gen:mix,count=200"), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor("gen:chase,footprint=1m,work=3,count=100"), Asid{2});
  std::string error;
  int ended = 0;
  try {
    while (ended < 2) {
      for (const Event& e : m.run(Cycle{m.now().value + (std::uint64_t{1} << 40)})) {
        if (e.kind == EventKind::SourceEnded) ++ended;
      }
    }
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "");
  EXPECT_EQ(m.threadStats(LogicalCpu{0}).instructions, 200u);
  EXPECT_EQ(m.threadStats(LogicalCpu{1}).instructions, 100u);
  // One record in four is a chase load (work=3, docs/traces.md), each on the one before: 25 dependent loads, each a
  // first touch of its line in 1 MiB of them, so each waits for one DRAM trip at least, one after the other.
  EXPECT_GT(m.now().value, 25u * 1000000u);
}

}  // namespace
}  // namespace smtlab::test
