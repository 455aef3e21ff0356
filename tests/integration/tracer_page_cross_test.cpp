// The QEMU tracers on instructions that straddle a 4 KiB page (page_cross.S: no libc, user mode; page_cross_system.S:
// bare metal, system mode): every executed instruction is recorded once and nothing else is. QEMU 7.2 hands plugins an
// instruction it abandoned at the page boundary; unless the tracer drops it (tools/qemu-tracer/abandoned_insn.h) each
// run of such a block adds a phantom record (same pc, undecodable bytes, no uops) before the real one, and in system
// mode the block is taken as cut by an exception, which loses the real instruction before it. Also: a cached kernel:
// trace recorded by an older tracer revision is recorded again (tracer_revision.hpp). Skipped (with the reason) when
// QEMU, a plugin, capstone, cc or binutils is missing.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kernels.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/program_file.hpp"
#include "smtlab/tracer/recorder.hpp"
#include "smtlab/tracer/system_trace.hpp"
#include "smtlab/tracer/tracer_revision.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

// Made again when a suite's tear-down removed it before another suite of this file runs.
fs::path scratchDir() {
  const fs::path dir = fs::temp_directory_path() / ("smtlab-page-cross-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Assembles page_cross.S once; empty when there is no compiler.
std::string pageCrossBinary() {
  static const std::string path = [] {
    const fs::path bin = scratchDir() / "page_cross";
    const std::string cmd = "cc -nostdlib -static -o " + bin.string() + " " SMTLAB_SOURCE_DIR
                            "/tests/integration/page_cross.S >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? bin.string() : std::string();
  }();
  return path;
}

// Every suite of this file removes the scratch directory when it is done.
class ScratchTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(scratchDir(), ec);
  }
};

class TracerPageCross : public ScratchTest {
 protected:
  void SetUp() override {
    if (auto why = tracerUnavailableReason()) GTEST_SKIP() << "tracer unavailable: " << *why;
    if (pageCrossBinary().empty()) GTEST_SKIP() << "no C compiler (cc) to assemble page_cross.S";
  }
  static std::vector<Instr> recordPageCross() {
    RecordOptions o;
    o.outPrefix = (scratchDir() / "pc").string();
    o.quiet = true;
    o.command = {pageCrossBinary()};
    const RecordResult r = recordProgram(o);
    NativeTraceReader reader(r.threads.at(0).path);
    return readAll(reader);
  }
};

// From page_cross.S: _start 2, loop 1 (7 instructions) 100 times, 2 between, loop 2 (6) 50 times, 2 between, loop 3 (3)
// 20 times, exit 3: 2 + 700 + 2 + 300 + 2 + 60 + 3 = 1069. Each of the 150 runs of a block ending in front of a
// straddling instruction could add one phantom record (1219 records if each did), so the count is exact.
constexpr std::size_t kPageCrossInstructions = 1069;

TEST_F(TracerPageCross, EveryInstructionOnceAndNoPhantom) {
  const std::vector<Instr> t = recordPageCross();
  EXPECT_EQ(t.size(), kPageCrossInstructions);
  // Dynamic count per pc: 9 pcs run once (set-up, between the loops, exit), 7 pcs 100 times, 6 pcs 50, 3 pcs 20.
  std::map<Addr, std::size_t> perPc;
  for (const Instr& in : t) ++perPc[in.pc];
  std::map<std::size_t, std::size_t> pcsByCount;
  for (const auto& [pc, count] : perPc) ++pcsByCount[count];
  const std::map<std::size_t, std::size_t> expected{{1, 9}, {20, 3}, {50, 6}, {100, 7}};
  EXPECT_EQ(pcsByCount, expected);
  // The phantom's signature: no instruction of the program runs twice in a row at one pc, and every one of them is
  // known to the decoder (a record with no uops is bytes it could not decode).
  std::size_t noUops = 0, samePcPairs = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    noUops += t[i].uops == 0;
    samePcPairs += i > 0 && t[i].pc == t[i - 1].pc;
  }
  EXPECT_EQ(noUops, 0u);
  EXPECT_EQ(samePcPairs, 0u);
}

