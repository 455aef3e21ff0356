// The WAKE_IPI kind of kpath_paths.h on hand-made plugin output (needs capstone, not QEMU): a region runs from a
// task's begin marker through its sleep (system call, a first __schedule, the idle loop's HLT, a tick) to its end
// marker after the wake-up; the instance is only what the CPU ran from the call-function-single vector up to the
// next __schedule. A region without the vector (the wake-up sent no IPI) and one ended by KP_NONE hold none.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/system_trace.hpp"
#include "smtlab/tracer/x86_decoder.hpp"

#include "raw_system_trace.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

using Raw = test::RawSystemTrace;

constexpr std::uint64_t kSyscall = 0xffffffff81a00000ull, kSchedule = 0xffffffff816523d0ull,
                        kIdle = 0xffffffff81655000ull, kTimerEntry = 0xffffffff81800ef0ull,
                        kVector = 0xffffffff81800db0ull, kIdleExit = 0xffffffff81656000ull;
constexpr std::uint16_t kNone = 0x7fff;  // probe.c's KP_NONE: an end the splitter drops

class KpathWakeIpiSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
    const auto it = std::find_if(kpaths().begin(), kpaths().end(), [](const KpathInfo& k) { return k.name == "wake_ipi"; });
    ASSERT_NE(it, kpaths().end());
    ASSERT_FALSE(it->excursion);  // the whole region is searched: the IPI arrives in the idle task, not in user code
    id_ = static_cast<std::uint16_t>(it - kpaths().begin());
    dir_ = fs::temp_directory_path() / ("smtlab-kpath-wake-ipi-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "cache");
    Raw b;
    b.raw({"SMTLBLK\1", 8});
    b.u32(0).u64(0x401000).u32(2).marker(id_).nop();                     // the reader's begin, then its read() call
    b.u32(1).u64(kSyscall).u32(2).nop().nop();                           // system call entry and pipe_read
    b.u32(2).u64(kSchedule).u32(2).nop().nop();                          // __schedule (to sleep; later to the reader)
    b.u32(3).u64(kIdle).u32(2).nop().insn({0xf4});                       // the idle loop's HLT
    b.u32(4).u64(kTimerEntry).u32(2).nop().nop();                              // a tick that ends one HLT
    b.u32(5).u64(kVector).u32(3).nop().nop().nop();                      // asm_sysvec_call_function_single ...
    b.u32(6).u64(kIdleExit).u32(2).nop().nop();                          // back in the idle loop, leaving it
    b.u32(7).u64(0x402000).u32(2).marker(0x8000 | id_).insn({0xc3});     // the reader's end
    b.u32(8).u64(0x403000).u32(2).marker(0x8000 | kNone).insn({0xc3});   // the end of the last, dropped region
    b.save(dir_ / "x.blocks");
    Raw s;
    s.raw({"SMTLSYS\1", 8});
    // 1: a wake-up by the IPI after a tick in the idle loop.
    s.mark(id_, 0, 0).block(1, true).block(2, true).block(3, true).block(4, true).block(3, true).block(5, true)
        .block(6, true).block(2, true).block(7, false).mark(0x8000 | id_, 7, 0);
    // 2: a wake-up that found the idle loop polling: no vector, no instance.
    s.mark(id_, 0, 0).block(1, true).block(2, true).block(3, true).block(6, true).block(2, true).block(7, false)
        .mark(0x8000 | id_, 7, 0);
    // 3: a second wake-up by the IPI, straight from HLT.
    s.mark(id_, 0, 0).block(1, true).block(2, true).block(3, true).block(5, true).block(6, true).block(2, true)
        .block(7, false).mark(0x8000 | id_, 7, 0);
    // 4: the wake-up at the pipe's end: ended as KP_NONE, dropped.
    s.mark(id_, 0, 0).block(1, true).block(2, true).block(3, true).block(5, true).block(6, true).block(2, true)
        .block(8, false).mark(0x8000 | kNone, 8, 0);
    s.save(dir_ / "x.cpu0.raw");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::uint16_t id_ = 0;
};

TEST_F(KpathWakeIpiSplit, InstancesRunFromTheVectorToTheNextSchedule) {
  const KernelSymbols symbols = {{"asm_sysvec_call_function_single", kVector}, {"__schedule", kSchedule}};
  SplitStats stats;
  const auto instances = splitKpathRecording((dir_ / "x").string(), (dir_ / "cache").string(), &stats, symbols);
  EXPECT_EQ(stats.regions, 3u);  // regions 1-3 end with their own id
  EXPECT_EQ(stats.broken, 1u);   // region 4
  // Regions 1 and 3: block 5's three records and block 6's two; the sleep before the vector (system call, the
  // first __schedule, HLT, the tick) and the __schedule after it are not the instance. Region 2 has no vector.
  ASSERT_EQ(instances.at(id_).size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(instances[id_][k].offset, 5u * k);
    EXPECT_EQ(instances[id_][k].length, 5u);
    EXPECT_EQ(instances[id_][k].kernelInstructions, 5u);
  }
  NativeTraceReader reader((dir_ / "cache" / "wake_ipi.trace").string());
  const auto all = readAll(reader);
  ASSERT_EQ(all.size(), 10u);
  const std::uint64_t want[] = {kVector, kVector + 1, kVector + 2, kIdleExit, kIdleExit + 1};
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].pc, want[i % 5]) << "record " << i;
}

TEST_F(KpathWakeIpiSplit, WithoutTheVectorsAddressItIsOneClearError) {
  try {
    splitKpathRecording((dir_ / "x").string(), (dir_ / "cache").string(), nullptr, {{"__schedule", kSchedule}});
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("asm_sysvec_call_function_single"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("wake_ipi"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace smtlab
