// ChampSim reader: branch kinds inferred as ChampSim does, targets from the next record, op classes assumed from
// memory operands, register mapping, xz streaming, and one clear error for truncated or corrupt files.
#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

constexpr std::uint8_t kSp = kChampSimStackPointer, kFlags = kChampSimFlags, kIp = kChampSimInstructionPointer;

ChampSimRecord rec(std::uint64_t ip, std::array<std::uint8_t, 2> dst, std::array<std::uint8_t, 4> src,
                   bool taken = false) {
  ChampSimRecord r;
  r.ip = ip;
  r.dstRegs = dst;
  r.srcRegs = src;
  r.isBranch = dst[0] == kIp || dst[1] == kIp;
  r.branchTaken = taken;
  return r;
}

// One record of each kind ChampSim distinguishes, then a load, a store and an ALU op.
std::vector<ChampSimRecord> champsimSample() {
  std::vector<ChampSimRecord> v;
  v.push_back(rec(0x1000, {kIp, 0}, {kIp, kFlags, 0, 0}, true));   // conditional, taken -> 0x2000
  v.push_back(rec(0x2000, {kIp, 0}, {0, 0, 0, 0}, true));          // direct jump
  v.push_back(rec(0x3000, {kIp, 0}, {10, 0, 0, 0}, true));         // indirect jump (reads r10)
  v.push_back(rec(0x4000, {kIp, kSp}, {kIp, kSp, 0, 0}, true));    // direct call
  v.push_back(rec(0x5000, {kIp, kSp}, {kIp, kSp, 11, 0}, true));   // indirect call
  v.push_back(rec(0x6000, {kIp, kSp}, {kSp, 0, 0, 0}, true));      // return
  v.push_back(rec(0x7000, {kIp, 0}, {kIp, kFlags, 0, 0}, false));  // conditional, not taken
  v.push_back(rec(0x7004, {kIp, kSp}, {kIp, kSp, kFlags, 0}, true)); // no rule fits: other
  ChampSimRecord load = rec(0x8000, {3, 0}, {4, 0, 0, 0});
  load.srcMem = {0xabc0, 0xdef0, 0x1230, 0};  // ChampSim allows 4 loads; the record keeps all of them
  v.push_back(load);
  ChampSimRecord store = rec(0x8004, {0, 0}, {3, 4, 0, 0});
  store.dstMem = {0x5550, 0};
  v.push_back(store);
  v.push_back(rec(0x8008, {70, 0}, {3, 0, 0, 0}));  // register 70 is in the fp class: f6
  return v;
}

std::vector<Instr> readBack(const std::string& path) {
  ChampSimTraceReader reader(path);
  return readAll(reader);
}

// Reading `path` fails with one TraceError that names the file and contains `fragment` (the record and the cause).
void expectReadError(const std::string& path, const std::string& fragment) {
  try {
    readBack(path);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
  }
}

TEST(ChampSim, RecordLayoutIs64Bytes) { EXPECT_EQ(sizeof(ChampSimRecord), 64u); }

TEST(ChampSim, BranchKindsAsChampSimInfersThem) {
  test::TempPath path(".champsimtrace");
  writeChampSimTrace(path.str(), champsimSample());
  const auto in = readBack(path.str());
  ASSERT_EQ(in.size(), 11u);
  const BranchKind want[] = {BranchKind::Conditional, BranchKind::DirectJump, BranchKind::IndirectJump,
                             BranchKind::DirectCall,  BranchKind::IndirectCall, BranchKind::Return,
                             BranchKind::Conditional, BranchKind::Other,     BranchKind::None,
                             BranchKind::None,        BranchKind::None};
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(in[i].branch, want[i]) << "record " << i;
  EXPECT_EQ(in[0].op, OpClass::Branch);
  EXPECT_EQ(in[1].op, OpClass::Jump);
  EXPECT_EQ(in[2].op, OpClass::IndirectJump);
  EXPECT_EQ(in[3].op, OpClass::Call);
  EXPECT_EQ(in[5].op, OpClass::Return);
  // A taken branch's target is the next record's ip; a not-taken one has none (ChampSim records carry no target).
  EXPECT_TRUE(in[0].taken);
  EXPECT_EQ(in[0].target, 0x2000u);
  EXPECT_EQ(in[5].target, 0x7000u);
  EXPECT_FALSE(in[6].taken);
  EXPECT_EQ(in[6].target, 0u);
}

