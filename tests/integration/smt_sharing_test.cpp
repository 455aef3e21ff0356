// Two hardware threads on one core: latency-bound threads overlap, width-bound threads share; an idle sibling gives
// its partitions back; partitions hold while both run; a shared ROB lets a memory-bound thread starve its sibling;
// fetch policies (ICOUNT, FLUSH) and PAUSE keep a stalled thread from clogging the shared front end and issue queue;
// with every queue shared a clog slows the sibling but never shuts it out, whichever logical CPU it runs on.
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

constexpr const char* kChase = "gen:chase,footprint=64m,count=0";  // dependent DRAM loads, ~270 cycles each

struct WidthCaseSmt {
  const char* name;
  void (*apply)(Config&);
};

TEST(SmtSharing, TwoLatencyBoundThreadsNearlyDoubleThroughput) {
  // An imul chain of latency 3 uses the (pipelined) multiplier one cycle in three; two chains interleave on it.
  Config one = baseConfig(1);
  one.core.fu.int_mul = {3, true};
  setUnitCount(one.core, UnitClass::IntMul, 1);
  Config two = one;
  two.core.threads = 2;
  const std::string chain = "gen:chain,op=imul,count=0";
  const double single = ipcOf(runCounted(one, {chain}, 30000, 1000), 0);
  EXPECT_NEAR(single, 1.0 / 3, 0.01 / 3);
  const auto pair = runCounted(two, {chain, chain}, 30000, 1000);
  const double sum = ipcOf(pair, 0) + ipcOf(pair, 1);
  EXPECT_NEAR(sum, 2 * single, 0.02 * 2 * single);
  // Two DRAM pointer chases: each waits for its own loads; the two overlap in memory (one 8-cycle transfer each per
  // ~270 cycles leaves the channel idle), so each runs as fast as alone.
  const double chaseAlone = ipcOf(runCounted(one, {kChase}, 1500, 100), 0);
  const auto chases = runCounted(two, {kChase, kChase}, 1500, 100);
  EXPECT_NEAR(ipcOf(chases, 0) + ipcOf(chases, 1), 2 * chaseAlone, 0.02 * 2 * chaseAlone);
}

TEST(SmtSharing, TwoWidthBoundThreadsShareThroughput) {
  // Independent ints: 3 ALUs are the limit for one thread, and stay the limit for two.
  Config one = baseConfig(1);
  one.core.fu.int_alu = {1, true};
  setUnitCount(one.core, UnitClass::IntAlu, 3);
  Config two = one;
  two.core.threads = 2;
  const std::string alu = "gen:alu,count=0";
  const double single = ipcOf(runCounted(one, {alu}, 60000, 5000), 0);
  EXPECT_NEAR(single, 3.0, 0.03);
  const auto pair = runCounted(two, {alu, alu}, 60000, 5000);
  const double a = ipcOf(pair, 0), b = ipcOf(pair, 1);
  EXPECT_NEAR(a + b, single, 0.02 * single);
  EXPECT_NEAR(a, b, 0.1 * single) << "identical threads should share about evenly";
}

// A memory-latency-bound thread whose ROB needs exceed half of a 128-entry ROB: groups of one chase load and 100
// independent ints. With the whole ROB the next load is in the window when the previous returns (one group per
// memory latency); with half of it (64) the next load enters only after about (101 - 64) / retire_width more cycles.
constexpr const char* kRobHungry = "gen:chase,footprint=64m,work=100,count=0";

TEST(SmtSharing, IdleSiblingMatchesASingleThreadCore) {
  Config one = baseConfig(1);
  Config two = baseConfig(2);
  two.core.recombine = true;
  for (const char* spec : {kRobHungry, "gen:mix,count=0", "gen:alu,count=0"}) {
    const double alone = ipcOf(runCounted(one, {spec}, 40000, 4000), 0);
    const double idleSibling = ipcOf(runCounted(two, {spec}, 40000, 4000), 0);
    EXPECT_NEAR(idleSibling, alone, 0.01 * alone) << spec;
  }
}

