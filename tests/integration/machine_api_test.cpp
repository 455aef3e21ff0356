// The Machine as the OS layer drives it: runs are reproducible bit for bit, splitting a run into steps changes
// nothing, detach/attach neither loses nor repeats an instruction, marks come back with their ids at the cycle they
// retire, and the watchdog stops a run that retires nothing with a message naming the cycle, thread and resource.
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

json::object withoutHostTime(json::object stats) {
  stats.erase("host_seconds");
  stats.erase("instructions_per_host_second");
  return stats;
}

TEST(MachineApi, TwoIdenticalRunsGiveIdenticalJson) {
  Config c = baseConfig(2);
  c.system.cores = 2;
  const std::vector<std::string> specs = {"gen:mix,count=0,seed=3", "gen:chase,footprint=8m,work=3,count=0",
                                          "gen:branchy,count=0", "gen:mix,footprint=64m,hot=0.5,count=0,seed=9"};
  const auto a = withoutHostTime(runCounted(c, specs, 20000, 2000));
  const auto b = withoutHostTime(runCounted(c, specs, 20000, 2000));
  EXPECT_EQ(json::serialize(a), json::serialize(b));
  // ...and the comparison can fail: another seed gives other numbers.
  auto other = specs;
  other[0] = "gen:mix,count=0,seed=4";
  EXPECT_NE(json::serialize(a), json::serialize(withoutHostTime(runCounted(c, other, 20000, 2000))));
}

json::object runInSteps(const Config& c, const std::vector<std::string>& specs, std::uint64_t end,
                        const std::vector<std::uint64_t>& steps) {
  Machine m(c);
  for (std::uint32_t i = 0; i < specs.size(); ++i) m.attach(LogicalCpu{i}, cursorFor(specs[i]), Asid{i + 1});
  std::size_t k = 0;
  while (m.now().value < end) {
    const std::uint64_t step = steps.empty() ? end : steps[k++ % steps.size()];
    m.run(Cycle{std::min(end, m.now().value + step)});
  }
  return m.statsJson();
}

TEST(MachineApi, ARunSplitIntoManyStepsGivesIdenticalStatistics) {
  Config c = baseConfig(2);
  // Memory-bound and branchy work, so that the run loop skips idle cycles and both threads stall differently.
  const std::vector<std::string> specs = {"gen:chase,footprint=64m,work=5,count=0", "gen:mix,footprint=4m,count=0"};
  const std::uint64_t end = 200000;
  const auto whole = runInSteps(c, specs, end, {});
  const auto steps = runInSteps(c, specs, end, {1, 7, 250, 3, 1000, 13, 4096, 2});
  EXPECT_GT(u64(whole.at("instructions")), 1000u);
  EXPECT_EQ(json::serialize(whole), json::serialize(steps));
}

TEST(MachineApi, DetachAndAttachConserveInstructions) {
  // A trace of known length moves between logical CPUs (two cores x two threads), detached in flight dozens of
  // times while a sibling runs; every instruction retires exactly once.
  Config c = baseConfig(2);
  c.system.cores = 2;
  const std::uint64_t length = 30000;
  Machine m(c);
  m.setChecking(true);
  m.attach(LogicalCpu{1}, cursorFor("gen:alu,count=0"), Asid{9});  // keeps CPU 0's sibling busy
  auto moving = cursorFor("gen:mix,count=30000,seed=5");
  const std::uint32_t places[] = {0, 2, 3, 0, 3, 2};
  std::uint64_t detaches = 0, squashedSeen = 0;
  bool ended = false;
  std::uint32_t where = 0;
  for (std::uint32_t round = 0; !ended && round < 10000; ++round) {
    where = places[round % 6];
    m.attach(LogicalCpu{where}, moving, Asid{1});
    moving.reset();
    // Run a few hundred cycles (varying), then take the trace off mid-flight.
    const std::uint64_t until = m.now().value + 150 + (round * 97) % 400;
    while (!ended && m.now().value < until) {
      for (const Event& e : m.run(Cycle{until})) {
        if (e.kind == EventKind::SourceEnded && e.cpu.value == where) ended = true;
      }
    }
    squashedSeen += m.threadStats(LogicalCpu{where}).squashed;
    if (ended) break;
    moving = m.detach(LogicalCpu{where});
    ASSERT_TRUE(moving);
    ++detaches;
    m.run(Cycle{m.now().value + 37});  // the CPU stays idle for a while (the sibling on CPU 1 runs on)
  }
  ASSERT_TRUE(ended);
  EXPECT_GT(detaches, 30u);
  EXPECT_GT(squashedSeen, 0u) << "detaching should have squashed in-flight instructions";
  std::uint64_t retired = 0, fetched = 0;
  for (std::uint32_t cpu : {0u, 2u, 3u}) {
    retired += m.threadStats(LogicalCpu{cpu}).instructions;
    fetched += m.threadStats(LogicalCpu{cpu}).fetched;
  }
  EXPECT_EQ(retired, length);
  EXPECT_EQ(fetched, length) << "fetched counts each instruction once (squashed fetches are taken back)";
  auto cursor = m.detach(LogicalCpu{where});
  ASSERT_TRUE(cursor);
  EXPECT_EQ(cursor->retired(), length);
  EXPECT_GT(m.threadStats(LogicalCpu{1}).instructions, 0u);
}

