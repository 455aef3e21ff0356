#include "smtlab/trace/text_format.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

TEST(Record, OpNamesRoundTrip) {
  const char* names[] = {"int", "imul", "idiv", "fadd", "fmul", "fdiv", "load",  "store",
                         "br",  "jmp",  "ijmp", "call", "ret",  "nop",  "pause", "mark"};
  for (int i = 0; i < kOpClassCount; ++i) {
    EXPECT_EQ(opClassName(static_cast<OpClass>(i)), names[i]);
    OpClass op;
    ASSERT_TRUE(parseOpClass(names[i], op));
    EXPECT_EQ(op, static_cast<OpClass>(i));
  }
  OpClass op;
  EXPECT_FALSE(parseOpClass("foo", op));
  EXPECT_EQ(defaultBranchKind(OpClass::Branch), BranchKind::Conditional);
  EXPECT_EQ(defaultBranchKind(OpClass::Call), BranchKind::DirectCall);
  EXPECT_EQ(defaultBranchKind(OpClass::IndirectJump), BranchKind::IndirectJump);
  EXPECT_EQ(defaultBranchKind(OpClass::Return), BranchKind::Return);
  EXPECT_EQ(defaultBranchKind(OpClass::Load), BranchKind::None);
}

TEST(Record, Registers) {
  RegId r;
  ASSERT_TRUE(parseReg("r0", r));
  EXPECT_EQ(r, 0);
  ASSERT_TRUE(parseReg("r63", r));
  EXPECT_EQ(r, 63);
  ASSERT_TRUE(parseReg("f0", r));
  EXPECT_EQ(r, 64);
  ASSERT_TRUE(parseReg("f63", r));
  EXPECT_EQ(r, 127);
  EXPECT_FALSE(parseReg("r64", r));
  EXPECT_FALSE(parseReg("f64", r));
  EXPECT_FALSE(parseReg("x1", r));
  EXPECT_FALSE(parseReg("r", r));
  EXPECT_FALSE(parseReg("r01", r));
  EXPECT_EQ(regName(intReg(7)), "r7");
  EXPECT_EQ(regName(fpReg(42)), "f42");
  EXPECT_EQ(regName(kNoReg), "-");
}

constexpr const char* kEveryField = R"(# smtlab text trace v1 -- header comment
400000 int   dst=r1 src=r2,r3
0x400004 load  dst=r4 src=r1 ld=7fff0010:8   # trailing comment

400008 store src=r4,r1 st=7fff0018:4 st=0X7FFF0020:255
40000c br    src=r4 taken target=400000
400010 mark  id=7
400014 call  indirect target=500000
400018 ret
40001c br src=f63 target=400000
400020 fadd dst=f0,f1 src=r0,r63,f2,f3
400024 load ld=1000 ld=2000:1 st=3000
400028 jmp target=400000
40002c ijmp src=r5
400030 call target=600000
400034 mark id=4294967295
)";

