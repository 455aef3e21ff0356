// The tracer's decoder fills Instr::uops and Instr::microcoded from the instruction form capstone gives.
// Expected values are copied from the reference table, not from the code: uops.info's Broadwell measurements (the
// "uops" column, fused / unfused domain; the record carries the unfused count) and the MSROM rule of Intel's
// optimization manual (more than 4 fused-domain uops: microcoded). docs/tracing.md, "Uops per instruction".
// The recorded programs (snippet.S, uop_divide_loop.S) have their totals derived from their assembly text.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include <fstream>

#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/raw_trace.hpp"
#include "smtlab/tracer/recorder.hpp"
#include "smtlab/tracer/system_trace.hpp"
#include "smtlab/tracer/x86_decoder.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

struct Form {
  const char* what;  // the uops.info row the expectation comes from
  std::vector<std::uint8_t> bytes;
  int uops;
  bool microcoded;
};

// Hand-assembled bytes (Intel SDM encodings) of each form, with the row's unfused count.
const std::vector<Form>& forms() {
  static const std::vector<Form> f = {
      {"ADD (R64, R64) 1/1: add rax, rbx", {0x48, 0x01, 0xd8}, 1, false},
      {"MOV (R64, M64) 1/1: mov rax, [rbx]", {0x48, 0x8b, 0x03}, 1, false},
      {"ADD (R64, M64) 1/2: add rax, [rbx] (load-op)", {0x48, 0x03, 0x03}, 2, false},
      {"CMP (R64, M64) 1/2: cmp rax, [rbx]", {0x48, 0x3b, 0x03}, 2, false},
      {"MOV (M64, R64) 1/2: mov [rbx], rax (store-address + store-data)", {0x48, 0x89, 0x03}, 2, false},
      {"MOV (M64, I32) 1/2: mov qword [rbx], 1", {0x48, 0xc7, 0x03, 0x01, 0x00, 0x00, 0x00}, 2, false},
      {"ADD (M64, R64) 2/4: add [rbx], rax (read-modify-write)", {0x48, 0x01, 0x03}, 4, false},
      {"INC (M64) 3/4: inc qword [rax]", {0x48, 0xff, 0x00}, 4, false},
      {"PUSH (R64) 1/2: push rax", {0x50}, 2, false},
      {"POP (R64) 1/1: pop rax", {0x58}, 1, false},
      {"PUSH (M64) 2/3: push qword [rax]", {0xff, 0x30}, 3, false},
      {"POP (M64) 2/3: pop qword [rax]", {0x8f, 0x00}, 3, false},
      {"CALL_NEAR (Rel32) 2/3: call rel32", {0xe8, 0x00, 0x00, 0x00, 0x00}, 3, false},
      {"CALL_NEAR (R64) 2/3: call rax", {0xff, 0xd0}, 3, false},
      {"CALL_NEAR (M64) 3/4: call [rax]", {0xff, 0x10}, 4, false},
      {"JMP (M64) 1/2: jmp [rax]", {0xff, 0x20}, 2, false},
      {"JNZ (Rel8) 1/1: jne +0", {0x75, 0x00}, 1, false},
      // RET_NEAR: uops.info's fused count is 2; its port column (22) is an artefact of the measurement loop's
      // mispredicted returns. The unfused count is a load (p23) and the branch (p6): 2.
      {"RET_NEAR 2: ret", {0xc3}, 2, false},
      {"IMUL (R64, R64) 1/1: imul rax, rbx", {0x48, 0x0f, 0xaf, 0xc3}, 1, false},
      {"MUL (R64) 2/2: mul rcx", {0x48, 0xf7, 0xe1}, 2, false},
      {"LEA_B_D8 (R64) 1/1: lea rax, [rbx+8] (no memory access)", {0x48, 0x8d, 0x43, 0x08}, 1, false},
      {"CMOVNZ (R64, M64) 1/2: cmovne rax, [rbx]", {0x48, 0x0f, 0x45, 0x03}, 2, false},
      {"MOVZX (R32, M8) 1/1: movzx eax, byte [rbx]", {0x0f, 0xb6, 0x03}, 1, false},
      {"MOVDQU (XMM, M128) 1/1: movdqu xmm0, [rsi]", {0xf3, 0x0f, 0x6f, 0x06}, 1, false},
      {"ADDPS (XMM, M128) 1/2: addps xmm0, [rax]", {0x0f, 0x58, 0x00}, 2, false},
      {"MOVUPS (M128, XMM) 1/2: movups [rax], xmm0", {0x0f, 0x11, 0x00}, 2, false},
      {"MOVSD_XMM (XMM, M64) 1/1: movsd xmm0, [rax] (SSE2, not the string op)", {0xf2, 0x0f, 0x10, 0x00}, 1, false},
      {"LEAVE 3/3: leave", {0xc9}, 3, false},
      {"NOP (M32) 1/0: nop dword [rax] (one slot, no port)", {0x0f, 0x1f, 0x00}, 1, false},
      {"STOSQ 3/3: stosq (no rep: 3 fused, not microcoded)", {0x48, 0xab}, 3, false},
      // Microcoded: more than 4 fused-domain uops, or a rep string op.
      {"DIV (R32) 10/10: div ecx", {0xf7, 0xf1}, 10, true},
      {"DIV (R64) 36/32: div rcx", {0x48, 0xf7, 0xf1}, 32, true},
      {"DIV (M64) 36/32: div qword [rax]", {0x48, 0xf7, 0x30}, 32, true},
      {"IDIV (R32) 9/9: idiv ecx", {0xf7, 0xf9}, 9, true},
      {"IDIV (R64) 59/57: idiv rcx", {0x48, 0xf7, 0xf9}, 57, true},
      {"DIV (R8l) 9/9: div cl", {0xf6, 0xf1}, 9, true},
      {"CPUID 37/41: cpuid", {0x0f, 0xa2}, 41, true},
      {"RDTSC 13/13: rdtsc", {0x0f, 0x31}, 13, true},
      {"PAUSE 6/5: pause", {0xf3, 0x90}, 5, true},
      {"MOVSB 5/5: movsb (5 fused)", {0xa4}, 5, true},
      {"MOVSB 5/5 per iteration: rep movsb", {0xf3, 0xa4}, 5, true},
      {"STOSQ 3/3 per iteration: rep stosq (rep: microcoded)", {0xf3, 0x48, 0xab}, 3, true},
      {"XCHG (M64, R64) 8/7: xchg [rbx], rax", {0x48, 0x87, 0x03}, 7, true},
      {"ADD_LOCK (M64, R64) 8/7: lock add [rbx], rax", {0xf0, 0x48, 0x01, 0x03}, 7, true},
      {"CMPXCHG_LOCK (M64, R64) 10/9: lock cmpxchg [rbx], rcx", {0xf0, 0x48, 0x0f, 0xb1, 0x0b}, 9, true},
      {"XADD (M64, R64) 4/5: xadd [rbx], rax", {0x48, 0x0f, 0xc1, 0x03}, 5, false},
      {"CMPXCHG (R64, R64) 5/5: cmpxchg rbx, rcx", {0x48, 0x0f, 0xb1, 0xcb}, 5, true},
  };
  return f;
}