TEST(SmtSharing, WithoutRecombinationAnIdleSiblingCostsItsPartitions) {
  Config one = baseConfig(1);
  Config two = baseConfig(2);
  two.core.recombine = false;
  const auto alone = runCounted(one, {kRobHungry}, 40400, 4040);
  const auto split = runCounted(two, {kRobHungry}, 40400, 4040);
  // The ROB stays split in two: the thread never holds more than 64 entries.
  EXPECT_EQ(u64(cpuStats(split, 0).at("occupancy").at("rob").at("max")), 64u);
  EXPECT_GT(u64(cpuStats(alone, 0).at("occupancy").at("rob").at("max")), 64u);
  // Each group waits one memory path (AGU + DTLB walk + LLC + DRAM, as in pipeline_limits_test.cpp): ~271 cycles.
  // With half the ROB the next load enters after (101 - 64) / 4 more retire cycles, whole cycles: 10. The split
  // thread runs at 271 / 281 of its speed alone (3.6% slower); the band excludes both no slowdown and twice it.
  const double perGroup = 1 + 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  EXPECT_NEAR(ipcOf(split, 0) / ipcOf(alone, 0), perGroup / (perGroup + 10), 0.004);
}

TEST(SmtSharing, WidthsAreSharedByTheThreadsOfACore) {
  // Fetch, rename and retire serve one thread per cycle (fetch_threads = 1): with one of them 2 wide and everything
  // else 8 wide, two independent-int threads together reach 2, as one thread alone does.
  const WidthCaseSmt cases[] = {
      {"fetch_width=2", [](Config& c) { c.core.fetch_width = 2; }},
      {"rename_width=2", [](Config& c) { c.core.rename_width = 2; }},
      {"retire_width=2", [](Config& c) { c.core.retire_width = 2; }},
      {"issue_width=2", [](Config& c) { c.core.issue_width = 2; }},
  };
  for (const auto& k : cases) {
    Config c = baseConfig(2);
    c.core.fetch_width = c.core.rename_width = c.core.issue_width = c.core.retire_width = 8;
    setUnitCount(c.core, UnitClass::IntAlu, 8);
    c.core.uop_queue.entries = 64;
    c.core.rob.entries = 256;
    c.core.iq = {96, Sharing::Shared, 1.0};
    k.apply(c);
    const auto s = runCounted(c, {"gen:alu,count=0", "gen:alu,count=0"}, 40000, 4000);
    EXPECT_NEAR(ipcOf(s, 0) + ipcOf(s, 1), 2.0, 0.04) << k.name;
  }
}

TEST(SmtSharing, AnActiveSetChangeStopsRenameForRecombineCycles) {
  // Thread 0 runs independent ints alone; a sibling attached when the machine is at cycle A makes rename stop for
  // cycles A .. A + 99. Thread 0's in-flight instructions retire within a few cycles; the next one is renamed at
  // A + 100, issues at A + 101 and retires at A + 102.
  Config c = baseConfig(2);
  c.core.recombine_cycles = 100;
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor("gen:alu,count=0"), Asid{1});
  m.run(Cycle{5000});
  const std::uint64_t a = m.now().value;
  const double inFlight = m.core(CoreId{0}).queue(QueueKind::Rob).used(0);
  m.attach(LogicalCpu{1}, cursorFor("gen:alu,count=0"), Asid{2});
  auto retiredAt = [&](std::uint64_t until) {  // retired by the end of cycle until - 1
    while (m.now().value < until) m.run(Cycle{until});
    return m.threadStats(LogicalCpu{0}).instructions;
  };
  const std::uint64_t settled = retiredAt(a + 50);
  EXPECT_EQ(retiredAt(a + 102), settled) << "nothing renamed during the drain may retire";
  EXPECT_GT(retiredAt(a + 103), settled) << "rename resumes at A + 100, retirement at A + 102";
  const auto stats = m.statsJson();
  EXPECT_EQ(u64(stats.at("cores").as_array().at(0).at("partition_drains")), 1u);
  const auto& stack = cpuStats(stats, 0).at("cpi_stack_cycles");
  // The cycles charged to the drain: the 100 cycles minus those spent retiring what was in flight (3 ALUs: about
  // inFlight / 3 cycles; fetch is wider than the ALUs, so the window is full).
  EXPECT_NEAR(num(stack.at("drain")), 100 - inFlight / 3, 3) << inFlight << " in flight at the attach";
}