TEST(TextFormat, ParsesEveryField) {
  const std::vector<Instr> v = parseTextTrace(kEveryField);
  ASSERT_EQ(v.size(), 14u);

  EXPECT_EQ(v[0].pc, 0x400000u);
  EXPECT_EQ(v[0].op, OpClass::Int);
  EXPECT_EQ(v[0].dst[0], intReg(1));
  EXPECT_EQ(v[0].dst[1], kNoReg);
  EXPECT_EQ(v[0].src[0], intReg(2));
  EXPECT_EQ(v[0].src[1], intReg(3));
  EXPECT_EQ(v[0].src[2], kNoReg);
  EXPECT_EQ(v[0].branch, BranchKind::None);
  EXPECT_FALSE(v[0].taken);

  EXPECT_EQ(v[1].pc, 0x400004u);  // 0x prefix accepted
  EXPECT_EQ(v[1].loads[0], (MemRef{0x7fff0010, 8}));
  EXPECT_FALSE(v[1].loads[1].valid());

  EXPECT_EQ(v[2].op, OpClass::Store);
  EXPECT_EQ(v[2].stores[0], (MemRef{0x7fff0018, 4}));
  EXPECT_EQ(v[2].stores[1], (MemRef{0x7fff0020, 255}));
  EXPECT_EQ(v[2].dst[0], kNoReg);

  EXPECT_EQ(v[3].op, OpClass::Branch);
  EXPECT_EQ(v[3].branch, BranchKind::Conditional);
  EXPECT_TRUE(v[3].taken);
  EXPECT_EQ(v[3].target, 0x400000u);

  EXPECT_EQ(v[4].op, OpClass::Mark);
  EXPECT_EQ(v[4].markId, 7u);

  EXPECT_EQ(v[5].branch, BranchKind::IndirectCall);
  EXPECT_TRUE(v[5].taken);  // calls are always taken
  EXPECT_EQ(v[5].target, 0x500000u);

  EXPECT_EQ(v[6].op, OpClass::Return);
  EXPECT_EQ(v[6].branch, BranchKind::Return);
  EXPECT_TRUE(v[6].taken);

  EXPECT_FALSE(v[7].taken);  // br without `taken` is not taken
  EXPECT_EQ(v[7].src[0], fpReg(63));

  EXPECT_EQ(v[8].dst[0], fpReg(0));
  EXPECT_EQ(v[8].dst[1], fpReg(1));
  EXPECT_EQ(v[8].src, (std::array<RegId, 4>{intReg(0), intReg(63), fpReg(2), fpReg(3)}));

  EXPECT_EQ(v[9].loads[0], (MemRef{0x1000, 8}));  // default size 8
  EXPECT_EQ(v[9].loads[1], (MemRef{0x2000, 1}));
  EXPECT_EQ(v[9].stores[0], (MemRef{0x3000, 8}));

  EXPECT_EQ(v[10].branch, BranchKind::DirectJump);
  EXPECT_TRUE(v[10].taken);
  EXPECT_EQ(v[11].branch, BranchKind::IndirectJump);
  EXPECT_TRUE(v[11].taken);
  EXPECT_EQ(v[12].branch, BranchKind::DirectCall);
  EXPECT_EQ(v[13].markId, 4294967295u);
}

TEST(TextFormat, WriterMatchesDocumentedLayout) {
  const char* lines[] = {
      "400000 int   dst=r1 src=r2,r3",
      "400004 load  dst=r4 src=r1 ld=7fff0010:8",
      "400008 store src=r4,r1 st=7fff0018:8",
      "40000c br    src=r4 taken target=400000",
      "400010 mark  id=7",
      "400014 nop",
  };
  for (const char* line : lines) {
    Instr in;
    ASSERT_TRUE(parseTextLine(line, in, "x", 1));
    EXPECT_EQ(formatTextLine(in), line);
  }
}

TEST(TextFormat, WriteThenReadIsLossless) {
  std::vector<Instr> v = parseTextTrace(kEveryField);
  // Fields the example does not use: a non-default branch kind and holes in the register lists are canonicalised.
  Instr other;
  other.pc = 0xffffffffffffffffull;
  other.op = OpClass::IndirectJump;
  other.branch = BranchKind::Other;
  other.taken = true;
  v.push_back(other);
  std::ostringstream out;
  TextTraceWriter writer(out);
  for (const Instr& in : v) writer.write(in);
  writer.close();
  EXPECT_EQ(writer.written(), v.size());
  EXPECT_EQ(parseTextTrace(out.str()), v);
  EXPECT_EQ(out.str().rfind(kTextTraceHeader, 0), 0u);
}

// The writer never emits what the reader refuses: a taken flag on a record that is no branch (possible in memory or
// in a native trace) means nothing and is left out, so `trace convert` to text always reads back.
TEST(TextFormat, TakenIsWrittenOnlyForABranch) {
  Instr in;
  in.pc = 0x400000;
  in.op = OpClass::Int;
  in.taken = true;
  EXPECT_EQ(formatTextLine(in), "400000 int");
  in.op = OpClass::Branch;
  in.branch = BranchKind::Conditional;
  EXPECT_EQ(formatTextLine(in), "400000 br    taken");
}

