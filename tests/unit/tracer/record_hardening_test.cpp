// `smtlab trace record` hardening: a program that crashes keeps what it executed and says by
// which signal; a cap stops an endless program and says so; the disk reserve and the raw budget stop a recording that
// would fill the disk; SIGINT/SIGTERM kill QEMU and remove every file; a directory, a non-ELF file, a file without
// x permission or an ELF QEMU cannot load is one clear error and no file; fork is traced as the parent only;
// `trace record --help` works. Test programs are tiny assembly or C files built here with cc; the expected record
// counts are counted on paper from their text. Skipped (with the reason) when the tracer or cc is missing.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/raw_trace.hpp"
#include "smtlab/tracer/recorder.hpp"

extern char** environ;

namespace smtlab {
namespace {
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class RecordHardening : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = tracerUnavailableReason()) GTEST_SKIP() << "tracer unavailable: " << *why;
    dir_ = fs::temp_directory_path() / ("smtlab-record-hardening-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Builds a program from source text (".S": no libc, every instruction is in the text; ".c": with libc).
  std::string build(const std::string& name, const std::string& ext, const std::string& text) {
    const fs::path src = dir_ / "bin" / (name + ext), bin = dir_ / "bin" / name;
    std::ofstream(src) << text;
    const std::string flags = ext == ".S" ? "-nostdlib -static" : "-O1 -static";
    const std::string cmd = "cc " + flags + " -o " + bin.string() + " " + src.string() + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return {};
    return bin.string();
  }

  std::string outPrefix(const std::string& name = "t") const { return (dir_ / "out" / name).string(); }
  std::vector<std::string> outFiles() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  RecordResult record(const std::vector<std::string>& command, RecordOptions o = {}) {
    o.outPrefix = outPrefix();
    o.command = command;
    o.quiet = true;
    return recordProgram(o);
  }
  static boost::json::object manifest(const RecordResult& r) {
    return boost::json::parse(slurp(r.manifest)).as_object();
  }

  struct Run {
    int status = -1;
    std::string err;
  };
  // Starts the smtlab program (no shell); `whileRunning` gets its pid before it is waited for.
  Run runSmtlab(std::vector<std::string> args, const std::function<void(pid_t)>& whileRunning = {}) {
    const std::string errPath = (dir_ / "stderr").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    args.insert(args.begin(), SMTLAB_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    Run r;
    const int spawned = ::posix_spawn(&pid, SMTLAB_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) {
      ADD_FAILURE() << "cannot start " << SMTLAB_BINARY;
      return r;
    }
    if (whileRunning) whileRunning(pid);
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = slurp(errPath);
    return r;
  }

  fs::path dir_;
};

// 1 + 2 x 1000 instructions, then a load from address 0 as the first instruction of the next block: SIGSEGV.
constexpr const char* kSegfaultAsm = R"(
        .globl _start
        .text
_start: mov     $1000, %ecx
loop:   dec     %ecx
        jnz     loop
        mov     0, %rax
        mov     $60, %eax
        xor     %edi, %edi
        syscall
)";
constexpr std::uint64_t kSegfaultRecords = 1 + 2 * 1000;

TEST_F(RecordHardening, SegfaultKeepsEverythingExecutedAndNamesTheSignal) {
  const std::string bin = build("segv", ".S", kSegfaultAsm);
  if (bin.empty()) GTEST_SKIP() << "no cc";
  const RecordResult r = record({bin});
  EXPECT_EQ(r.end, RecordEnd::Signal);
  EXPECT_EQ(r.signal, SIGSEGV);
  ASSERT_EQ(r.threads.size(), 1u);
  // Every instruction before the faulting load and nothing more (the faulting block is left out, and it starts with
  // the faulting load).
  EXPECT_EQ(r.threads[0].instructions, kSegfaultRecords);
  NativeTraceReader reader(r.threads[0].path);
  EXPECT_EQ(readAll(reader).size(), kSegfaultRecords);
  const auto m = manifest(r);
  EXPECT_EQ(m.at("end").as_string(), "signal");
  EXPECT_EQ(m.at("signal").as_string(), "SIGSEGV");
  EXPECT_EQ(m.at("exit_status").as_int64(), 128 + SIGSEGV);
  EXPECT_EQ(outFiles(), (std::vector<std::string>{"t.json", "t.trace"}));
}

TEST_F(RecordHardening, AbortKeepsTheRecordsAndTheCliWarnsWithStatusZero) {
  // 100000 iterations of a loop with a volatile store; then abort() in libc.
  const std::string bin = build("abrt", ".c", R"(
#include <stdlib.h>
volatile long sink;
int main(void) { for (long i = 0; i < 100000; ++i) sink = i; abort(); }
)");
  if (bin.empty()) GTEST_SKIP() << "no cc with static libc";
  const Run run = runSmtlab({"trace", "record", "-o", outPrefix(), "--", bin});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("killed by SIGABRT (signal 6)"), std::string::npos) << run.err;
  const auto m = boost::json::parse(slurp(outPrefix() + ".json")).as_object();
  EXPECT_EQ(m.at("end").as_string(), "signal");
  EXPECT_EQ(m.at("signal").as_string(), "SIGABRT");
  const auto n = m.at("threads").as_array().at(0).as_object().at("instructions").as_int64();
  EXPECT_GT(n, 3 * 100000);  // each iteration is at least a store, an increment and a compare-and-branch
  EXPECT_LT(n, 3 * 100000 + 1000000);  // start-up and abort() are well under a million
}

