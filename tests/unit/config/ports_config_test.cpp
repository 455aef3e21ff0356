// core.ports: parsing a port list, the presets' published port maps, the removed per-class `count` keys
// (one clear error naming the key and its replacement), bad port lists, and the JSON/TOML outputs.

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;
using test::mentions;
using test::TempDir;

int rate(const PortConfig& p, UnitClass c) { return p.rate[static_cast<int>(c)]; }

TEST(PortsConfig, NetburstHasTwoDoubleSpeedAluPortsOneFpExecutePortALoadAndAStoreAddressPort) {
  // [hinton]: port 0 = double-speed ALU (+ store data, branches), port 1 = double-speed ALU + FP execute + multiply
  // + divide, port 2 = load, port 3 = store address.
  const Config c = loadConfig("netburst");
  ASSERT_EQ(c.core.ports.size(), 4u);
  EXPECT_EQ(rate(c.core.ports[0], UnitClass::IntAlu), 2);
  EXPECT_EQ(rate(c.core.ports[1], UnitClass::IntAlu), 2);
  int fpPorts = 0, loadPorts = 0;
  for (const PortConfig& p : c.core.ports) {
    fpPorts += rate(p, UnitClass::FpAdd) != 0;
    loadPorts += rate(p, UnitClass::Load) != 0;
  }
  EXPECT_EQ(fpPorts, 1);
  EXPECT_EQ(loadPorts, 1);
  EXPECT_EQ(rate(c.core.ports[1], UnitClass::IntDiv), 1);
  EXPECT_EQ(rate(c.core.ports[3], UnitClass::StoreAddress), 1);
}

TEST(PortsConfig, BroadwellHasEightPortsFourAlusTwoLoadPorts) {
  // [opt, agner]: 0, 1, 5, 6 ALUs; 2, 3 loads; 4 store data; 7 store address; divider on 0.
  const Config c = loadConfig("broadwell");
  ASSERT_EQ(c.core.ports.size(), 8u);
  int alus = 0, loads = 0;
  for (const PortConfig& p : c.core.ports) {
    alus += rate(p, UnitClass::IntAlu) != 0;
    loads += rate(p, UnitClass::Load) != 0;
  }
  EXPECT_EQ(alus, 4);
  EXPECT_EQ(loads, 2);
  EXPECT_EQ(rate(c.core.ports[0], UnitClass::IntDiv), 1);
  EXPECT_EQ(rate(c.core.ports[4], UnitClass::StoreData), 1);
}

TEST(PortsConfig, TheRemovedCountKeyIsOneErrorNamingItAndItsReplacement) {
  TempDir dir;
  const auto path = dir.write("old.toml", "[core.fu.int_alu]\ncount = 3\nlatency = 1\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(path); }),
                       {path + ":2", "'core.fu.int_alu.count' was removed", "core.ports"}));
  Config c;
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.fu.load.count=2"); }),
                       {"'core.fu.load.count' was removed", "core.ports"}));
}

TEST(PortsConfig, BadPortListsNameTheKeyThePortAndTheProblem) {
  Config c;
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, R"(core.ports=["int_alu", "lod"])"); }),
                       {"core.ports", "port 1", "unknown unit class", "lod"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, R"(core.ports=["int_alu:0"])"); }),
                       {"core.ports", "port 0", "rate"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, "core.ports=3"); }), {"core.ports", "array"}));
  EXPECT_TRUE(mentions(configErrorOf([&] { applyOverride(c, R"(core.ports=[""])"); }),
                       {"core.ports", "port 0", "at least one unit class"}));
  // Every class must be fed, or its uops would never issue: validation names the class.
  Config d;
  applyOverride(d, R"(core.ports=["int_alu branch", "load", "store_address store_data"])");
  EXPECT_TRUE(mentions(configErrorOf([&] { validateConfig(d); }), {"core.ports", "'int_mul'"}));
  // A rate must divide the port's fastest rate (a uop takes a whole number of slots).
  Config e;
  applyOverride(e, R"(core.ports=["int_alu:3 branch:2 int_mul int_div fp_add fp_mul fp_div load store_address store_data"])");
  EXPECT_TRUE(mentions(configErrorOf([&] { validateConfig(e); }), {"core.ports", "'branch'", "divide"}));
}

TEST(PortsConfig, AnOverrideSetsThePortsAndTheOutputsWriteThemBack) {
  Config c;
  applyOverride(c, R"(core.ports=["int_alu:2 branch:2", "int_mul int_div fp_add fp_mul fp_div", "load", "store_address", "store_data"])");
  ASSERT_EQ(c.core.ports.size(), 5u);
  EXPECT_EQ(rate(c.core.ports[0], UnitClass::IntAlu), 2);
  EXPECT_EQ(portText(c.core.ports[0]), "int_alu:2 branch:2");
  EXPECT_NO_THROW(validateConfig(c));
  const boost::json::value j = configToJson(c);
  const auto& ports = j.at("core").at("ports").as_array();
  ASSERT_EQ(ports.size(), 5u);
  EXPECT_EQ(ports[1].as_string(), "int_mul int_div fp_add fp_mul fp_div");
  TempDir dir;
  const Config back = loadConfig(dir.write("back.toml", configToToml(c)));
  EXPECT_EQ(back.core.ports, c.core.ports);
}

}  // namespace
}  // namespace smtlab
