// The physical register file keys (core.int_prf, core.fp_prf): overridable, validated against the committed state they
// must hold, and refused with one message naming the key.

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;
using test::mentions;

TEST(RegisterFileConfig, KeysOverrideAndZeroMeansUnlimited) {
  Config c;
  EXPECT_EQ(c.core.int_prf.entries, 0u);  // the default keeps the model without a register limit
  EXPECT_EQ(c.core.fp_prf.entries, 0u);
  EXPECT_FALSE(c.core.stack_engine);
  applyOverride(c, "core.int_prf.entries=128");
  applyOverride(c, "core.int_prf.sharing=partitioned");
  applyOverride(c, "core.fp_prf.architectural=16");
  applyOverride(c, "core.stack_engine=true");
  EXPECT_EQ(c.core.int_prf.entries, 128u);
  EXPECT_EQ(c.core.int_prf.sharing, Sharing::Partitioned);
  EXPECT_EQ(c.core.fp_prf.architectural, 16u);
  EXPECT_TRUE(c.core.stack_engine);
  EXPECT_NO_THROW(validateConfig(c));
}

TEST(RegisterFileConfig, AFileWithoutRoomToRenameIsRefusedNamingTheKey) {
  // 2 threads x 17 architectural = 34 entries hold committed state: 34 leaves none, 35 leaves one (shared), a
  // partitioned file needs one per thread (36).
  Config c;
  c.core.threads = 2;
  c.core.int_prf = {34, Sharing::Shared, 1.0, 17};
  EXPECT_TRUE(mentions(configErrorOf([&] { validateConfig(c); }), {"core.int_prf.entries = 34", "at least 35"}));
  c.core.int_prf.entries = 35;
  EXPECT_NO_THROW(validateConfig(c));
  c.core.int_prf.sharing = Sharing::Partitioned;
  EXPECT_TRUE(mentions(configErrorOf([&] { validateConfig(c); }), {"core.int_prf.entries = 35", "at least 36"}));
  // Replicated: the entries are per thread, so one thread's 17 count.
  c.core.fp_prf = {20, Sharing::Replicated, 1.0, 24};
  c.core.int_prf = {0, Sharing::Shared, 1.0, 17};
  EXPECT_TRUE(mentions(configErrorOf([&] { validateConfig(c); }), {"core.fp_prf.entries = 20", "at least 25"}));
}

TEST(RegisterFileConfig, ACapThatLeavesAThreadNoRegisterIsRefused) {
  Config c;
  c.core.threads = 2;
  c.core.fp_prf = {50, Sharing::Capped, 0.1, 24};  // 2 renaming registers x 0.1 < 1
  EXPECT_TRUE(mentions(configErrorOf([&] { validateConfig(c); }), {"core.fp_prf.cap", "less than one"}));
}

}  // namespace
}  // namespace smtlab
