// Live tracing (exec: sources): the command line split as a shell would, the streamed records equal to a recording of
// the same program, and the ends a program can come to (exit, non-zero exit, a signal, a second thread, a reader that
// stops early). The QEMU cases are skipped (with the reason) when qemu-x86_64, the plugin, capstone or cc is missing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "smtlab/common/error.hpp"
#include "snippet_program.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/sim/run.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "smtlab/tracer/exec_source.hpp"
#include "smtlab/tracer/recorder.hpp"

namespace smtlab {
namespace {
namespace fs = std::filesystem;

using Words = std::vector<std::string>;

TEST(SplitCommandLine, SplitsAsAShellWouldWithoutExpanding) {
  EXPECT_EQ(splitCommandLine("gzip  -9\t-c file", "t"), (Words{"gzip", "-9", "-c", "file"}));
  EXPECT_EQ(splitCommandLine("'a b' c", "t"), (Words{"a b", "c"}));
  EXPECT_EQ(splitCommandLine(R"("say \"hi\" \$HOME \\ \n")", "t"), (Words{R"(say "hi" $HOME \ \n)"}));
  EXPECT_EQ(splitCommandLine(R"(a\ b 'x'"y"z)", "t"), (Words{"a b", "xyz"}));
  EXPECT_EQ(splitCommandLine("sh -c 'kill -SEGV $$'", "t"), (Words{"sh", "-c", "kill -SEGV $$"}));
  EXPECT_EQ(splitCommandLine("''", "t"), (Words{""}));
}

TEST(SplitCommandLine, RefusesWhatAShellWouldNotRun) {
  for (const std::string bad : {"", "   ", "'open", "\"open", "trailing\\"}) {
    try {
      splitCommandLine(bad, "source 'exec:x'");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("source 'exec:x'"), std::string::npos) << e.what();
    }
  }
}

fs::path execScratch() { return test::tracerScratchDir(); }
std::string execSnippet() { return test::snippetProgram(); }

// smtlab-exec-* folders in `dir`: a source leaves none behind.
std::size_t execFolders(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().rfind("smtlab-exec-", 0) == 0;
  return n;
}

// Each test gets a TMPDIR of its own, so that the sources of tests running at the same time in other processes do
// not count as this one's leftovers.
class ExecSource : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = tracerUnavailableReason()) GTEST_SKIP() << "tracer unavailable: " << *why;
    if (execSnippet().empty()) GTEST_SKIP() << "no C compiler (cc) to assemble snippet.S";
    const char* old = std::getenv("TMPDIR");
    oldTmp_ = old != nullptr ? old : "";
    hadTmp_ = old != nullptr;
    tmp_ = execScratch() / ("tmp-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(tmp_);
    ::setenv("TMPDIR", tmp_.c_str(), 1);
  }
  void TearDown() override {
    if (IsSkipped()) return;
    hadTmp_ ? ::setenv("TMPDIR", oldTmp_.c_str(), 1) : ::unsetenv("TMPDIR");
    EXPECT_EQ(execFolders(tmp_), 0u) << "an exec: source left its folder behind";
  }
  fs::path tmp_;
  std::string oldTmp_;
  bool hadTmp_ = false;
};

TEST_F(ExecSource, StreamsExactlyWhatARecordingHolds) {
  RecordOptions o;
  o.outPrefix = (execScratch() / "snippet_rec").string();
  o.command = {execSnippet()};
  o.quiet = true;
  const RecordResult r = recordProgram(o);
  NativeTraceReader reader(r.threads.at(0).path);
  const std::vector<Instr> recorded = readAll(reader);
  ASSERT_EQ(recorded.size(), 4019u);
  auto live = openTrace("exec:" + execSnippet());
  EXPECT_EQ(readAll(*live), recorded);
  live->rewind();  // runs the program again
  EXPECT_EQ(readAll(*live), recorded);
}

TEST_F(ExecSource, AProgramKilledByASignalEndsTheRunWithOneMessage) {
  auto live = openTrace("exec:/bin/sh -c 'kill -SEGV $$'");
  try {
    readAll(*live);
    ADD_FAILURE() << "a crash passed for an end";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("killed by SIGSEGV"), std::string::npos) << e.what();
  }
}

