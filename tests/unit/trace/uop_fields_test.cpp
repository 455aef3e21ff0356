// The decoder's uops in the trace formats: the text format's optional `uops=N` and `ucode` fields,
// native version 3 (uop count and microcoded flag per record, compactly), versions 1 and 2 still read with uops 0,
// one clear error for every bad value, and `trace info`'s uops/instruction. Expected byte counts come from the
// record layout in docs/traces.md, worked out in the comments.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/champsim_format.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

using test::dataPath;

using test::errorOf;

Instr parsed(const std::string& line) {
  Instr in;
  EXPECT_TRUE(parseTextLine(line, in, "t.txt", 7)) << line;
  return in;
}

// One record of each uop case the native encoder distinguishes.
std::vector<Instr> uopRecords() {
  return {
      parsed("400000 int   dst=r1 src=r2,r3 uops=1"),                         // reg-reg ALU: the predicted 1
      parsed("400004 int   dst=r1 src=r1,r4 ld=7000:8 uops=2"),               // load-op: the predicted 2
      parsed("400008 int   src=r1,r4 ld=7000:8 st=7000:8 uops=4"),            // read-modify-write: predicted 4
      parsed("40000c idiv  dst=r0,r2 src=r0,r2,r5 uops=57 ucode"),            // IDIV r64 (Broadwell): stored
      parsed("400010 store src=r4,r1 st=7008:8 uops=2"),                      // store: predicted 2
      parsed("400014 load  dst=r3 ld=7010:8 ld=7018:8 ld=7020:8 ld=7028:8"),  // not recorded
      parsed("400018 load  dst=r3 src=r6 ld=9000:1 st=a000:1 uops=5 ucode"),  // MOVSB: stored, microcoded
      parsed("40001c nop   uops=255"),                                        // the largest count
  };
}

TEST(UopFields, TextFieldsParseAndWriteBack) {
  const Instr div = parsed("40000c idiv  dst=r0,r2 src=r0,r2,r5 uops=57 ucode");
  EXPECT_EQ(div.uops, 57);
  EXPECT_TRUE(div.microcoded);
  EXPECT_EQ(formatTextLine(div), "40000c idiv  dst=r0,r2 src=r0,r2,r5 uops=57 ucode");
  const Instr plain = parsed("400000 int   dst=r1");
  EXPECT_EQ(plain.uops, 0);  // absent: not recorded
  EXPECT_FALSE(plain.microcoded);
  EXPECT_EQ(formatTextLine(plain), "400000 int   dst=r1");
  for (const Instr& in : uopRecords()) EXPECT_EQ(parsed(formatTextLine(in)), in) << formatTextLine(in);
}

TEST(UopFields, TextBadValuesNameFileAndLine) {
  Instr in;
  auto err = [&](const std::string& line) { return errorOf([&] { parseTextLine(line, in, "t.txt", 7); }); };
  EXPECT_EQ(err("400000 int uops=0"),
            "t.txt:7: bad uop count '0' in uops= (1..255; leave the field out when not recorded)");
  EXPECT_EQ(err("400000 int uops=256"),
            "t.txt:7: bad uop count '256' in uops= (1..255; leave the field out when not recorded)");
  EXPECT_EQ(err("400000 int uops=-1"),
            "t.txt:7: bad uop count '-1' in uops= (1..255; leave the field out when not recorded)");
  EXPECT_EQ(err("400000 int uops=2x"),
            "t.txt:7: bad uop count '2x' in uops= (1..255; leave the field out when not recorded)");
  EXPECT_EQ(err("400000 int uops="), "t.txt:7: missing value for 'uops'");
  EXPECT_EQ(err("400000 int uops=2 uops=3"), "t.txt:7: duplicate field 'uops'");
  EXPECT_EQ(err("400000 int uops=2 ucode ucode"), "t.txt:7: duplicate field 'ucode'");
  EXPECT_EQ(err("400000 int ucode=1 uops=2"), "t.txt:7: field 'ucode' is a flag and takes no value");
  EXPECT_EQ(err("400000 int ucode"), "t.txt:7: 'ucode' needs uops=N (the microcode sequence's length)");
}