TEST(SmtSharing, AFinishedSiblingGivesItsPartitionsBack) {
  // The sibling runs a short trace and finishes; afterwards the ROB-hungry thread has the whole core again and runs
  // as fast as alone (within 1%), holding more than half the ROB.
  Config c = baseConfig(2);
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(kRobHungry), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor("gen:alu,count=3000"), Asid{2});
  bool ended = false;
  while (!ended) {
    for (const Event& e : m.run(Cycle{m.now().value + 100000})) ended |= e.kind == EventKind::SourceEnded;
  }
  m.run(Cycle{m.now().value + 5000});
  m.resetStats();
  m.run(Cycle{m.now().value + 200000});
  const auto after = m.statsJson();
  const double alone = ipcOf(runCycles(baseConfig(1), {kRobHungry}, 5000, 200000), 0);
  EXPECT_NEAR(ipcOf(after, 0), alone, 0.01 * alone);
  EXPECT_GT(u64(cpuStats(after, 0).at("occupancy").at("rob").at("max")), 64u);
  EXPECT_EQ(u64(cpuStats(after, 0).at("occupancy").at("rob").at("limit")), 128u);
}

TEST(SmtSharing, TheDrainLeavesEachThreadWithinItsNewShare) {
  // Thread 0 (a chase load with 100 independent ints behind it) holds the whole 128-entry ROB while its load waits
  // for DRAM. When a sibling joins, the ROB is split (64 each) after a drain of recombine_cycles; the drain exists so
  // that the split starts clean (Pentium 4: the pipeline drains before it is repartitioned). When it ends and the
  // sibling may allocate, thread 0 must hold no more than its new share.
  Config c = baseConfig(2);
  c.core.recombine_cycles = 100;
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(kRobHungry), Asid{1});
  m.run(Cycle{20000});
  const Core& core = m.core(CoreId{0});
  ASSERT_EQ(core.queue(QueueKind::Rob).used(0), 128u) << "setup: thread 0 should fill the ROB";
  const std::uint64_t a = m.now().value;
  m.attach(LogicalCpu{1}, cursorFor("gen:alu,count=0"), Asid{2});
  // The drain lasts at least recombine_cycles and until thread 0 is back within its new share: the newcomer's first
  // rename must find thread 0 within 64 entries, and cannot come before a + 100.
  std::uint64_t firstRename = 0;
  std::uint32_t heldThen = 0;
  for (std::uint64_t t = a + 1; t < a + 20000 && firstRename == 0; ++t) {
    m.run(Cycle{t});
    if (core.queue(QueueKind::Rob).used(1) > 0) {
      firstRename = t;
      heldThen = core.queue(QueueKind::Rob).used(0);
    }
  }
  const std::uint32_t share = core.queue(QueueKind::Rob).limit(0);
  EXPECT_EQ(share, 64u);
  ASSERT_NE(firstRename, 0u) << "thread 1 never renamed";
  EXPECT_GE(firstRename, a + 100);
  EXPECT_LE(heldThen, share);
}

// Two endless threads, statistics over a fixed number of cycles.
json::object runPair(const Config& c, const std::string& a, const std::string& b, std::uint64_t cycles) {
  return runCycles(c, {a, b}, 20000, cycles);
}