TEST(UopDecode, EachFormHasTheTablesCount) {
  if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
  X86Decoder decoder;
  for (const Form& f : forms()) {
    const X86Insn d = decoder.decode(0x401000, f.bytes);
    ASSERT_TRUE(d.valid) << f.what;
    EXPECT_EQ(d.length, f.bytes.size()) << f.what << " decoded as " << d.text;
    EXPECT_EQ(d.uops, f.uops) << f.what << " decoded as " << d.text;
    EXPECT_EQ(d.microcoded, f.microcoded) << f.what << " decoded as " << d.text;
  }
}

TEST(UopDecode, RecordsTakeTheDecodersUops) {
  if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
  X86Decoder decoder;
  const std::vector<std::uint8_t> div{0x48, 0xf7, 0xf1};
  Instr r;
  applyDecoded(decoder.decode(0x401000, div), r);
  EXPECT_EQ(r.uops, 32);
  EXPECT_TRUE(r.microcoded);
  // Bytes capstone cannot decode: the count is not known, and the record says "not recorded".
  const std::vector<std::uint8_t> prefixOnly{0xf0};  // a lock prefix and nothing after it
  const X86Insn invalid = decoder.decode(0x401000, prefixOnly);
  EXPECT_FALSE(invalid.valid);
  Instr u;
  applyDecoded(invalid, u);
  EXPECT_EQ(u.uops, 0);
  EXPECT_FALSE(u.microcoded);
}

// --- system mode -------------------------------------------------------------------------------------------------