TEST_F(TracerPageCross, StraddlingInstructionsDecodedWhole) {
  const std::vector<Instr> t = recordPageCross();
  // Instructions that start 2 or 3 bytes before a page end (page_cross.S): movabs $imm64, %rdx (100 runs) and loop
  // 3's jnz (20 runs, complete, ends a block at the page end: real, kept) at page end - 2, lea 0x1000(%rax,%rbx,2),
  // %rdx (50 runs) at page end - 3.
  std::map<Addr, std::size_t> runs;
  std::map<Addr, Instr> first;
  for (const Instr& in : t) {
    const Addr offset = in.pc & 0xfff;
    if (offset != 0xffe && offset != 0xffd) continue;
    if (runs[in.pc]++ == 0) first[in.pc] = in;
  }
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& [pc, n] : runs) {
    const Instr& in = first[pc];
    SCOPED_TRACE(::testing::Message() << "pc 0x" << std::hex << pc);
    auto reads = [&](RegId r) { return std::find(in.src.begin(), in.src.end(), r) != in.src.end(); };
    if ((pc & 0xfff) == 0xffd) {  // the lea: writes rdx (r2), reads rax (r0) and rbx (r3)
      EXPECT_EQ(n, 50u);
      EXPECT_EQ(in.dst[0], intReg(2));
      EXPECT_TRUE(reads(intReg(0)) && reads(intReg(3)));
    } else if (in.branch == BranchKind::Conditional) {  // loop 3's jnz
      EXPECT_EQ(n, 20u);
    } else {  // the movabs: writes rdx, reads nothing
      EXPECT_EQ(n, 100u);
      EXPECT_EQ(in.dst[0], intReg(2));
      EXPECT_EQ(in.src[0], kNoReg);
    }
  }
}

