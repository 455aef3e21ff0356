// The presets in configs/: each loads, validates, sets every key explicitly, and carries the published numbers of the
// machine it models (for netburst: Marr et al., "Hyper-Threading Technology Architecture and Microarchitecture", Intel
// Technology Journal 6(1), 2002; the IA-32 SDM Vol. 1; the optimization manual 248966; each preset's comments cite the
// source of every number).

#include <string>

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

std::size_t countLeaves(const toml::table& t) {
  std::size_t n = 0;
  for (auto&& [k, v] : t) n += v.is_table() ? countLeaves(*v.as_table()) : 1;
  return n;
}

class Preset : public ::testing::TestWithParam<std::string> {};

TEST_P(Preset, LoadsAndValidates) {
  const Config c = loadConfig(GetParam());
  EXPECT_TRUE(c.source.ends_with(GetParam() + ".toml")) << c.source;
  EXPECT_NO_THROW(validateConfig(c));
}

TEST_P(Preset, SetsEveryKeyExplicitly) {
  // A preset that leaves a key to the defaults would change when a default changes.
  const std::string path = findConfigFile(GetParam());
  const toml::table t = toml::parse_file(path);
  EXPECT_EQ(countLeaves(t), describeConfig(Config{}).size()) << path;
}

INSTANTIATE_TEST_SUITE_P(Configs, Preset, ::testing::Values("netburst", "broadwell", "modern"));

TEST(PresetNetburst, MatchesPublishedPentium4Facts) {
  const Config c = loadConfig("netburst");
  EXPECT_EQ(c.system.cores, 1u);  // the study's single-CPU machine
  EXPECT_DOUBLE_EQ(c.system.freq_ghz, 1.6);
  EXPECT_EQ(c.core.threads, 2u);
  EXPECT_EQ(c.core.fetch_policy, FetchPolicy::RoundRobin);
  EXPECT_EQ(c.core.rob.entries, 126u);
  EXPECT_EQ(c.core.rob.sharing, Sharing::Partitioned);
  EXPECT_EQ(c.core.lq.entries, 48u);
  EXPECT_EQ(c.core.lq.sharing, Sharing::Partitioned);
  EXPECT_EQ(c.core.sq.entries, 24u);
  EXPECT_EQ(c.core.sq.sharing, Sharing::Partitioned);
  EXPECT_EQ(c.core.uop_queue.sharing, Sharing::Partitioned);
  EXPECT_EQ(c.core.iq.sharing, Sharing::Capped);
  EXPECT_GE(c.core.iq.cap, 0.5);
  EXPECT_LE(c.core.iq.cap, 0.75);
  EXPECT_EQ(c.core.retire_width, 3u);
  EXPECT_EQ(c.core.issue_width, 6u);
  EXPECT_EQ(c.core.fetch_width, 3u);
  EXPECT_FALSE(c.core.fetch_break_on_taken);  // a trace cache delivers across taken branches
  EXPECT_EQ(c.core.frontend_depth + c.core.branch.mispredict_penalty, 20u);  // 20-stage mispredict pipeline
  EXPECT_EQ(c.core.branch.btb_entries, 4096u);
  EXPECT_EQ(c.core.recombine_cycles, 100u);
  EXPECT_EQ(c.mem.l1d.size_kb, 8u);
  EXPECT_EQ(c.mem.l1d.assoc, 4u);
  EXPECT_EQ(c.mem.l1d.latency, 2u);
  EXPECT_EQ(c.mem.llc.size_kb, 1024u);
  EXPECT_EQ(c.mem.llc.assoc, 8u);
  EXPECT_DOUBLE_EQ(c.mem.dram.bytes_per_cycle, 3.2 / 1.6);  // 3.2 GB/s FSB at 1.6 GHz
}

TEST(PresetBroadwell, MatchesTheI7_5557U) {
  const Config c = loadConfig("broadwell");
  EXPECT_EQ(c.system.cores, 2u);
  EXPECT_EQ(c.core.threads, 2u);
  EXPECT_DOUBLE_EQ(c.system.freq_ghz, 3.1);
  EXPECT_EQ(c.core.rob.entries, 192u);
  EXPECT_EQ(c.core.rob.sharing, Sharing::Partitioned);
  EXPECT_EQ(c.core.iq.entries, 60u);
  EXPECT_EQ(c.core.lq.entries, 72u);
  EXPECT_EQ(c.core.sq.entries, 42u);
  EXPECT_EQ(c.mem.l1d.size_kb, 32u);
  EXPECT_EQ(c.mem.l1i.size_kb, 32u);
  EXPECT_EQ(c.mem.l2.size_kb, 256u);
  EXPECT_EQ(c.mem.llc.size_kb, 4096u);
}

TEST(PresetModern, IsWiderThanTheOthers) {
  const Config m = loadConfig("modern");
  const Config b = loadConfig("broadwell");
  EXPECT_EQ(m.core.rob.entries, 512u);
  EXPECT_GT(m.core.rename_width, b.core.rename_width);
  EXPECT_GT(m.core.retire_width, b.core.retire_width);
  EXPECT_GT(m.mem.l2.size_kb, b.mem.l2.size_kb);
  EXPECT_GT(m.mem.llc.size_kb, b.mem.llc.size_kb);
}

}  // namespace
}  // namespace smtlab