TEST(SmtSharing, PartitionedQueuesNeverExceedTheirShareWhileTheSiblingRuns) {
  Config c = baseConfig(2);
  c.core.uop_queue = {32, Sharing::Partitioned, 1.0};
  c.core.rob = {128, Sharing::Partitioned, 1.0};
  c.core.iq = {48, Sharing::Capped, 0.75};
  c.core.lq = {48, Sharing::Partitioned, 1.0};
  c.core.sq = {32, Sharing::Partitioned, 1.0};
  const std::uint32_t limit[] = {16, 64, 36, 24, 16};  // entries / 2; floor(48 * 0.75) for the capped IQ
  const char* names[] = {"uop_queue", "rob", "iq", "lq", "sq"};
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"gen:chase,footprint=64m,work=7,count=0", "gen:chase,footprint=64m,count=0"},  // ROB-bound, LQ-bound
      {"gen:mix,footprint=64m,hot=0,count=0", "gen:stream,store_every=2,count=0"},    // loads and stores
      {"gen:chain,op=idiv,count=0", "gen:alu,count=0"},                               // IQ-bound (capped)
  };
  for (const auto& [a, b] : pairs) {
    Machine m(c);
    m.setChecking(true);  // also checks that no entry is ever taken past a share (throws)
    m.attach(LogicalCpu{0}, cursorFor(a), Asid{1});
    m.attach(LogicalCpu{1}, cursorFor(b), Asid{2});
    while (m.now().value < 60000) m.run(Cycle{60000});
    const auto stats = m.statsJson();
    for (std::size_t cpu = 0; cpu < 2; ++cpu) {
      const auto& occ = cpuStats(stats, cpu).at("occupancy").as_object();
      for (int q = 0; q < 5; ++q) {
        const auto& o = occ.at(names[q]);
        EXPECT_EQ(u64(o.at("limit")), limit[q]) << names[q];
        EXPECT_LE(u64(o.at("max")), limit[q]) << names[q] << " on cpu " << cpu << " running " << (cpu ? b : a);
      }
    }
  }
  // The checks above must be able to fail: the structures are actually filled to the share.
  Machine m(c);
  m.attach(LogicalCpu{0}, cursorFor(pairs[0].first), Asid{1});
  m.attach(LogicalCpu{1}, cursorFor(pairs[0].second), Asid{2});
  while (m.now().value < 30000) m.run(Cycle{30000});
  const auto stats = m.statsJson();
  EXPECT_EQ(u64(cpuStats(stats, 0).at("occupancy").at("rob").at("max")), 64u);
  EXPECT_EQ(u64(cpuStats(stats, 1).at("occupancy").at("lq").at("max")), 24u);
  Machine idiv(c);
  idiv.attach(LogicalCpu{0}, cursorFor("gen:chain,op=idiv,count=0"), Asid{1});
  idiv.attach(LogicalCpu{1}, cursorFor("gen:alu,count=0"), Asid{2});
  while (idiv.now().value < 30000) idiv.run(Cycle{30000});
  EXPECT_EQ(u64(cpuStats(idiv.statsJson(), 0).at("occupancy").at("iq").at("max")), 36u);
}

