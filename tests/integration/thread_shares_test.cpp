// The allocation policies on whole runs (core.allocation_policy, docs/model.md "Allocation policies"): DCRA frees the
// clog a DRAM pointer chase makes of queues shared first come, first served, hill climbing holds each thread to its
// partition, and event skipping stays exact with their shares changing at any cycle.
#include <iostream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

constexpr const char* kDcraChase = "gen:chase,footprint=64m,count=0";  // dependent DRAM loads, ~270 cycles each

// The machine of the clog cases (helpers.hpp) with an allocation policy and the presets' DCRA values.
Config dcraEveryQueueShared(FetchPolicy fetch, AllocationPolicy allocation) {
  Config c = everyQueueSharedConfig(fetch);
  c.core.allocation_policy = allocation;
  c.core.dcra = DcraConfig{256, 1, 16, 0.0};
  return c;
}

TEST(ThreadShares, DcraKeepsTheAluThreadBesideAPointerChaseAtItsOwnSpeed) {
  // Static sharing: the chase holds the whole issue queue and the ALU thread gets one instruction in per chase load,
  // 1/270 IPC (smt_sharing_test, EveryQueueSharedTheChaseClogsButNeverShutsOutItsSibling). DCRA: the chase is slow
  // (a DRAM load in flight nearly always, and held slow over the 5-cycle gap to its next miss), the ALU thread fast
  // and active for every queue every instruction needs, so the chase may hold R/2 x (1 + 1/2) = 3R/4 of each: 24 of
  // the 32 uop-queue entries, 36 of the 48 IQ entries, 96 of the 128 ROB entries. The ALU thread keeps at least 8,
  // 12 and 32: more than it needs to run at its 3 ALUs' rate (3 per cycle, one cycle in the uop queue and the IQ,
  // about 4 from rename to retire), so its IPC is its own bound of 3, less the fetch and rename turns the chase still
  // takes now and then (10 % allowed). The chase itself stays bound by its memory path.
  const double perLoad = 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  for (const FetchPolicy p : {FetchPolicy::RoundRobin, FetchPolicy::ICount}) {
    const auto stat = runCycles(dcraEveryQueueShared(p, AllocationPolicy::Static), {kDcraChase, "gen:alu,count=0"},
                                20000, 300000);
    const auto dcra = runCycles(dcraEveryQueueShared(p, AllocationPolicy::Dcra), {kDcraChase, "gen:alu,count=0"},
                                20000, 300000);
    std::cout << "[ info ] " << fetchPolicyName(p) << ": ALU IPC static " << ipcOf(stat, 1) << ", dcra "
              << ipcOf(dcra, 1) << "; chase IPC static " << ipcOf(stat, 0) << ", dcra " << ipcOf(dcra, 0) << "\n";
    EXPECT_LT(ipcOf(stat, 1), 2 / perLoad) << fetchPolicyName(p);
    EXPECT_GE(ipcOf(dcra, 1), 0.9 * 3.0) << fetchPolicyName(p);
    EXPECT_LE(ipcOf(dcra, 1), 3.0) << fetchPolicyName(p);
    EXPECT_NEAR(ipcOf(dcra, 0), 1 / perLoad, 0.05 / perLoad) << fetchPolicyName(p);
    // The chase never holds more than its share for long: at most its 36 IQ entries plus what it renames in the
    // cycles it is fast (none here: slow_hold covers its gap), so its mean stays at or below 36.
    const auto& iq = cpuStats(dcra, 0).at("occupancy").as_object().at("iq").as_object();
    EXPECT_LE(num(iq.at("mean")), 36.0 + 0.5) << fetchPolicyName(p);
  }
}

// The statistics without host time and the effective config (which holds sim.skip).
json::object sharesComparable(json::object stats) {
  stats.erase("host_seconds");
  stats.erase("instructions_per_host_second");
  stats.erase("config");
  return stats;
}