// An endless loop of 2-instruction blocks.
constexpr const char* kEndlessAsm = R"(
        .globl _start
        .text
_start: xor     %eax, %eax
loop:   inc     %rax
        jmp     loop
)";

TEST_F(RecordHardening, CapStopsAnEndlessProgramAndSaysSoInTheManifest) {
  const std::string bin = build("endless", ".S", kEndlessAsm);
  if (bin.empty()) GTEST_SKIP() << "no cc";
  RecordOptions o;
  o.maxInstructions = 100001;
  const RecordResult r = record({bin}, o);
  EXPECT_EQ(r.end, RecordEnd::MaxInstructions);
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0].instructions, 100001u);
  const auto m = manifest(r);
  EXPECT_EQ(m.at("end").as_string(), "max_instructions");
  EXPECT_TRUE(m.at("exit_status").is_null());
  EXPECT_EQ(outFiles(), (std::vector<std::string>{"t.json", "t.trace"}));
}

TEST_F(RecordHardening, DefaultCapIsTheDocumentedOne) {
  EXPECT_EQ(RecordOptions{}.maxInstructions, 200'000'000u);  // docs/tracing.md and `trace record --help`
  const Run run = runSmtlab({"trace", "record", "--help"});
  EXPECT_EQ(run.status, 0) << run.err;
}

TEST_F(RecordHardening, CliSaysTheCapStoppedTheRecording) {
  const std::string bin = build("endless", ".S", kEndlessAsm);
  if (bin.empty()) GTEST_SKIP() << "no cc";
  const Run run = runSmtlab({"trace", "record", "-q", "-n", "5k", "-o", outPrefix(), "--", bin});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("stopped the program at the cap of 5000 instructions"), std::string::npos) << run.err;
}