// System mode: the bare-metal program under qemu-system-x86_64 with the system plugin. The region between the markers
// holds the jmp and 100 runs of the 7-instruction loop: 701 records. With the abandoned instruction kept, each run's
// block would end in a cut entry one instruction short, and the splitter, taking the last started instruction as the
// faulting one, would drop the real add $2 before the straddling mov: 601 records, 100 cut blocks.
class TracerPageCrossSystem : public ScratchTest {};
TEST_F(TracerPageCrossSystem, RegionHoldsEveryInstructionOnce) {
  if (auto why = systemTracerUnavailableReason()) GTEST_SKIP() << "system tracer unavailable: " << *why;
  const fs::path dir = scratchDir() / "system";
  fs::create_directories(dir);
  const fs::path image = dir / "page_cross_system.elf";
  const std::string build = "as --32 -o " + (dir / "p.o").string() + " " SMTLAB_SOURCE_DIR
                            "/tests/integration/page_cross_system.S >/dev/null 2>&1 && ld -m elf_i386 -Ttext=0x100000 -o " +
                            image.string() + " " + (dir / "p.o").string() + " >/dev/null 2>&1";
  if (std::system(build.c_str()) != 0) GTEST_SKIP() << "binutils cannot build a 32-bit image (as --32, ld -m elf_i386)";
  const std::string prefix = (dir / "sys").string();
  // timeout: a guest that never reaches the exit port must not hang the suite.
  const std::string run = "timeout 120 " + findOnPath("qemu-system-x86_64") + " -kernel " + image.string() +
                          " -display none -nodefaults -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 "
                          "-plugin " + systemTracerPluginPath() + ",out=" + prefix + " >/dev/null 2>&1";
  const int status = std::system(run.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "qemu-system-x86_64 status " << status << ": " << run;
  const RawBlockTable blocks(prefix + ".blocks");
  std::vector<SystemRegion> regions;
  const SplitStats stats =
      splitSystemStream(blocks, prefix + ".cpu0.raw", [&](SystemRegion&& r) { regions.push_back(std::move(r)); });
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(stats.cut, 0u);
  EXPECT_EQ(stats.broken, 0u);
  const std::vector<Instr>& t = regions[0].instrs;
  EXPECT_EQ(t.size(), 701u);
  std::map<Addr, std::size_t> perPc;
  for (const Instr& in : t) ++perPc[in.pc];
  const std::map<std::size_t, std::size_t> expected{{1, 1}, {100, 7}};
  std::map<std::size_t, std::size_t> pcsByCount;
  for (const auto& [pc, count] : perPc) ++pcsByCount[count];
  EXPECT_EQ(pcsByCount, expected);
  const auto noUops = std::count_if(t.begin(), t.end(), [](const Instr& in) { return in.uops == 0; });
  EXPECT_EQ(noUops, 0);
}

class TracerRevision : public ScratchTest {};
TEST_F(TracerRevision, StampSaysWhetherACachedFileIsCurrent) {
  const fs::path f = scratchDir() / "stamped.trace";
  std::ofstream(f) << "x";
  EXPECT_FALSE(tracerStampCurrent(f.string()));  // no stamp: recorded before stamps existed (revision 1)
  writeTracerStamp(f.string());
  EXPECT_TRUE(tracerStampCurrent(f.string()));
  std::ofstream(f.string() + ".tracer") << "tracer-revision " << kTracerRevision - 1 << "\n";
  EXPECT_FALSE(tracerStampCurrent(f.string()));
  std::ofstream(f.string() + ".tracer") << "garbage\n";
  EXPECT_FALSE(tracerStampCurrent(f.string()));
  EXPECT_THROW(writeTracerStamp((scratchDir() / "no-such-dir" / "t.trace").string()), TraceError);
}

// The kernel: cache's tag: a stamp without it (a trace recorded before --fixed-env) is not current for a reader that
// asks for it, one with it is current for every reader; a tag under an older revision does not help.
TEST_F(TracerRevision, StampTagSaysHowTheRecordingWasMade) {
  const fs::path f = scratchDir() / "tagged.trace";
  std::ofstream(f) << "x";
  writeTracerStamp(f.string());
  EXPECT_FALSE(tracerStampCurrent(f.string(), kFixedEnvironmentTag));
  writeTracerStamp(f.string(), kFixedEnvironmentTag);
  EXPECT_TRUE(tracerStampCurrent(f.string(), kFixedEnvironmentTag));
  EXPECT_TRUE(tracerStampCurrent(f.string()));
  EXPECT_FALSE(tracerStampCurrent(f.string(), "another-tag"));
  std::ofstream(f.string() + ".tracer") << "tracer-revision " << kTracerRevision - 1 << "\n" << kFixedEnvironmentTag
                                        << "\n";
  EXPECT_FALSE(tracerStampCurrent(f.string(), kFixedEnvironmentTag));
}

// A cached kernel: trace is kept while its stamp names this tracer revision and recorded again when the stamp is
// missing (a cache written by a tracer without the stamp) or lacks the fixed-environment tag. The check swaps in a
// small stand-in trace: kept with a current stamp, replaced by the real recording without one.
TEST_F(TracerPageCross, KernelCacheRecordsAgainWithoutCurrentStamp) {
  const KernelInfo* call0 = nullptr;
  for (const KernelInfo& k : kernels()) {
    if (k.name == "aim9_call0") call0 = &k;
  }
  ASSERT_NE(call0, nullptr);
  const fs::path cache = scratchDir() / "kernels";
  ::setenv("SMTLAB_KERNEL_CACHE", cache.c_str(), 1);
  const std::string path = ensureKernelTrace(*call0);
  EXPECT_TRUE(tracerStampCurrent(path));
  auto writeStandIn = [&] {
    NativeTraceWriter w(path + ".standin");
    for (int i = 0; i < 3; ++i) {
      Instr in;
      in.pc = 0x1000 + 4 * static_cast<Addr>(i);
      in.uops = 1;
      w.write(in);
    }
    w.close();
    fs::rename(path + ".standin", path);
  };
  auto records = [&] {
    NativeTraceReader r(ensureKernelTrace(*call0));
    return readAll(r).size();
  };
  writeStandIn();
  EXPECT_EQ(records(), 3u);  // current stamp: the cache is trusted as it is
  writeStandIn();
  fs::remove(path + ".tracer");
  EXPECT_GT(records(), 200000u);  // no stamp: recorded again (aim9 call0 runs 200000 calls)
  EXPECT_TRUE(tracerStampCurrent(path, kFixedEnvironmentTag));
  writeStandIn();
  writeTracerStamp(path);  // this revision, but recorded before --fixed-env
  EXPECT_GT(records(), 200000u);
  EXPECT_TRUE(tracerStampCurrent(path, kFixedEnvironmentTag));
  ::unsetenv("SMTLAB_KERNEL_CACHE");
}

}  // namespace
}  // namespace smtlab
