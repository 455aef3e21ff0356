#include "smtlab/trace/native_format.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "smtlab/common/error.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

constexpr const char* kText = R"(400000 int   dst=r1 src=r2,r3
400004 load  dst=r4 src=r1 ld=7fff0010:8
400008 store src=r4,r1 st=7fff0018:8 st=7fff0000:3
40000c br    src=r4 taken target=400000
400000 mark  id=7
400004 call  indirect target=500000
500000 ret   target=400008
ffffffffffffffff fdiv dst=f0,f63 src=r0,r63,f2,f3 ld=0:255 ld=ffffffffffffffff:1
0 ijmp kind=other
10 nop
)";

std::vector<Instr> nativeSample() {
  std::vector<Instr> v = parseTextTrace(kText);
  // A holey register list and a large negative pc jump exercise the encoder beyond the text examples.
  Instr holes;
  holes.pc = 0x1234;
  holes.op = OpClass::Int;
  holes.src = {kNoReg, intReg(5), kNoReg, fpReg(9)};
  holes.dst = {kNoReg, intReg(7)};
  v.push_back(holes);
  // Some generated records so that buffers are refilled several times.
  auto gen = makeGenerator("gen:mix,count=30000,seed=3");
  std::vector<Instr> more = readAll(*gen);
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

std::string toText(const std::vector<Instr>& v) {
  std::ostringstream out;
  TextTraceWriter w(out);
  for (const Instr& in : v) w.write(in);
  w.close();
  return out.str();
}

class NativeRoundTrip : public ::testing::TestWithParam<Compression> {};

TEST_P(NativeRoundTrip, TextToNativeToTextIsEqual) {
  const std::vector<Instr> v = nativeSample();
  test::TempPath path(".smt");
  VectorSource src(v);
  EXPECT_EQ(writeNativeTrace(src, path.str(), GetParam()), v.size());
  ASSERT_TRUE(isNativeTrace(path.str()));

  NativeTraceReader reader(path.str());
  EXPECT_EQ(reader.compression(), GetParam());
  ASSERT_TRUE(reader.length().has_value());
  EXPECT_EQ(*reader.length(), v.size());
  const std::vector<Instr> back = readAll(reader);
  EXPECT_EQ(back, v);
  EXPECT_EQ(toText(back), toText(v));

  // rewind() starts again from the first record.
  reader.rewind();
  EXPECT_EQ(readAll(reader, 5), std::vector<Instr>(v.begin(), v.begin() + 5));
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, NativeRoundTrip,
                         ::testing::Values(Compression::None, Compression::Zstd, Compression::Xz));

TEST(NativeFormat, MaxRecordsAndEmptyTrace) {
  test::TempPath path(".smt");
  auto gen = makeGenerator("gen:alu,count=0");  // endless: a limit is required
  EXPECT_THROW(writeNativeTrace(*gen, path.str(), Compression::Zstd, 0), TraceError);
  EXPECT_EQ(writeNativeTrace(*gen, path.str(), Compression::Zstd, 1000), 1000u);
  NativeTraceReader reader(path.str());
  EXPECT_EQ(readAll(reader).size(), 1000u);

  VectorSource empty({});
  EXPECT_EQ(writeNativeTrace(empty, path.str(), Compression::Xz), 0u);
  NativeTraceReader r2(path.str());
  EXPECT_EQ(r2.length(), std::optional<std::uint64_t>(0));
  EXPECT_TRUE(readAll(r2).empty());
}

TEST(NativeFormat, GeneratedTracesAreCompact) {
  // alu is perfectly regular: the encoder predicts the pc and zstd removes the repetition.
  test::TempPath path(".smt");
  auto gen = makeGenerator("gen:alu,count=100000");
  writeNativeTrace(*gen, path.str(), Compression::Zstd);
  EXPECT_LT(std::filesystem::file_size(path.str()), 100000u / 10);
}

// Writes a small uncompressed-or-not file and returns its bytes.
std::string makeFile(Compression c, std::uint64_t records, const std::string& path) {
  auto gen = makeGenerator("gen:mix,count=" + std::to_string(records));
  writeNativeTrace(*gen, path, c);
  return test::readFile(path);
}

// Expects that reading the whole file fails with a TraceError whose message contains every part.
void expectReadError(const std::string& path, const std::vector<std::string>& parts) {
  try {
    NativeTraceReader reader(path);
    readAll(reader);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

void patch(std::string& bytes, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
}

TEST(NativeFormat, WrongMagic) {
  test::TempPath path(".smt");
  test::writeFile(path.str(), "this is not a trace at all, just text\n");
  expectReadError(path.str(), {path.str(), "wrong magic"});
  EXPECT_FALSE(isNativeTrace(path.str()));
}

TEST(NativeFormat, UnsupportedVersionAndCompression) {
  test::TempPath path(".smt");
  std::string bytes = makeFile(Compression::Zstd, 100, path.str());
  std::string next = bytes;
  patch(next, 8, kNativeVersion + 1, 4);
  test::writeFile(path.str(), next);
  expectReadError(path.str(), {path.str(), "unsupported native trace version 5 (this build reads versions 1 to 4)"});
  std::string c7 = bytes;
  patch(c7, 12, 7, 4);
  test::writeFile(path.str(), c7);
  expectReadError(path.str(), {path.str(), "unknown compression 7"});
  test::writeFile(path.str(), bytes.substr(0, 12));
  expectReadError(path.str(), {path.str(), "truncated header"});
}

TEST(NativeFormat, TruncatedRecord) {
  test::TempPath path(".smt");
  const std::string bytes = makeFile(Compression::None, 1000, path.str());
  // Cutting one byte leaves the last record incomplete: record 999 (counted from 0).
  test::writeFile(path.str(), bytes.substr(0, bytes.size() - 1));
  expectReadError(path.str(), {path.str(), "record 999: truncated"});
}

TEST(NativeFormat, CountInHeaderMustMatch) {
  test::TempPath path(".smt");
  std::string bytes = makeFile(Compression::Zstd, 1000, path.str());
  patch(bytes, 16, 1001, 8);
  test::writeFile(path.str(), bytes);
  expectReadError(path.str(), {path.str(), "header says 1001 records but the file holds 1000"});
  // All-ones means "unknown": the file reads without a count check.
  patch(bytes, 16, kUnknownCount, 8);
  test::writeFile(path.str(), bytes);
  NativeTraceReader reader(path.str());
  EXPECT_FALSE(reader.length().has_value());
  EXPECT_EQ(readAll(reader).size(), 1000u);
}

TEST(NativeFormat, TruncatedCompressedStream) {
  for (Compression c : {Compression::Zstd, Compression::Xz}) {
    test::TempPath path(".smt");
    const std::string bytes = makeFile(c, 20000, path.str());
    test::writeFile(path.str(), bytes.substr(0, bytes.size() / 2));
    expectReadError(path.str(), {path.str()});
  }
}

TEST(NativeFormat, CorruptCompressedData) {
  for (Compression c : {Compression::Zstd, Compression::Xz}) {
    test::TempPath path(".smt");
    std::string bytes = makeFile(c, 20000, path.str());
    for (std::size_t i = kNativeHeaderSize + 2; i < kNativeHeaderSize + 40; ++i) {
      bytes[i] = static_cast<char>(~bytes[i]);
    }
    test::writeFile(path.str(), bytes);
    expectReadError(path.str(), {path.str()});
  }
}

TEST(NativeFormat, CorruptRecordBytes) {
  // Uncompressed: a record claiming a register mask with reserved bits set.
  test::TempPath path(".smt");
  std::string bytes = makeFile(Compression::None, 10, path.str());
  bytes.resize(kNativeHeaderSize);
  bytes += static_cast<char>(0x60);  // op int, pc as predicted, regs present
  bytes += static_cast<char>(0xc0);  // reserved mask bits
  patch(bytes, 16, kUnknownCount, 8);
  test::writeFile(path.str(), bytes);
  expectReadError(path.str(), {path.str(), "record 0: corrupt"});
}

TEST(NativeFormat, Compression) {
  EXPECT_EQ(parseCompression("zstd"), Compression::Zstd);
  EXPECT_EQ(parseCompression("xz"), Compression::Xz);
  EXPECT_EQ(parseCompression("none"), Compression::None);
  EXPECT_THROW(parseCompression("gzip"), TraceError);
}

TEST(OpenTrace, SniffsFormatByContent) {
  test::TempPath native(".txt");  // a native file with a misleading name is still native
  auto gen = makeGenerator("gen:alu,count=10");
  writeNativeTrace(*gen, native.str());
  auto a = openTrace(native.str());
  EXPECT_EQ(a->length(), std::optional<std::uint64_t>(10));
  EXPECT_EQ(readAll(*a).size(), 10u);

  test::TempPath text(".trace");
  test::writeFile(text.str(), "400000 int dst=r1\n400004 nop\n");
  auto b = openTrace(text.str());
  EXPECT_EQ(readAll(*b).size(), 2u);

  auto g = openTrace("gen:alu,count=7");
  EXPECT_EQ(readAll(*g).size(), 7u);
}

TEST(OpenTrace, Errors) {
  try {
    openTrace("/nonexistent/dir/trace.smt");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/trace.smt"), std::string::npos);
  }
  test::TempPath champ(".champsimtrace.xz");
  test::writeFile(champ.str(), "xx");
  try {
    openTrace(champ.str());
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);  // 2 bytes of a 64-byte ChampSim record
    EXPECT_NE(std::string(e.what()).find(champ.str()), std::string::npos);
  }
  EXPECT_THROW(openTrace("gen:nosuch"), TraceError);
}

}  // namespace
}  // namespace smtlab
