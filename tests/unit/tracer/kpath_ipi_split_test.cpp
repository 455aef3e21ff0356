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

namespace smtlab {
namespace {
namespace fs = std::filesystem;

// The plugin's two files, written byte by byte (format: src/tracer/system_trace.cpp).
class Raw {
 public:
  Raw& raw(std::string_view s) { data_.append(s); return *this; }
  Raw& u8(std::uint8_t v) { data_.push_back(static_cast<char>(v)); return *this; }
  Raw& u32(std::uint32_t v) { for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i))); return *this; }
  Raw& u64(std::uint64_t v) { for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i))); return *this; }
  Raw& insn(std::initializer_list<std::uint8_t> bytes) {
    u8(static_cast<std::uint8_t>(bytes.size()));
    for (std::uint8_t b : bytes) u8(b);
    return *this;
  }
  Raw& nop() { return insn({0x90}); }
  Raw& marker(std::uint16_t payload) {  // nopl 0x534dXXXX(%rax)
    return insn({0x0f, 0x1f, 0x80, static_cast<std::uint8_t>(payload), static_cast<std::uint8_t>(payload >> 8), 0x4d,
                 0x53});
  }
  Raw& block(std::uint32_t id, bool kernel) { return u32(id << 1 | (kernel ? 0x80000000u : 0)); }
  Raw& mark(std::uint32_t payload, std::uint32_t blockId, std::uint32_t index) {
    return u32(0x80000003u).u32(payload).u32(blockId).u32(index);
  }
  void save(const fs::path& path) const { std::ofstream(path, std::ios::binary) << data_; }

 private:
  std::string data_;
};

constexpr std::uint64_t kVector = 0xffffffff81800f30ull, kSchedule = 0xffffffff816523d0ull,
                        kTick = 0xffffffff81800ef0ull;

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
    b.u32(1).u64(kVector).u32(3).nop().nop().nop();                   // the reschedule vector's entry and handler
    b.u32(2).u64(kSchedule).u32(2).nop().insn({0x48, 0x0f, 0x07});    // __schedule ... sysretq into the woken task
    b.u32(3).u64(kTick).u32(2).nop().insn({0x48, 0x0f, 0x07});        // a timer tick during the spin
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
  const KernelSymbols symbols = {{"asm_sysvec_reschedule_ipi", kVector}, {"__schedule", kSchedule}};
  const auto instances = splitKpathRecording((dir_ / "x").string(), (dir_ / "cache").string(), nullptr, symbols);
  ASSERT_EQ(instances.at(id_).size(), 1u);  // the tick's run is not one
  EXPECT_EQ(instances[id_][0].length, 3u);  // block 1's three instructions; __schedule's are cut off
  EXPECT_EQ(instances[id_][0].kernelInstructions, 3u);
  NativeTraceReader reader((dir_ / "cache" / "resched_ipi.trace").string());
  const auto all = readAll(reader);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all.front().pc, kVector);
  EXPECT_EQ(all.back().pc, kVector + 2);
}

TEST_F(KpathIpiSplit, WithoutTheSymbolsItIsOneClearError) {
  try {
    splitKpathRecording((dir_ / "x").string(), (dir_ / "cache").string(), nullptr, {{"__schedule", kSchedule}});
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
