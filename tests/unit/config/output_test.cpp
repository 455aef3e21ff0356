// describeConfig, configToJson and configToToml: all keys, in order, and a TOML that reads back to the same config.

#include <set>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::TempDir;

// Counted from config.hpp, struct by struct:
// - top level and machine: seed; system 4 (cores, packages, siblings_adjacent, freq_ghz); os 2; sim 2.
// - core: 27 scalars (allocation_policy and mlp_predictor_entries among them); dcra 4; hill_climbing 4; 5 queues (uop_queue, rob, iq, lq, sq) x 3 (entries, sharing, cap); 8 unit classes x 5
//   (latency, pipelined, interval, thread_interval, uops); branch 9; lsu 10; 2 register files x 4.
// - mem: 9 scalars; 4 caches x 4 (size_kb, assoc, latency, mshrs); dram 2; 2 TLBs x 3; page_walk 4;
//   stream_prefetch 3.
// - energy: 20 (16 event energies, 4 powers).
constexpr std::size_t kKeys = (1 + 4 + 2 + 2) + (27 + 4 + 4 + 5 * 3 + 8 * 5 + 9 + 10 + 2 * 4) +
                              (9 + 4 * 4 + 2 + 2 * 3 + 4 + 3) + 20;

std::size_t countJsonLeaves(const boost::json::value& v) {
  if (!v.is_object()) return 1;
  std::size_t n = 0;
  for (const auto& [k, child] : v.as_object()) n += countJsonLeaves(child);
  return n;
}

TEST(ConfigOutput, DescribeListsEveryKeyOnceWithADoc) {
  const auto params = describeConfig(Config{});
  EXPECT_EQ(params.size(), kKeys);
  std::set<std::string> keys;
  for (const auto& p : params) {
    EXPECT_TRUE(keys.insert(p.key).second) << "duplicate key " << p.key;
    EXPECT_FALSE(p.doc.empty()) << p.key;
    EXPECT_FALSE(p.type.empty()) << p.key;
  }
  EXPECT_TRUE(keys.contains("core.rob.entries"));
  EXPECT_TRUE(keys.contains("core.fu.int_alu.latency"));
  EXPECT_TRUE(keys.contains("mem.l1d.size_kb"));
  EXPECT_TRUE(keys.contains("system.cores"));
  EXPECT_TRUE(keys.contains("seed"));
}

TEST(ConfigOutput, DescribeGivesTypesAndTomlValues) {
  Config c;
  c.core.rob.entries = 126;
  c.core.iq.sharing = Sharing::Capped;
  c.system.freq_ghz = 2.0;
  for (const auto& p : describeConfig(c)) {
    if (p.key == "core.rob.entries") {
      EXPECT_EQ(p.type, "int");
      EXPECT_EQ(p.value, "126");
    } else if (p.key == "core.iq.sharing") {
      EXPECT_EQ(p.type, "replicated | partitioned | shared | capped");
      EXPECT_EQ(p.value, "\"capped\"");
    } else if (p.key == "system.freq_ghz") {
      EXPECT_EQ(p.type, "float");
      EXPECT_EQ(p.value, "2.0");  // stays a TOML float
    } else if (p.key == "core.recombine") {
      EXPECT_EQ(p.type, "bool");
      EXPECT_EQ(p.value, "true");
    }
  }
}

TEST(ConfigOutput, JsonIsNestedByKeyPath) {
  const Config c = loadConfig("netburst");
  const boost::json::value j = configToJson(c);
  EXPECT_EQ(countJsonLeaves(j), kKeys);
  EXPECT_EQ(j.at("core").at("rob").at("entries").to_number<std::int64_t>(), 126);
  EXPECT_EQ(j.at("core").at("rob").at("sharing").as_string(), "partitioned");
  EXPECT_EQ(j.at("core").at("fetch_policy").as_string(), "round_robin");
  EXPECT_DOUBLE_EQ(j.at("system").at("freq_ghz").as_double(), 1.6);
  EXPECT_FALSE(j.at("core").at("fetch_break_on_taken").as_bool());
  EXPECT_EQ(j.at("seed").to_number<std::int64_t>(), 1);
}

void expectRoundTrip(const Config& original) {
  TempDir dir;
  const auto path = dir.write("roundtrip.toml", configToToml(original));
  const Config back = loadConfig(path);
  const auto a = describeConfig(original);
  const auto b = describeConfig(back);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].value, b[i].value) << a[i].key;
}

TEST(ConfigOutput, TomlRoundTripsEveryPreset) {
  for (const char* name : {"netburst", "broadwell", "modern"}) {
    SCOPED_TRACE(name);
    expectRoundTrip(loadConfig(name));
  }
}

TEST(ConfigOutput, TomlRoundTripsAwkwardValues) {
  Config c;
  c.system.freq_ghz = 1.0 / 3.0;  // needs all 17 digits to come back equal
  c.mem.dram.bytes_per_cycle = 1e-3;
  c.core.fetch_policy = FetchPolicy::MissCount;
  c.core.iq.sharing = Sharing::Replicated;
  c.core.recombine = false;
  c.core.watchdog_cycles = 123456789012ull;
  c.seed = 987654321987654321ull;
  expectRoundTrip(c);
  TempDir dir;
  const Config back = loadConfig(dir.write("awkward.toml", configToToml(c)));
  EXPECT_EQ(back.system.freq_ghz, c.system.freq_ghz);  // bit for bit
  EXPECT_EQ(back.seed, c.seed);
}

}  // namespace
}  // namespace smtlab
