// Integer keys are range-checked in integers: a double holds integers near 1e18 only 128 apart, so 10^18 + 64 would
// round onto the bound 10^18 and pass a comparison made in doubles.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;

TEST(ConfigIntegerRange, ABoundOf1e18RefusesOneAbove1e18ThatRoundsOntoIt) {
  // 10^18 + 64 as a double is exactly 10^18 (the doubles there are 128 apart): only an integer comparison sees it.
  ASSERT_EQ(static_cast<double>(1000000000000000064LL), 1e18);
  Config c;
  EXPECT_NO_THROW(applyOverride(c, "seed=1000000000000000000"));
  EXPECT_EQ(c.seed, 1000000000000000000ULL);
  const std::string msg = configErrorOf([&] { applyOverride(c, "seed=1000000000000000064"); });
  EXPECT_NE(msg.find("key 'seed' = 1000000000000000064 is out of range [0, 1000000000000000000]"), std::string::npos)
      << msg;
  EXPECT_EQ(c.seed, 1000000000000000000ULL) << "a refused value was applied";
  EXPECT_NE(configErrorOf([&] { applyOverride(c, "seed=1000000000000000001"); }).find("out of range"),
            std::string::npos);
}

TEST(ConfigIntegerRange, AFileAndAValidationRefuseItToo) {
  test::TempDir dir;
  const std::string file = dir.write("seed.toml", "seed = 1000000000000000064\n");
  EXPECT_NE(configErrorOf([&] { loadConfig(file); }).find("key 'seed' = 1000000000000000064 is out of range"),
            std::string::npos);
  Config c;
  c.seed = 1000000000000000064ULL;  // set through the API, past the table's range
  EXPECT_NE(configErrorOf([&] { validateConfig(c); }).find("key 'seed' = 1000000000000000064 is out of range"),
            std::string::npos);
}

TEST(ConfigIntegerRange, EveryIntegerKeyAcceptsItsPrintedMaximumAndRefusesOneMore) {
  const Config defaults;
  int checked = 0;
  for (const ParamInfo& p : describeConfig(defaults)) {
    if (p.type != "int") continue;
    // The range as the message prints it: "... is out of range [MIN, MAX]".
    Config c;
    const std::string msg = configErrorOf([&] { applyOverride(c, p.key + "=-1"); });
    const auto open = msg.rfind('['), comma = msg.rfind(", "), close = msg.rfind(']');
    if (msg.find("out of range") == std::string::npos) {
      // -1 is within range only if the minimum is negative; no integer key has one.
      ADD_FAILURE() << p.key << ": -1 was not refused as out of range: " << msg;
      continue;
    }
    ASSERT_TRUE(open != std::string::npos && comma > open && close > comma) << msg;
    const std::int64_t max = std::stoll(msg.substr(comma + 2, close - comma - 2));
    EXPECT_NO_THROW(applyOverride(c, p.key + "=" + std::to_string(max))) << p.key << " refuses its maximum " << max;
    if (max < INT64_MAX) {
      EXPECT_NE(configErrorOf([&] { applyOverride(c, p.key + "=" + std::to_string(max + 1)); }).find("out of range"),
                std::string::npos)
          << p.key << " accepts " << max + 1;
    }
    ++checked;
  }
  EXPECT_GT(checked, 50) << "too few integer keys found: the type name may have changed";
}

}  // namespace
}  // namespace smtlab