// The full-system splitter builds its records through the same decoder: a hand-made plugin output (the layout of
// system_trace_test.cpp, docs/tracing.md "Raw stream") with a user divide, a system call, kernel rdtsc and a store.
TEST(UopDecode, SystemModeRecordsCarryUops) {
  if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
  const fs::path dir = fs::temp_directory_path() / ("smtlab-uop-system-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string blocks("SMTLBLK\1", 8), stream("SMTLSYS\1", 8);
  auto put = [](std::string& b, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
  };
  auto block = [&](std::uint32_t id, std::uint64_t pc, std::vector<std::vector<std::uint8_t>> insns) {
    put(blocks, id, 4);
    put(blocks, pc, 8);
    put(blocks, insns.size(), 4);
    for (const auto& in : insns) {
      put(blocks, in.size(), 1);
      for (std::uint8_t b : in) put(blocks, b, 1);
    }
  };
  auto marker = [](std::uint16_t payload) {  // nopl 0x534dXXXX(%rax)
    return std::vector<std::uint8_t>{0x0f, 0x1f, 0x80, static_cast<std::uint8_t>(payload),
                                     static_cast<std::uint8_t>(payload >> 8), 0x4d, 0x53};
  };
  block(0, 0x401000, {marker(5), {0x48, 0xf7, 0xf1}, {0x0f, 0x05}});                // div rcx; syscall
  block(1, 0xffffffff81000000ull, {{0x0f, 0x31}, {0x48, 0x89, 0x04, 0x24}, {0x48, 0x0f, 0x07}});  // rdtsc; store; sysret
  block(2, 0x40100c, {{0x90}, marker(0x8005), {0xc3}});                              // nop; end marker; ret
  auto mark = [&](std::uint32_t payload, std::uint32_t blockId, std::uint32_t index) {
    put(stream, 0x80000003u, 4);
    put(stream, payload, 4);
    put(stream, blockId, 4);
    put(stream, index, 4);
  };
  mark(5, 0, 0);
  put(stream, 1u << 1 | 0x80000000u, 4);                      // kernel block 1
  put(stream, 1u | 3u << 1 | 8u | 1u << 4, 4);                // its instruction 1 stores 8 bytes
  put(stream, 0xffffc90000001000ull, 8);
  put(stream, 2u << 1, 4);                                    // user block 2
  mark(0x8005, 2, 1);
  std::ofstream(dir / "x.blocks", std::ios::binary) << blocks;
  std::ofstream(dir / "x.cpu0.raw", std::ios::binary) << stream;
  const RawBlockTable table((dir / "x.blocks").string());
  std::vector<SystemRegion> regions;
  splitSystemStream(table, (dir / "x.cpu0.raw").string(), [&](SystemRegion&& r) { regions.push_back(std::move(r)); });
  std::error_code ec;
  fs::remove_all(dir, ec);
  ASSERT_EQ(regions.size(), 1u);
  const std::vector<Instr>& in = regions[0].instrs;
  // div rcx: DIV (R64) 32, microcoded; syscall and sysret: no row, the rule's 1; rdtsc: RDTSC 13, microcoded;
  // mov [rsp], rax: MOV (M64, R64) 2; nop: 1.
  ASSERT_EQ(in.size(), 6u);
  const int uops[] = {32, 1, 13, 2, 1, 1};
  const bool microcoded[] = {true, false, true, false, false, false};
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(in[i].uops, uops[i]) << "record " << i;
    EXPECT_EQ(in[i].microcoded, microcoded[i]) << "record " << i;
  }
}

// --- recorded programs ----------------------------------------------------------------------------------------------

fs::path uopScratchDir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("smtlab-uop-decode-test-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string assemble(const std::string& name) {
  const fs::path bin = uopScratchDir() / name;
  const std::string cmd = "cc -nostdlib -static -o " + bin.string() + " " SMTLAB_SOURCE_DIR "/tests/unit/tracer/" +
                          name + ".S >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0 ? bin.string() : std::string();
}

class UopRecord : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = tracerUnavailableReason()) GTEST_SKIP() << "tracer unavailable: " << *why;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(uopScratchDir(), ec);
  }
  struct Totals {
    std::size_t records = 0, microcoded = 0, uops = 0, unrecorded = 0;
  };
  Totals record(const std::string& program) {
    const std::string bin = assemble(program);
    if (bin.empty()) return {};
    RecordOptions o;
    o.outPrefix = (uopScratchDir() / program).string();
    o.quiet = true;
    o.command = {bin};
    const RecordResult r = recordProgram(o);
    NativeTraceReader reader(r.threads.at(0).path);
    Totals t;
    for (const Instr& in : readAll(reader)) {
      ++t.records;
      t.microcoded += in.microcoded;
      t.uops += in.uops;
      t.unrecorded += in.uops == 0;
    }
    return t;
  }
};

TEST_F(UopRecord, DivideLoopHasOneMicrocodedRecordPerDivide) {
  const Totals t = record("uop_divide_loop");
  if (t.records == 0) GTEST_SKIP() << "no C compiler (cc) to assemble uop_divide_loop.S";
  // uop_divide_loop.S: 2 set-up instructions, 100 iterations of 5, 3 to exit: 505 records. Uops: 2 + 100 * (1 + 1
  // + 10 + 1 + 1) + 3 = 1405; microcoded: the 100 divides.
  EXPECT_EQ(t.records, 505u);
  EXPECT_EQ(t.microcoded, 100u);
  EXPECT_EQ(t.uops, 1405u);
  EXPECT_EQ(t.unrecorded, 0u);
}

TEST_F(UopRecord, SnippetUopsFromItsAssembly) {
  const Totals t = record("snippet");
  if (t.records == 0) GTEST_SKIP() << "no C compiler (cc) to assemble snippet.S";
  // snippet.S (see tracer_test.cpp: 4019 records): set-up mov 1, xor 1, lea 1, movdqu load 1 = 4; the loop 1000 x
  // (add r,m 2 + mov m,r 2 + dec 1 + jnz 1) = 6000; call 3, imul 1, ret 2 = 6; lea 1, lea 1, mov 1 = 3; rep movsb 6
  // records (5 copies and the final rcx == 0 check) x 5 = 30, all microcoded; mov 1, xor 1, syscall 1 = 3.
  // 4 + 6000 + 6 + 3 + 30 + 3 = 6046.
  EXPECT_EQ(t.records, 4019u);
  EXPECT_EQ(t.microcoded, 6u);
  EXPECT_EQ(t.uops, 6046u);
  EXPECT_EQ(t.unrecorded, 0u);
}

}  // namespace
}  // namespace smtlab
