// Loading TOML files onto the defaults: unknown keys, wrong types, ranges and syntax errors name the key and the file.

#include <cstdlib>

#include <gtest/gtest.h>

#include "config_test_util.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {
namespace {

using test::configErrorOf;
using test::mentions;
using test::TempDir;

TEST(ConfigLoader, EmptyNameGivesValidDefaults) {
  const Config c = loadConfig("");
  EXPECT_EQ(c.source, "defaults");
  EXPECT_EQ(c.core.rob.entries, Config{}.core.rob.entries);
  EXPECT_NO_THROW(validateConfig(Config{}));
}

TEST(ConfigLoader, FileOverlaysOnlyTheKeysItNames) {
  TempDir dir;
  const auto path = dir.write("small.toml",
                              "seed = 7\n"
                              "[core]\n"
                              "threads = 1\n"
                              "fetch_policy = \"icount\"\n"
                              "[core.rob]\n"
                              "entries = 96\n"
                              "sharing = \"shared\"\n"
                              "[mem.dram]\n"
                              "bytes_per_cycle = 3  # an integer is fine where a float is expected\n");
  const Config c = loadConfig(path);
  EXPECT_EQ(c.source, path);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.core.threads, 1u);
  EXPECT_EQ(c.core.fetch_policy, FetchPolicy::ICount);
  EXPECT_EQ(c.core.rob.entries, 96u);
  EXPECT_EQ(c.core.rob.sharing, Sharing::Shared);
  EXPECT_DOUBLE_EQ(c.mem.dram.bytes_per_cycle, 3.0);
  // Untouched keys keep their defaults.
  EXPECT_EQ(c.core.lq.entries, Config{}.core.lq.entries);
  EXPECT_EQ(c.mem.l1d.size_kb, Config{}.mem.l1d.size_kb);
}

TEST(ConfigLoader, DottedKeysWorkLikeTables) {
  TempDir dir;
  const auto path = dir.write("dotted.toml", "core.rob.entries = 100\nmem.l2.latency = 13\n");
  const Config c = loadConfig(path);
  EXPECT_EQ(c.core.rob.entries, 100u);
  EXPECT_EQ(c.mem.l2.latency, 13u);
}

TEST(ConfigLoader, UnknownKeyNamesKeyFileAndSuggestion) {
  TempDir dir;
  const auto path = dir.write("typo.toml", "[core.rob]\nentires = 64\n");
  const auto msg = configErrorOf([&] { loadConfig(path); });
  EXPECT_TRUE(mentions(msg, {path + ":2", "unknown key 'core.rob.entires'", "did you mean 'core.rob.entries'"}));
}

TEST(ConfigLoader, MisspelledTableIsAnUnknownKey) {
  TempDir dir;
  const auto path = dir.write("table.toml", "[core.robb]\nentries = 64\n");
  const auto msg = configErrorOf([&] { loadConfig(path); });
  EXPECT_TRUE(mentions(msg, {path, "unknown key 'core.robb.entries'", "did you mean 'core.rob.entries'"}));
}

TEST(ConfigLoader, FarOffKeyGetsNoSuggestion) {
  TempDir dir;
  const auto path = dir.write("far.toml", "flux_capacitor = 88\n");
  const auto msg = configErrorOf([&] { loadConfig(path); });
  EXPECT_TRUE(mentions(msg, {path, "unknown key 'flux_capacitor'"}));
  EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
}

TEST(ConfigLoader, SectionGivenAValueIsAnError) {
  TempDir dir;
  const auto path = dir.write("section.toml", "[core]\nrob = 126\n");
  const auto msg = configErrorOf([&] { loadConfig(path); });
  EXPECT_TRUE(mentions(msg, {path, "'core.rob' is a section, not a key", "core.rob.entries", "integer 126"}));
}

TEST(ConfigLoader, WrongTypeNamesKeyFileAndValue) {
  TempDir dir;
  const auto intAsString = dir.write("t1.toml", "[core.rob]\nentries = \"abc\"\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(intAsString); }),
                       {intAsString + ":2", "key 'core.rob.entries' must be an integer, got string \"abc\""}));

  const auto intAsFloat = dir.write("t2.toml", "[core.rob]\nentries = 12.5\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(intAsFloat); }),
                       {intAsFloat, "core.rob.entries", "must be an integer", "float 12.5"}));

  const auto boolAsInt = dir.write("t3.toml", "[core]\nrecombine = 1\n");
  EXPECT_TRUE(
      mentions(configErrorOf([&] { loadConfig(boolAsInt); }), {boolAsInt, "core.recombine", "must be a boolean"}));

  const auto floatAsString = dir.write("t4.toml", "[system]\nfreq_ghz = \"fast\"\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(floatAsString); }),
                       {floatAsString, "system.freq_ghz", "must be a number"}));

  const auto enumAsInt = dir.write("t5.toml", "[core.iq]\nsharing = 2\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(enumAsInt); }),
                       {enumAsInt, "core.iq.sharing", "replicated | partitioned | shared | capped", "integer 2"}));

  const auto tableAsInt = dir.write("t6.toml", "[core.rob.entries]\nx = 1\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(tableAsInt); }), {tableAsInt, "core.rob.entries", "a table"}));
}