TEST_F(ExecSource, ANonZeroExitEndsTheTraceThere) {
  auto live = openTrace("exec:/bin/false");
  EXPECT_GT(readAll(*live).size(), 1000u);  // the dynamic loader and false's start-up ran
}

TEST_F(ExecSource, ASecondThreadIsRefused) {
  const fs::path bin = execScratch() / "msgpass";
  const std::string cc = "cc -O2 -static -pthread -o " + bin.string() + " " SMTLAB_SOURCE_DIR
                         "/workloads/kernels/msgpass.c >/dev/null 2>&1";
  if (std::system(cc.c_str()) != 0) GTEST_SKIP() << "cannot build msgpass.c statically";
  auto live = openTrace("exec:" + bin.string() + " 200000");
  try {
    readAll(*live);
    ADD_FAILURE() << "a second thread passed";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("second thread"), std::string::npos) << e.what();
  }
}

TEST_F(ExecSource, AReaderThatStopsEarlyStopsTheProgram) {
  // An endless program: the reader takes 100 000 records and lets go; QEMU, blocked on the full FIFO, is killed and
  // the folder removed at once (TearDown checks the folder).
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto live = openTrace("exec:/bin/sh -c 'while :; do :; done'");
    std::vector<Instr> batch(1000);
    std::size_t n = 0;
    while (n < 100'000) n += live->read(batch);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
}

TEST_F(ExecSource, ASampledRunOfTwoLiveProgramsFindsTheDetailedIpcs) {
  // gzip -9 and bzip2 -9 of 10 kB of text (a few million instructions each), streamed live on the two threads of one
  // netburst core from start to end, sampled and in full detail: each thread's IPC near the detailed one.
  const fs::path text = execScratch() / "text.txt";
  {
    std::ofstream out(text);
    for (int i = 0; out.tellp() < 10'000; ++i) {
      out << "line " << i << " of a text that compresses, more or less " << i * i % 977 << "\n";
    }
  }
  for (const char* tool : {"/usr/bin/gzip", "/usr/bin/bzip2"}) {
    if (!fs::exists(tool)) GTEST_SKIP() << tool << " is not installed";
  }
  const std::vector<std::string> specs{"exec:/usr/bin/gzip -9 -c " + text.string(),
                                       "exec:/usr/bin/bzip2 -9 -c " + text.string()};
  const Config config = loadConfig("netburst");
  const auto detailed = runTraces(config, specs, {}).stats;
  RunOptions options;
  SampleOptions s;
  s.period = 100'000;
  s.window = 5'000;
  s.warmup = 5'000;
  options.sample = s;
  const auto sampled = runTraces(config, specs, options).stats;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& d = detailed.at("logical_cpus").as_array().at(i).as_object();
    const auto& c = sampled.at("logical_cpus").as_array().at(i).as_object();
    EXPECT_EQ(c.at("instructions").to_number<std::uint64_t>(), d.at("instructions").to_number<std::uint64_t>());
    // Within 1.5 half-widths, about three standard errors: a 95 % interval misses one case in twenty, and these
    // short whole programs (tens of windows, a reading, a compressing and a writing phase) are one fixed case each.
    EXPECT_LE(std::abs(c.at("ipc").to_number<double>() - d.at("ipc").to_number<double>()),
              1.5 * c.at("ipc_ci95").to_number<double>())
        << specs[i] << ": detailed " << d.at("ipc") << ", sampled " << c.at("ipc") << " +- " << c.at("ipc_ci95");
  }
}

TEST_F(ExecSource, ABadCommandIsOneMessageBeforeAnythingRuns) {
  EXPECT_THROW(openTrace("exec:/nonexistent/program"), TraceError);
  EXPECT_THROW(openTrace("exec:'unterminated"), UsageError);
  EXPECT_THROW(openTrace("exec:"), UsageError);
}

}  // namespace
}  // namespace smtlab
