// Trace readers' operands and limits: every memory operand kept (native version 2, still reading version 1), header
// counts checked early, pipes read once, bounded lines and quoted tokens, a UTF-8 BOM, ChampSim's own branch-kind
// rules, and bounded distinct counting for `trace info`.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include <boost/iostreams/filter/zstd.hpp>
#include <boost/iostreams/filtering_stream.hpp>

#include "smtlab/common/error.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/distinct_counter.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/trace_input.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

using test::dataPath;

std::vector<Instr> readAllOf(TraceSource& src) {
  std::vector<Instr> all;
  Instr batch[64];
  while (const std::size_t n = src.read(std::span<Instr>(batch, 64))) all.insert(all.end(), batch, batch + n);
  return all;
}

using test::errorOf;

// The native header (docs/traces.md): magic, version, compression, count; little-endian.
std::string nativeHeader(std::uint32_t version, std::uint32_t compression, std::uint64_t count) {
  std::string h(kNativeMagic.begin(), kNativeMagic.end());
  for (int i = 0; i < 4; ++i) h += static_cast<char>(version >> (8 * i));
  for (int i = 0; i < 4; ++i) h += static_cast<char>(compression >> (8 * i));
  for (int i = 0; i < 8; ++i) h += static_cast<char>(count >> (8 * i));
  return h;
}

// An instruction with every memory slot used, odd sizes included.
Instr sixOperands() {
  Instr in;
  in.pc = 0x401000;
  in.op = OpClass::Int;
  in.loads = {MemRef{0x7000, 8}, MemRef{0x7040, 4}, MemRef{0x9000, 16}, MemRef{0x10, 1}};
  in.stores = {MemRef{0x8000, 8}, MemRef{0x8100, 32}};
  in.src = {intReg(1), intReg(2), kNoReg, kNoReg};
  in.dst = {intReg(3), kNoReg};
  return in;
}

// --- every memory operand --------------------------------------------------------------------------------------------

TEST(TraceReaders, NativeVersion1FileWrittenByTheOldWriterStillReads) {
  // native_v1*.smt were written by the version-1 writer (commit 9f05383) from native_v1.txt; the text file is the
  // expected content, read by the text reader.
  TextTraceReader text(dataPath("native_v1.txt"));
  const std::vector<Instr> want = readAllOf(text);
  ASSERT_EQ(want.size(), 15u);
  for (const char* name : {"native_v1.smt", "native_v1_plain.smt"}) {
    NativeTraceReader reader(dataPath(name));
    EXPECT_EQ(reader.version(), 1u) << name;
    EXPECT_EQ(readAllOf(reader), want) << name;
  }
}

TEST(TraceReaders, NativeVersion2KeepsFourLoadsAndTwoStores) {
  for (Compression c : {Compression::None, Compression::Zstd, Compression::Xz}) {
    test::TempPath path(".smt");
    VectorSource src({sixOperands(), Instr{}, sixOperands()}, "six");
    writeNativeTrace(src, path.str(), c);
    NativeTraceReader reader(path.str());
    EXPECT_GE(reader.version(), 2u);  // version 3 since uops are recorded (uop_fields_test.cpp)
    const auto back = readAllOf(reader);
    ASSERT_EQ(back.size(), 3u);
    EXPECT_EQ(back[0], sixOperands()) << compressionName(c);
    EXPECT_EQ(back[2], sixOperands()) << compressionName(c);
  }
}

TEST(TraceReaders, TextFormatWritesEveryOperandAsRepeatedFields) {
  const std::string line = formatTextLine(sixOperands());
  EXPECT_EQ(line,
            "401000 int   dst=r3 src=r1,r2 ld=7000:8 ld=7040:4 ld=9000:16 ld=10:1 st=8000:8 st=8100:32");
  Instr back;
  ASSERT_TRUE(parseTextLine(line, back, "t", 1));
  EXPECT_EQ(back, sixOperands());
  EXPECT_NE(errorOf([&] { parseTextLine(line + " ld=20:8", back, "t", 1); }).find("too many loads (at most 4"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { parseTextLine(line + " st=20:8", back, "t", 1); }).find("too many stores (at most 2"),
            std::string::npos);
}