TEST(MachineApi, ADetachedSourceWithNothingInFlightGivesItsRingBack) {
  // The OS layer keeps a source per task and kernel-path instance; each ring is 128 KiB or more. Detaching one that
  // has retired everything it read frees its ring; one with records in flight keeps them (they are fetched again).
  Machine m(baseConfig(1));
  m.setChecking(true);
  auto endless = cursorFor("gen:mix,count=0,seed=3");
  m.attach(LogicalCpu{0}, endless, Asid{1});
  m.run(Cycle{m.now().value + 300});
  endless = m.detach(LogicalCpu{0});
  ASSERT_GT(endless->loadedEnd().value, endless->retireSeq().value);
  EXPECT_GT(endless->ringSize(), 0u);

  auto finite = cursorFor("gen:mix,count=2000,seed=4");
  for (int run = 1; run <= 2; ++run) {
    m.attach(LogicalCpu{0}, finite, Asid{2});
    runToEnd(m);
    finite = m.detach(LogicalCpu{0});
    EXPECT_TRUE(finite->finished());
    EXPECT_EQ(finite->ringSize(), 0u) << "run " << run;
    EXPECT_EQ(finite->retired(), 2000u * run);
    finite->restart();  // the next run reads into a new ring
  }
}

TEST(MachineApi, MarksAreReportedWithTheirIdAtTheirRetireCycle) {
  // On the scalar machine (first fetch at 270, depth 3): mark 7 is fetched at 271, renamed 274, issued 275, done and
  // retired 276; mark 42 (fetched 273) retires at 278; the trace ends at 279. The trace runs on CPU 1 of a two-thread
  // core with CPU 0 idle, which must not change the timing.
  Config c = widthOneConfig();
  c.core.threads = 2;
  Machine m(c);
  m.attach(LogicalCpu{1}, cursorFor(dataPath("marks.txt")), Asid{1});
  const Completion done = runToEnd(m);
  std::vector<std::pair<std::uint32_t, std::uint64_t>> marks;
  for (const Event& e : done.events) {
    if (e.kind != EventKind::Mark) continue;
    EXPECT_EQ(e.cpu.value, 1u);
    marks.emplace_back(e.markId, e.cycle.value);
  }
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> expected = {{7, 276}, {42, 278}};
  EXPECT_EQ(marks, expected);
  EXPECT_EQ(done.endCycle[1], 279u);
  EXPECT_EQ(m.threadStats(LogicalCpu{1}).marks, 2u);
  EXPECT_EQ(m.threadStats(LogicalCpu{1}).instructions, 5u);
}

TEST(MachineApi, EveryThreadStopsAtExactlyItsInstructionCountAndItsCpiStackCoversEveryCycle) {
  // runTraces measures each thread over its first N instructions (retire limit), however the threads interleave;
  // the CPI stack charges each cycle a thread had work to exactly one cause.
  Config c = baseConfig(2);
  c.system.cores = 2;
  const auto s = runCounted(c, {"gen:mix,count=0", "gen:chase,footprint=16m,work=2,count=0", "gen:branchy,count=0",
                                "gen:spin,pause=1,count=0"},
                            12345, 1000);
  for (std::size_t cpu = 0; cpu < 4; ++cpu) {
    const auto& t = cpuStats(s, cpu);
    EXPECT_EQ(u64(t.at("instructions")), 12345u) << "cpu " << cpu;
    std::uint64_t stacked = 0;
    for (const auto& [cause, cycles] : t.at("cpi_stack_cycles").as_object()) stacked += u64(cycles);
    EXPECT_EQ(stacked, u64(t.at("cycles"))) << "cpu " << cpu;
  }
}

TEST(MachineApi, CoresRunInLockStepWithoutDisturbingEachOther) {
  // Two single-thread cores share only the LLC and DRAM. Independent ints and a DRAM chase (one 8-cycle line transfer
  // per ~270 cycles: the channel is idle) run on each as fast as alone.
  Config one = baseConfig(1);
  Config two = one;
  two.system.cores = 2;
  const std::string chase = "gen:chase,footprint=64m,count=0";
  const std::string alu = "gen:alu,count=0";
  const double aluAlone = ipcOf(runCounted(one, {alu}, 30000, 3000), 0);
  const double chaseAlone = ipcOf(runCounted(one, {chase}, 1500, 100), 0);
  const auto both = runCounted(two, {alu, chase}, 1500, 100);
  EXPECT_EQ(u64(cpuStats(both, 1).at("core")), 1u);
  EXPECT_NEAR(ipcOf(both, 0), aluAlone, 0.01 * aluAlone);
  EXPECT_NEAR(ipcOf(both, 1), chaseAlone, 0.01 * chaseAlone);
  const auto chases = runCounted(two, {chase, chase}, 1500, 100);
  EXPECT_NEAR(ipcOf(chases, 0), chaseAlone, 0.02 * chaseAlone);
  EXPECT_NEAR(ipcOf(chases, 1), chaseAlone, 0.02 * chaseAlone);
}

