// Consistency checks that a single key's range cannot express; each message names the keys involved.

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;
using test::mentions;

std::string errorFor(Config c) {
  c.source = "unit.toml";
  return configErrorOf([&] { validateConfig(c); });
}

TEST(ConfigValidate, DefaultsAreConsistent) { EXPECT_NO_THROW(validateConfig(Config{})); }

TEST(ConfigValidate, PartitionedQueueNeedsAnEntryPerThread) {
  Config c;
  c.core.threads = 4;
  c.core.sq.sharing = Sharing::Partitioned;
  c.core.sq.entries = 3;
  EXPECT_TRUE(mentions(errorFor(c), {"unit.toml", "core.sq.entries = 3", "core.threads = 4"}));
  c.core.sq.entries = 4;  // exactly one each is enough
  EXPECT_NO_THROW(validateConfig(c));
  c.core.sq.entries = 3;
  c.core.sq.sharing = Sharing::Shared;  // a shared queue may have fewer entries than threads
  EXPECT_NO_THROW(validateConfig(c));
}

TEST(ConfigValidate, CappedNeedsAPositiveCap) {
  Config c;
  c.core.iq.sharing = Sharing::Capped;
  c.core.iq.cap = 0.0;
  EXPECT_TRUE(mentions(errorFor(c), {"core.iq.cap", "(0, 1]"}));
  c.core.iq.entries = 10;
  c.core.iq.cap = 0.05;  // 0.5 of an entry per thread
  EXPECT_TRUE(mentions(errorFor(c), {"core.iq.cap", "core.iq.entries = 10"}));
  c.core.iq.cap = 0.1;
  EXPECT_NO_THROW(validateConfig(c));
}

TEST(ConfigValidate, CacheNeedsPowerOfTwoSets) {
  Config c;
  c.mem.l1d.size_kb = 24;  // 24 KB / (8 x 64 B) = 48 sets
  EXPECT_TRUE(mentions(errorFor(c), {"mem.l1d", "power-of-two number of sets"}));
  c.mem.l1d.assoc = 12;  // 24 KB / (12 x 64 B) = 32 sets: fine
  EXPECT_NO_THROW(validateConfig(c));
  c.mem.l2.size_kb = 1;
  c.mem.l2.assoc = 32;  // 1 KB / (32 x 64 B) = half a set
  EXPECT_TRUE(mentions(errorFor(c), {"mem.l2"}));
}

TEST(ConfigValidate, LineAndPageSizesArePowersOfTwo) {
  Config c;
  c.mem.line_bytes = 48;
  EXPECT_TRUE(mentions(errorFor(c), {"mem.line_bytes = 48"}));
  c = Config{};
  c.mem.page_bytes = 6000;
  EXPECT_TRUE(mentions(errorFor(c), {"mem.page_bytes = 6000"}));
}

TEST(ConfigValidate, AStreamNeverLeavesItsPage) {
  Config c;
  c.mem.stream_prefetch.streams = 8;
  c.mem.stream_prefetch.ahead_bytes = 8192;  // beyond the 4 KiB page
  EXPECT_TRUE(mentions(errorFor(c), {"unit.toml", "mem.stream_prefetch.ahead_bytes = 8192", "mem.page_bytes (4096)"}));
  c.mem.stream_prefetch.ahead_bytes = 256;
  c.mem.stream_prefetch.trigger_bytes = 32;  // under one 64-byte line: no two misses could ever be that close
  EXPECT_TRUE(mentions(errorFor(c), {"mem.stream_prefetch.trigger_bytes = 32", "mem.line_bytes (64)"}));
  c.mem.stream_prefetch.trigger_bytes = 4096;  // a whole page is the most
  EXPECT_NO_THROW(validateConfig(c));
  c.mem.stream_prefetch.streams = 0;  // no streamer: its distances are not used, so not checked
  c.mem.stream_prefetch.ahead_bytes = 1 << 20;
  EXPECT_NO_THROW(validateConfig(c));
}

TEST(ConfigValidate, LatenciesDoNotDecreaseDownTheHierarchy) {
  Config c;
  c.mem.l2.latency = c.mem.l1d.latency - 1;
  EXPECT_TRUE(mentions(errorFor(c), {"mem.l2.latency", "mem.l1d.latency"}));
  c = Config{};
  c.mem.llc.latency = c.mem.l2.latency - 1;
  EXPECT_TRUE(mentions(errorFor(c), {"mem.llc.latency", "mem.l2.latency"}));
}

TEST(ConfigValidate, BranchTablesArePowersOfTwo) {
  Config c;
  c.core.branch.pht_entries = 3000;
  EXPECT_TRUE(mentions(errorFor(c), {"core.branch.pht_entries = 3000"}));
  c = Config{};
  c.core.branch.btb_entries = 4096;
  c.core.branch.btb_assoc = 3;
  EXPECT_TRUE(mentions(errorFor(c), {"core.branch.btb_entries", "core.branch.btb_assoc"}));
  c = Config{};
  c.core.branch.pht_thread_tagged = true;
  c.core.branch.pht_assoc = 3;
  EXPECT_TRUE(mentions(errorFor(c), {"core.branch.pht_assoc = 3", "power of two"}));
  c.core.branch.pht_assoc = 2 * c.core.branch.pht_entries;
  EXPECT_TRUE(mentions(errorFor(c), {"core.branch.pht_assoc", "core.branch.pht_entries"}));
  c.core.branch.pht_assoc = c.core.branch.pht_entries;  // fully associative: allowed
  EXPECT_NO_THROW(validateConfig(c));
}

TEST(ConfigValidate, TlbNeedsPowerOfTwoSets) {
  Config c;
  c.mem.dtlb.entries = 48;
  c.mem.dtlb.assoc = 4;  // 12 sets
  EXPECT_TRUE(mentions(errorFor(c), {"mem.dtlb"}));
  c.mem.dtlb.assoc = 48;  // fully associative: 1 set
  EXPECT_NO_THROW(validateConfig(c));
}

TEST(ConfigValidate, RangesAreCheckedForConfigsBuiltInCode) {
  Config c;
  c.core.threads = 9;
  EXPECT_TRUE(mentions(errorFor(c), {"'core.threads' = 9", "[1, 8]"}));
  c = Config{};
  c.system.cores = 0;
  EXPECT_TRUE(mentions(errorFor(c), {"'system.cores' = 0"}));
  c = Config{};
  setUnitCount(c.core, UnitClass::IntAlu, 0);  // no port feeds int_alu: its uops could never issue
  EXPECT_TRUE(mentions(errorFor(c), {"core.ports", "'int_alu'"}));
  c = Config{};
  c.core.retire_width = 0;
  EXPECT_TRUE(mentions(errorFor(c), {"core.retire_width"}));
  c = Config{};
  c.mem.dram.bytes_per_cycle = 0.0;
  EXPECT_TRUE(mentions(errorFor(c), {"mem.dram.bytes_per_cycle"}));
}

}  // namespace
}  // namespace smtlab