TEST(SmtSharing, SharedRobLetsAMemoryBoundThreadStarveItsSibling) {
  // Thread 0: a DRAM chase with 7 independent ints per load; its ints complete but cannot retire behind the load, so
  // it holds ROB entries for ~270 cycles each. Thread 1: independent ints.
  Config c = baseConfig(2);
  c.core.rob = {128, Sharing::Shared, 1.0};
  const auto shared = runPair(c, "gen:chase,footprint=64m,work=7,count=0", "gen:alu,count=0", 100000);
  c.core.rob = {128, Sharing::Partitioned, 1.0};
  const auto partitioned = runPair(c, "gen:chase,footprint=64m,work=7,count=0", "gen:alu,count=0", 100000);
  const double starved = ipcOf(shared, 1), protectedIpc = ipcOf(partitioned, 1);
  std::cout << "[ info ] sibling IPC with shared ROB " << starved << ", partitioned " << protectedIpc << "\n";
  // Partitioned: the sibling keeps 64 ROB entries and runs near the 3-ALU limit.
  EXPECT_GT(protectedIpc, 2.5);
  // Shared: the chase thread ends up holding nearly the whole ROB, the sibling gets a fraction of its throughput.
  EXPECT_LT(starved, 0.25 * protectedIpc);
  EXPECT_GT(u64(cpuStats(shared, 0).at("occupancy").at("rob").at("max")), 120u);
  // The memory-bound thread itself is latency bound either way: 8 instructions per memory path (~271 cycles).
  const double perLoad = 1 + 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  EXPECT_NEAR(ipcOf(partitioned, 0), 8 / perLoad, 0.02 * 8 / perLoad);
  EXPECT_NEAR(ipcOf(shared, 0), ipcOf(partitioned, 0), 0.05 * ipcOf(partitioned, 0));
  // Starved, not stopped: each returning load frees 8 entries, and rename serves the threads in turn, so the sibling
  // renames at least one group of 4 per round trip; the chase thread takes its 8 entries back in its next two rename
  // turns, so the sibling gets at most a few groups of 4 in between (fewer than 16 instructions per round trip).
  EXPECT_GE(starved, 4 / perLoad);
  EXPECT_LE(starved, 16 / perLoad);
}

// Memory-bound + compute pair with a shared 48-entry issue queue that the memory thread can clog: every chase
// instruction is a load waiting ~270 cycles for the previous one, and its ROB and LQ shares (64 each) exceed the IQ,
// so only the fetch policy can keep it from filling the IQ. Rename has slack (6 > fetch width 4) so that a thread
// that lost a rename turn to its sibling catches up instead of backing up into its front end.
Config clogConfig(FetchPolicy policy) {
  Config c = baseConfig(2);
  c.core.fetch_policy = policy;
  c.core.fetch_width = 4;
  c.core.fetch_threads = 1;
  c.core.rename_width = 6;
  c.core.retire_width = 6;
  c.core.issue_width = 6;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 4);
  c.core.iq = {48, Sharing::Shared, 1.0};
  c.core.rob = {128, Sharing::Partitioned, 1.0};
  c.core.lq = {128, Sharing::Partitioned, 1.0};
  return c;
}

struct PolicyRun {
  double memoryIpc, computeIpc;
  std::uint64_t memoryIqMax;
};
PolicyRun runPolicy(FetchPolicy p, const std::string& compute) {
  const auto s = runPair(clogConfig(p), kChase, compute, 100000);
  PolicyRun r{ipcOf(s, 0), ipcOf(s, 1), u64(cpuStats(s, 0).at("occupancy").at("iq").at("max"))};
  std::cout << "[ info ] " << fetchPolicyName(p) << " + " << compute << ": memory thread IPC " << r.memoryIpc
            << ", compute thread IPC " << r.computeIpc << ", memory thread IQ max " << r.memoryIqMax << "\n";
  return r;
}

TEST(SmtSharing, IcountBeatsRoundRobinWhenTheComputeThreadCanUseEveryFetchSlot) {
  // The compute thread (independent ints, 4 ALUs) consumes the whole fetch width, so it is eligible to fetch every
  // cycle. Round robin still gives every other fetch slot to the memory thread, whose loads fill the IQ (48 < its
  // 64-entry ROB share): the compute thread can then only rename into an entry freed when a load returns, ~1 per
  // 270 cycles. ICOUNT serves the thread with fewer instructions in the front end and IQ first: the memory thread
  // fetches only while its count is below the compute thread's (about its front-end pipe, 4 x 5 = 20, plus a few),
  // so it holds at most ~24 IQ entries and the compute thread runs at its fetch limit of 4.
  const std::string compute = "gen:alu,count=0";
  const PolicyRun rr = runPolicy(FetchPolicy::RoundRobin, compute);
  const PolicyRun icount = runPolicy(FetchPolicy::ICount, compute);
  // One memory path per load (load unit latency 0, DTLB walk, LLC, DRAM), as in pipeline_limits_test.cpp.
  const double perLoad = 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  EXPECT_EQ(rr.memoryIqMax, 48u);
  EXPECT_NEAR(rr.computeIpc, 1 / perLoad, 0.1 / perLoad);
  // The compute thread's count is its pipe (20) and at most a fetch group in its queues (it issues 4 per cycle), 24;
  // the memory thread fetches a group of 4 only while below it, so it holds between 20 and 28.
  EXPECT_GE(icount.memoryIqMax, 20u);
  EXPECT_LE(icount.memoryIqMax, 28u);
  EXPECT_NEAR(icount.computeIpc, 4.0, 0.1);
  EXPECT_GT(icount.computeIpc + icount.memoryIpc, 10 * (rr.computeIpc + rr.memoryIpc));
  // The memory thread is latency bound (one dependent DRAM load at a time) under either policy.
  EXPECT_NEAR(icount.memoryIpc, rr.memoryIpc, 0.05 * rr.memoryIpc);
}