TEST(MachineApi, InvariantChecksSurviveAStatisticsReset) {
  // A warm-up ends with resetStats while instructions are in flight; they retire afterwards. The invariant checks
  // (Machine::setChecking, SMTLAB_CHECK=1) must hold across that, or no checking run can use --warmup.
  Machine m(baseConfig(1));
  m.setChecking(true);
  // At the reset the ROB is full behind a DRAM load and the front end is full: 160-odd instructions fetched before
  // the reset retire after it, before anything fetched after it.
  m.attach(LogicalCpu{0}, cursorFor("gen:chase,footprint=64m,work=100,count=0"), Asid{1});
  m.run(Cycle{20000});
  m.resetStats();
  std::string error;
  try {
    m.run(Cycle{40000});
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error, "");
  EXPECT_GT(m.threadStats(LogicalCpu{0}).instructions, 5000u);
}

// A long operation at the head of the window, followed by ints that need its result, each on its own code line so
// that every one is an I-cache miss served by DRAM (the first 30 + 40 + 200 = 270 with the ITLB walk, the others
// 40 + 200 = 240 in the same page). Instruction k is fetched at 270 + 240 k.
std::vector<Instr> stuckTrace(Instr head) {
  std::vector<Instr> trace = {head};
  for (int i = 1; i <= 20; ++i) trace.push_back(op(OpClass::Int, 0x400000 + 64 * i, {2 + i % 8}, {1}));
  return trace;
}

TEST(MachineApi, WatchdogNamesCycleThreadAndStuckResource) {
  // The head is a 3000-cycle divide: issued at 276 (fetched 270, depth 5), done at 3276. The core wakes at each code
  // line's arrival (270, 510, 750, 990, 1230, ...) and retires nothing: at 1230 more than watchdog_cycles (1000)
  // have passed since the thread was attached at 0.
  Config c = baseConfig(1);
  c.core.watchdog_cycles = 1000;
  c.core.fu.int_div = {3000, false};
  setUnitCount(c.core, UnitClass::IntDiv, 1);
  const auto trace = stuckTrace(op(OpClass::IDiv, 0x400000, {1}, {60}));
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(trace, "stuck-divide"), Asid{1});
  try {
    runToEnd(m, 100000);
    FAIL() << "no DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    std::cout << "[ info ] " << what << "\n";
    EXPECT_NE(what.find("cycle 1230"), std::string::npos) << what;
    EXPECT_NE(what.find("thread 0"), std::string::npos) << what;
    EXPECT_NE(what.find("stuck-divide"), std::string::npos) << what;
    EXPECT_NE(what.find("op idiv"), std::string::npos) << what;
    EXPECT_NE(what.find("until cycle 3276"), std::string::npos) << what;
    // The divide and ints 1..3 are in the ROB (int 4, fetched this cycle, is still in the front-end pipe).
    EXPECT_NE(what.find("rob 4/128"), std::string::npos) << what;
  }
  // With the default watchdog the same trace runs to its end: the last int (k = 20) is fetched at 5070, renamed
  // 5075, issued 5076, done 5077.
  Config patient = c;
  patient.core.watchdog_cycles = Config{}.core.watchdog_cycles;
  Machine ok(patient);
  ok.attach(LogicalCpu{0}, cursorFor(trace, "stuck-divide"), Asid{1});
  EXPECT_EQ(runToEnd(ok).endCycle[0], 5077u);
}

TEST(MachineApi, DramReadBookedInTheFutureDoesNotDelayEarlierRequests) {
  // The same trace with a load at the head whose page walk takes 3000 cycles: it is issued at 276 and reaches DRAM
  // at 276 + 3000 + 40 = 3316 (data at 3516). The instruction fetches at 510, 750, ... happen long before that and
  // must not wait for that transfer: the last int is fetched at 5070 and completes at 5077 as with the divide.
  Config c = baseConfig(1);
  c.core.fu.load.latency = 0;
  c.mem.dtlb.miss_latency = 3000;
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(stuckTrace(load(0x400000, 1, {60}, 0x10000000)), "walk"), Asid{1});
  const std::uint64_t end = runToEnd(m).endCycle[0];
  EXPECT_EQ(end, 5077u);
}

}  // namespace
}  // namespace smtlab::test
