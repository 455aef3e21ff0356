// The QEMU tracer end to end on a hand-written assembly program (snippet.S, no libc, so every executed instruction is
// known): instruction count, register and branch decoding, --skip / --max-instructions, --collapse-rep, lossless
// native <-> text round trip, threads of one process, and kernel:NAME. Skipped (with the reason) when qemu-x86_64, the
// plugin, capstone or a C compiler is missing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "smtlab/common/error.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "snippet_program.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/text_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/kernels.hpp"
#include "smtlab/tracer/recorder.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

fs::path scratchDir() { return test::tracerScratchDir(); }
std::string snippetBinary() { return test::snippetProgram(); }

std::vector<Instr> record(const std::string& name, RecordOptions o) {
  o.outPrefix = (scratchDir() / name).string();
  o.quiet = true;
  if (o.command.empty()) o.command = {snippetBinary()};
  const RecordResult r = recordProgram(o);
  NativeTraceReader reader(r.threads.at(0).path);
  return readAll(reader);
}

class Tracer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = tracerUnavailableReason()) GTEST_SKIP() << "tracer unavailable: " << *why;
    if (snippetBinary().empty()) GTEST_SKIP() << "no C compiler (cc) to assemble snippet.S";
  }
};

// snippet.S: 4 set-up instructions, 1000 iterations of a 4-instruction loop, call + 2 in the function, 3 lea/mov,
// rep movsb with rcx = 5 (QEMU executes it 6 times: 5 copies and the final rcx == 0 check), 3 for exit.
// 4 + 4000 + 3 + 3 + 6 + 3 = 4019; no start-up or exit code runs outside the snippet.
constexpr std::size_t kSnippetInstructions = 4019;
constexpr std::size_t kLoopStart = 4, kCall = 4 + 4000;

TEST_F(Tracer, ExactInstructionCountOfAKnownLoop) {
  EXPECT_EQ(record("count", {}).size(), kSnippetInstructions);
}

TEST_F(Tracer, CollapseRepKeepsOneRecordPerStringOp) {
  RecordOptions o;
  o.collapseRep = true;
  EXPECT_EQ(record("collapse", o).size(), kSnippetInstructions - 5);
}

TEST_F(Tracer, RegistersMemoryAndBranchesDecoded) {
  const auto t = record("decode", {});
  ASSERT_EQ(t.size(), kSnippetInstructions);
  // xor %eax,%eax: no source; writes rax (r0) and the flags (r16).
  EXPECT_EQ(t[1].src, (std::array<RegId, 4>{kNoReg, kNoReg, kNoReg, kNoReg}));
  EXPECT_EQ(t[1].dst, (std::array<RegId, 2>{intReg(0), intReg(16)}));
  // movdqu (%rsi),%xmm0: a load of 16 bytes (two 8-byte pieces merged) into f0, address from rsi (r6).
  const Addr buf = t[3].loads[0].addr;
  EXPECT_EQ(t[3].op, OpClass::Load);
  EXPECT_EQ(t[3].loads[0].size, 16);
  EXPECT_FALSE(t[3].loads[1].valid());
  EXPECT_EQ(t[3].dst[0], fpReg(0));
  EXPECT_EQ(t[3].src[0], intReg(6));
  // add (%rsi),%rax: an ALU op with a load; reads rax and rsi.
  const Instr& add = t[kLoopStart];
  EXPECT_EQ(add.op, OpClass::Int);
  EXPECT_EQ(add.loads[0], (MemRef{buf, 8}));
  EXPECT_NE(std::find(add.src.begin(), add.src.end(), intReg(0)), add.src.end());
  EXPECT_NE(std::find(add.src.begin(), add.src.end(), intReg(6)), add.src.end());
  // mov %rax,8(%rsi): a store.
  EXPECT_EQ(t[kLoopStart + 1].op, OpClass::Store);
  EXPECT_EQ(t[kLoopStart + 1].stores[0], (MemRef{buf + 8, 8}));
  // jnz: conditional, reads the flags, taken back to the loop 999 times, then not taken.
  const Instr& jnz = t[kLoopStart + 3];
  EXPECT_EQ(jnz.branch, BranchKind::Conditional);
  EXPECT_EQ(jnz.src[0], intReg(16));
  EXPECT_TRUE(jnz.taken);
  EXPECT_EQ(jnz.target, add.pc);
  const Instr& lastJnz = t[kCall - 1];
  EXPECT_EQ(lastJnz.pc, jnz.pc);
  EXPECT_FALSE(lastJnz.taken);
  EXPECT_EQ(lastJnz.target, add.pc);
  std::size_t takenCount = 0;
  for (const Instr& in : t) takenCount += in.pc == jnz.pc && in.taken;
  EXPECT_EQ(takenCount, 999u);
  // call / imul / ret: a direct call (pushes the return address), the multiply class, a return to after the call.
  const Instr& call = t[kCall];
  EXPECT_EQ(call.branch, BranchKind::DirectCall);
  EXPECT_EQ(call.target, t[kCall + 1].pc);
  EXPECT_TRUE(call.stores[0].valid());
  EXPECT_EQ(t[kCall + 1].op, OpClass::IMul);
  EXPECT_EQ(t[kCall + 2].branch, BranchKind::Return);
  EXPECT_EQ(t[kCall + 2].target, call.pc + 5);  // call rel32 is 5 bytes
  EXPECT_EQ(t[kCall + 3].pc, call.pc + 5);
  // rep movsb: 1-byte load and store per iteration.
  EXPECT_EQ(t[kCall + 6].loads[0], (MemRef{buf, 1}));
  EXPECT_EQ(t[kCall + 6].stores[0], (MemRef{buf + 64, 1}));
  EXPECT_EQ(t[kCall + 7].loads[0], (MemRef{buf + 1, 1}));
}