TEST(ConfigLoader, UnknownChoiceListsChoicesAndSuggests) {
  TempDir dir;
  const auto path = dir.write("choice.toml", "[core]\nfetch_policy = \"icont\"\n");
  const auto msg = configErrorOf([&] { loadConfig(path); });
  EXPECT_TRUE(mentions(msg, {path, "core.fetch_policy", "round_robin | icount | brcount | misscount | stall | flush",
                             "\"icont\"", "did you mean 'icount'"}));
}

TEST(ConfigLoader, OutOfRangeNamesKeyValueAndRange) {
  TempDir dir;
  const auto zeroThreads = dir.write("r1.toml", "[core]\nthreads = 0\n");
  EXPECT_TRUE(
      mentions(configErrorOf([&] { loadConfig(zeroThreads); }), {zeroThreads, "'core.threads' = 0", "[1, 8]"}));

  const auto negative = dir.write("r2.toml", "[core.rob]\nentries = -5\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(negative); }), {negative, "'core.rob.entries' = -5"}));

  const auto capTooBig = dir.write("r3.toml", "[core.iq]\ncap = 1.5\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(capTooBig); }), {capTooBig, "'core.iq.cap' = 1.5", "[0, 1]"}));

  const auto tooManyCores = dir.write("r4.toml", "[system]\ncores = 65\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(tooManyCores); }), {tooManyCores, "system.cores", "[1, 64]"}));
}

TEST(ConfigLoader, InconsistentValueNamesKeysAndFile) {
  TempDir dir;
  const auto path = dir.write("bad.toml", "[core]\nthreads = 4\n[core.rob]\nentries = 3\nsharing = \"partitioned\"\n");
  EXPECT_TRUE(mentions(configErrorOf([&] { loadConfig(path); }), {path, "core.rob.entries = 3", "core.threads = 4"}));
}

TEST(ConfigLoader, SyntaxErrorGivesLineAndColumn) {
  TempDir dir;
  const auto path = dir.write("syntax.toml", "[core]\nthreads = \n");
  const auto msg = configErrorOf([&] { loadConfig(path); });
  EXPECT_TRUE(mentions(msg, {path + ":2:"})) << msg;
}

TEST(ConfigLoader, MissingFileListsPresets) {
  const auto msg = configErrorOf([] { loadConfig("no_such_preset"); });
  EXPECT_TRUE(mentions(msg, {"no_such_preset", "broadwell", "modern", "netburst"}));
  const auto pathMsg = configErrorOf([] { loadConfig("/nonexistent/dir/x.toml"); });
  EXPECT_TRUE(mentions(pathMsg, {"/nonexistent/dir/x.toml", "no such file"}));
}

TEST(ConfigLoader, FindsPresetsByNameWithOrWithoutExtension) {
  const std::string byName = findConfigFile("netburst");
  EXPECT_TRUE(byName.ends_with("configs/netburst.toml")) << byName;
  EXPECT_EQ(findConfigFile("netburst.toml"), byName);
  // An existing path is returned as given.
  const std::string direct = std::string(SMTLAB_SOURCE_DIR) + "/configs/modern.toml";
  EXPECT_EQ(findConfigFile(direct), direct);
}

TEST(ConfigLoader, ConfigDirFromEnvironmentComesFirst) {
  TempDir dir;
  dir.write("netburst.toml", "[core]\nthreads = 1\n");
  dir.write("mine.toml", "seed = 42\n");
  const char* old = std::getenv("SMTLAB_CONFIG_DIR");
  const std::string saved = old ? old : "";
  ::setenv("SMTLAB_CONFIG_DIR", dir.path().c_str(), 1);
  std::string found;
  std::uint64_t seed = 0;
  std::uint32_t threads = 0;
  try {
    found = findConfigFile("netburst");
    seed = loadConfig("mine").seed;
    threads = loadConfig("netburst").core.threads;
  } catch (...) {
  }
  if (old) {
    ::setenv("SMTLAB_CONFIG_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("SMTLAB_CONFIG_DIR");
  }
  EXPECT_EQ(found, (dir.path() / "netburst.toml").string());
  EXPECT_EQ(seed, 42u);
  EXPECT_EQ(threads, 1u);
}

}  // namespace
}  // namespace smtlab