TEST(UopFields, NativeUopFieldsRoundTripInEveryCompression) {
  for (Compression c : {Compression::None, Compression::Zstd, Compression::Xz}) {
    test::TempPath path(".smt");
    VectorSource src(uopRecords(), "uops");
    writeNativeTrace(src, path.str(), c);
    NativeTraceReader reader(path.str());
    EXPECT_EQ(reader.version(), kNativeVersion);  // the records of version 3 and on hold the uop fields
    EXPECT_EQ(readAll(reader), uopRecords()) << compressionName(c);
  }
}

TEST(UopFields, NativeVersion3StoresUopsCompactly) {
  // docs/traces.md: a sequential int with two registers is F0 + register mask + 2 ids = 4 bytes. A recorded count
  // the rule predicts adds F1 and the extension byte M (6 bytes); any other count adds the byte U as well (7).
  auto bodyBytes = [](const std::string& line) {
    test::TempPath path(".smt");
    VectorSource src({parsed(line)}, "one");
    writeNativeTrace(src, path.str(), Compression::None);
    return std::filesystem::file_size(path.str()) - kNativeHeaderSize;
  };
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2"), 4u);  // pc 0 is the first guess: no pc part
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2 uops=1"), 6u);
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2 uops=3"), 7u);
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2 uops=3 ucode"), 7u);  // the flag is a bit of M
  // A load-op already has F1 (its load): the predicted 2 adds only M.
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2 ld=0:8"), 6u);  // F0 F1 mask r r address delta
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2 ld=0:8 uops=2"), 7u);
  EXPECT_EQ(bodyBytes("0 int dst=r1 src=r2 ld=0:8 uops=1"), 8u);  // not the predicted 2: U as well
}

TEST(UopFields, NativeVersions1And2ReadWithUopsNotRecorded) {
  // native_v2*.smt were written by the version-2 writer (commit 3d2b406) from native_v2.txt, native_v1*.smt by the
  // version-1 writer from native_v1.txt; the text files (no uops fields) are the expected content.
  for (const auto& [version, text, files] :
       {std::tuple{2u, "native_v2.txt", std::vector<std::string>{"native_v2.smt", "native_v2_plain.smt"}},
        std::tuple{1u, "native_v1.txt", std::vector<std::string>{"native_v1.smt", "native_v1_plain.smt"}}}) {
    TextTraceReader textReader(dataPath(text));
    const std::vector<Instr> want = readAll(textReader);
    ASSERT_EQ(want.size(), version == 2 ? 17u : 15u);
    for (const std::string& name : files) {
      NativeTraceReader reader(dataPath(name));
      EXPECT_EQ(reader.version(), version) << name;
      const std::vector<Instr> got = readAll(reader);
      EXPECT_EQ(got, want) << name;
      for (const Instr& in : got) {
        EXPECT_EQ(in.uops, 0) << name;
        EXPECT_FALSE(in.microcoded) << name;
      }
    }
  }
}

// An uncompressed native file from a header and record bytes.
std::string nativeFile(std::uint32_t version, std::uint64_t count, std::string_view body) {
  std::string h(kNativeMagic.begin(), kNativeMagic.end());
  auto le = [&](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) h.push_back(static_cast<char>(v >> (8 * i)));
  };
  le(version, 4);
  le(0, 4);
  le(count, 8);
  return h + std::string(body);
}

std::string readError(std::uint32_t version, std::uint64_t count, std::string_view body, test::TempPath& path) {
  test::writeFile(path.str(), nativeFile(version, count, body));
  return errorOf([&] {
    NativeTraceReader reader(path.str());
    readAll(reader);
  });
}