TEST(TraceReaders, ChampSimRecordKeepsAllFourLoadsAndTwoStores) {
  ChampSimRecord r;
  r.ip = 0x1000;
  r.srcMem = {0x100, 0x200, 0x300, 0x400};
  r.dstMem = {0x500, 0x600};
  const Instr in = fromChampSim(r, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(in.loads[i], (MemRef{0x100u * (i + 1), 8})) << i;
  EXPECT_EQ(in.stores[0], (MemRef{0x500, 8}));
  EXPECT_EQ(in.stores[1], (MemRef{0x600, 8}));
  // Holes (a zero address) are skipped, as ChampSim's std::remove does: the operands stay packed from slot 0.
  r.srcMem = {0, 0x200, 0, 0x400};
  const Instr packed = fromChampSim(r, 0);
  EXPECT_EQ(packed.loads[0], (MemRef{0x200, 8}));
  EXPECT_EQ(packed.loads[1], (MemRef{0x400, 8}));
  EXPECT_FALSE(packed.loads[2].valid());
}

// --- a header count that the body contradicts ------------------------------------------------------------------------

TEST(TraceReaders, MoreRecordsThanTheHeaderSaysFailAtOnceNotAtTheEnd) {
  // Five one-byte records (0x20: an int at the predicted pc) under a header promising 2. Reading 2 is fine; the
  // third record is an error as soon as it is reached, whatever the file holds after it.
  for (Compression c : {Compression::None, Compression::Zstd}) {
    test::TempPath path(".smt");
    {
      VectorSource src(std::vector<Instr>(5, Instr{0x400000, 0, {}, {}, 0, OpClass::Int}), "five");
      writeNativeTrace(src, path.str(), c);
    }
    std::string bytes = test::readFile(path.str());
    bytes[16] = 2;  // the count's low byte: 5 -> 2
    test::writeFile(path.str(), bytes);
    NativeTraceReader reader(path.str());
    Instr two[2];
    EXPECT_EQ(reader.read(std::span<Instr>(two, 2)), 2u);
    Instr more[1];
    const std::string msg = errorOf([&] { reader.read(std::span<Instr>(more, 1)); });
    EXPECT_NE(msg.find("record 2: the header says 2 records but more follow"), std::string::npos) << msg;
  }
}

TEST(TraceReaders, UncompressedSizeContradictingTheCountFailsAtOpen) {
  // An uncompressed record takes 1 to 104 bytes, so 1000 bytes of records hold 10 to 1000 of them.
  const std::string body(1000, '\x20');
  test::TempPath tooFew(".smt"), tooMany(".smt"), fine(".smt");
  test::writeFile(tooFew.str(), nativeHeader(2, 0, 9) + body);      // 1000 / 104 = 9.6: more than 9 records
  test::writeFile(tooMany.str(), nativeHeader(2, 0, 1001) + body);  // 1001 records need 1001 bytes at least
  test::writeFile(fine.str(), nativeHeader(2, 0, 1000) + body);
  std::string msg = errorOf([&] { NativeTraceReader r(tooFew.str()); });
  EXPECT_NE(msg.find("the header says 9 records but the file holds 1000 bytes after the header (at most 104"),
            std::string::npos) << msg;
  msg = errorOf([&] { NativeTraceReader r(tooMany.str()); });
  EXPECT_NE(msg.find("the header says 1001 records but the file holds 1000 bytes after the header (at least 1"),
            std::string::npos) << msg;
  NativeTraceReader ok(fine.str());
  EXPECT_EQ(readAllOf(ok).size(), 1000u);
}

// --- pipes are read once ---------------------------------------------------------------------------------------------

// A pipe whose write end a thread fills with `data`; the read end is /proc/self/fd/N, like <(...) in a shell.
class Pipe {
 public:
  explicit Pipe(std::string data) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    read_ = fds[0];
    writer_ = std::thread([fd = fds[1], d = std::move(data)] {
      std::size_t done = 0;
      while (done < d.size()) {
        const ssize_t n = ::write(fd, d.data() + done, d.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::close(fd);
    });
  }
  ~Pipe() {
    ::close(read_);  // unblocks a writer whose reader stopped early
    writer_.join();
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(read_); }

 private:
  int read_ = -1;
  std::thread writer_;
};

TEST(TraceReaders, EveryFormatReadsFromAPipeAndRefusesToRewindIt) {
  std::vector<Instr> records;
  for (int i = 0; i < 3000; ++i) {
    Instr in = sixOperands();
    in.pc = 0x400000 + 4 * static_cast<Addr>(i);
    records.push_back(in);
  }
  test::TempPath native(".smt"), text(".txt"), champsim(".champsimtrace.xz");
  {
    VectorSource src(records, "r");
    writeNativeTrace(src, native.str(), Compression::Zstd);
    TextTraceWriter w(text.str());
    for (const Instr& in : records) w.write(in);
    w.close();
    std::vector<ChampSimRecord> cs(3000);
    for (std::size_t i = 0; i < cs.size(); ++i) cs[i].ip = 0x1000 + 4 * i;
    writeChampSimTrace(champsim.str(), cs);
  }
  for (const std::string* file : {&native.str(), &text.str(), &champsim.str()}) {
    // The pipe's path does not say ".champsimtrace", so the ChampSim reader is chosen explicitly, as a caller would.
    Pipe pipe(test::readFile(*file));
    std::unique_ptr<TraceSource> src;
    if (file == &champsim.str()) src = std::make_unique<ChampSimTraceReader>(pipe.path());
    else src = openTrace(pipe.path());
    const auto got = readAllOf(*src);
    ASSERT_EQ(got.size(), 3000u) << *file;
    if (file != &champsim.str()) {
      EXPECT_EQ(got, records) << *file;
    }
    const std::string msg = errorOf([&] { src->rewind(); });
    EXPECT_NE(msg.find("cannot read the trace a second time: it is a pipe or FIFO"), std::string::npos) << msg;
  }
}

TEST(TraceReaders, RegularFilesStillRewind) {
  test::TempPath text(".txt");
  test::writeFile(text.str(), "400000 nop\n400004 int dst=r1\n");
  auto src = openTrace(text.str());
  const auto first = readAllOf(*src);
  src->rewind();
  EXPECT_EQ(readAllOf(*src), first);
  EXPECT_EQ(first.size(), 2u);
}

// --- bounded lines, short quotes, BOM --------------------------------------------------------------------------------

TEST(TraceReaders, UtfByteOrderMarkAtTheStartIsSkipped) {
  std::istringstream in("\xEF\xBB\xBF" "400000 nop\n400004 int dst=r1\n");
  TextTraceReader reader(in, "bom.txt");
  const auto v = readAllOf(reader);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].pc, 0x400000u);
  // Only at the start of the file: elsewhere it is a bad pc like any other.
  std::istringstream mid("400000 nop\n\xEF\xBB\xBF" "400004 nop\n");
  TextTraceReader reader2(mid, "mid.txt");
  EXPECT_NE(errorOf([&] { readAllOf(reader2); }).find("mid.txt:2: bad hex pc"), std::string::npos);
}