TEST(SmtSharing, FlushBeatsIcountWhenTheComputeThreadLeavesFetchSlots) {
  // An L1-resident integer mix runs at ~1.3 IPC, below the fetch width: its front end fills and it is not eligible
  // to fetch in many cycles, which ICOUNT then gives to the memory thread (ICOUNT orders, it does not gate), so the
  // IQ clogs under ICOUNT as under round robin. FLUSH squashes the memory thread's instructions younger than a load
  // missing to DRAM and stops its fetch until the load returns: it holds only a few IQ entries and the compute
  // thread keeps most of its single-thread speed.
  const std::string compute = "gen:mix,footprint=16k,count=0";
  Config alone = clogConfig(FetchPolicy::ICount);
  alone.core.recombine = false;  // same halves of the partitioned queues as next to a sibling
  const double aloneIpc = ipcOf(runCycles(alone, {compute}, 20000, 100000), 0);
  const PolicyRun icount = runPolicy(FetchPolicy::ICount, compute);
  const PolicyRun flush = runPolicy(FetchPolicy::Flush, compute);
  // Clogged, the compute thread renames only into the IQ entry a returning load frees: one per memory path.
  const double perLoad = 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  EXPECT_EQ(icount.memoryIqMax, 48u);
  EXPECT_NEAR(icount.computeIpc, 1 / perLoad, 0.1 / perLoad);
  EXPECT_LE(flush.memoryIqMax, 12u);
  EXPECT_GT(flush.computeIpc, 0.6 * aloneIpc);
  EXPECT_GT(flush.computeIpc + flush.memoryIpc, 10 * (icount.computeIpc + icount.memoryIpc));
  // Flushing costs the memory thread a refetch per load, a few percent of its ~271-cycle loop.
  EXPECT_NEAR(flush.memoryIpc, icount.memoryIpc, 0.1 * icount.memoryIpc);
}