TEST(UopFields, NativeBadUopPartsAreOneClearError) {
  test::TempPath path(".smt");
  // Record 0: "0 int" (F0 0x20: op int, pc predicted). Record 1: F0 0xa0 (F1 follows), F1 0x10 (M follows), then M.
  const std::string ok("\x20", 1);
  EXPECT_EQ(readError(3, 2, ok + std::string("\xa0\x10\x10\x00", 4), path),
            path.str() + ": record 1: impossible uop count 0 (a recorded count is 1..255)");
  EXPECT_EQ(readError(3, 2, ok + std::string("\xa0\x10\x18\x05", 4), path),
            path.str() + ": record 1: corrupt data (uop count both predicted and stored)");
  EXPECT_EQ(readError(3, 2, ok + std::string("\xa0\x10\x20", 3), path),
            path.str() + ": record 1: corrupt data (microcoded without a uop count)");
  EXPECT_EQ(readError(3, 2, ok + std::string("\xa0\x10\x40", 3), path),
            path.str() + ": record 1: corrupt data (extension byte)");
  EXPECT_EQ(readError(3, 2, ok + std::string("\xa0\x10\x10", 3), path), path.str() + ": record 1: truncated");
  // Version 2 has no uop bits: the same M byte is a reserved bit there, as before.
  EXPECT_EQ(readError(2, 2, ok + std::string("\xa0\x10\x08", 3), path),
            path.str() + ": record 1: corrupt data (memory operand byte)");
  // The good forms of the same bytes: predicted (int without memory: 1), stored 9, microcoded with a count.
  test::writeFile(path.str(), nativeFile(3, 3, ok + std::string("\xa0\x10\x08" "\xa0\x10\x30\x09", 7)));
  NativeTraceReader reader(path.str());
  const auto got = readAll(reader);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].uops, 0);
  EXPECT_EQ(got[1].uops, 1);
  EXPECT_FALSE(got[1].microcoded);
  EXPECT_EQ(got[2].uops, 9);
  EXPECT_TRUE(got[2].microcoded);
}

TEST(UopFields, TextToNativeToTextKeepsUops) {
  test::TempPath text(".txt"), native(".smt"), back(".txt");
  {
    TextTraceWriter w(text.str());
    for (const Instr& in : uopRecords()) w.write(in);
    w.close();
  }
  TextTraceReader textReader(text.str());
  writeNativeTrace(textReader, native.str());
  NativeTraceReader nativeReader(native.str());
  TextTraceWriter w(back.str());
  for (const Instr& in : readAll(nativeReader)) w.write(in);
  w.close();
  EXPECT_EQ(test::readFile(back.str()), test::readFile(text.str()));
}

// ChampSim records: register work with memory operands makes a load-op or a read-modify-write, and
// every record gets the unfused-domain rule's count (docs/tracing.md, "ChampSim traces").
ChampSimRecord champSim(std::uint64_t ip, std::array<std::uint8_t, 2> dst, std::array<std::uint8_t, 4> src,
                        std::array<std::uint64_t, 4> srcMem = {}, std::array<std::uint64_t, 2> dstMem = {}) {
  ChampSimRecord r;
  r.ip = ip;
  r.dstRegs = dst;
  r.srcRegs = src;
  r.srcMem = srcMem;
  r.dstMem = dstMem;
  r.isBranch = dst[0] == kChampSimInstructionPointer || dst[1] == kChampSimInstructionPointer;
  r.branchTaken = r.isBranch;
  return r;
}