TEST(TextFormat, StreamingReaderInBatchesAndRewind) {
  std::istringstream in(kEveryField);
  TextTraceReader reader(in, "every.txt");
  const std::vector<Instr> expect = parseTextTrace(kEveryField);
  std::vector<Instr> got;
  Instr batch[3];
  while (std::size_t n = reader.read(batch)) got.insert(got.end(), batch, batch + n);
  EXPECT_EQ(got, expect);
  EXPECT_EQ(reader.read(batch), 0u);
  reader.rewind();
  EXPECT_EQ(readAll(reader), expect);
  EXPECT_EQ(reader.describe(), "every.txt");
}

TEST(TextFormat, ReadsFromFile) {
  test::TempPath path(".txt");
  test::writeFile(path.str(), kEveryField);
  TextTraceReader reader(path.str());
  EXPECT_EQ(readAll(reader), parseTextTrace(kEveryField));
}

struct BadLine {
  const char* line;
  const char* what;
};

class TextFormatErrors : public ::testing::TestWithParam<BadLine> {};

// Each bad line comes third, after a good line and a comment, so the message must say "bad.txt:3:".
TEST_P(TextFormatErrors, NameFileLineAndProblem) {
  const std::string text = std::string("400000 int dst=r1\n# comment\n") + GetParam().line + "\n400004 nop\n";
  std::istringstream in(text);
  TextTraceReader reader(in, "bad.txt");
  Instr batch[8];
  try {
    reader.read(batch);
    FAIL() << "no error for: " << GetParam().line;
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.txt:3: ", 0), 0u) << msg;
    EXPECT_NE(msg.find(GetParam().what), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, TextFormatErrors,
    ::testing::Values(BadLine{"400000 foo", "unknown op 'foo'"},
                      BadLine{"400000 int dst=r64", "unknown register 'r64'"},
                      BadLine{"400000 int src=r1,x2", "unknown register 'x2'"},
                      BadLine{"400000 int src=r1,", "unknown register ''"},
                      BadLine{"400000 int bogus=1", "unknown field 'bogus=1'"},
                      BadLine{"400000 int fast", "unknown field 'fast'"}, BadLine{"40000g int", "bad hex"},
                      BadLine{"400000 load ld=zz", "bad hex"}, BadLine{"400000 br target=0xq", "bad hex"},
                      BadLine{"400000 load ld=12345678901234567", "bad hex"},
                      BadLine{"400000 int dst=r1 dst=r2", "duplicate field 'dst'"},
                      BadLine{"400000 int src=r1 src=r2", "duplicate field 'src'"},
                      BadLine{"400000 br taken taken", "duplicate field 'taken'"},
                      BadLine{"400000 br target=1 target=2", "duplicate field 'target'"},
                      BadLine{"400000 mark id=1 id=2", "duplicate field 'id'"},
                      BadLine{"400000 int dst=r1,r2,r3", "too many dst registers"},
                      BadLine{"400000 int src=r1,r2,r3,r4,r5", "too many src registers"},
                      BadLine{"400000 load ld=1 ld=2 ld=3 ld=4 ld=5", "too many loads"},
                      BadLine{"400000 store st=1 st=2 st=3", "too many stores"},
                      BadLine{"400000 int dst=", "missing value for 'dst'"},
                      BadLine{"400000 load ld", "missing value for 'ld'"},
                      BadLine{"400000 br taken=1", "takes no value"},
                      // 'taken' is a branch's outcome: before, a non-branch's flag was read and then ignored.
                      BadLine{"400000 int dst=r1 taken", "'taken' on op 'int', which is no branch"},
                      BadLine{"400000 br taken kind=none", "'taken' with kind=none"},
                      BadLine{"400000 load ld=10:0", "bad access size"},
                      BadLine{"400000 load ld=10:256", "bad access size"},
                      BadLine{"400000 load ld=10:", "bad access size"},
                      BadLine{"400000 mark id=x", "bad mark id"}, BadLine{"400000 jmp indirect", "only to call"},
                      BadLine{"400000", "missing op"}));

}  // namespace
}  // namespace smtlab