// Every queue shared (uop queue, ROB, issue queue, load and store buffers): nothing but the thread choices keeps the
// DRAM chase from holding the whole issue queue and load buffer, each of its loads waiting for the one before.
TEST(SmtSharing, EveryQueueSharedTheChaseClogsButNeverShutsOutItsSibling) {
  // Once the chase holds the whole issue queue, each of its loads, when it issues, frees one entry. Rename serves the
  // threads in turn (round_robin): the chase took the last entry, so the ALU thread takes this one; its instruction
  // issues at once and frees the entry, which the chase takes at its turn. So the ALU thread gets one instruction per
  // chase load: its IPC equals the chase's, 1 / 270. ICOUNT orders fetch, it does not gate it: the chase fetches
  // whenever the ALU thread's pipe is full, and its loads never leave the issue queue, so ICOUNT ends in the same
  // clog (Tullsen and Brown 2001: a thread waiting for memory holds the queues; STALL and FLUSH exist for it). Which
  // logical CPU each runs on must not matter: the shared uop queue's free entries go in fetch order, not by thread id.
  // One memory path per load (load unit latency 0, DTLB walk, LLC, DRAM), as in the clog tests above.
  const double perLoad = 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  for (const FetchPolicy p : {FetchPolicy::RoundRobin, FetchPolicy::ICount}) {
    const Config c = everyQueueSharedConfig(p);
    const auto chaseFirst = runPair(c, kChase, "gen:alu,count=0", 300000);
    const auto aluFirst = runPair(c, "gen:alu,count=0", kChase, 300000);
    const double chase[] = {ipcOf(chaseFirst, 0), ipcOf(aluFirst, 1)};
    const double alu[] = {ipcOf(chaseFirst, 1), ipcOf(aluFirst, 0)};
    std::cout << "[ info ] " << fetchPolicyName(p) << ": chase on cpu 0: chase IPC " << chase[0] << ", ALU IPC "
              << alu[0] << "; ALU on cpu 0: chase IPC " << chase[1] << ", ALU IPC " << alu[1] << "\n";
    for (int order = 0; order < 2; ++order) {
      const char* which = order == 0 ? "chase on cpu 0" : "ALU thread on cpu 0";
      EXPECT_NEAR(chase[order], 1 / perLoad, 0.02 / perLoad) << fetchPolicyName(p) << ", " << which;
      EXPECT_GE(alu[order], 0.9 * chase[order]) << fetchPolicyName(p) << ", " << which;
      EXPECT_LE(alu[order], 1.1 * chase[order]) << fetchPolicyName(p) << ", " << which;
    }
  }
}

TEST(SmtSharing, EveryQueueSharedFlushKeepsTheSiblingsSpeed) {
  // FLUSH squashes the chase's instructions younger than a load missing the LLC and stops its fetch until the data
  // returns: it holds a few entries. The ALU thread is bound by its 3 ALUs (3 IPC, as alone); it needs 3 of the 4
  // fetch and rename slots per cycle, and the few instructions the chase fetches per memory path fit in the fourth.
  const Config c = everyQueueSharedConfig(FetchPolicy::Flush);
  const auto chaseFirst = runPair(c, kChase, "gen:alu,count=0", 300000);
  const auto aluFirst = runPair(c, "gen:alu,count=0", kChase, 300000);
  EXPECT_NEAR(ipcOf(chaseFirst, 1), 3.0, 0.03) << "chase on cpu 0";
  EXPECT_NEAR(ipcOf(aluFirst, 0), 3.0, 0.03) << "ALU thread on cpu 0";
}

TEST(SmtSharing, PauseInASpinLoopSpeedsUpTheSibling) {
  Config c = baseConfig(2);
  c.core.fetch_policy = FetchPolicy::RoundRobin;
  c.core.fetch_width = 4;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 3);
  c.core.pause_cycles = 40;
  const auto noPause = runPair(c, "gen:spin,pause=0,count=0", "gen:alu,count=0", 60000);
  const auto withPause = runPair(c, "gen:spin,pause=1,count=0", "gen:alu,count=0", 60000);
  const double slow = ipcOf(noPause, 1), fast = ipcOf(withPause, 1);
  // Without pause the spin loop takes every other fetch cycle: the compute thread fetches 4 per 2 cycles (IPC ~2)
  // while the loop's int and branch use the third ALU. With pause (loop: pause, load, int, branch) the loop's fetch
  // stops for 40 cycles after its pause; it then fetches load, int and branch (the taken branch ends the fetch),
  // the compute thread has the next round-robin cycle, and the loop fetches its pause in the one after: one
  // iteration per 42 cycles. The compute thread fetches in 40 of them (160 slots), more than the 3 ALUs take, so it
  // is bound by the ALUs less the loop's int and branch: (3 x 42 - 2) / 42 = 2.952.
  EXPECT_NEAR(slow, 2.0, 0.1);
  EXPECT_NEAR(ipcOf(withPause, 0), 4.0 / 42, 0.01 * 4.0 / 42);
  EXPECT_NEAR(fast, (3.0 * 42 - 2) / 42, 0.01);
}

}  // namespace
}  // namespace smtlab::test
