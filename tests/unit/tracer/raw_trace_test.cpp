// The raw-stream decoder on hand-made plugin output (needs capstone, not QEMU): block replay, taken / not taken from
// the next block, memory accesses attached to their instruction, and clear errors for damaged streams.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/raw_trace.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

class Bytes {
 public:
  Bytes& raw(std::string_view s) { data_.append(s); return *this; }
  Bytes& u8(std::uint8_t v) { data_.push_back(static_cast<char>(v)); return *this; }
  Bytes& u32(std::uint32_t v) { for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i))); return *this; }
  Bytes& u64(std::uint64_t v) { for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i))); return *this; }
  void save(const std::string& path) const { std::ofstream(path, std::ios::binary) << data_; }
  std::string data_;
};

class RawTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
    dir_ = fs::temp_directory_path() / ("smtlab-raw-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Block 0 at 0x1000: mov (%rbx),%rax (48 8b 03); jnz 0x1000 (75 f9 at 0x1003, next 0x1005).
    Bytes()
        .raw({"SMTLBLK\1", 8})
        .u32(0).u64(0x1000).u32(2)
        .u8(3).u8(0x48).u8(0x8b).u8(0x03)
        .u8(2).u8(0x75).u8(0xfb)
        .save(blocks());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string blocks() const { return (dir_ / "x.blocks").string(); }
  std::string stream() const { return (dir_ / "x.t0.raw").string(); }
  static std::uint32_t load8(std::uint32_t insnIndex) { return 1u | (3u << 1) | (insnIndex << 4); }
  std::vector<Instr> decode(const Bytes& b) {
    b.save(stream());
    RawTraceSource src(std::make_shared<const RawBlockTable>(blocks()), stream());
    return readAll(src);
  }
  fs::path dir_;
};

TEST_F(RawTrace, BlocksReplayWithAccessesAndBranchOutcomes) {
  Bytes b;
  b.raw({"SMTLRAW\1", 8}).u32(0x80000001u).u64(0);
  for (int k = 0; k < 3; ++k) b.u32(0).u32(load8(0)).u64(0x5000 + 8 * static_cast<unsigned>(k));
  const auto t = decode(b);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_EQ(t[0].op, OpClass::Load);
  EXPECT_EQ(t[0].loads[0], (MemRef{0x5000, 8}));
  EXPECT_EQ(t[0].src[0], intReg(3));
  EXPECT_EQ(t[0].dst[0], intReg(0));
  EXPECT_EQ(t[2].loads[0], (MemRef{0x5008, 8}));
  EXPECT_EQ(t[1].pc, 0x1003u);
  EXPECT_EQ(t[1].branch, BranchKind::Conditional);
  EXPECT_TRUE(t[1].taken);  // the next block starts at 0x1000, not at 0x1005
  EXPECT_EQ(t[1].target, 0x1000u);
  EXPECT_FALSE(t[5].taken);  // the stream ends: no evidence of a jump
}

TEST_F(RawTrace, TruncatedTailEndsTheStream) {
  Bytes b;
  b.raw({"SMTLRAW\1", 8}).u32(0x80000001u).u64(0).u32(0).u32(load8(0)).u64(0x5000).u32(0).u8(1);
  EXPECT_EQ(decode(b).size(), 4u);
}

TEST_F(RawTrace, DamageIsOneClearError) {
  Bytes bad;
  bad.raw({"SMTLRAW\1", 8}).u32(0x80000001u).u64(0).u32(0).u32(0x40000001u).u64(0);
  try {
    decode(bad);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(stream() + ": byte 24: corrupt entry"), std::string::npos) << e.what();
  }
  Bytes undefinedBlock;
  undefinedBlock.raw({"SMTLRAW\1", 8}).u32(7u << 1);
  EXPECT_THROW(decode(undefinedBlock), TraceError);
  Bytes outside;
  outside.raw({"SMTLRAW\1", 8}).u32(0).u32(load8(5)).u64(0);  // block 0 has 2 instructions
  EXPECT_THROW(decode(outside), TraceError);
  Bytes magic;
  magic.raw("NOTRAW!!");
  EXPECT_THROW(decode(magic), TraceError);
}

}  // namespace
}  // namespace smtlab
