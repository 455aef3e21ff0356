// The load/store unit's keys (core.lsu): bad values are refused with one message naming the key, and
// the choice and every key round-trip through --set and the TOML output.
#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

std::string errorOf(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LsuConfig, AnUnknownMemoryDependenceModeNamesTheKeyAndTheChoices) {
  Config c;
  const std::string msg = errorOf([&] { applyOverride(c, "core.lsu.memory_dependence=predict"); });
  EXPECT_NE(msg.find("core.lsu.memory_dependence"), std::string::npos) << msg;
  EXPECT_NE(msg.find("off | speculate | wait | predictor"), std::string::npos) << msg;
  applyOverride(c, "core.lsu.memory_dependence=wait");
  EXPECT_EQ(c.core.lsu.memory_dependence, MemDependence::Wait);
}

TEST(LsuConfig, PredictorEntriesMustBeAPowerOfTwoAndStoresPerCycleAtLeastOne) {
  Config c;
  applyOverride(c, "core.lsu.predictor_entries=1000");
  const std::string msg = errorOf([&] { validateConfig(c); });
  EXPECT_NE(msg.find("core.lsu.predictor_entries = 1000 must be a power of two"), std::string::npos) << msg;
  Config d;
  EXPECT_NE(errorOf([&] { applyOverride(d, "core.lsu.stores_per_cycle=0"); }).find("core.lsu.stores_per_cycle"),
            std::string::npos);
}

TEST(LsuConfig, ThePresetsValuesSurviveTheTomlOutput) {
  const Config netburst = loadConfig("netburst");
  EXPECT_TRUE(netburst.core.lsu.alias_64k);
  EXPECT_EQ(netburst.core.lsu.memory_dependence, MemDependence::Predictor);
  const std::string toml = configToToml(netburst);
  EXPECT_NE(toml.find("memory_dependence = \"predictor\""), std::string::npos);
}

}  // namespace
}  // namespace smtlab