TEST(ChampSim, OpClassAndRegistersAssumed) {
  test::TempPath path(".champsimtrace.xz");
  writeChampSimTrace(path.str(), champsimSample());
  const auto in = readBack(path.str());  // through xz, recognised by its magic
  ASSERT_EQ(in.size(), 11u);
  const Instr& load = in[8];
  EXPECT_EQ(load.op, OpClass::Load);
  EXPECT_EQ(load.loads[0], (MemRef{0xabc0, 8}));
  EXPECT_EQ(load.loads[1], (MemRef{0xdef0, 8}));
  EXPECT_EQ(load.dst[0], intReg(3));
  EXPECT_EQ(load.src[0], intReg(6));  // ChampSim's register 4 trades names with its stack pointer 6 (r4 = RSP)
  EXPECT_EQ(in[9].op, OpClass::Store);
  EXPECT_EQ(in[9].stores[0], (MemRef{0x5550, 8}));
  EXPECT_EQ(in[10].op, OpClass::Int);
  EXPECT_EQ(in[10].dst[0], fpReg(6));
  // The instruction pointer is no data dependency; the stack pointer and flags are (ChampSim's 6 as smtlab's
  // stack pointer r4, and r25).
  EXPECT_EQ(in[3].src[0], intReg(4));
  EXPECT_EQ(in[3].src[1], kNoReg);
  EXPECT_EQ(in[0].src[0], intReg(kFlags));
}

TEST(ChampSim, OpenTraceRecognisesTheNameAndRewinds) {
  test::TempPath path(".champsimtrace");
  writeChampSimTrace(path.str(), champsimSample());
  auto src = openTrace(path.str());
  const auto first = readAll(*src);
  src->rewind();
  EXPECT_EQ(readAll(*src), first);
  EXPECT_EQ(first.size(), 11u);
}

TEST(ChampSim, TruncatedFileNamesTheRecord) {
  test::TempPath path(".champsimtrace");
  writeChampSimTrace(path.str(), champsimSample());
  std::string bytes = test::readFile(path.str());
  test::writeFile(path.str(), bytes.substr(0, 64 * 3 + 20));
  expectReadError(path.str(), "record 3: truncated (20 of 64 bytes)");
}

TEST(ChampSim, CorruptXzIsOneClearError) {
  test::TempPath path(".champsimtrace.xz");
  std::vector<ChampSimRecord> many;
  for (int i = 0; i < 2000; ++i) many.push_back(rec(0x1000 + 4 * static_cast<std::uint64_t>(i) * 7919, {3, 0}, {4, 0, 0, 0}));
  writeChampSimTrace(path.str(), many);
  std::string bytes = test::readFile(path.str());
  ASSERT_GT(bytes.size(), 100u);
  for (std::size_t i = 40; i < bytes.size() - 20; i += 7) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
  test::writeFile(path.str(), bytes);
  try {
    readBack(path.str());
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt xz data"), std::string::npos) << e.what();
  }
}

TEST(ChampSim, ZstdIsRecognisedByContent) {
  // zstd's frame magic (28 b5 2f fd) selects the decompressor whatever the name ends in, so that compressed bytes are
  // never decoded as records (garbage instructions, exit 0).
  test::TempPath plain(".champsimtrace");
  test::TempPath zst(".champsimtrace.zst");
  writeChampSimTrace(plain.str(), champsimSample());
  writeChampSimTrace(zst.str(), champsimSample());
  const std::string bytes = test::readFile(zst.str());
  ASSERT_GE(bytes.size(), 4u);
  ASSERT_EQ(bytes.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4)) << "the writer did not compress";
  const auto expected = readBack(plain.str());
  EXPECT_EQ(expected.size(), 11u);
  EXPECT_EQ(readBack(zst.str()), expected);
  auto src = openTrace(zst.str());  // through openTrace, and again after a rewind
  EXPECT_EQ(readAll(*src), expected);
  src->rewind();
  EXPECT_EQ(readAll(*src), expected);
}