TEST_F(RecordHardening, RawBudgetStopsAnUncappedEndlessProgramAndRemovesEverything) {
  const std::string bin = build("endless", ".S", kEndlessAsm);
  if (bin.empty()) GTEST_SKIP() << "no cc";
  RecordOptions o;
  o.maxInstructions = 0;
  o.maxRawBytes = 8 << 20;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    record({bin}, o);
    ADD_FAILURE() << "an endless uncapped recording returned";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("budget is 8 MB"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_TRUE(outFiles().empty());
}

TEST_F(RecordHardening, TooLittleFreeDiskIsRefusedBeforeQemuStarts) {
  RecordOptions o;
  o.minFreeBytes = std::uint64_t{1} << 62;  // 4 EB: no disk has that much free
  try {
    record({"/bin/true"}, o);
    ADD_FAILURE() << "recorded with too little disk";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("free on the file system of"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(outFiles().empty());
}

// Waits (at most 20 s) until QEMU has started writing, then sends `sig` to smtlab alone.
void signalWhenRecording(pid_t pid, const std::string& rawT0, int sig) {
  for (int i = 0; i < 2000 && !fs::exists(rawT0); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(pid, sig);
}

TEST_F(RecordHardening, SigintAndSigtermKillQemuAndRemoveEveryFile) {
  // A program that ignores SIGINT and SIGTERM (as the one that filled a disk) and sleeps forever.
  const std::string bin = build("stubborn", ".c", R"(
#include <signal.h>
#include <unistd.h>
int main(void) { signal(SIGINT, SIG_IGN); signal(SIGTERM, SIG_IGN); for (;;) sleep(1); }
)");
  if (bin.empty()) GTEST_SKIP() << "no cc with static libc";
  for (int sig : {SIGINT, SIGTERM}) {
    const auto t0 = std::chrono::steady_clock::now();
    const Run run = runSmtlab({"trace", "record", "-o", outPrefix(), "--", bin},
                              [&](pid_t pid) { signalWhenRecording(pid, outPrefix() + ".raw.t0.raw", sig); });
    EXPECT_EQ(run.status, 128 + sig) << run.err;
    EXPECT_NE(run.err.find("interrupted by " + signalName(sig)), std::string::npos) << run.err;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(25));
    EXPECT_TRUE(outFiles().empty()) << fmt::format("{}", fmt::join(outFiles(), " "));
  }
  // QEMU is gone: no process still runs the program.
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string cmdline = slurp(e.path() / "cmdline");
    EXPECT_EQ(cmdline.find(bin), std::string::npos) << "process " << e.path().filename() << " survived: " << cmdline;
  }
}

void expectRefused(const std::function<void()>& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << fragment << "'";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(RecordHardening, ProgramsQemuCannotRunAreOneClearErrorAndNoFile) {
  const fs::path text = dir_ / "bin" / "notes.txt";
  std::ofstream(text) << "just text, no #! line\n";
  fs::permissions(text, fs::perms::owner_all);
  const fs::path plain = dir_ / "bin" / "plain.sh";
  std::ofstream(plain) << "#!/bin/sh\nexit 0\n";  // no x permission
  fs::permissions(plain, fs::perms::owner_read | fs::perms::owner_write);
  // An ELF header for i386 (e_machine 3) and one for x86-64 that QEMU cannot load (nothing after the ident).
  std::string i386(64, '\0'), broken(64, '\0');
  for (std::string* s : {&i386, &broken}) s->replace(0, 4, "\x7f" "ELF");
  i386[4] = 1;
  i386[18] = 3;
  broken[4] = 2;
  broken[18] = 62;
  const fs::path i386Path = dir_ / "bin" / "i386", brokenPath = dir_ / "bin" / "broken";
  std::ofstream(i386Path, std::ios::binary) << i386;
  std::ofstream(brokenPath, std::ios::binary) << broken;
  fs::permissions(i386Path, fs::perms::owner_all);
  fs::permissions(brokenPath, fs::perms::owner_all);

  expectRefused([&] { record({(dir_ / "bin").string()}); }, "is a directory, not a program");
  expectRefused([&] { record({text.string()}); }, "is neither an ELF program nor a script starting with #!");
  expectRefused([&] { record({plain.string()}); }, "is not executable");
  expectRefused([&] { record({i386Path.string()}); }, "32-bit ELF program for i386");
  expectRefused([&] { record({"no-such-program-smtlab"}); }, "not found");
  // QEMU itself refuses it: its message is shown (inherited stderr) and the recording fails, nothing written.
  expectRefused([&] { record({brokenPath.string()}); }, "no instruction of");
  EXPECT_TRUE(outFiles().empty());

  // Through the CLI: status 1, one message naming the file.
  const Run run = runSmtlab({"trace", "record", "-o", outPrefix(), "--", text.string()});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.err.find(text.string()), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("wrote"), std::string::npos) << run.err;
}

TEST_F(RecordHardening, OutputsThatWouldReplaceWhatTheCommandUsesAreRefused) {
  // Unchecked, `-o prog -- ./prog.trace` would replace the program with its own trace, and `-o data -- cat data.trace`
  // the file the program reads. Every name the recording writes or removes is checked against the program and its
  // arguments; the inputs stay as they were.
  auto refused = [&](const std::vector<std::string>& command, const std::string& victim) {
    const std::string before = slurp(victim);
    try {
      record(command);
      ADD_FAILURE() << "no error for " << victim;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("would replace"), std::string::npos) << what;
      EXPECT_NE(what.find(victim), std::string::npos) << what;
    }
    EXPECT_EQ(slurp(victim), before) << victim;
  };
  const std::string prog = outPrefix() + ".trace";  // the program itself under the trace's name
  fs::copy_file("/bin/true", prog);
  refused({prog}, prog);
  for (const char* suffix : {".json", ".t1.trace", ".raw.blocks", ".raw.t0.raw"}) {
    const std::string data = outPrefix() + suffix;
    std::ofstream(data) << "precious\n";
    refused({"/bin/cat", data}, data);
  }
  // A neighbour that the recording does not write is an input like any other: recorded, and left alone.
  const std::string neighbour = outPrefix() + ".txt";
  std::ofstream(neighbour) << "read me\n";
  RecordOptions o;
  o.maxInstructions = 1000;
  EXPECT_GT(record({"/bin/cat", neighbour}, o).threads.at(0).instructions, 0u);
  EXPECT_EQ(slurp(neighbour), "read me\n");
}

TEST_F(RecordHardening, NoInstructionRecordedIsAnErrorNotAnEmptySuccess) {
  const std::string bin = build("segv", ".S", kSegfaultAsm);
  if (bin.empty()) GTEST_SKIP() << "no cc";
  RecordOptions o;
  o.skip = 1'000'000;  // the program runs 2002 instructions
  expectRefused([&] { record({bin}, o); }, "no instruction of");
  EXPECT_TRUE(outFiles().empty());
}

TEST_F(RecordHardening, ScriptWithShebangRunsItsInterpreter) {
  const fs::path script = dir_ / "bin" / "script";
  std::ofstream(script) << "#!/bin/sh\nexit 3\n";
  fs::permissions(script, fs::perms::owner_all);
  const RecordResult r = record({script.string()});
  EXPECT_EQ(r.end, RecordEnd::Exit);
  EXPECT_EQ(r.exitStatus, 3);  // the script's own status: the shell ran it
  EXPECT_GT(r.instructions(), 10000u);  // a dynamic /bin/sh start-up alone is far more
}

// fork (syscall 57); the parent: 1000 iterations of store + dec + jnz, then exit; the child: 100000 iterations of
// the same, then exit. Parent records: mov, syscall, test, jz (not taken) = 4; mov $1000 = 1; 3 x 1000; mov, xor,
// syscall = 3. Total 3008. The child's instructions must not appear in it.
constexpr const char* kForkAsm = R"(
        .globl _start
        .text
_start: mov     $57, %eax
        syscall
        test    %eax, %eax
        jz      child
        mov     $1000, %ecx
ploop:  mov     %rcx, buf(%rip)
        dec     %ecx
        jnz     ploop
        mov     $60, %eax
        xor     %edi, %edi
        syscall
child:  mov     $100000, %ecx
cloop:  mov     %rcx, buf+8(%rip)
        dec     %ecx
        jnz     cloop
        mov     $60, %eax
        xor     %edi, %edi
        syscall
        .bss
buf:    .zero   16
)";

