// Where the program's outputs may go: a file (written under a temporary name and renamed when complete), standard
// output as "-", and a stream (a pipe, a terminal, /dev/null, a FIFO) written in place because it cannot be renamed
// onto. An empty name is refused in one line before any work, as any other bad destination is.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"
#include "smtlab/trace/native_format.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

class CliOutputTargets : public ::testing::Test {
 protected:
  test::ScratchDir dir_{"cli-output-targets"};
  test::ScratchDir io_{"cli-output-targets-io"};

  test::ProgramResult run(const std::vector<std::string>& args, bool stdoutIsPipe = false) const {
    return test::runProgram(args, io_.path(), {.limitSeconds = 60, .cwd = dir_.path(), .stdoutIsPipe = stdoutIsPipe});
  }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_.path()), {})); }
};

// A run of 1000 ALU instructions whose statistics the JSON must carry.
std::vector<std::string> shortRunWithJsonTo(const std::string& target) {
  return {"run", "-q", "gen:alu,count=1000", "--json", target};
}

// The "instructions" a run's JSON reports, or -1 when `text` is not one JSON document holding it.
long long instructionsIn(const std::string& text) {
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(text, ec);
  if (ec || !v.is_object() || !v.as_object().contains("instructions")) return -1;
  return v.as_object().at("instructions").to_number<long long>();
}

TEST_F(CliOutputTargets, AnEmptyJsonNameIsRefusedInOneLineBeforeTheRun) {
  const test::ProgramResult r = run(shortRunWithJsonTo(""));
  EXPECT_EQ(r.status, 1) << r.err;
  const std::vector<std::string> lines = test::nonEmptyLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_NE(lines[0].find("smtlab run: error: cannot write JSON output: the path is empty"), std::string::npos)
      << lines[0];
  EXPECT_EQ(r.out, "") << "the run went ahead";
  EXPECT_EQ(entries(), 0u);
}

TEST_F(CliOutputTargets, JsonToDashIsOneDocumentOnStandardOutputWithTheTableOnStandardError) {
  for (const bool pipe : {false, true}) {
    const test::ProgramResult r = run(shortRunWithJsonTo("-"), pipe);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(instructionsIn(r.out), 1000) << "stdout (pipe=" << pipe << "): " << r.out.substr(0, 300);
    EXPECT_NE(r.err.find("total: 1000 instructions"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "-")) << "a file named '-' was made";
    EXPECT_EQ(entries(), 0u);
  }
}

TEST_F(CliOutputTargets, JsonToDevStdoutWorksIntoAPipeAndAFile) {
  for (const bool pipe : {true, false}) {
    const test::ProgramResult r = run(shortRunWithJsonTo("/dev/stdout"), pipe);
    EXPECT_EQ(r.status, 0) << "pipe=" << pipe << ": " << r.err;
    EXPECT_EQ(instructionsIn(r.out), 1000) << "pipe=" << pipe << ": " << r.out.substr(0, 300);
    EXPECT_EQ(entries(), 0u);
  }
}

TEST_F(CliOutputTargets, JsonToDevNullAndToAFifoAreWrittenInPlace) {
  const test::ProgramResult null = run(shortRunWithJsonTo("/dev/null"));
  EXPECT_EQ(null.status, 0) << null.err;
  EXPECT_NE(null.out.find("total: 1000 instructions"), std::string::npos) << null.out;
  // A FIFO with a reader (a thread of this test): the JSON goes through it whole and no file appears beside it.
  const fs::path fifo = dir_ / "stats.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  std::string received;
  std::atomic<bool> done{false};
  std::thread drain([&] {
    char buf[65536];
    while (true) {
      const ssize_t n = ::read(reader, buf, sizeof buf);
      if (n > 0) {
        received.append(buf, std::size_t(n));
      } else if (done) {
        break;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
  });
  const test::ProgramResult r = run(shortRunWithJsonTo("stats.fifo"));
  done = true;
  drain.join();
  ::close(reader);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(instructionsIn(received), 1000) << received.substr(0, 300);
  EXPECT_EQ(entries(), 1u) << "a temporary file was left beside the FIFO";
}

TEST_F(CliOutputTargets, ATextTraceToDashGoesToStandardOutputWhole) {
  const test::ProgramResult r = run({"trace", "gen", "gen:alu,count=100", "--format", "text", "-o", "-"}, true);
  EXPECT_EQ(r.status, 0) << r.err;
  // The header line, then one line per record (each starts with its PC, 0x400000 and up).
  const std::vector<std::string> lines = test::nonEmptyLines(r.out);
  ASSERT_GE(lines.size(), 101u) << r.out.substr(0, 300);
  EXPECT_EQ(lines[0].rfind("# smtlab text trace", 0), 0u) << lines[0];
  for (std::size_t i = 1; i <= 100; ++i) EXPECT_EQ(lines[i].rfind("4", 0), 0u) << "line " << i << ": " << lines[i];
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(CliOutputTargets, ANativeTraceToDashThroughAPipeKeepsTheUnknownCountAndReadsWhole) {
  // A pipe cannot go back to patch the header's record count: the header keeps "unknown" (all ones), which the
  // reader accepts, and every record follows.
  const test::ProgramResult r = run({"trace", "gen", "gen:alu,count=100", "-o", "-"}, true);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_GE(r.out.size(), kNativeHeaderSize);
  EXPECT_EQ(r.out.substr(16, 8), std::string(8, '\xff'));
  const fs::path copy = dir_.path() / "piped.smt";
  std::ofstream(copy, std::ios::binary) << r.out;
  const test::ProgramResult info = run({"trace", "info", copy.string()});
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("100"), std::string::npos) << info.out;
  NativeTraceReader reader(copy.string());
  std::vector<Instr> batch(64);
  std::size_t records = 0;
  for (std::size_t got; (got = reader.read(std::span<Instr>(batch))) > 0;) records += got;
  EXPECT_EQ(records, 100u);
}

}  // namespace
}  // namespace smtlab
