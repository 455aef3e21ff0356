// When a kpath: cache counts as recorded from other probe sources (kpathProbeDigest, kpathProbeSourcesChanged): by
// the files' names and bytes, not their modification times. A fresh checkout or a worktree gives every file a new
// time; a rule by time (a probe file newer than the manifest) would record the cache again, and a new boot's
// recording (its timing differs) would replace the one every other user of the cache compares against.
// Nothing here boots.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>

#include "smtlab/tracer/kpath.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

class ProbeDigest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("smtlab-probe-digest-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "a");
    fs::create_directories(root_ / "b");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path put(const std::string& dir, const std::string& name, const std::string& bytes) {
    const fs::path p = root_ / dir / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string digest(const std::string& dir) { return kpathProbeDigest((root_ / dir).string()); }

  fs::path root_;
};

TEST_F(ProbeDigest, SameFilesGiveTheSameDigestWhateverTheirTimes) {
  const fs::path a1 = put("a", "probe.c", "int main(void) { return 0; }\n");
  put("a", "kpath_paths.h", "KPATH(getppid)\n");
  const fs::path b1 = put("b", "probe.c", "int main(void) { return 0; }\n");
  put("b", "kpath_paths.h", "KPATH(getppid)\n");
  // One copy a day older, the other an hour in the future: what a checkout does to the times.
  fs::last_write_time(a1, fs::last_write_time(a1) - std::chrono::hours(24));
  fs::last_write_time(b1, fs::last_write_time(b1) + std::chrono::hours(1));
  EXPECT_EQ(digest("a"), digest("b"));
  EXPECT_FALSE(digest("a").empty());
}

TEST_F(ProbeDigest, AChangedByteANewFileOrARenamedFileChangesIt) {
  put("a", "probe.c", "int main(void) { return 0; }\n");
  const std::string before = digest("a");
  put("a", "probe.c", "int main(void) { return 1; }\n");  // one byte
  const std::string oneByte = digest("a");
  EXPECT_NE(oneByte, before);
  put("a", "make_initramfs.sh", "#!/bin/sh\n");
  const std::string added = digest("a");
  EXPECT_NE(added, oneByte);
  fs::rename(root_ / "a" / "make_initramfs.sh", root_ / "a" / "make_initrd.sh");  // same bytes, another name
  EXPECT_NE(digest("a"), added);
}

TEST_F(ProbeDigest, BytesMovedBetweenTwoFilesChangeIt) {
  // Joined, both pairs are the bytes "xab" + "c" and "xa" + "bc": the names and their ends are part of the digest.
  put("a", "x", "ab");
  put("a", "y", "c");
  put("b", "x", "a");
  put("b", "y", "bc");
  EXPECT_NE(digest("a"), digest("b"));
}

TEST_F(ProbeDigest, NamesTheTotalSizeAndIsEmptyForNoFiles) {
  EXPECT_EQ(digest("a"), "");                                    // a folder without files
  EXPECT_EQ(kpathProbeDigest((root_ / "missing").string()), "");  // no folder: unchanged, as before
  put("a", "probe.c", "12345");
  put("a", "kpath_paths.h", "123");
  fs::create_directories(root_ / "a" / "sub");  // a folder is not a source
  EXPECT_TRUE(std::regex_match(digest("a"), std::regex("crc32-8-[0-9a-f]{8}"))) << digest("a");
}

TEST(ProbeSourcesChanged, AKeptDigestDecidesAndTheTimesAreNotAsked) {
  int asked = 0;
  auto newer = [&] {
    ++asked;
    return true;
  };
  EXPECT_FALSE(kpathProbeSourcesChanged(std::optional<std::string>("crc32-8-0000abcd"), "crc32-8-0000abcd", newer));
  EXPECT_TRUE(kpathProbeSourcesChanged(std::optional<std::string>("crc32-8-0000abcd"), "crc32-9-0000abcd", newer));
  EXPECT_EQ(asked, 0);
}

TEST(ProbeSourcesChanged, AManifestWithoutADigestKeepsTheOldRule) {
  EXPECT_TRUE(kpathProbeSourcesChanged(std::nullopt, "crc32-8-0000abcd", [] { return true; }));
  EXPECT_FALSE(kpathProbeSourcesChanged(std::nullopt, "crc32-8-0000abcd", [] { return false; }));
}

TEST(ProbeSourcesChanged, TheRealProbeFolderHasADigestOfItsBytes) {
  // The sum of the sizes of workloads/kpath's files, counted here apart from the digest.
  std::uintmax_t size = 0;
  for (const auto& e : fs::directory_iterator(fs::path(SMTLAB_SOURCE_DIR) / "workloads/kpath")) {
    if (e.is_regular_file()) size += e.file_size();
  }
  ASSERT_GT(size, 0u);
  const std::string d = kpathProbeDigest((fs::path(SMTLAB_SOURCE_DIR) / "workloads/kpath").string());
  EXPECT_TRUE(std::regex_match(d, std::regex("crc32-" + std::to_string(size) + "-[0-9a-f]{8}"))) << d;
}

}  // namespace
}  // namespace smtlab