TEST_F(RecordHardening, ForkTracesTheParentOnlyAndLeavesNoPartialFile) {
  const std::string bin = build("forker", ".S", kForkAsm);
  if (bin.empty()) GTEST_SKIP() << "no cc";
  const RecordResult r = record({bin});
  EXPECT_EQ(r.end, RecordEnd::Exit);
  ASSERT_EQ(r.threads.size(), 1u);
  EXPECT_EQ(r.threads[0].instructions, 3008u);
  EXPECT_EQ(r.untracedChildren, 1u);
  EXPECT_EQ(manifest(r).at("untraced_child_processes").as_int64(), 1);
  // Every store in the trace is the parent's (buf); none of the child's (buf + 8).
  NativeTraceReader reader(r.threads[0].path);
  const auto t = readAll(reader);
  Addr buf = 0;
  std::size_t stores = 0;
  for (const Instr& in : t) {
    if (!in.stores[0].valid()) continue;
    if (!buf) buf = in.stores[0].addr;
    EXPECT_EQ(in.stores[0].addr, buf);
    ++stores;
  }
  EXPECT_EQ(stores, 1000u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the untraced child may still be running
  EXPECT_EQ(outFiles(), (std::vector<std::string>{"t.json", "t.trace"}));
}

TEST_F(RecordHardening, HelpPrintsTheUsageAndExitsZero) {
  const std::string out = (dir_ / "help.txt").string();
  const std::string cmd = std::string(SMTLAB_BINARY) + " trace record --help >" + out + " 2>&1";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string text = slurp(out);
  EXPECT_NE(text.find("usage: smtlab trace record"), std::string::npos) << text;
  EXPECT_NE(text.find("--max-instructions N"), std::string::npos) << text;
  EXPECT_NE(text.find("default 200000000"), std::string::npos) << text;
}

// The decoder side, on hand-made files (no QEMU): a version-2 stream written through a shared mapping by a process
// that died ends in the zero-filled rest of its window; the first zero word ends it (block ids start at 1). And a
// thread cut off by a signal loses its last block, which is not known to have run past its first instruction.
class RawStreamEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!x86DecoderAvailable()) GTEST_SKIP() << "built without capstone";
    dir_ = fs::temp_directory_path() / ("smtlab-raw-end-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Block 1 at 0x1000: inc %rax (48 ff c0); jnz 0x1000 (75 f9).
    std::string b("SMTLBLK\1", 8);
    put(b, 1, 4).append(std::string(reinterpret_cast<const char*>(&kPc), 8));
    put(b, 2, 4);
    b += std::string("\x03\x48\xff\xc0\x02\x75\xf9", 7);
    std::ofstream(dir_ / "x.blocks", std::ios::binary) << b;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string& put(std::string& s, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
    return s;
  }
  // `executions` times block 1, then `zeros` zero bytes.
  std::size_t decode(std::string_view magic, int executions, std::size_t zeros, bool dropLastBlock = false) {
    std::string r(magic);
    for (int k = 0; k < executions; ++k) put(r, 1u << 1, 4);
    r.append(zeros, '\0');
    std::ofstream(dir_ / "x.t0.raw", std::ios::binary) << r;
    RawDecodeOptions o;
    o.dropLastBlock = dropLastBlock;
    RawTraceSource src(std::make_shared<const RawBlockTable>((dir_ / "x.blocks").string()),
                       (dir_ / "x.t0.raw").string(), o);
    return readAll(src).size();
  }
  static constexpr std::uint64_t kPc = 0x1000;
  fs::path dir_;
};

TEST_F(RawStreamEnd, ZeroTailEndsAVersion2Stream) {
  EXPECT_EQ(decode({"SMTLRAW\2", 8}, 3, 4096), 6u);  // 3 blocks of 2 instructions
  EXPECT_EQ(decode({"SMTLRAW\2", 8}, 3, 0), 6u);     // a finalized file has no tail
  // Version 1 has a block 0: zeros there are executions of an undefined block 0, an error.
  EXPECT_THROW(decode({"SMTLRAW\1", 8}, 3, 4096), TraceError);
}

TEST_F(RawStreamEnd, DropLastBlockLeavesOutTheBlockAThreadWasKilledIn) {
  EXPECT_EQ(decode({"SMTLRAW\2", 8}, 3, 4096, true), 4u);
  EXPECT_EQ(decode({"SMTLRAW\2", 8}, 1, 0, true), 0u);
}

}  // namespace
}  // namespace smtlab
