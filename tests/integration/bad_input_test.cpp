// The bad-input catalogue (docs/hardening.md): the smtlab program on broken traces of each format, broken configs
// and missing files. Every case must end with exit status 1 and exactly one message line on stderr that names the
// file and the line, record or key; never a crash, a hang or a page of text.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "program_output.hpp"
#include "smtlab/trace/native_format.hpp"

extern char** environ;

namespace smtlab {
namespace {

namespace fs = std::filesystem;

using test::nonEmptyLines;
using test::ProgramResult;
using test::slurp;

// The native header (docs/traces.md): magic, version, compression, record count; all little-endian.
std::string nativeHeader(std::uint32_t version = kNativeVersion, std::uint32_t compression = 0,
                         std::uint64_t count = kUnknownCount) {
  std::string h(kNativeMagic.begin(), kNativeMagic.end());
  for (int i = 0; i < 4; ++i) h += static_cast<char>(version >> (8 * i));
  for (int i = 0; i < 4; ++i) h += static_cast<char>(compression >> (8 * i));
  for (int i = 0; i < 8; ++i) h += static_cast<char>(count >> (8 * i));
  return h;
}

// Native records, uncompressed: 0x20 is an `int` whose pc is the predicted one, with nothing else (one byte);
// 0x60 0x01 R is the same with one source register R (0x60 = pc predicted + register part, mask 0x01 = src0).
const std::string kTwoRecords = "\x20\x20";
const std::string kBadRegisterRecord = std::string("\x60\x01\x80", 3);  // register id 128: ids stop at 127
const std::string kCutRecord = "\x60\x01";                              // the register byte is missing

class BadInput : public ::testing::Test {
 protected:
  // A fresh folder per test, removed with its contents afterwards. It is not named after the test: a parameterised
  // test's name "Case/param" would make two levels, of which only the inner one would be removed.
  void SetUp() override { dir_ = scratch_.path(); }