// A chase beside gen:mix under `c`, with event skipping and ticking every cycle: the same statistics, bit for bit.
void expectSkippedIsTicked(const Config& c, std::string_view what) {
  const std::vector<std::string> specs{"gen:chase,footprint=64m,work=3,count=0", "gen:mix,footprint=1m,count=0"};
  Config skipped = c;
  skipped.sim.skip = true;
  Config ticked = c;
  ticked.sim.skip = false;
  const auto a = sharesComparable(runCounted(skipped, specs, 3000, 500));
  const auto b = sharesComparable(runCounted(ticked, specs, 3000, 500));
  EXPECT_EQ(json::serialize(a), json::serialize(b)) << what;
}

TEST(ThreadShares, DcraGivesIdenticalStatisticsWithAndWithoutEventSkipping) {
  // DCRA's shares change with time alone (a slow hold ending, a thread going inactive for the load queue or a
  // register file after activity_window cycles): those cycles are wake-up points (IAllocationPolicy::nextChange), so
  // the skipped run must be the ticked one, bit for bit. A short window makes the activity changes frequent.
  for (const FetchPolicy p : {FetchPolicy::RoundRobin, FetchPolicy::MissCount}) {
    Config c = dcraEveryQueueShared(p, AllocationPolicy::Dcra);
    c.core.dcra.activity_window = 40;
    c.core.int_prf = {160, Sharing::Shared, 1.0, 17};
    c.core.fp_prf = {128, Sharing::Shared, 1.0, 24};
    expectSkippedIsTicked(c, fetchPolicyName(p));
  }
}

TEST(ThreadShares, HillClimbingHoldsEveryThreadToItsPartitionOfASharedQueue) {
  // Every queue shared, the DRAM chase beside the ALU thread: static sharing lets the chase hold the whole issue
  // queue (48 entries; smt_sharing_test). Hill climbing partitions every structure: whatever it learns, the ALU
  // thread keeps at least min_share (1/16) of each, so the chase can hold at most 45 of the 48 IQ entries and 120 of
  // the ROB's 128, and the ALU thread, with 3 IQ entries or more and single-cycle ALUs, keeps at least one
  // instruction a cycle, where static sharing held it to one per chase load (1/270).
  Config c = everyQueueSharedConfig(FetchPolicy::ICount);
  c.core.allocation_policy = AllocationPolicy::HillClimbing;
  c.core.hill_climbing = HillClimbingConfig{4096, 0.0625, 0.0625, ClimbMetric::Throughput};
  const auto stats = runCycles(c, {kDcraChase, "gen:alu,count=0"}, 20000, 300000);
  const auto& occupancy = cpuStats(stats, 0).at("occupancy").as_object();
  EXPECT_LE(u64(occupancy.at("iq").at("max")), 45u);
  EXPECT_LE(u64(occupancy.at("rob").at("max")), 120u);
  EXPECT_GE(ipcOf(stats, 1), 1.0);
  EXPECT_LE(ipcOf(stats, 1), 3.0);
}

TEST(ThreadShares, HillClimbingGivesIdenticalStatisticsWithAndWithoutEventSkipping) {
  // Its epochs end with time alone (IAllocationPolicy::nextChange): those cycles are wake-up points, so the skipped
  // run must be the ticked one, bit for bit, whichever metric it climbs. A short epoch makes many rounds.
  for (const ClimbMetric m : {ClimbMetric::Throughput, ClimbMetric::Hmean}) {
    Config c = everyQueueSharedConfig(FetchPolicy::RoundRobin);
    c.core.allocation_policy = AllocationPolicy::HillClimbing;
    c.core.hill_climbing = HillClimbingConfig{700, 0.0625, 0.0625, m};
    c.core.int_prf = {160, Sharing::Shared, 1.0, 17};
    expectSkippedIsTicked(c, climbMetricName(m));
  }
}

}  // namespace
}  // namespace smtlab::test
