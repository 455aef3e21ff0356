// `key=value` overrides: values in TOML syntax or bare words, and errors that name the origin and the key.

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;
using test::mentions;

TEST(ConfigOverride, ParsesIntegersFloatsAndBools) {
  Config c;
  applyOverride(c, "core.rob.entries=96");
  applyOverride(c, "system.freq_ghz=2.5");
  applyOverride(c, "mem.dram.bytes_per_cycle=4");  // an integer where a float is expected
  applyOverride(c, "core.recombine=false");
  applyOverride(c, "core.watchdog_cycles=5000000000");  // above 2^32: needs the 64-bit field
  EXPECT_EQ(c.core.rob.entries, 96u);
  EXPECT_DOUBLE_EQ(c.system.freq_ghz, 2.5);
  EXPECT_DOUBLE_EQ(c.mem.dram.bytes_per_cycle, 4.0);
  EXPECT_FALSE(c.core.recombine);
  EXPECT_EQ(c.core.watchdog_cycles, 5000000000ull);
}

TEST(ConfigOverride, ChoicesAsBareWordsOrQuotedStrings) {
  Config c;
  applyOverride(c, "core.fetch_policy=icount");
  EXPECT_EQ(c.core.fetch_policy, FetchPolicy::ICount);
  applyOverride(c, "core.fetch_policy=\"flush\"");
  EXPECT_EQ(c.core.fetch_policy, FetchPolicy::Flush);
  applyOverride(c, "core.iq.sharing=partitioned");
  EXPECT_EQ(c.core.iq.sharing, Sharing::Partitioned);
}

TEST(ConfigOverride, SpacesAroundKeyAndValueAreIgnored) {
  Config c;
  applyOverride(c, "  core.rob.entries =  64 ");
  EXPECT_EQ(c.core.rob.entries, 64u);
  applyOverride(c, "core.lq.entries", " 40", "test");
  EXPECT_EQ(c.core.lq.entries, 40u);
}

TEST(ConfigOverride, ErrorsNameOriginKeyAndValue) {
  Config c;
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.rob.entries=abc"); }),
                       {"--set core.rob.entries=abc: key 'core.rob.entries' must be an integer, got string \"abc\""}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.threads=9", "sweep.toml"); }),
                       {"sweep.toml core.threads=9:", "'core.threads' = 9", "[1, 8]"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.recombine=1"); }),
                       {"core.recombine", "must be a boolean", "integer 1"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.rob.entries"); }),
                       {"core.rob.entries", "expected key=value"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.fetch_policy=icont"); }),
                       {"core.fetch_policy", "did you mean 'icount'"}));
  // A failed override leaves the value as it was.
  EXPECT_EQ(c.core.rob.entries, Config{}.core.rob.entries);
  EXPECT_EQ(c.core.threads, Config{}.core.threads);
}

TEST(ConfigOverride, UnknownKeySuggestsTheClosest) {
  Config c;
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.rob.entires=3"); }),
                       {"unknown key 'core.rob.entires'", "did you mean 'core.rob.entries'"}));
  // A key missing its section is matched by its tail.
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "l1d.size_kb=16"); }),
                       {"unknown key 'l1d.size_kb'", "did you mean 'mem.l1d.size_kb'"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "system.core=2"); }), {"did you mean 'system.cores'"}));
  EXPECT_TRUE(
      mentions(configErrorOf([&] { applyOverride(c, "core.rob=12"); }), {"'core.rob' is a section, not a key"}));
}

TEST(ConfigOverride, RecordsItselfInTheSource) {
  Config c = loadConfig("netburst");
  applyOverride(c, "core.threads=1");
  EXPECT_TRUE(mentions(c.source, {"netburst.toml", "--set core.threads=1"}));
}

TEST(ConfigOverride, EveryKeyAcceptsItsOwnPrintedValue) {
  // Feeding each key's printed value back must parse for every type and leave the config unchanged.
  const Config original = loadConfig("netburst");
  Config c = original;
  for (const ParamInfo& p : describeConfig(original)) {
    EXPECT_NO_THROW(applyOverride(c, p.key, p.value, "roundtrip")) << p.key << " = " << p.value;
  }
  const auto before = describeConfig(original);
  const auto after = describeConfig(c);
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i].value, after[i].value) << before[i].key;
}

}  // namespace
}  // namespace smtlab
