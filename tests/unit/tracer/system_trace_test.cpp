// The full-system stream splitter on hand-made plugin output (needs capstone, not QEMU): a region from a begin
// marker to its end marker across a system call, the user/kernel flag per record, a block cut by a fault, broken
// regions, kernel excursions, the per-path cache files, and one clear error per kind of damage.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/system_trace.hpp"
#include "raw_system_trace.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

using SystemBytes = test::RawSystemTrace;

constexpr Addr kUser0 = 0x401000, kKernel = 0xffffffff81000000ull, kUser2 = 0x40100c, kUser4 = 0x403000;

class SystemTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
    dir_ = fs::temp_directory_path() / ("smtlab-systrace-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    SystemBytes b;
    b.raw({"SMTLBLK\1", 8});
    // 0 (user, 0x401000): begin marker of region 5; mov (%rbx),%rax at 0x401007; syscall at 0x40100a.
    b.u32(0).u64(kUser0).u32(3).marker(5).insn({0x48, 0x8b, 0x03}).insn({0x0f, 0x05});
    // 1 (kernel): mov %rax,(%rsp); sysretq at +4.
    b.u32(1).u64(kKernel).u32(2).insn({0x48, 0x89, 0x04, 0x24}).insn({0x48, 0x0f, 0x07});
    // 2 (user, 0x40100c, where the syscall returns): nop; end marker of region 5 at 0x40100d; ret at 0x401014.
    b.u32(2).u64(kUser2).u32(3).insn({0x90}).marker(0x8005).insn({0xc3});
    // 4 (user, 0x403000): begin of region 7; mov %rax,(%rbx) at 0x403007; end of 7 at 0x40300a; ret at 0x403011.
    b.u32(4).u64(kUser4).u32(4).marker(7).insn({0x48, 0x89, 0x03}).marker(0x8007).insn({0xc3});
    // 5 (user, 0x403007): the same code entered again at the store, as after the page fault's return.
    b.u32(5).u64(kUser4 + 7).u32(3).insn({0x48, 0x89, 0x03}).marker(0x8007).insn({0xc3});
    // 6 (kernel): rep stosb, executed once per iteration.
    b.u32(6).u64(kKernel + 0x100).u32(1).insn({0xf3, 0xaa});
    b.save(blocks());
    table_ = std::make_unique<RawBlockTable>(blocks());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string blocks() const { return (dir_ / "x.blocks").string(); }
  std::string stream() const { return (dir_ / "x.cpu0.raw").string(); }
  std::vector<SystemRegion> split(const SystemBytes& b, SplitStats* stats = nullptr) {
    b.save(stream());
    std::vector<SystemRegion> out;
    const SplitStats s = splitSystemStream(*table_, stream(), [&](SystemRegion&& r) { out.push_back(std::move(r)); });
    if (stats) *stats = s;
    return out;
  }
  static SystemBytes header() { return SystemBytes().raw({"SMTLSYS\1", 8}); }
  // A null system call: user load + syscall, kernel store + sysret, user nop, end.
  static SystemBytes& syscallRegion(SystemBytes& b) {
    return b.mark(5, 0, 0).access(1, false, 0x7000).block(1, true).access(0, true, 0xffffc90000001000ull)
        .block(2, false).mark(0x8005, 2, 1);
  }
  fs::path dir_;
  std::unique_ptr<RawBlockTable> table_;
};

TEST_F(SystemTrace, RegionRunsFromBeginToEndMarkerAcrossTheSystemCall) {
  SystemBytes b = header();
  SplitStats stats;
  const auto regions = split(syscallRegion(b), &stats);
  ASSERT_EQ(regions.size(), 1u);
  const SystemRegion& r = regions[0];
  EXPECT_EQ(r.id, 5u);
  // Neither marker is a record: load, syscall | store, sysret | nop.
  ASSERT_EQ(r.instrs.size(), 5u);
  const Addr pcs[] = {kUser0 + 7, kUser0 + 10, kKernel, kKernel + 4, kUser2};
  const std::uint8_t kernel[] = {0, 0, 1, 1, 0};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.instrs[i].pc, pcs[i]) << i;
    EXPECT_EQ(r.kernel[i], kernel[i]) << i;
  }
  EXPECT_EQ(r.kernelInstructions(), 2u);
  EXPECT_EQ(r.instrs[0].op, OpClass::Load);
  EXPECT_EQ(r.instrs[0].loads[0], (MemRef{0x7000, 8}));
  EXPECT_EQ(r.instrs[2].op, OpClass::Store);
  EXPECT_EQ(r.instrs[2].stores[0], (MemRef{0xffffc90000001000ull, 8}));
  // sysretq is an indirect transfer whose target is the next executed pc, the user block.
  EXPECT_TRUE(r.instrs[3].taken);
  EXPECT_EQ(r.instrs[3].target, kUser2);
  EXPECT_EQ(stats.regions, 1u);
  EXPECT_EQ(stats.broken, 0u);
  EXPECT_EQ(stats.instructions, 5u);
}