TEST(TraceReaders, OverlongLineIsAnErrorNamingFileAndLine) {
  std::istringstream in("400000 nop\n400004 nop # " + std::string(kMaxTextLineBytes, 'x') + "\n");
  TextTraceReader reader(in, "long.txt");
  const std::string msg = errorOf([&] { readAllOf(reader); });
  EXPECT_NE(msg.find("long.txt:2: line longer than 65536 bytes"), std::string::npos) << msg.substr(0, 200);
  // A line of exactly the limit is still read.
  std::istringstream ok("400000 nop #" + std::string(kMaxTextLineBytes - 12, 'x') + "\n");
  TextTraceReader reader2(ok, "ok.txt");
  EXPECT_EQ(readAllOf(reader2).size(), 1u);
}

TEST(TraceReaders, ZeroBytesAreReportedAsBinaryWithinOneLineLimit) {
  // /dev/zero as a text trace: one endless "line" of NUL bytes, reported once the limit is reached.
  std::istringstream in(std::string(10 * kMaxTextLineBytes, '\0'));
  TextTraceReader reader(in, "zero");
  const std::string msg = errorOf([&] { readAllOf(reader); });
  EXPECT_NE(msg.find("zero:1: binary byte 0x00 in column 1"), std::string::npos) << msg;
}

