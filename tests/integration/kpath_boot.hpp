// The KpathBoot fixture: boots Debian 12's kernel once under qemu-system-x86_64 with the system plugin, records the
// probe's paths (10 instances each) into a private kpath cache, and gives the checks helpers over instances, the
// manifest and the guest's symbols. The checks are split by subject: kpath_system_test.cpp (processes, faults,
// pipes, IPIs, the shell; the one TEST_F that runs them all), kpath_io_checks.cpp (file system, disk and network).
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kpath.hpp"

namespace smtlab::kpath_test {
namespace fs = std::filesystem;

class KpathBoot : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = systemTracerUnavailableReason()) {
      skip_ = *why;
      return;
    }
    // The kernel comes from Debian's archive; only its absence (no apt, no network) is a reason to skip.
    const std::string script = std::string(SMTLAB_SOURCE_DIR) + "/scripts/kpath_kernel.sh >/dev/null 2>&1";
    if (std::system(script.c_str()) != 0) {
      skip_ = "scripts/kpath_kernel.sh could not get the kernel image (run it to see why)";
      return;
    }
    cache_ = fs::temp_directory_path() / ("smtlab-kpath-test-" + std::to_string(::getpid()));
    fs::create_directories(cache_);
    ::setenv("SMTLAB_KPATH_CACHE", cache_.c_str(), 1);
    KpathBuildOptions o;
    o.count = 10;
    o.quiet = true;
    manifest_ = ensureKpathCache(o);
  }
  // SMTLAB_KEEP_KPATH_TEST_CACHE=1 keeps the recording for a look at a failure (its folder is printed); by default it
  // is removed, as every test leaves its temporary folder empty.
  static void TearDownTestSuite() {
    if (cache_.empty()) return;
    if (const char* keep = std::getenv("SMTLAB_KEEP_KPATH_TEST_CACHE"); keep != nullptr && *keep != '\0' &&
                                                                         std::string(keep) != "0") {
      std::fprintf(stderr, "KpathBoot: the recording is kept in %s (SMTLAB_KEEP_KPATH_TEST_CACHE)\n", cache_.c_str());
      return;
    }
    std::error_code ec;
    fs::remove_all(cache_, ec);
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }
  static std::vector<Instr> instance(const std::string& name, int seed) {
    auto src = openTrace("kpath:" + name + ",seed=" + std::to_string(seed));
    return readAll(*src);
  }
  // Instance `index` of the manifest's list, as recorded (a seed draws an instance by a hash, so seeds 0..n-1 do not
  // visit each one): records [offset, offset + length) of the path's trace file.
  static std::vector<Instr> instanceAt(const std::string& name, std::size_t index) {
    const auto entry = instances(name).at(index).as_array();
    const auto offset = entry.at(0).to_number<std::size_t>(), length = entry.at(1).to_number<std::size_t>();
    NativeTraceReader reader((cache_ / (name + ".trace")).string());
    const auto all = readAll(reader);
    if (offset + length > all.size()) return {};
    return {all.begin() + static_cast<std::ptrdiff_t>(offset),
            all.begin() + static_cast<std::ptrdiff_t>(offset + length)};
  }
  static boost::json::array instances(const std::string& name) {
    std::ifstream in(manifest_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return boost::json::parse(text).at("paths").at(name).at("instances").as_array();
  }
  static std::uint64_t symbol(const std::string& name) {
    std::ifstream in(manifest_);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return boost::json::parse(text).at("symbols").at(name).to_number<std::uint64_t>();
  }
  static bool runs(const std::vector<Instr>& t, std::uint64_t pc) {
    return std::any_of(t.begin(), t.end(), [&](const Instr& i) { return i.pc == pc; });
  }
  // A record after the first at an interrupt vector's entry (kpath_system_test.cpp).
  static bool holdsAnotherInterrupt(const std::vector<Instr>& t);
  static int userRuns(const std::vector<Instr>& t) {
    int n = 0;
    for (std::size_t i = 0; i < t.size(); ++i) n += t[i].pc < kKernelHalf && (i == 0 || t[i - 1].pc >= kKernelHalf);
    return n;
  }
  static std::uint64_t kernelCount(const std::vector<Instr>& t) {
    return static_cast<std::uint64_t>(std::count_if(t.begin(), t.end(), [](const Instr& i) { return i.pc >= kKernelHalf; }));
  }
  // Bytes of user memory (each counted once) that the kernel's instructions of `t` store (or load).
  static std::size_t userBytes(const std::vector<Instr>& t, bool stores) {
    std::set<Addr> bytes;
    for (const Instr& i : t) {
      if (i.pc < kKernelHalf) continue;
      const auto note = [&](const MemRef& m) {
        if (m.valid() && m.addr < kKernelHalf)
          for (Addr a = m.addr; a < m.addr + m.size; ++a) bytes.insert(a);
      };
      if (stores) {
        for (const MemRef& m : i.stores) note(m);
      } else {
        for (const MemRef& m : i.loads) note(m);
      }
    }
    return bytes.size();
  }
  // The kernel records of a path's instances (the manifest's third field), sorted.
  static std::vector<std::uint64_t> kernelRecords(const std::string& name) {
    std::vector<std::uint64_t> k;
    for (const auto& i : instances(name)) k.push_back(i.as_array().at(2).to_number<std::uint64_t>());
    std::sort(k.begin(), k.end());
    return k;
  }
  // "name: k1 k2 ..." (kernel records of every instance, sorted): for a failed length bound's message, so that a CI
  // log says which instances were long or short without the recording (which the suite deletes).
  static std::string kernelRecordsText(const std::string& name) {
    std::string text = name + ":";
    for (std::uint64_t k : kernelRecords(name)) text += " " + std::to_string(k);
    return text;
  }
  static std::uint64_t minKernelRecords(const std::string& name) { return kernelRecords(name).at(0); }
  static std::uint64_t medianKernelRecords(const std::string& name) {
    const auto k = kernelRecords(name);
    return k.at(k.size() / 2);
  }
  void checkEveryPathOfTheProbeHasItsInstances();
  void checkNullSystemCallIsUserThenKernelThenUser();
  void checkWarmInstancesOfOnePathRunTheSameUserCode();
  void checkPageFaultZeroesOneWholePage();
  void checkPipeRoundTripRunsTheOtherProcess();
  void checkSameSeedSameInstance();
  void checkFsyncReachesTheDiskAndTheWriteDoesNot();
  void checkReschedIpiStartsAtItsVectorAndStopsBeforeTheSwitch();
  void checkCrossCpuWakeRunsNoOtherProcess();
  void checkWakeIpiStartsAtItsVectorRunsTheWakeListAndStopsBeforeTheSwitch();
  void checkCrossCpuWakeQueuesOnTheWakeListAndSendsTheIpi();
  void checkTraceInfoWorksOnAKpath();
  void checkFileServerPathsRunTheirFileSystemCode();
  void checkNetworkPathsRunTheirSocketCode();
  void checkChatBatchesMoveEveryMessageInOneCall();
  void checkDiskReadCopiesOneKibFromThePageCache();
  void checkWritebackSubmitsItsFourDirtyPages();
  void checkShellExecsTheProgramWithoutForking();
  static inline std::string skip_;
  static inline fs::path cache_;
  static inline std::string manifest_;
};

}  // namespace smtlab::kpath_test
