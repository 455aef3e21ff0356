// What a killed recording leaves in a kpath: cache, and what removeStaleRecordingWork takes away: its work folder
// (boot.tmpPID, the plugin's raw streams: about 500 MB) and the split's unfinished traces (NAME.trace.tmpPID).
// Before, a work folder outlived its recording (the RAII cleanup does not run under SIGKILL) until a later recording
// with the same PID, which in practice meant for ever: one such folder, 483 MB, sat in a development cache. Nothing
// else in the folder may be touched: the recording, its manifest, names that only look alike, symbolic links and
// what they point to. Nothing here boots.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "smtlab/tracer/kpath.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

class StaleWork : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("smtlab-stale-work-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "cache");
    fs::create_directories(root_ / "elsewhere");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path cache(const std::string& name) const { return root_ / "cache" / name; }
  void put(const fs::path& p, std::size_t bytes) const {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
  }

  fs::path root_;
};

TEST_F(StaleWork, RemovesKilledRecordingsWorkAndUnfinishedTraces) {
  put(cache("boot.tmp12220/raw.cpu0.raw"), 1000);
  put(cache("boot.tmp12220/console.log"), 20);
  put(cache("boot.tmp7/nested/disk.img"), 300);
  put(cache("tcp_send.trace.tmp4242"), 50);
  // 1000 + 20 + 300 + 50 bytes, counted on paper.
  EXPECT_EQ(removeStaleRecordingWork(cache("").string()), 1370u);
  EXPECT_FALSE(fs::exists(cache("boot.tmp12220")));
  EXPECT_FALSE(fs::exists(cache("boot.tmp7")));
  EXPECT_FALSE(fs::exists(cache("tcp_send.trace.tmp4242")));
  // A second call finds nothing.
  EXPECT_EQ(removeStaleRecordingWork(cache("").string()), 0u);
}

TEST_F(StaleWork, KeepsTheRecordingAndEverythingThatOnlyLooksAlike) {
  put(cache("kpaths.json"), 10);
  put(cache("kpaths.json.tracer"), 10);
  put(cache("tcp_send.trace"), 10);
  put(cache("vmlinuz-6.1.0-56-amd64"), 10);
  put(cache("modules-6.1.0-56-amd64/kernel/x.ko"), 10);
  put(cache("boot.tmp/raw"), 10);           // no PID
  put(cache("boot.tmp12x/raw"), 10);        // not a PID
  put(cache("boot.tmp99"), 10);             // a file, not a work folder
  put(cache("tcp_send.trace.tmp"), 10);     // no PID
  put(cache("tcp_send.trace.tmp1.bak"), 10);
  put(cache(".trace.tmp5"), 10);            // no path name
  put(cache("tcp_send.trace.tmp6/raw"), 10);  // a folder, not a trace
  put(root_ / "elsewhere" / "keep", 10);
  fs::create_directory_symlink(root_ / "elsewhere", cache("boot.tmp55"));
  EXPECT_EQ(removeStaleRecordingWork(cache("").string()), 0u);
  for (const char* name : {"kpaths.json", "kpaths.json.tracer", "tcp_send.trace", "vmlinuz-6.1.0-56-amd64",
                           "modules-6.1.0-56-amd64/kernel/x.ko", "boot.tmp/raw", "boot.tmp12x/raw", "boot.tmp99",
                           "tcp_send.trace.tmp", "tcp_send.trace.tmp1.bak", ".trace.tmp5", "tcp_send.trace.tmp6/raw"}) {
    EXPECT_TRUE(fs::exists(cache(name))) << name;
  }
  EXPECT_TRUE(fs::is_symlink(cache("boot.tmp55")));
  EXPECT_TRUE(fs::exists(root_ / "elsewhere" / "keep"));
}

TEST_F(StaleWork, AMissingFolderIsNoError) {
  EXPECT_EQ(removeStaleRecordingWork((root_ / "no-such-cache").string()), 0u);
}

}  // namespace
}  // namespace smtlab