TEST(TraceReaders, MessagesQuoteAShortPrefixOfAHugeToken) {
  const std::string token(60000, 'g');
  Instr out;
  const std::string msg = errorOf([&] { parseTextLine(token + " nop", out, "big.txt", 7); });
  EXPECT_NE(msg.find("big.txt:7: bad hex pc 'gggg"), std::string::npos) << msg.substr(0, 200);
  EXPECT_NE(msg.find("...' (60000 bytes)"), std::string::npos) << msg.substr(0, 200);
  EXPECT_LT(msg.size(), 120u);
  EXPECT_EQ(quoteToken("frob"), "'frob'");
  const std::string fits(kMaxQuotedBytes, 'a');
  std::string quoted(1, '\'');
  quoted.append(fits).push_back('\'');
  EXPECT_EQ(quoteToken(fits), quoted);
  // A multi-byte UTF-8 character across the cut is left out whole: "é" is 2 bytes, so 39 + 2 crosses 40.
  std::string accented(39, 'a');
  accented.append("\xc3\xa9").append(10, 'b');
  std::string cutBefore(1, '\'');
  cutBefore.append(39, 'a').append("...' (51 bytes)");
  EXPECT_EQ(quoteToken(accented), cutBefore);
  const std::string gen = errorOf([&] { openTrace("gen:" + std::string(100000, 'z')); });
  EXPECT_LT(gen.size(), 300u) << gen.substr(0, 300);
  EXPECT_NE(gen.find("(100004 bytes)"), std::string::npos) << gen;
}

// --- ChampSim's branch kinds, rule by rule ---------------------------------------------------------------------------

// ChampSim's register numbers, short (champsim_test.cpp has its own kRegSp/kRegFlags/kRegIp; one suite, one unity source).
constexpr std::uint8_t kRegSp = kChampSimStackPointer, kRegFlags = kChampSimFlags, kRegIp = kChampSimInstructionPointer;

struct KindCase {
  const char* label;
  std::array<std::uint8_t, 2> dst;
  std::array<std::uint8_t, 4> src;
  bool fileTaken;
  BranchKind kind;  // from the conditions in ChampSim's inc/instruction.h, applied by hand
  bool taken;
  OpClass op;
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.label; }

class ChampSimKinds : public ::testing::TestWithParam<KindCase> {};