TEST_F(SystemTrace, FaultingInstructionIsEmittedOnceAfterTheHandler) {
  // Begin in block 4; the store (2nd instruction started) faults: cut 2; the handler runs (block 1); the store runs
  // again in block 5 and the end marker follows it.
  SystemBytes b = header();
  b.mark(7, 4, 0).cut(2).block(1, true).block(5, false).access(0, true, 0x8000).mark(0x8007, 5, 1);
  SplitStats stats;
  const auto regions = split(b, &stats);
  ASSERT_EQ(regions.size(), 1u);
  const SystemRegion& r = regions[0];
  ASSERT_EQ(r.instrs.size(), 3u);
  EXPECT_EQ(r.instrs[0].pc, kKernel);
  EXPECT_EQ(r.instrs[1].pc, kKernel + 4);
  EXPECT_EQ(r.instrs[2].pc, kUser4 + 7);
  EXPECT_EQ(r.instrs[2].stores[0], (MemRef{0x8000, 8}));
  EXPECT_EQ(stats.cut, 1u);
}

TEST_F(SystemTrace, BeginAndEndInOneBlock) {
  SystemBytes b = header();
  b.mark(7, 4, 0).access(1, true, 0x9000).mark(0x8007, 4, 2);
  const auto regions = split(b);
  ASSERT_EQ(regions.size(), 1u);
  ASSERT_EQ(regions[0].instrs.size(), 1u);
  EXPECT_EQ(regions[0].instrs[0].stores[0], (MemRef{0x9000, 8}));
}

TEST_F(SystemTrace, BrokenRegionsAreCountedNotEmitted) {
  SystemBytes b = header();
  b.mark(7, 4, 0);                 // begun, then a new begin on the same CPU: broken
  syscallRegion(b);                // complete
  b.mark(7, 4, 0).mark(0x8005, 4, 2);  // ends with another region's id: broken
  b.mark(5, 0, 0).access(1, false, 0x7000);  // the stream ends inside it: broken
  SplitStats stats;
  const auto regions = split(b, &stats);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].instrs.size(), 5u);
  EXPECT_EQ(stats.broken, 3u);
}

TEST_F(SystemTrace, KernelExcursionsAreTheKernelRuns) {
  SystemRegion r;
  r.id = 3;
  const std::uint8_t kernel[] = {0, 1, 1, 0, 0, 1};
  for (std::uint8_t k : kernel) {
    r.instrs.push_back(Instr{});
    r.instrs.back().pc = r.instrs.size();
    r.kernel.push_back(k);
  }
  const auto runs = kernelExcursions(r);
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(runs[0].instrs.size(), 2u);
  EXPECT_EQ(runs[0].instrs[0].pc, 2u);
  ASSERT_EQ(runs[1].instrs.size(), 1u);
  EXPECT_EQ(runs[1].instrs[0].pc, 6u);
  EXPECT_EQ(runs[1].id, 3u);
}

TEST_F(SystemTrace, DamageIsOneClearError) {
  auto expectError = [&](const SystemBytes& b, const std::string& part) {
    b.save(stream());
    try {
      splitSystemStream(*table_, stream(), [](SystemRegion&&) {});
      ADD_FAILURE() << "no error for " << part;
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("x.cpu0.raw"), std::string::npos) << e.what();
    }
  };
  expectError(SystemBytes().raw({"SMTLRAW\1", 8}), "bad magic");
  expectError(header().mark(5, 0, 0).block(9, false), "byte 24: block 9 is not defined");
  expectError(header().mark(5, 0, 0).block(1, false), "wrong privilege flag");
  expectError(header().mark(5, 0, 0).u32(0x80000009u), "corrupt entry word");
  expectError(header().mark(5, 0, 0).block(1, true).mark(0x8005, 2, 1), "not the block running");
  expectError(header().mark(5, 0, 9), "marker index 9 outside block 0");
}

TEST_F(SystemTrace, InterruptDeliveryAccessesAreDroppedAndCounted) {
  // QEMU 7.2 reports the IDT read and frame pushes of an interrupt with the last instruction's callback: index 7
  // lies outside block 0 (3 instructions), and a kernel address cannot be touched by the user-mode load.
  SystemBytes b = header();
  b.mark(5, 0, 0).access(1, false, 0x7000).access(7, false, 0xfffffe0000000ec0ull)
      .access(1, true, 0xfffffe0000001000ull).block(1, true).access(0, true, 0xffffc90000001000ull)
      .block(2, false).mark(0x8005, 2, 1);
  SplitStats stats;
  const auto regions = split(b, &stats);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(stats.deliveryAccesses, 2u);
  EXPECT_EQ(regions[0].instrs[0].loads[0], (MemRef{0x7000, 8}));
  EXPECT_FALSE(regions[0].instrs[0].hasStore());
  EXPECT_EQ(regions[0].instrs[2].stores[0], (MemRef{0xffffc90000001000ull, 8}));
}