TEST_F(Tracer, SkipAndMaxInstructions) {
  const auto full = record("full", {});
  RecordOptions o;
  o.skip = 4;
  o.maxInstructions = 10;
  const auto part = record("part", o);
  ASSERT_EQ(part.size(), 10u);
  for (std::size_t i = 0; i < part.size(); ++i) EXPECT_EQ(part[i], full[4 + i]) << i;
}

TEST_F(Tracer, NativeTextRoundTripIsLossless) {
  const auto t = record("roundtrip", {});
  std::ostringstream text;
  TextTraceWriter writer(text);
  for (const Instr& in : t) writer.write(in);
  writer.close();
  EXPECT_EQ(parseTextTrace(text.str()), t);
}

TEST_F(Tracer, ThreadsOfOneProcess) {
  const fs::path bin = scratchDir() / "msgpass";
  const std::string cc = "cc -O2 -static -pthread -o " + bin.string() + " " SMTLAB_SOURCE_DIR
                         "/workloads/kernels/msgpass.c >/dev/null 2>&1";
  if (std::system(cc.c_str()) != 0) GTEST_SKIP() << "cannot build msgpass.c statically";
  RecordOptions o;
  o.outPrefix = (scratchDir() / "mp").string();
  o.command = {bin.string(), "2000"};
  o.quiet = true;
  const RecordResult r = recordProgram(o);
  ASSERT_EQ(r.threads.size(), 2u);
  EXPECT_GT(r.threads[0].instructions, 2000u * 4);  // every message is at least a store, a load and a loop
  EXPECT_GT(r.threads[1].instructions, 2000u * 4);
  std::ifstream manifest(r.manifest);
  std::string json((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"asid\":" + std::to_string(r.asid)), std::string::npos) << json;
  EXPECT_NE(json.find("mp.t1.trace"), std::string::npos) << json;
}

// A program's initial stack holds the environment and the path it was started by, and static glibc's start-up reads
// its absolute path (/proc/self/exe) into the stack and copies its folder to the heap. So the same static program
// (workloads/user/chat.c, as the kernel: cache builds it) recorded from a longer folder with a longer environment
// loads from other addresses, unless the environment is fixed: then the two traces are identical.
TEST_F(Tracer, FixedEnvironmentMakesTheTraceIndependentOfPathAndEnvironment) {
  const fs::path shortDir = scratchDir() / "s";
  const fs::path longDir = scratchDir() / "a-much-longer-folder-name-for-the-same-program";
  fs::create_directories(shortDir);
  fs::create_directories(longDir);
  const std::string cc = "cc -O2 -march=x86-64 -mtune=generic -static -o " + (shortDir / "chat").string() +
                         " " SMTLAB_SOURCE_DIR "/workloads/user/chat.c -lm >/dev/null 2>&1";
  if (std::system(cc.c_str()) != 0) GTEST_SKIP() << "cannot build workloads/user/chat.c statically";
  fs::copy_file(shortDir / "chat", longDir / "chat", fs::copy_options::overwrite_existing);
  for (const bool fixed : {false, true}) {
    RecordOptions o;
    o.fixedEnvironment = fixed;
    o.command = {(shortDir / "chat").string(), "client_send", "20"};
    const auto a = record(fixed ? "fa" : "na", o);
    ::setenv("SMTLAB_TRACER_TEST_PAD", std::string(200, 'x').c_str(), 1);
    o.command[0] = (longDir / "chat").string();
    const auto b = record(fixed ? "fb" : "nb", o);
    ::unsetenv("SMTLAB_TRACER_TEST_PAD");
    ASSERT_GT(a.size(), 1000u);
    if (fixed) {
      EXPECT_TRUE(a == b) << a.size() << " and " << b.size() << " records";
    } else {
      EXPECT_FALSE(a == b);
    }
  }
}

