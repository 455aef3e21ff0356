// The long-latency hook behind STALL and FLUSH (Tullsen & Brown 2001): a load that misses core.long_latency_miss
// gates its thread's fetch until the data returns (FLUSH also squashes the thread's younger instructions). One
// thread runs a pointer chase whose loads each miss (gen:chase: a load, then `work` ints independent of it).
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

json::object chase(FetchPolicy policy, LongLatencyMiss miss, const std::string& footprint, std::uint64_t n = 2000,
                   std::uint64_t warmup = 500) {
  Config c = baseConfig(1);
  c.core.fetch_policy = policy;
  c.core.long_latency_miss = miss;
  return cpuStats(runCounted(c, {"gen:chase,footprint=" + footprint + ",work=3,count=0"}, n, warmup), 0);
}

std::uint32_t robMax(const json::object& s) {
  return static_cast<std::uint32_t>(u64(s.at("occupancy").at("rob").at("max")));
}

TEST(LongLatency, StallKeepsAThreadWaitingOnMemoryFromFillingTheRob) {
  // 64 MiB chase: every load goes to DRAM (~270 cycles). The three ints after a load retire only behind it, so
  // without a gate (ICOUNT) fetch fills the whole 128-entry ROB during each miss. With STALL the thread stops
  // fetching when the load issues, and the gate holds while any of its loads waits: the loads in flight issue one
  // after another as their predecessors return, so fetch resumes only when the last of them returns. It then brings
  // 4 per cycle until the first load among them issues, 1 + frontend_depth = 6 cycles later: at most 4 x 6 = 24
  // entries in flight (retired 4 per returning load), far below 128.
  const auto icount = chase(FetchPolicy::ICount, LongLatencyMiss::Llc, "64m");
  const auto stall = chase(FetchPolicy::Stall, LongLatencyMiss::Llc, "64m");
  EXPECT_EQ(robMax(icount), 128u);
  EXPECT_EQ(robMax(stall), 4u * (1 + 5));
  EXPECT_EQ(u64(icount.at("fetch_gated_cycles")), 0u);
  // One miss is outstanding all the time, so the thread is gated for each load's memory path (load unit latency 0,
  // DTLB walk unless the page's entry is among the 64 of 16 Ki pages, LLC, DRAM), 500 times.
  const double memoryPath = 30 * (1 - 64.0 / 16384.0) + 40 + 200;
  EXPECT_NEAR(num(stall.at("fetch_gated_cycles")), 500 * memoryPath, 0.01 * 500 * memoryPath);
}

TEST(LongLatency, FlushSquashesAfterEveryLoadThatMissesToMemory) {
  // With FLUSH each DRAM load squashes what was fetched after it (the three ints and beyond fetched before it
  // issued), and that is fetched again after the data returns: one flush per DRAM load (the load itself is not
  // squashed, so it executes once), and a refetch of a few instructions each time.
  const auto s = chase(FetchPolicy::Flush, LongLatencyMiss::Llc, "64m");
  const double dramLoads = num(s.at("loads_by_level").at("dram"));
  EXPECT_GE(dramLoads, 0.95 * 500);  // 2000 instructions = 500 loads, nearly all from DRAM
  EXPECT_GE(num(s.at("flushes")), 0.9 * dramLoads);
  EXPECT_LE(num(s.at("flushes")), dramLoads + 2);  // plus in-flight loads at the ends of the measurement
  // Fetch stops until the data returns, then brings the group ending in the next load (three ints and the load) and
  // 5 more cycles of 4 until that load issues and flushes them: 4 x 5 = 20 squashed per flush, and in flight at most
  // the group of 4 (the squashed ones are still in the front end).
  EXPECT_NEAR(num(s.at("squashed")) / num(s.at("flushes")), 4 * 5, 0.5);
  EXPECT_EQ(robMax(s), 4u);
}

TEST(LongLatency, TheTriggerIsTheConfiguredCachesMiss) {
  // A 128 KiB chase fits the 256 KiB L2 but not the 32 KiB L1D: after warm-up every load is served by the L2. With
  // long_latency_miss = llc (a DRAM-served load) STALL never gates; with l1 (an L1 miss) it gates on every load.
  const auto llc = chase(FetchPolicy::Stall, LongLatencyMiss::Llc, "128k", 2000, 12000);
  const auto l1 = chase(FetchPolicy::Stall, LongLatencyMiss::L1, "128k", 2000, 12000);
  EXPECT_EQ(u64(llc.at("loads_by_level").at("l2")), 500u);
  EXPECT_EQ(u64(llc.at("fetch_gated_cycles")), 0u);
  // Each L2 hit gates fetch for its 12-cycle load-to-use latency.
  EXPECT_NEAR(num(l1.at("fetch_gated_cycles")), 500 * 12, 0.01 * 500 * 12);
}

// MLP-aware fetch (Eyerman & Eeckhout 2007; core/mlp_predictor.hpp): FLUSH from the load's predicted MLP distance on.
// The one thread's window is its reorder buffer, 128 entries here.
json::object single(FetchPolicy policy, const std::string& spec, std::uint64_t n, std::uint64_t warmup) {
  Config c = baseConfig(1);
  c.core.fetch_policy = policy;
  return cpuStats(runCounted(c, {spec}, n, warmup), 0);
}

TEST(LongLatency, MlpFetchIsFlushWhenNoMissHasAnotherInItsWindow) {
  // One load in 128 instructions (127 ints after each): the next miss is 128 younger, just outside a load's window
  // of 128, so every distance is 0 and the policy is FLUSH, statistic for statistic.
  const std::string spec = "gen:chase,footprint=64m,work=127,count=0";
  const auto mlp = single(FetchPolicy::Mlp, spec, 128 * 60, 128 * 10);
  const auto flush = single(FetchPolicy::Flush, spec, 128 * 60, 128 * 10);
  EXPECT_GE(num(flush.at("flushes")), 50.0);  // the case is the one meant: most loads miss and flush
  for (const char* key : {"cycles", "flushes", "squashed", "fetch_gated_cycles", "fetched"}) {
    EXPECT_EQ(u64(mlp.at(key)), u64(flush.at(key))) << key;
  }
}

TEST(LongLatency, MlpFetchLetsAStreamOverlapItsMissesWhereFlushSerialisesThem) {
  // Independent loads over 64 MiB, eight to a line, no prefetcher: the first load of each line misses to DRAM, so a
  // window of 128 holds about 16 misses and each miss's distance is about 120. MLP-aware fetch then restricts fetch
  // hardly at all: within 5 % of ICOUNT, which never gates. FLUSH squashes after every miss and waits for its data,
  // so one miss is in flight at a time where the window holds many: at most half the throughput.
  const std::string spec = "gen:stream,footprint=64m";
  const auto mlp = single(FetchPolicy::Mlp, spec, 20000, 5000);
  const auto icount = single(FetchPolicy::ICount, spec, 20000, 5000);
  const auto flush = single(FetchPolicy::Flush, spec, 20000, 5000);
  EXPECT_NEAR(num(mlp.at("ipc")), num(icount.at("ipc")), 0.05 * num(icount.at("ipc")));
  EXPECT_LE(num(flush.at("ipc")), 0.5 * num(mlp.at("ipc")));
  EXPECT_LE(num(mlp.at("flushes")), 0.2 * num(flush.at("flushes")));
}

}  // namespace
}  // namespace smtlab::test