TEST(ChampSim, TextUnderAChampSimNameIsRefused) {
  // 64 printable bytes cannot be a ChampSim record (the ip's upper bytes and the flags are zeros): a text trace
  // given a ChampSim name is refused at its first record instead of decoded into instructions.
  test::TempPath path(".champsimtrace");
  test::writeFile(path.str(), "# smtlab text trace\n400000 int dst=r1 src=r2\n400004 load dst=r3 ld=1000:8\n");
  expectReadError(path.str(), "record 0: 64 bytes of text");
  // A real record whose bytes are mostly printable still reads: one zero byte is enough.
  ChampSimRecord r = rec(0x4142434445464748ull, {0x41, 0x42}, {0x43, 0x44, 0x45, 0x46});
  r.dstMem = {0x4142434445464748ull, 0x4142434445464748ull};
  r.srcMem = {0x4142434445464748ull, 0x4142434445464748ull, 0x4142434445464748ull, 0x4142434445464748ull};
  writeChampSimTrace(path.str(), {r});  // is_branch and branch_taken are the zero bytes
  EXPECT_EQ(readBack(path.str()).size(), 1u);
}

TEST(ChampSim, BinaryBytesThatAreNoChampSimRecordAreSaidToBeNoChampSimTrace) {
  // 0xff is never text (UTF-8 never uses it) and never a ChampSim flag byte: is_branch and branch_taken (bytes 8 and
  // 9 of input_instr) hold the tracer's bool values 0 and 1.
  test::TempPath path("x.champsimtrace");
  for (std::size_t size : {std::size_t{64}, std::size_t{4096}}) {
    test::writeFile(path.str(), std::string(size, '\xff'));
    EXPECT_EQ(test::errorOf([&] { readBack(path.str()); }),
              path.str() + ": record 0: not a ChampSim trace: is_branch byte 0xff, branch_taken byte 0xff (ChampSim "
                           "writes 0 or 1 in each)")
        << size << " bytes";
  }
}

TEST(ChampSim, AFlagByteOtherThanZeroOrOneLaterIsDamageNamingTheRecord) {
  test::TempPath path(".champsimtrace");
  writeChampSimTrace(path.str(), champsimSample());
  std::string bytes = test::readFile(path.str());
  bytes[64 * 5 + 9] = 2;  // record 5's branch_taken
  test::writeFile(path.str(), bytes);
  EXPECT_EQ(test::errorOf([&] { readBack(path.str()); }),
            path.str() + ": record 5: not a ChampSim record (damaged data): is_branch byte 0x01, branch_taken byte "
                         "0x02 (ChampSim writes 0 or 1 in each)");
}

TEST(ChampSim, Utf8TextUnderAChampSimNameIsStillSaidToBeText) {
  test::TempPath path(".champsimtrace");
  test::writeFile(path.str(), "# trac\xc3\xa9 \xe2\x80\x94 smtlab text\n400000 int dst=r1 src=r2\n400004 load dst=r3\n");
  expectReadError(path.str(), "record 0: 64 bytes of text");
}

TEST(ChampSim, APlainFileCutInsideARecordIsReportedWhenOpened) {
  test::TempPath path(".champsimtrace");
  writeChampSimTrace(path.str(), champsimSample());
  test::writeFile(path.str(), test::readFile(path.str()).substr(0, 64 * 7 + 1));
  EXPECT_EQ(test::errorOf([&] { ChampSimTraceReader reader(path.str()); }),
            path.str() + ": record 7: truncated (1 of 64 bytes)");
}

}  // namespace
}  // namespace smtlab