TEST_F(Tracer, KernelIsTracedOnceIntoTheCache) {
  ::setenv("SMTLAB_KERNEL_CACHE", (scratchDir() / "kernels").c_str(), 1);
  auto src = openTrace("kernel:aim9_call0");
  const auto t = readAll(*src);
  // aim9 call0 runs 200000 calls of f0; static glibc start-up and exit add a few hundred more.
  std::size_t calls = 0;
  for (const Instr& in : t) calls += in.branch == BranchKind::DirectCall;
  EXPECT_GE(calls, 200000u);
  EXPECT_LT(calls, 202000u);
  EXPECT_TRUE(fs::exists(scratchDir() / "kernels" / "aim9_call0.trace"));
  ::unsetenv("SMTLAB_KERNEL_CACHE");
}

TEST_F(Tracer, FillingTheKernelCacheKeepsTheProgramsOutputOutOfSmtlabsOwn) {
  // chase.c prints its result (so that the compiler keeps the loop). If the traced program shared smtlab's stdout,
  // `smtlab trace head kernel:chase > f` on an empty cache would put that line into f, which would then be no text
  // trace. Captured at the file-descriptor level, where the traced program writes.
  ::setenv("SMTLAB_KERNEL_CACHE", (scratchDir() / "kernels-stdout").c_str(), 1);
  std::size_t records = 0;
  ::testing::internal::CaptureStdout();
  try {
    auto src = openTrace("kernel:chase");
    records = readAll(*src).size();
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    ::unsetenv("SMTLAB_KERNEL_CACHE");
    throw;
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  ::unsetenv("SMTLAB_KERNEL_CACHE");
  EXPECT_GT(records, 0u);
  EXPECT_EQ(out, "") << "the traced program's output reached smtlab's stdout";
  EXPECT_TRUE(fs::exists(scratchDir() / "kernels-stdout" / "chase.trace"));
}

TEST_F(Tracer, AKernelWithASetupIsTracedFromItsMarker) {
  // chains.c shuffles and links 65,536 lines (two divides per line) before its pause; kernel:chains is the walk after
  // it: 4 chains x 250,000 steps, each step one load of a line (at least 1,000,000 loads; at most one more per step
  // for the chain's pointer, kept in memory, and a few thousand of printf and exit), no divide, no pause.
  ::setenv("SMTLAB_KERNEL_CACHE", (scratchDir() / "kernels-marker").c_str(), 1);
  std::vector<Instr> records;
  try {
    records = readAll(*openTrace("kernel:chains"));
  } catch (...) {
    ::unsetenv("SMTLAB_KERNEL_CACHE");
    throw;
  }
  ::unsetenv("SMTLAB_KERNEL_CACHE");
  std::size_t loads = 0, divides = 0, pauses = 0;
  for (const Instr& in : records) {
    loads += in.op == OpClass::Load;
    divides += in.op == OpClass::IDiv;
    pauses += in.op == OpClass::Pause;
  }
  EXPECT_GE(loads, 1000000u);
  EXPECT_LT(loads, 2010000u);
  EXPECT_EQ(divides, 0u);
  EXPECT_EQ(pauses, 0u);
}

TEST(TracerFallback, KernelWithoutTracerIsTheLookAlike) {
  ::setenv("SMTLAB_QEMU", "/nonexistent/qemu-x86_64", 1);
  ::setenv("SMTLAB_KERNEL_CACHE", "/nonexistent/smtlab-kernel-cache", 1);
  ::setenv("SMTLAB_QUIET_FALLBACK", "1", 1);
  ASSERT_TRUE(tracerUnavailableReason().has_value());
  auto src = openTrace("kernel:chase");
  EXPECT_EQ(src->describe().rfind("gen:chase", 0), 0u) << src->describe();
  EXPECT_THROW(openTrace("kernel:nosuch"), TraceError);
  ::unsetenv("SMTLAB_QEMU");
  ::unsetenv("SMTLAB_KERNEL_CACHE");
  ::unsetenv("SMTLAB_QUIET_FALLBACK");
}

}  // namespace
}  // namespace smtlab