  // Writes a file in the test's folder and returns its full path.
  std::string file(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs the smtlab program with stdout and stderr captured in files (no shell, so no quoting).
  ProgramResult run(const std::vector<std::string>& args) const {
    const std::string outPath = path("stdout"), errPath = path("stderr");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv0{SMTLAB_BINARY};
    argv0.insert(argv0.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv0) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, SMTLAB_BINARY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ProgramResult r;
    if (spawned != 0) {
      ADD_FAILURE() << "cannot start " << SMTLAB_BINARY;
      return r;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(outPath);
    r.err = slurp(errPath);
    return r;
  }

  // `smtlab run` on one trace: the way a user meets a bad trace.
  ProgramResult runTrace(const std::string& trace) const {
    return run({"run", "-c", "netburst", trace, "-n", "100", "-q"});
  }

  test::ScratchDir scratch_{"bad-input"};
  fs::path dir_;
};

// Exit status 1 and exactly one line on stderr, of the program's form "smtlab CMD: error: ...", containing the file
// name and every fragment (the line/record/key and what is wrong).
void expectOneLineRunError(const ProgramResult& r, const std::string& name, const std::vector<std::string>& fragments) {
  EXPECT_EQ(r.status, 1) << "stderr: " << r.err;
  const std::vector<std::string> lines = nonEmptyLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr: " << r.err;
  const std::string& line = lines[0];
  EXPECT_EQ(line.rfind("smtlab ", 0), 0u) << line;
  EXPECT_NE(line.find(": error: "), std::string::npos) << line;
  EXPECT_NE(line.find(name), std::string::npos) << "the message does not name " << name << ": " << line;
  for (const std::string& f : fragments) {
    EXPECT_NE(line.find(f), std::string::npos) << "missing '" << f << "': " << line;
  }
  for (char c : line) EXPECT_TRUE(c == '\t' || static_cast<unsigned char>(c) >= 0x20) << "control byte in: " << line;
}

// --- Text traces: the bad line is the third, after a comment and a good record ---------------------------------------

struct TextCase {
  const char* label;
  const char* line;
  const char* expect;  // what the message must say after "t.txt:3: "
};

// ctest lists parameterised tests with their parameter printed; a label reads better than the struct's bytes.
void PrintTo(const TextCase& c, std::ostream* os) { *os << c.label; }

class BadTextTrace : public BadInput, public ::testing::WithParamInterface<TextCase> {};

TEST_P(BadTextTrace, NamesFileLineAndProblem) {
  const TextCase& c = GetParam();
  const std::string trace = file("t.txt", std::string("# a trace\n400000 nop\n") + c.line + "\n400008 nop\n");
  expectOneLineRunError(runTrace(trace), "t.txt:3: ", {c.expect});
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, BadTextTrace,
    ::testing::Values(TextCase{"unknown_op", "400004 frob dst=r1", "unknown op 'frob'"},
                      TextCase{"unknown_register", "400004 int dst=r64", "unknown register 'r64' in dst="},
                      TextCase{"register_leading_zero", "400004 int src=r01", "unknown register 'r01' in src="},
                      TextCase{"unknown_field", "400004 int color=red", "unknown field 'color=red'"},
                      TextCase{"bad_hex_pc", "4000g4 int", "bad hex pc '4000g4'"},
                      TextCase{"bad_hex_address", "400004 load ld=zz:8", "bad hex address 'zz' in ld="},
                      TextCase{"hex_too_long", "400004 load ld=10000000000000000", "bad hex address"},
                      TextCase{"duplicate_field", "400004 int dst=r1 dst=r2", "duplicate field 'dst'"},
                      TextCase{"duplicate_flag", "400004 br taken taken", "duplicate field 'taken'"},
                      TextCase{"too_many_registers", "400004 int src=r1,r2,r3,r4,r5", "too many src registers"},
                      TextCase{"bad_access_size", "400004 load ld=10:256", "bad access size '256'"},
                      TextCase{"value_on_flag", "400004 br taken=1", "'taken' is a flag"},
                      TextCase{"indirect_not_call", "400004 jmp indirect", "'indirect' applies only to call"},
                      TextCase{"bad_mark_id", "400004 mark id=4294967296", "bad mark id '4294967296'"},
                      TextCase{"missing_value", "400004 int dst=", "missing value for 'dst'"},
                      TextCase{"missing_op", "400004", "missing op after the pc"},
                      TextCase{"unknown_branch_kind", "400004 br kind=sideways", "unknown branch kind 'sideways'"},
                      TextCase{"binary_bytes", "400004 int\x01\x02", "binary byte 0x01 in column 11"}),
    [](const ::testing::TestParamInfo<TextCase>& info) { return std::string(info.param.label); });

TEST_F(BadInput, TruncatedTextTraceEndsMidField) {
  // A text trace cut short in the middle of its last line: the partial line is reported, not silently dropped.
  const std::string trace = file("cut.txt", "400000 nop\n400004 load dst=r1 ld=");
  expectOneLineRunError(runTrace(trace), "cut.txt:2: ", {"missing value for 'ld'"});
}

TEST_F(BadInput, EmptyTextTrace) {
  const std::string trace = file("empty.txt", "");
  expectOneLineRunError(runTrace(trace), "empty.txt", {"has no instructions"});
}

TEST_F(BadInput, EmptyTraceWithoutACountIsAnErrorToo) {
  // Without -n the run lasts until every trace ends; an empty one ends at once. That is an empty input, not a run of
  // zero instructions reported as success (exit 0 and a table of zeros).
  const std::string trace = file("empty.txt", "");
  expectOneLineRunError(run({"run", "-c", "netburst", trace, "-q"}), "empty.txt", {"has no instructions", "CPU 0"});
  const std::string comments = file("comments.txt", "# nothing but a comment\n");
  expectOneLineRunError(run({"run", "-c", "netburst", comments}), "comments.txt", {"has no instructions"});
}

TEST_F(BadInput, EmptyTraceBesideAGoodOneNamesItsCpu) {
  // The sibling's trace is fine; the empty one on CPU 1 still fails the run, with or without a count.
  const std::string trace = file("empty.txt", "");
  for (const std::vector<std::string>& count : {std::vector<std::string>{}, std::vector<std::string>{"-n", "50"}}) {
    std::vector<std::string> args{"run", "-c", "netburst", "gen:alu,count=100", trace, "-q"};
    args.insert(args.end(), count.begin(), count.end());
    expectOneLineRunError(run(args), "empty.txt", {"has no instructions", "CPU 1"});
  }
}

TEST_F(BadInput, CommentOnlyTextTraceIsEmpty) {
  const std::string trace = file("comments.txt", "# nothing but a comment\n\n");
  expectOneLineRunError(runTrace(trace), "comments.txt", {"has no instructions"});
}

// --- Native traces ------------------------------------------------------------------------------------------------

TEST_F(BadInput, NativeWrongMagicIsNotReadAsGarbage) {
  // One byte of the magic changed: the file is not recognised as native, and the text reader says it is binary
  // instead of quoting raw bytes (the header's NUL bytes would cut the message short).
  std::string bytes = nativeHeader() + kTwoRecords;
  bytes[7] = '\x02';
  const std::string trace = file("magic.smt", bytes);
  expectOneLineRunError(runTrace(trace), "magic.smt:1: ", {"binary byte 0x02 in column 8", "not a text trace"});
}

TEST_F(BadInput, NativeWrongVersion) {
  const std::string trace = file("future.smt", nativeHeader(kNativeVersion + 1) + kTwoRecords);
  expectOneLineRunError(runTrace(trace), "future.smt: ",
                        {fmt::format("unsupported native trace version {} (this build reads versions {} to {})",
                                     kNativeVersion + 1, kNativeOldestVersion, kNativeVersion)});
}

TEST_F(BadInput, NativeUnknownCompression) {
  const std::string trace = file("c7.smt", nativeHeader(kNativeVersion, 7) + kTwoRecords);
  expectOneLineRunError(runTrace(trace), "c7.smt: ", {"unknown compression 7"});
}

TEST_F(BadInput, NativeTruncatedHeader) {
  const std::string trace = file("hdr.smt", nativeHeader().substr(0, 16));
  expectOneLineRunError(runTrace(trace), "hdr.smt: ", {"truncated header"});
}

TEST_F(BadInput, NativeTruncatedRecord) {
  const std::string trace = file("cut.smt", nativeHeader() + kTwoRecords + kCutRecord);
  expectOneLineRunError(runTrace(trace), "cut.smt: ", {"record 2: truncated"});
}

TEST_F(BadInput, NativeCorruptRecord) {
  const std::string trace = file("reg.smt", nativeHeader() + kTwoRecords + kBadRegisterRecord);
  expectOneLineRunError(runTrace(trace), "reg.smt: ", {"record 2: corrupt data (register id)"});
}

TEST_F(BadInput, NativeCountMismatch) {
  // The header promises 5 records; 2 follow (a file cut at a record boundary).
  const std::string trace = file("count.smt", nativeHeader(kNativeVersion, 0, 5) + kTwoRecords);
  expectOneLineRunError(runTrace(trace), "count.smt: ", {"the header says 5 records but the file holds 2"});
}

TEST_F(BadInput, NativeCorruptZstdStream) {
  // A real zstd trace whose compressed bytes are overwritten after the header and the zstd frame magic.
  const std::string good = path("good.smt");
  {
    NativeTraceWriter w(good, Compression::Zstd);
    Instr in;
    for (int i = 0; i < 1000; ++i) {
      in.pc = 0x400000 + 4 * static_cast<Addr>(i);
      in.loads[0] = {0x10000000 + 64 * static_cast<Addr>(i * 7919 % 1000), 8};
      w.write(in);
    }
    w.close();
  }
  std::string bytes = slurp(good);
  ASSERT_GT(bytes.size(), kNativeHeaderSize + 16);
  for (std::size_t i = kNativeHeaderSize + 4; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xa5 ^ i);
  const std::string trace = file("zstd.smt", bytes);
  expectOneLineRunError(runTrace(trace), "zstd.smt: ", {"record 0: corrupt zstd data"});
}

TEST_F(BadInput, NativeCorruptXzStream) {
  const std::string trace = file("xz.smt", nativeHeader(kNativeVersion, 2) + "this is not an xz stream at all");
  expectOneLineRunError(runTrace(trace), "xz.smt: ", {"record 0: corrupt xz data"});
}

TEST_F(BadInput, EmptyNativeTrace) {
  const std::string trace = file("empty.smt", nativeHeader(kNativeVersion, 0, 0));
  expectOneLineRunError(runTrace(trace), "empty.smt", {"has no instructions"});
}

TEST_F(BadInput, NativeCorruptRecordInTraceInfo) {
  // The same error through another command that reads the whole file.
  const std::string trace = file("reg.smt", nativeHeader() + kTwoRecords + kBadRegisterRecord);
  expectOneLineRunError(run({"trace", "info", trace}), "reg.smt: ", {"record 2: corrupt data"});
}

// --- ChampSim traces (64-byte records, no header: so no magic or version to get wrong) -----------------------------

// One ChampSim record: a non-branch at `ip` with no registers or memory (little-endian ip, then zeros).
std::string champSimRecord(std::uint64_t ip) {
  std::string r(64, '\0');
  for (int i = 0; i < 8; ++i) r[static_cast<std::size_t>(i)] = static_cast<char>(ip >> (8 * i));
  return r;
}

TEST_F(BadInput, ChampSimTruncatedRecord) {
  // Two whole records and 36 bytes of a third.
  const std::string trace = file("cut.champsimtrace", champSimRecord(0x400000) + champSimRecord(0x400004) +
                                                          champSimRecord(0x400008).substr(0, 36));
  expectOneLineRunError(runTrace(trace), "cut.champsimtrace: ", {"record 2: truncated"});
}

TEST_F(BadInput, ChampSimCorruptXz) {
  // The xz magic, so the reader decompresses, then garbage.
  const std::string trace = file("bad.champsimtrace.xz", std::string("\xfd" "7zXZ\0", 6) + std::string(64, '\x5a'));
  expectOneLineRunError(runTrace(trace), "bad.champsimtrace.xz: ", {"record 0: corrupt"});
}

TEST_F(BadInput, EmptyChampSimTrace) {
  const std::string trace = file("empty.champsimtrace", "");
  expectOneLineRunError(runTrace(trace), "empty.champsimtrace", {"has no instructions"});
}

// --- Missing and unreadable files ------------------------------------------------------------------------------------
// chmod 000 does not stop root (the tests run as root in CI), so "unreadable" is a directory given as a file.

TEST_F(BadInput, MissingTraceFile) {
  expectOneLineRunError(runTrace(path("missing.smt")), "missing.smt", {"cannot open trace file", "No such file"});
}

TEST_F(BadInput, DirectoryAsTraceFile) {
  fs::create_directory(path("adir.txt"));
  expectOneLineRunError(runTrace(path("adir.txt")), "adir.txt", {"cannot open trace file", "is a directory"});
}

TEST_F(BadInput, MissingConfigFile) {
  expectOneLineRunError(run({"run", "-c", path("missing.toml"), "gen:alu", "-n", "10", "-q"}), "missing.toml",
                     {"no such file"});
}

TEST_F(BadInput, DirectoryAsConfigFile) {
  fs::create_directory(path("adir.toml"));
  expectOneLineRunError(run({"config", "check", path("adir.toml")}), "adir.toml", {"not a regular file"});
}

// --- Configs -----------------------------------------------------------------------------------------------------

struct ConfigCase {
  const char* label;
  const char* toml;
  std::vector<std::string> expect;  // after "c.toml"
};

void PrintTo(const ConfigCase& c, std::ostream* os) { *os << c.label; }

class BadConfig : public BadInput, public ::testing::WithParamInterface<ConfigCase> {};

TEST_P(BadConfig, CheckNamesFileAndKey) {
  const ConfigCase& c = GetParam();
  const std::string config = file("c.toml", c.toml);
  expectOneLineRunError(run({"config", "check", config}), "c.toml", c.expect);
}

TEST_P(BadConfig, RunRefusesToStart) {
  const ConfigCase& c = GetParam();
  const std::string config = file("c.toml", c.toml);
  const ProgramResult r = run({"run", "-c", config, "gen:alu", "-n", "100", "-q"});
  expectOneLineRunError(r, "c.toml", c.expect);
  EXPECT_EQ(r.out, "") << "nothing is simulated with a bad config";
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, BadConfig,
    ::testing::Values(
        ConfigCase{"unknown_key", "[core.rob]\nentires = 64\n",
                   {"c.toml:2: ", "unknown key 'core.rob.entires'", "did you mean 'core.rob.entries'"}},
        ConfigCase{"unknown_section", "[core.robb]\nentries = 64\n", {"c.toml:2: ", "core.robb"}},
        ConfigCase{"wrong_type_string", "[core]\nthreads = \"two\"\n",
                   {"c.toml:2: ", "key 'core.threads' must be an integer, got string \"two\""}},
        ConfigCase{"wrong_type_float", "core.rob.entries = 1.5\n",
                   {"c.toml:1: ", "key 'core.rob.entries' must be an integer, got float 1.5"}},
        ConfigCase{"bad_choice", "core.rob.sharing = \"half\"\n",
                   {"c.toml:1: ", "key 'core.rob.sharing' must be one of", "got \"half\""}},
        ConfigCase{"out_of_range", "core.threads = 0\n",
                   {"c.toml:1: ", "key 'core.threads' = 0 is out of range [1, 8]"}},
        ConfigCase{"more_threads_than_supported", "core.threads = 9\n",
                   {"c.toml:1: ", "key 'core.threads' = 9 is out of range [1, 8]"}},
        ConfigCase{"partition_below_one_entry_per_thread",
                   "[core]\nthreads = 4\n[core.rob]\nentries = 3\nsharing = \"partitioned\"\n",
                   {"core.rob.entries = 3 is fewer than core.threads = 4", "one entry per thread"}},
        ConfigCase{"cap_below_one_entry", "core.iq.sharing = \"capped\"\ncore.iq.cap = 0.01\n",
                   {"core.iq.cap = 0.01", "leaves a thread less than one entry"}},
        ConfigCase{"latency_decreasing", "mem.l2.latency = 1\n", {"mem.l2.latency = 1 is below mem.l1d.latency"}},
        ConfigCase{"sets_not_power_of_two", "mem.l1d.size_kb = 24\n", {"mem.l1d", "power-of-two number of sets"}},
        ConfigCase{"toml_syntax", "[core\nthreads = 2\n", {"c.toml:1:"}},
        ConfigCase{"invalid_utf8", "\xff\xfe = 1\n", {"c.toml:1:", "utf-8"}}),
    [](const ::testing::TestParamInfo<ConfigCase>& info) { return std::string(info.param.label); });

TEST_F(BadInput, OverrideUnknownKey) {
  expectOneLineRunError(run({"config", "check", "netburst", "--set", "core.rob.entires=3"}), "--set core.rob.entires=3",
                     {"unknown key 'core.rob.entires'"});
}

TEST_F(BadInput, OverrideWrongType) {
  expectOneLineRunError(run({"run", "-c", "netburst", "--set", "core.threads=abc", "gen:alu", "-n", "10", "-q"}),
                     "--set core.threads=abc", {"must be an integer"});
}

TEST_F(BadInput, MoreTracesThanLogicalCpus) {
  // SMT off (one thread per core) and two traces: the machine cannot host the second.
  const std::string config = file("smt_off.toml", "core.threads = 1\n");
  expectOneLineRunError(run({"run", "-c", config, "gen:alu", "gen:alu", "-n", "10", "-q"}), "2 traces given",
                     {"1 logical CPUs", "core.threads = 1"});
}

}  // namespace
}  // namespace smtlab