TEST_F(SystemTrace, RepIterationsAreNotTransfers) {
  // Three iterations of rep stosb between the system call's kernel block and the return: the first two are followed
  // by the same pc (not a branch), the last by the sysret block (a transfer to a new place, kind `other`).
  SystemBytes b = header();
  b.mark(5, 0, 0).block(6, true).access(0, true, 0xffff888000001000ull).block(6, true)
      .access(0, true, 0xffff888000001001ull).block(6, true).access(0, true, 0xffff888000001002ull)
      .block(1, true).block(2, false).mark(0x8005, 2, 1);
  const auto regions = split(b);
  ASSERT_EQ(regions.size(), 1u);
  const auto& t = regions[0].instrs;
  ASSERT_EQ(t.size(), 2u + 3u + 2u + 1u);
  EXPECT_EQ(t[2].pc, kKernel + 0x100);
  EXPECT_FALSE(t[2].isBranch());
  EXPECT_FALSE(t[3].isBranch());
  EXPECT_EQ(t[3].stores[0], (MemRef{0xffff888000001001ull, 8}));
  EXPECT_EQ(t[4].branch, BranchKind::Other);
  EXPECT_EQ(t[4].target, kKernel);
}

TEST_F(SystemTrace, TruncatedStreamEndsAtItsLastCompleteEntry) {
  SystemBytes b = header();
  syscallRegion(b).mark(5, 0, 0).u8(1);
  SplitStats stats;
  EXPECT_EQ(split(b, &stats).size(), 1u);
  EXPECT_EQ(stats.broken, 1u);
}

TEST_F(SystemTrace, RecordingSplitsIntoOneTraceFilePerPath) {
  // Region ids are kpath ids: getppid is id 0 in workloads/kpath/kpath_paths.h; the block file is shared.
  ASSERT_EQ(kpaths().at(0).name, "getppid");
  SystemBytes b = header();
  // Two instances of getppid (5 and 1 records), both from block 0/2-style code re-labelled with id 0.
  b.mark(0, 0, 0).access(1, false, 0x7000).block(1, true).block(2, false).mark(0x8000, 2, 1);
  b.mark(0, 4, 0).access(1, true, 0x9000).mark(0x8000, 4, 2);
  b.save((dir_ / "x.cpu0.raw").string());
  const fs::path cache = dir_ / "cache";
  fs::create_directories(cache);
  SplitStats stats;
  const auto instances = splitKpathRecording((dir_ / "x").string(), cache.string(), &stats);
  ASSERT_EQ(instances.at(0).size(), 2u);
  EXPECT_EQ(instances[0][0].offset, 0u);
  EXPECT_EQ(instances[0][0].length, 5u);
  EXPECT_EQ(instances[0][0].kernelInstructions, 2u);
  EXPECT_EQ(instances[0][1].offset, 5u);
  EXPECT_EQ(instances[0][1].length, 1u);
  EXPECT_TRUE(instances.at(1).empty());
  NativeTraceReader reader((cache / "getppid.trace").string());
  const auto all = readAll(reader);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[5].stores[0], (MemRef{0x9000, 8}));
  // Only complete files remain: no temporary names.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache)) {
    ++files;
    EXPECT_EQ(e.path().filename(), "getppid.trace");
  }
  EXPECT_EQ(files, 1u);
}

TEST(Kpath, TableComesFromTheProbeHeader) {
  // The table is workloads/kpath/kpath_paths.h: first entry getppid, the timer and IPI paths excursions (the IPI one
  // of one vector), the wake-up IPI a region cut at its vector, no duplicates.
  const auto& t = kpaths();
  ASSERT_GE(t.size(), 20u);
  std::set<std::string> names;
  for (const auto& k : t) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(k.excursion, k.name == "timer" || k.name == "resched_ipi") << k.name;
    EXPECT_EQ(k.entrySymbol.empty(), k.name != "resched_ipi" && k.name != "wake_ipi") << k.name;
  }
}

TEST(Kpath, BadSpecIsOneClearError) {
  try {
    openKpathTrace("kpath:no_such_path");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown kernel path 'no_such_path' (paths: getppid"), std::string::npos)
        << e.what();
  }
  try {
    openKpathTrace("kpath:getppid,sed=1");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("bad option 'sed=1'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace smtlab
