// The RESCHED_IPI kind of kpath_paths.h on hand-made plugin output (needs capstone, not QEMU): of the kernel runs in
// a marked user region, only those that begin at the reschedule vector are instances, each cut before __schedule;
// a tick in the same region is left out; the symbol addresses come from the guest's console lines.
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

constexpr std::uint64_t kReschedVector = 0xffffffff81800f30ull, kReschedSchedule = 0xffffffff816523d0ull,
                        kReschedTick = 0xffffffff81800ef0ull;

class KpathIpiSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
    const auto it = std::find_if(kpaths().begin(), kpaths().end(), [](const KpathInfo& k) { return k.name == "resched_ipi"; });
    ASSERT_NE(it, kpaths().end());
    id_ = static_cast<std::uint16_t>(it - kpaths().begin());
    dir_ = fs::temp_directory_path() / ("smtlab-kpath-ipi-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "cache");
    Raw b;
    b.raw({"SMTLBLK\1", 8});
    b.u32(0).u64(0x401000).u32(2).marker(id_).nop();                  // the spinner's begin, then its spin
    b.u32(1).u64(kReschedVector).u32(3).nop().nop().nop();                   // the reschedule vector's entry and handler
    b.u32(2).u64(kReschedSchedule).u32(2).nop().insn({0x48, 0x0f, 0x07});    // __schedule ... sysretq into the woken task
    b.u32(3).u64(kReschedTick).u32(2).nop().insn({0x48, 0x0f, 0x07});        // a timer tick during the spin
    b.u32(4).u64(0x402000).u32(2).marker(0x8000 | id_).insn({0xc3});  // the spinner's end
    b.u32(5).u64(0x401010).u32(1).nop();                              // user code between the interrupts
    b.save(dir_ / "x.blocks");
    // Region: spin, tick, spin, IPI (vector, then __schedule), the woken task's user code, end.
    Raw s;
    s.raw({"SMTLSYS\1", 8});
    s.mark(id_, 0, 0).block(3, true).block(5, false).block(1, true).block(2, true).block(5, false).block(4, false)
        .mark(0x8000 | id_, 4, 0);
    s.save(dir_ / "x.cpu0.raw");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::uint16_t id_ = 0;
};

TEST_F(KpathIpiSplit, OnlyTheRunFromTheVectorIsAnInstanceCutAtSchedule) {
  const KernelSymbols symbols = {{"asm_sysvec_reschedule_ipi", kReschedVector}, {"__schedule", kReschedSchedule}};
  const auto instances = splitKpathRecording((dir_ / "x").string(), (dir_ / "cache").string(), nullptr, symbols);
  ASSERT_EQ(instances.at(id_).size(), 1u);  // the tick's run is not one
  EXPECT_EQ(instances[id_][0].length, 3u);  // block 1's three instructions; __schedule's are cut off
  EXPECT_EQ(instances[id_][0].kernelInstructions, 3u);
  NativeTraceReader reader((dir_ / "cache" / "resched_ipi.trace").string());
  const auto all = readAll(reader);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.front().pc, kReschedVector);
  EXPECT_EQ(all.back().pc, kReschedVector + 2);
}

TEST_F(KpathIpiSplit, ATickPendingAtTheHandlersExitIsNotPartOfTheInstance) {
  // Under QEMU's TCG a spinning vCPU may take the IPI only when its own timer fires: the tick is then pending when
  // the handler's exit enables interrupts and runs inside the same kernel run, from its vector to its iretq (a
  // recording of 2026-11-30 had one in each of its 26 instances, 2,500-7,300 instructions of tick in a 134-instruction
  // handler). The instance is the IPI's records only: block 1's three and the exit's one before __schedule.
  Raw b;
  b.raw({"SMTLBLK\1", 8});
  b.u32(0).u64(0x401000).u32(2).marker(id_).nop();
  b.u32(1).u64(kReschedVector).u32(3).nop().nop().nop();                    // the vector's entry and handler
  b.u32(2).u64(kReschedSchedule).u32(2).nop().insn({0x48, 0x0f, 0x07});     // __schedule ... sysretq
  b.u32(4).u64(0x402000).u32(2).marker(0x8000 | id_).insn({0xc3});
  b.u32(5).u64(0x401010).u32(1).nop();
  b.u32(6).u64(kReschedTick).u32(3).nop().nop().insn({0x48, 0xcf});         // the tick: its handler, iretq
  b.u32(7).u64(kReschedVector + 0x100).u32(1).nop();                        // the IPI's exit path goes on
  b.save(dir_ / "y.blocks");
  Raw s;
  s.raw({"SMTLSYS\1", 8});
  s.mark(id_, 0, 0).block(5, false).block(1, true).block(6, true).block(7, true).block(2, true).block(5, false)
      .block(4, false).mark(0x8000 | id_, 4, 0);
  s.save(dir_ / "y.cpu0.raw");
  const KernelSymbols symbols = {{"asm_sysvec_reschedule_ipi", kReschedVector},
                                 {"__schedule", kReschedSchedule},
                                 {"asm_sysvec_apic_timer_interrupt", kReschedTick},
                                 {"native_irq_return_iret", kReschedTick + 2}};
  SplitStats stats;
  const auto instances = splitKpathRecording((dir_ / "y").string(), (dir_ / "cache").string(), &stats, symbols);
  ASSERT_EQ(instances.at(id_).size(), 1u);
  EXPECT_EQ(instances[id_][0].length, 4u);
  EXPECT_EQ(instances[id_][0].kernelInstructions, 4u);
  EXPECT_EQ(stats.interrupts, 1u);
  NativeTraceReader reader((dir_ / "cache" / "resched_ipi.trace").string());
  const auto all = readAll(reader);
  ASSERT_EQ(all.size(), 4u);
  for (const Instr& i : all) EXPECT_TRUE(i.pc < kReschedTick || i.pc > kReschedTick + 2) << std::hex << i.pc;
  EXPECT_EQ(all.back().pc, kReschedVector + 0x100);
}

TEST_F(KpathIpiSplit, WithoutTheSymbolsItIsOneClearError) {
  try {
    splitKpathRecording((dir_ / "x").string(), (dir_ / "cache").string(), nullptr, {{"__schedule", kReschedSchedule}});
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("asm_sysvec_reschedule_ipi"), std::string::npos) << e.what();
  }
}

TEST(KernelSymbols, ConsoleLinesGiveAddresses) {
  // The probe's lines among kernel messages and other output; a malformed address is not a symbol.
  const auto s = parseKernelSymbols(
      "SeaBIOS\nkpath: symbol __schedule ffffffffb46523d0\r\n[ 1.0] random\nkpath: symbol virtio_queue_rq "
      "ffffffffc05d1d00\nkpath: symbol bad 12zz\n");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.at("__schedule"), 0xffffffffb46523d0ull);
  EXPECT_EQ(s.at("virtio_queue_rq"), 0xffffffffc05d1d00ull);
}

}  // namespace
}  // namespace smtlab