TEST(UopFields, ChampSimLoadOpAndReadModifyWrite) {
  constexpr std::uint8_t kSp = kChampSimStackPointer, kFlags = kChampSimFlags, kIp = kChampSimInstructionPointer;
  const std::vector<ChampSimRecord> recs = {
      champSim(0x100, {3, kFlags}, {3, 4, 0, 0}, {0x1000}),            // add r3, [r4]: load-op
      champSim(0x104, {3, 0}, {4, 0, 0, 0}, {0x1000}),                 // mov r3, [r4]: load
      champSim(0x108, {kFlags, 0}, {4, 5, 0, 0}, {0x2000}, {0x2000}),  // add [r4], r5: read-modify-write
      champSim(0x10c, {3, 0}, {3, 4, 0, 0}, {0x1000, 0x1008}),         // reads what it writes, two loads: load-op
      champSim(0x110, {kSp, 3}, {kSp, 0, 0, 0}, {0x7ff0}),             // pop r3: load (only the stack pointer)
      champSim(0x114, {kSp, 0}, {kSp, 3, 0, 0}, {}, {0x7ff0}),         // push r3: store
      champSim(0x118, {kIp, kSp}, {kIp, kSp, 0, 0}, {}, {0x7fe8}),     // call: pushes the return address
      champSim(0x200, {kIp, kSp}, {kSp, 0, 0, 0}, {0x7fe8}),           // ret: pops it
      champSim(0x11c, {3, kFlags}, {3, 4, 0, 0}),                      // add r3, r4
  };
  test::TempPath path(".champsimtrace");
  writeChampSimTrace(path.str(), recs);
  ChampSimTraceReader reader(path.str());
  const std::vector<Instr> in = readAll(reader);
  ASSERT_EQ(in.size(), recs.size());
  const OpClass ops[] = {OpClass::Int,   OpClass::Load, OpClass::Int,    OpClass::Int, OpClass::Load,
                         OpClass::Store, OpClass::Call, OpClass::Return, OpClass::Int};
  // load-op 1 + 1; load 1; RMW 1 + 1 + 2; 1 + 2 loads; pop 1; push 2; call 1 + 2; ret 1 + 1; reg-reg 1.
  const int uops[] = {2, 1, 4, 3, 1, 2, 3, 2, 1};
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(in[i].op, ops[i]) << "record " << i;
    EXPECT_EQ(in[i].uops, uops[i]) << "record " << i;
    EXPECT_FALSE(in[i].microcoded) << "record " << i;
  }
  // Branch kinds are ChampSim's own and unchanged by the uop rule.
  EXPECT_EQ(in[6].branch, BranchKind::DirectCall);
  EXPECT_EQ(in[7].branch, BranchKind::Return);
}

// `trace info` through the program (skipped when it is not built).
std::string smtlabOutput(const std::string& args) {
  const std::string cmd = std::string(SMTLAB_BINARY) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  if (!p) return out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  return out;
}

TEST(UopFields, TraceInfoShowsUopsPerInstruction) {
  if (!std::filesystem::exists(SMTLAB_BINARY)) GTEST_SKIP() << "smtlab program not built";
  test::TempPath text(".txt");
  // 4 records: uops 1, 2, 4 and 57 (microcoded): 64 / 4 = 16.000 per instruction, 1 of 4 microcoded = 25.0%.
  test::writeFile(text.str(), "1000 int dst=r1 uops=1\n1004 int dst=r1 ld=10:8 uops=2\n"
                              "1008 int ld=10:8 st=10:8 uops=4\n100c idiv dst=r0 uops=57 ucode\n");
  EXPECT_NE(smtlabOutput("trace info " + text.str())
                .find("uops:             16.000 per instruction, 25.0% microcoded\n"),
            std::string::npos);
  // Two of them without a count: the mean is over the recorded ones, and the output says so.
  test::writeFile(text.str(), "1000 int dst=r1\n1004 int dst=r1 ld=10:8 uops=2\n1008 int\n100c int uops=4\n");
  EXPECT_NE(smtlabOutput("trace info " + text.str())
                .find("uops:             3.000 per instruction, 0.0% microcoded (recorded for 2 of the instructions)\n"),
            std::string::npos);
  test::writeFile(text.str(), "1000 int dst=r1\n");
  EXPECT_NE(smtlabOutput("trace info " + text.str()).find("uops:             not recorded\n"), std::string::npos);
}

}  // namespace
}  // namespace smtlab
