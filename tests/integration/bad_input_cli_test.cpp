// The bad-input catalogue for the command line (docs/hardening.md, its command-line sections): the smtlab
// program must never destroy a file (an output that is its input, a failed conversion), must check a destination
// before simulating, must not run for ever because of a negative count or an endless generator, and must say what is
// wrong in one line that quotes at most a short prefix of a bad token. Each case ends with exit status 1 and exactly
// one message line naming the file, option or key.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/text_format.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

const char* binary() { return test::smtlabBinary(); }

using test::nonEmptyLines;
using test::ProgramResult;
using test::slurp;

// Names in a folder (temporary files of an atomic output start with '.').
std::set<std::string> entriesOf(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

class CliBadInput : public ::testing::Test {
 protected:
  // A folder for the case's files, and a separate one for the program's captured stdout/stderr, so that a check of
  // "nothing else was left in the folder" sees only what the program wrote.
  test::ScratchDir dir_{"cli-bad-input"};
  test::ScratchDir io_{"cli-bad-input-io"};

  std::string file(const std::string& name, const std::string& bytes) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs the smtlab program with stdout and stderr captured in files (test::runProgram); kills it after
  // `limitSeconds`. With `asUser`, the child drops root to that uid first (permission checks mean nothing to root).
  ProgramResult run(const std::vector<std::string>& args, int limitSeconds = 60, uid_t asUser = 0,
                    const fs::path& cwd = {}) const {
    return test::runProgram(args, io_.path(), {.limitSeconds = limitSeconds, .asUser = asUser, .cwd = cwd});
  }

  // A native trace of `count` generated records, written by the program itself.
  std::string nativeTrace(const std::string& name, int count = 20000) const {
    const std::string p = path(name);
    const ProgramResult r = run({"trace", "gen", "gen:mix,count=" + std::to_string(count), "-o", p});
    EXPECT_EQ(r.status, 0) << r.err;
    return p;
  }
};

// Exit status 1 (2 for a usage error: an unknown command) and exactly one line on stderr of the form
// "smtlab CMD: error: ...", naming `name` and holding every fragment; no control bytes; and short (a message quotes
// at most a prefix of a bad token).
void expectOneLineError(const ProgramResult& r, const std::string& name, const std::vector<std::string>& fragments,
                        int status = 1) {
  EXPECT_EQ(r.status, status) << "stderr: " << r.err.substr(0, 2000);
  const std::vector<std::string> lines = nonEmptyLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr: " << r.err.substr(0, 2000);
  const std::string& line = lines[0];
  EXPECT_EQ(line.rfind("smtlab", 0), 0u) << line;
  EXPECT_NE(line.find("error: "), std::string::npos) << line;
  EXPECT_NE(line.find(name), std::string::npos) << "the message does not name " << name << ": " << line;
  for (const std::string& f : fragments) {
    EXPECT_NE(line.find(f), std::string::npos) << "missing '" << f << "': " << line;
  }
  EXPECT_LT(line.size(), 600u) << line;
  for (char c : line) EXPECT_TRUE(c == '\t' || static_cast<unsigned char>(c) >= 0x20) << "control byte in: " << line;
}

// --- 1. Never destroy a user's file --------------------------------------------------------------------------------

TEST_F(CliBadInput, ConvertOntoItselfIsRefusedAndTheInputKept) {
  const std::string trace = nativeTrace("t.smt");
  const std::string before = slurp(trace);
  ASSERT_GT(before.size(), 1000u);
  expectOneLineError(run({"trace", "convert", trace, trace}), "t.smt", {"it is the input file"});
  EXPECT_EQ(slurp(trace), before) << "the input was changed";
}

TEST_F(CliBadInput, ConvertOntoItselfThroughASymlinkOrAnotherSpellingIsRefused) {
  const std::string trace = nativeTrace("t.smt");
  const std::string before = slurp(trace);
  fs::create_symlink(trace, path("link.smt"));
  fs::create_directory(path("sub"));
  const std::string spellings[] = {path("link.smt"), path("sub/../t.smt"), path("./t.smt")};
  for (const std::string& other : spellings) {
    SCOPED_TRACE(other);
    expectOneLineError(run({"trace", "convert", trace, other}), "t.smt", {"it is the input file"});
    expectOneLineError(run({"trace", "convert", other, trace, "--format", "text"}), "t.smt", {"it is the input file"});
    EXPECT_EQ(slurp(trace), before) << "the input was changed";
  }
  // A hard link is the same file too (same device and inode).
  fs::create_hard_link(trace, path("hard.smt"));
  expectOneLineError(run({"trace", "convert", trace, path("hard.smt")}), "hard.smt", {"it is the input file"});
  EXPECT_EQ(slurp(trace), before);
}

// A conversion that fails part-way (a bad line after 100000 good ones, well past the writers' buffers) leaves the
// existing output as it was and no partial file beside it, in both output formats.
TEST_F(CliBadInput, FailedConversionLeavesNoPartialOutput) {
  const std::string text = path("big.txt");
  ASSERT_EQ(run({"trace", "gen", "gen:mix,count=100000", "-o", text}).status, 0);
  { std::ofstream(text, std::ios::app) << "400004 frob\n"; }
  for (const std::string out : {"out.smt", "out.txt"}) {
    SCOPED_TRACE(out);
    const std::string target = file(out, "the user's previous file\n");
    // The bad record is line 100002: the text writer's header comment, then 100000 records.
    expectOneLineError(run({"trace", "convert", text, target}), "big.txt:100002", {"unknown op 'frob'"});
    EXPECT_EQ(slurp(target), "the user's previous file\n") << "the old output was overwritten by a partial one";
  }
  const std::string fresh = path("fresh.smt");
  expectOneLineError(run({"trace", "convert", text, fresh}), "big.txt:100002", {"unknown op 'frob'"});
  EXPECT_FALSE(fs::exists(fresh)) << "a partial trace was left under the real name";
  EXPECT_EQ(entriesOf(dir_.path()), (std::set<std::string>{"big.txt", "out.smt", "out.txt"}))
      << "temporary files were left behind";
}

// An interrupted `trace gen` (SIGINT while writing) stops between two batches with one message, and leaves neither a
// file under the real name nor its temporary file.
TEST_F(CliBadInput, InterruptedGenerationLeavesNothing) {
  const std::string target = path("endless.smt");
  const std::string errPath = (io_ / "stderr").string();
  std::vector<std::string> args0{binary(), "trace", "gen", "gen:mix,count=0", "-n", "100G", "-o", target};
  std::vector<char*> argv;
  for (std::string& a : args0) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    ::dup2(null, 1);
    ::dup2(err, 2);
    ::execv(binary(), argv.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  // Wait until the temporary file has grown past the first buffers (records really are being written).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool writing = false;
  while (!writing && std::chrono::steady_clock::now() < deadline) {
    for (const auto& e : fs::directory_iterator(dir_.path())) writing |= e.is_regular_file() && e.file_size() > 100000;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(writing) << "the generator never wrote 100 kB";
  ProgramResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.err = slurp(errPath);
  expectOneLineError(r, "interrupted by signal 2", {"no output was written"});
  EXPECT_FALSE(fs::exists(target)) << "an interrupted trace appeared under the real name";
  EXPECT_TRUE(entriesOf(dir_.path()).empty()) << "the temporary file was left behind";
}

// A writer destroyed without close() (an exception between two records) leaves no file; close() makes it appear.
TEST_F(CliBadInput, TraceWritersPublishOnlyOnClose) {
  const std::string native = path("w.smt"), text = path("w.txt");
  {
    NativeTraceWriter n(native, Compression::Zstd);
    TextTraceWriter t(text);
    Instr in;
    for (int i = 0; i < 100000; ++i) {
      in.pc = 0x400000 + 4 * static_cast<Addr>(i);
      n.write(in);
      t.write(in);
    }
    EXPECT_FALSE(fs::exists(native));
    EXPECT_FALSE(fs::exists(text));
  }
  EXPECT_TRUE(entriesOf(dir_.path()).empty()) << "abandoned writers left files";
  {
    NativeTraceWriter n(native, Compression::Zstd);
    TextTraceWriter t(text);
    n.write(Instr{});
    t.write(Instr{});
    n.close();
    t.close();
  }
  EXPECT_EQ(entriesOf(dir_.path()), (std::set<std::string>{"w.smt", "w.txt"}));
  NativeTraceReader back(native);
  std::vector<Instr> records(4);
  EXPECT_EQ(back.read(records), 1u);
}

TEST_F(CliBadInput, TraceWriterToAMissingFolderNamesTheReason) {
  try {
    NativeTraceWriter n(path("nowhere/w.smt"));
    ADD_FAILURE() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

// `run --json X` where X is one of the run's inputs (a trace or the config) would replace it with statistics.
TEST_F(CliBadInput, JsonOntoAnInputIsRefused) {
  const std::string trace = file("t.txt", "400000 int dst=r1\n400004 int src=r1\n");
  expectOneLineError(run({"run", trace, "-q", "--json", trace}), "t.txt", {"it is the input file"});
  EXPECT_EQ(slurp(trace), "400000 int dst=r1\n400004 int src=r1\n");
  const std::string config = file("c.toml", "seed = 3\n");
  expectOneLineError(run({"run", "-c", config, trace, "-q", "--json", config}), "c.toml", {"it is the input file"});
  EXPECT_EQ(slurp(config), "seed = 3\n");
  // A preset is found by name in SMTLAB_CONFIG_DIR; its file is an input as well.
  const std::string preset = file("mine.toml", "seed = 4\n");
  ::setenv("SMTLAB_CONFIG_DIR", dir_.path().c_str(), 1);
  const ProgramResult r = run({"run", "-c", "mine", trace, "-q", "--json", preset});
  ::unsetenv("SMTLAB_CONFIG_DIR");
  expectOneLineError(r, "mine.toml", {"it is the input file"});
  EXPECT_EQ(slurp(preset), "seed = 4\n");
}

// --- 2. The destination is checked before the simulation, with the reason ------------------------------------------

// The run asked for would take minutes (two endless generators for 1G instructions each): an answer within the
// time limit, with nothing printed on stdout, shows that the destination was checked first.
std::vector<std::string> longRunTo(const std::string& json) {
  return {"run", "gen:mix,count=0", "gen:alu,count=0", "-n", "1G", "-q", "--json", json};
}

TEST_F(CliBadInput, JsonIntoAMissingFolderIsReportedBeforeTheRun) {
  const ProgramResult r = run(longRunTo(path("missing/stats.json")), 20);
  expectOneLineError(r, "missing/stats.json", {"does not exist"});
  EXPECT_EQ(r.out, "") << "the simulation ran first";
}

TEST_F(CliBadInput, JsonOntoAFolderIsReportedBeforeTheRun) {
  fs::create_directory(path("stats.json"));
  const ProgramResult r = run(longRunTo(path("stats.json")), 20);
  expectOneLineError(r, "stats.json", {"it is a directory"});
  EXPECT_EQ(r.out, "");
}

TEST_F(CliBadInput, JsonThroughAFileIsReportedBeforeTheRun) {
  // A path whose "folder" is a file.
  const std::string plain = file("plain", "x");
  const ProgramResult r = run(longRunTo(plain + "/stats.json"), 20);
  expectOneLineError(r, "plain/stats.json", {"is not a directory"});
  EXPECT_EQ(r.out, "");
}

TEST_F(CliBadInput, JsonIntoAnUnwritableFileIsReportedBeforeTheRun) {
  // Root may write anything, so as root the program runs as 'nobody' (65534), which cannot write a 0444 file in a
  // folder open to everyone (the folder check passes; the file check must give the reason). It starts in that
  // folder and is given a relative path, as the folders above it (a private TMPDIR) may be closed to 'nobody'; the
  // program it runs is a copy in a folder 'nobody' can reach (test::ReachableProgram), as the checkout may not be.
  const std::string target = file("ro.json", "old\n");
  ::chmod(target.c_str(), 0444);
  ::chmod(dir_.path().c_str(), 0777);
  const uid_t as = ::geteuid() == 0 ? 65534 : 0;
  const ProgramResult r = run(longRunTo("ro.json"), 20, as, dir_.path());
  expectOneLineError(r, "ro.json", {"ro.json': Permission denied"});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(slurp(target), "old\n");
}

TEST_F(CliBadInput, TraceOptionsGivenTwiceAreRefusedAndNothingIsWritten) {
  // An option given twice is refused rather than letting the last value win: `-o a -o b` would otherwise write only b,
  // and a user who meant both would not notice.
  const std::string a = path("dup1.smt"), b = path("dup2.smt");
  expectOneLineError(run({"trace", "gen", "gen:alu,count=10", "-o", a, "-o", b}), "'-o'", {"more than once"});
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  expectOneLineError(run({"trace", "head", "gen:alu", "-n", "3", "-n", "4"}), "'-n'", {"more than once"});
}

TEST_F(CliBadInput, TraceSubcommandHelpPrintsTheUsage) {
  // Every trace subcommand takes --help, prints the usage and exits 0.
  for (const char* sub : {"gen", "head", "info", "convert"}) {
    const ProgramResult r = run({"trace", sub, "--help"});
    EXPECT_EQ(r.status, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find("smtlab trace gen SPEC -o FILE"), std::string::npos) << sub << ": " << r.out;
    EXPECT_EQ(r.err, "") << sub;
  }
}

TEST_F(CliBadInput, CachesNoHostCanHoldAreRefusedBeforeAllocating) {
  // 512 cores (64 packages x 8, 1024 logical CPUs: the most there may be) each with a 4 GiB L2 and a 4 GiB LLC per
  // package: at least 26 bytes per 64-byte line make ~1 TiB, beyond the hosts this runs on, so it fails the same way
  // everywhere. Unchecked, such a machine runs out of memory with no key named ("out of memory" under ulimit -v;
  // otherwise the kernel's OOM killer, with no message at all), so the size is checked before allocating.
  const ProgramResult r = run({"run", "-q", "--set", "system.packages=64", "--set", "system.cores=8", "--set",
                               "mem.l2.size_kb=4194304", "--set", "mem.llc.size_kb=4194304", "gen:alu", "-n", "1k"});
  expectOneLineError(r, "mem.l2.size_kb = 4194304 x 512 cores", {"of host memory to model", "make the caches smaller"});
}

TEST_F(CliBadInput, ExtraWordsRepeatsAndFolderPrefixesAreRefused) {
  // Words the command does not take, an option given twice, and a folder given as an output file (-o dd/ would make
  // the hidden file dd/.trace): each is one line, exit 1, and nothing runs.
  expectOneLineError(run({"demo", "extra"}), "smtlab demo: error:", {"positional"});
  expectOneLineError(run({"trace", "kernels", "--bogus"}), "'--bogus'", {"takes no arguments"});
  expectOneLineError(run({"trace", "head", "kernel:chase,seed=1", "-n", "1"}), "kernel:chase,seed=1",
                     {"take no options"});
  expectOneLineError(run({"trace", "record", "-o", path("a"), "-o", path("b"), "--", "/bin/true"}), "'-o'",
                     {"more than once"});
  expectOneLineError(run({"trace", "record", "-o", path("dd") + "/", "--", "/bin/true"}), "dd/", {"names a folder"});
  const std::string longName = path(std::string(250, 'x'));
  expectOneLineError(run({"trace", "record", "-o", longName, "--", "/bin/true"}), "-o", {"255"});
  EXPECT_TRUE(fs::is_empty(dir_.path())) << "something was written";
}

TEST_F(CliBadInput, ConfigSubcommandHelpPrintsTheUsage) {
  for (const char* sub : {"show", "check"}) {
    const ProgramResult r = run({"config", sub, "--help"});
    EXPECT_EQ(r.status, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find("smtlab config show"), std::string::npos) << r.out;
  }
}

TEST_F(CliBadInput, TraceGenDestinationIsCheckedWithTheReason) {
  expectOneLineError(run({"trace", "gen", "gen:alu", "-o", path("missing/t.smt")}), "missing/t.smt",
                     {"does not exist"});
  fs::create_directory(path("d.smt"));
  expectOneLineError(run({"trace", "gen", "gen:alu", "-o", path("d.smt")}), "d.smt", {"it is a directory"});
}

TEST_F(CliBadInput, JsonIsWrittenCompleteUnderItsName) {
  const std::string json = path("stats.json");
  const ProgramResult r = run({"run", "gen:alu", "-n", "2k", "--warmup", "1k", "-q", "--json", json});
  ASSERT_EQ(r.status, 0) << r.err;
  const boost::json::value v = boost::json::parse(slurp(json));
  // The suffixes are decimal, as in generator specs: 2k = 2000 and 1k = 1000.
  EXPECT_EQ(v.at("max_instructions").to_number<std::uint64_t>(), 2000u);
  EXPECT_EQ(v.at("warmup").to_number<std::uint64_t>(), 1000u);
  EXPECT_EQ(entriesOf(dir_.path()), std::set<std::string>{"stats.json"});
}

// --- 3. No run for ever by accident ---------------------------------------------------------------------------------

struct CountCase {
  const char* label;
  std::vector<std::string> args;
  const char* name;    // what the message must name (the option)
  const char* expect;  // and what it must say
};
void PrintTo(const CountCase& c, std::ostream* os) { *os << c.label; }

class BadCount : public CliBadInput, public ::testing::WithParamInterface<CountCase> {};

// "@/" in an argument stands for the case's folder, which must stay empty (a refused command writes nothing).
std::vector<std::string> inFolder(std::vector<std::string> args, const fs::path& dir) {
  for (std::string& a : args) {
    if (a.rfind("@/", 0) == 0) a = (dir / a.substr(2)).string();
  }
  return args;
}

TEST_P(BadCount, IsRefusedInOneLine) {
  const CountCase& c = GetParam();
  expectOneLineError(run(inFolder(c.args, dir_.path()), 20), c.name, {c.expect});
  EXPECT_TRUE(entriesOf(dir_.path()).empty());
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, BadCount,
    ::testing::Values(
        CountCase{"run_negative_n", {"run", "gen:alu", "-n", "-5", "-q"}, "-n", "'-5' is negative"},
        CountCase{"run_negative_warmup", {"run", "gen:alu", "--warmup", "-1", "-q"}, "--warmup", "'-1' is negative"},
        CountCase{"run_negative_warmup_eq", {"run", "gen:alu", "--warmup=-1", "-q"}, "--warmup", "is negative"},
        CountCase{"run_n_too_large", {"run", "gen:alu", "-n", "99999999999999999999", "-q"}, "-n", "out of range"},
        CountCase{"run_n_suffix_too_large", {"run", "gen:alu", "-n", "99999999999G", "-q"}, "-n", "out of range"},
        CountCase{"run_n_not_a_count", {"run", "gen:alu", "-n", "1.5k", "-q"}, "-n", "'1.5k' is not a count"},
        CountCase{"run_n_suffix_only", {"run", "gen:alu", "-n", "k", "-q"}, "-n", "has no digits"},
        CountCase{"trace_head_negative", {"trace", "head", "gen:alu", "-n", "-5"}, "-n", "is negative"},
        CountCase{"trace_gen_too_large",
                  {"trace", "gen", "gen:alu", "-o", "@/x.smt", "-n", "20000000000000000000"},
                  "-n",
                  "out of range"},
        CountCase{"demo_negative", {"demo", "-n", "-1"}, "-n", "is negative"},
        // trace record had a count parser of its own: "needs a count such as 1000000 or 200M" for every mistake, and
        // 999999999999G wrapped around 2^64 to a small cap and recorded (exit 0).
        CountCase{"trace_record_negative",
                  {"trace", "record", "-n", "-5", "-o", "@/t", "--", "/bin/true"},
                  "--max-instructions/-n",
                  "'-5' is negative"},
        CountCase{"trace_record_wraps",
                  {"trace", "record", "--max-instructions", "999999999999G", "-o", "@/t", "--", "/bin/true"},
                  "--max-instructions/-n",
                  "'999999999999G' is out of range"},
        CountCase{"trace_record_skip_not_a_count",
                  {"trace", "record", "--skip", "1.5k", "-o", "@/t", "--", "/bin/true"},
                  "--skip",
                  "'1.5k' is not a count"},
        CountCase{"run_endless_generator", {"run", "gen:alu,count=0", "-q"}, "gen:alu,count=0", "is endless"},
        CountCase{"run_endless_with_warmup",
                  {"run", "gen:mix", "gen:alu,count=0", "--warmup", "1k", "-q"},
                  "gen:alu,count=0",
                  "CPU 1 is endless"},
        CountCase{"trace_head_all_of_endless",
                  {"trace", "head", "gen:alu,count=0", "-n", "0"},
                  "gen:alu,count=0",
                  "is endless"},
        CountCase{"trace_gen_endless",
                  {"trace", "gen", "gen:alu,count=0", "-o", "@/x.smt"},
                  "gen:alu,count=0",
                  "is endless"}),
    [](const ::testing::TestParamInfo<CountCase>& info) { return std::string(info.param.label); });

// The demo measures from a cold start, so a tiny -n prints a table of warm-up effects (at -n 1 a "speed-up" of +57%
// for programs that ran one instruction each): it still runs, but says in one stderr line that the numbers mean
// nothing. The default (300k) and anything from 100k up run without it.
TEST_F(CliBadInput, DemoWarnsThatATinyCountMeasuresOnlyTheWarmUp) {
  const ProgramResult r = run({"demo", "-n", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = nonEmptyLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("smtlab demo: warning: option --instructions/-n: 1 instructions", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("100k"), std::string::npos) << lines[0];
  EXPECT_NE(r.out.find("geometric mean speed-up"), std::string::npos) << r.out;
  const ProgramResult enough = run({"demo", "-n", "100k"});
  EXPECT_EQ(enough.status, 0) << enough.err;
  EXPECT_EQ(enough.err, "");
}

// `trace head -n 0` means "no limit" as everywhere else: the whole of a finite trace (here 25 records, one line each).
TEST_F(CliBadInput, TraceHeadZeroPrintsAllOfAFiniteTrace) {
  const ProgramResult r = run({"trace", "head", "gen:alu,count=25", "-n", "0"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nonEmptyLines(r.out).size(), 25u);
}

// The count forms of the trace commands are accepted by every command: -n 1k prints exactly 1000 records.
TEST_F(CliBadInput, CountSuffixesAreDecimal) {
  const ProgramResult r = run({"trace", "head", "gen:alu,count=0", "-n", "1k"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nonEmptyLines(r.out).size(), 1000u);
}

// --- 4. Messages ----------------------------------------------------------------------------------------------------

TEST_F(CliBadInput, SetIntegerTooLargeSaysOutOfRange) {
  const ProgramResult r = run({"config", "show", "--set", "core.rob.entries=99999999999999999999"});
  expectOneLineError(r, "core.rob.entries", {"out of range [1, 65536]"});
  EXPECT_EQ(r.err.find("got string"), std::string::npos) << r.err;
}

TEST_F(CliBadInput, SectionGivenAValueIsOneLine) {
  const std::string scalar = file("scalar.toml", "core = 5\n");
  const ProgramResult a = run({"config", "check", scalar});
  expectOneLineError(a, "scalar.toml:1", {"'core' is a section, not a key", "integer 5", "[core]"});
  const std::string array = file("array.toml", "[[core]]\nthreads = 2\n");
  const ProgramResult b = run({"config", "check", array});
  expectOneLineError(b, "array.toml", {"'core' is a section, not a key", "array of tables", "[core]"});
  // "One line instead of listing every key": the core section has over a hundred keys; one example is named.
  for (const ProgramResult* r : {&a, &b}) {
    EXPECT_EQ(r->err.find("core.retire_width"), std::string::npos) << r->err;
  }
}

TEST_F(CliBadInput, MixFootprintConflictIsExplained) {
  expectOneLineError(run({"trace", "head", "gen:mix,footprint=64"}), "footprint",
                     {"64 bytes is smaller than the smallest hot region", "footprint >= 1k"});
  expectOneLineError(run({"trace", "head", "gen:mix,footprint=8k"}), "hot_kb",
                     {"16 KiB (the default) is larger than footprint = 8 KiB", "hot_kb <= 8"});
  expectOneLineError(run({"trace", "head", "gen:mix,footprint=8k,hot_kb=9"}), "hot_kb",
                     {"9 KiB is larger than footprint = 8 KiB"});
  const ProgramResult ok = run({"trace", "head", "gen:mix,footprint=8k,hot_kb=8", "-n", "3"});
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST_F(CliBadInput, SpecIntegerTooLargeSaysOutOfRange) {
  expectOneLineError(run({"trace", "head", "gen:alu,seed=99999999999999999999999"}), "seed", {"out of range"});
}

TEST_F(CliBadInput, ConfigShowJsonAndTomlIsAOneLineUsageError) {
  expectOneLineError(run({"config", "show", "--json", "--toml"}), "--json and --toml", {"exclude each other"});
}

// A mistaken 100 kB argument is quoted by a short prefix only, wherever it lands.
struct LongCase {
  const char* label;
  std::vector<std::string> before, after;  // the arguments around the long token
  int status = 1;                           // 2: a usage error (an unknown command)
};
void PrintTo(const LongCase& c, std::ostream* os) { *os << c.label; }

class LongToken : public CliBadInput, public ::testing::WithParamInterface<LongCase> {};

TEST_P(LongToken, IsQuotedShort) {
  const LongCase& c = GetParam();
  std::vector<std::string> args = c.before;
  // The prefix given, then 100 kB: Linux takes at most 128 KiB per argument (MAX_ARG_STRLEN); config files below
  // carry a megabyte.
  std::string token = args.back() + std::string(100000, 'x');
  args.back() = token;
  args.insert(args.end(), c.after.begin(), c.after.end());
  const ProgramResult r = run(inFolder(args, dir_.path()));
  expectOneLineError(r, "xxxx", {"bytes)"}, c.status);
  EXPECT_TRUE(entriesOf(dir_.path()).empty());
}

INSTANTIATE_TEST_SUITE_P(
    Catalogue, LongToken,
    ::testing::Values(LongCase{"command", {"x"}, {}, 2}, LongCase{"run_option", {"run", "--x"}, {"gen:alu"}},
                      LongCase{"run_count", {"run", "gen:alu", "-n", "1"}, {}},
                      LongCase{"run_trace_spec", {"run", "-q", "-n", "10", "gen:alu,seed="}, {}},
                      LongCase{"run_generator_name", {"run", "-q", "-n", "10", "gen:"}, {}},
                      LongCase{"run_config", {"run", "-q", "-n", "10", "-c", "x"}, {"gen:alu"}},
                      LongCase{"set_key", {"config", "show", "--set", "core."}, {}},
                      LongCase{"set_value", {"config", "show", "--set", "core.fetch_policy="}, {}},
                      LongCase{"config_argument", {"config", "show", "-c", "a", "--"}, {}},
                      LongCase{"config_subcommand", {"config", "x"}, {}},
                      LongCase{"trace_option", {"trace", "head", "gen:alu", "--x"}, {}},
                      LongCase{"trace_subcommand", {"trace", "x"}, {}},
                      LongCase{"trace_count", {"trace", "head", "gen:alu", "-n", "1"}, {}},
                      LongCase{"gen_not_a_spec", {"trace", "gen", "x"}, {"-o", "@/x.smt"}}),
    [](const ::testing::TestParamInfo<LongCase>& info) { return std::string(info.param.label); });

// A megabyte-long value, key or section name in a config file is quoted by a short prefix only.
TEST_F(CliBadInput, LongTokensInAConfigFileAreQuotedShort) {
  const std::string mb(1 << 20, 'x');
  const std::string files[] = {
      file("value.toml", "core.fetch_policy = \"" + mb + "\"\n"),
      file("key.toml", "core." + mb + " = 1\n"),
      file("section.toml", "[" + mb + "]\nthreads = 1\n"),
      file("int.toml", "[core]\nthreads = \"" + mb + "\"\n"),
  };
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const ProgramResult r = run({"config", "check", f});
    expectOneLineError(r, fs::path(f).filename().string(), {"xxxx"});
    EXPECT_LT(r.err.size(), 600u);
  }
}


// smtlab demo runs the bench's traced programs whole, sampled, when it finds them ($SMTLAB_BENCH_TRACES here: two
// generated stand-ins under the programs' names), and says in one line when it does not, showing generated pairs.
TEST_F(CliBadInput, DemoRunsTracedProgramsWholeOrSaysWhyItCannot) {
  const fs::path traces = path("bench-traces");
  fs::create_directory(traces);
  ASSERT_EQ(run({"trace", "gen", "gen:alu,count=400000", "-o", (traces / "gzip.a.trace").string()}).status, 0);
  ASSERT_EQ(run({"trace", "gen", "gen:mix,count=400000", "-o", (traces / "cc1.a.trace").string()}).status, 0);
  ::setenv("SMTLAB_BENCH_TRACES", traces.c_str(), 1);
  const ProgramResult whole = run({"demo"}, 240);  // about 10 s; 80 s under the sanitizers
  EXPECT_EQ(whole.status, 0) << whole.err;
  EXPECT_NE(whole.out.find("run whole, sampled"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("gzip + cc1"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("% +-"), std::string::npos) << whole.out;
  EXPECT_NE(whole.out.find("geometric mean speed-up"), std::string::npos) << whole.out;
  fs::remove(traces / "cc1.a.trace");  // one program is no pair
  const ProgramResult fallback = run({"demo"}, 240);
  ::unsetenv("SMTLAB_BENCH_TRACES");
  EXPECT_EQ(fallback.status, 0) << fallback.err;
  const std::vector<std::string> lines = nonEmptyLines(fallback.err);
  ASSERT_EQ(lines.size(), 1u) << fallback.err;
  EXPECT_NE(lines[0].find("bench_traces"), std::string::npos) << lines[0];
  EXPECT_NE(fallback.out.find("gen:mix"), std::string::npos) << fallback.out;
}

// Sampling options (docs/sampling.md): each misuse is one line naming the option, answered before anything runs.
TEST_F(CliBadInput, SamplingOptionsThatCannotWorkAreRefused) {
  expectOneLineError(run({"run", "gen:alu", "-n", "1M", "--sample-window", "5k"}), "--sample-window",
                     {"go with --sample"});
  expectOneLineError(run({"run", "gen:alu", "-n", "1M", "--sample", "--sample-window", "0"}), "--sample-window",
                     {"at least 1"});
  expectOneLineError(run({"run", "gen:alu", "-n", "1M", "--sample", "--sample-target", "2"}), "--sample-target",
                     {"[0, 1)"});
  expectOneLineError(run({"run", "gen:alu", "-n", "1M", "--sample", "--warmup", "5k"}), "--warmup",
                     {"--sample-warmup"});
  expectOneLineError(run({"run", "gen:alu", "-n", "1M", "--sample", "--sample-period", "20k"}), "--sample-period",
                     {"shorter than a window"});
  expectOneLineError(run({"run", "gen:alu", "-n", "100k", "--sample", "--sample-period", "1M"}), "first half period",
                     {"--sample-period"});
}

}  // namespace
}  // namespace smtlab