TEST_P(ChampSimKinds, FollowChampSimsOwnRules) {
  const KindCase& c = GetParam();
  ChampSimRecord r;
  r.ip = 0x1000;
  r.isBranch = 1;
  r.branchTaken = c.fileTaken;
  r.dstRegs = c.dst;
  r.srcRegs = c.src;
  EXPECT_EQ(champSimBranchKind(r), c.kind);
  const Instr in = fromChampSim(r, 0x2000);
  EXPECT_EQ(in.branch, c.kind);
  EXPECT_EQ(in.taken, c.taken);
  EXPECT_EQ(in.op, c.op);
  EXPECT_EQ(in.target, c.taken ? 0x2000u : 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ChampSimKinds,
    ::testing::Values(
        // jmp rel32 reads the IP: still a direct jump (ChampSim's rule does not look at reads_ip), and always taken.
        KindCase{"direct_jump_reading_ip", {kRegIp, 0}, {kRegIp, 0, 0, 0}, false, BranchKind::DirectJump, true,
                 OpClass::Jump},
        KindCase{"direct_jump_no_sources", {kRegIp, 0}, {0, 0, 0, 0}, true, BranchKind::DirectJump, true, OpClass::Jump},
        KindCase{"indirect_jump", {kRegIp, 0}, {10, 0, 0, 0}, false, BranchKind::IndirectJump, true,
                 OpClass::IndirectJump},
        // Reads the IP and another register (jrcxz, loop): ChampSim's conditional rule takes (reads_flags ||
        // reads_other).
        KindCase{"ip_and_other_is_conditional", {kRegIp, 0}, {kRegIp, 10, 0, 0}, true, BranchKind::Conditional, true,
                 OpClass::Branch},
        KindCase{"conditional_taken", {kRegIp, 0}, {kRegIp, kRegFlags, 0, 0}, true, BranchKind::Conditional, true,
                 OpClass::Branch},
        KindCase{"conditional_not_taken", {kRegIp, 0}, {kRegFlags, kRegIp, 0, 0}, false, BranchKind::Conditional, false,
                 OpClass::Branch},
        KindCase{"direct_call", {kRegIp, kRegSp}, {kRegIp, kRegSp, 0, 0}, false, BranchKind::DirectCall, true, OpClass::Call},
        KindCase{"indirect_call", {kRegSp, kRegIp}, {kRegIp, kRegSp, 11, 0}, false, BranchKind::IndirectCall, true,
                 OpClass::Call},
        KindCase{"return", {kRegIp, kRegSp}, {kRegSp, 0, 0, 0}, false, BranchKind::Return, true, OpClass::Return},
        // Flags without the IP fit no rule but the last: "other", taken as the file says.
        KindCase{"flags_without_ip_is_other", {kRegIp, 0}, {kRegFlags, 0, 0, 0}, true, BranchKind::Other, true,
                 OpClass::Jump},
        KindCase{"other_not_taken", {kRegIp, kRegSp}, {kRegIp, kRegSp, kRegFlags, 0}, false, BranchKind::Other, false,
                 OpClass::Jump},
        // is_branch set but the IP not written: no branch, never taken.
        KindCase{"no_ip_write", {3, 0}, {kRegIp, 4, 0, 0}, true, BranchKind::None, false, OpClass::Int}),
    [](const ::testing::TestParamInfo<KindCase>& info) { return std::string(info.param.label); });

// --- bounded distinct counting for trace info ------------------------------------------------------------------------

TEST(TraceReaders, DistinctCounterIsExactBelowItsLimit) {
  DistinctCounter c(1000);
  for (std::uint64_t i = 0; i < 3000; ++i) c.add(i % 1000);
  EXPECT_TRUE(c.exact());
  EXPECT_EQ(c.count(), 1000u);
}

TEST(TraceReaders, DistinctCounterEstimateIsWithinFourStandardErrors) {
  // Past the limit the count is a HyperLogLog estimate; 4 standard errors (4 x 0.81%) bound it on both sides.
  for (std::uint64_t n : {200000ull, 1000000ull}) {
    DistinctCounter c(1000);
    for (std::uint64_t i = 0; i < n; ++i) {
      c.add(0x400000 + 4 * i);
      c.add(0x400000 + 4 * i);  // duplicates do not count
    }
    EXPECT_FALSE(c.exact());
    const double rel = std::abs(static_cast<double>(c.count()) - static_cast<double>(n)) / static_cast<double>(n);
    EXPECT_LT(rel, 4 * DistinctCounter::kStandardError) << n << " counted as " << c.count();
  }
}

}  // namespace
}  // namespace smtlab
