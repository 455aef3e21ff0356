// The table `smtlab run` prints: every IPC and the simulated time with four significant digits, so that a slow
// thread (a pointer chase through DRAM, IPC well below 0.01) and a short run (microseconds) read as numbers rather than
// as 0.004 or 0.000000 s; and a note naming a thread that ran far past -n N while its sibling caught up. The expected
// figures are computed here from the row's own instruction and cycle counts and the clock set on the command line
// (IPC = instructions / cycles; seconds = cycles / (GHz x 1e9)).
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"

namespace smtlab {
namespace {

std::string fourSignificant(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%#.4g", x);
  return buf;
}

// The whitespace-separated fields of a line.
std::vector<std::string> fieldsOf(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;
}

class CliRunSummary : public ::testing::Test {
 protected:
  test::ScratchDir io_{"cli-run-summary-io"};
};

TEST_F(CliRunSummary, APointerChaseShowsItsIpcAndTimeWithFourSignificantDigits) {
  // 64 MB of pointer chase: nearly every load waits for DRAM (hundreds of cycles), so IPC is far below 0.01.
  const test::ProgramResult r = test::runProgram(
      {"run", "-q", "--set", "system.freq_ghz=2.0", "gen:chase,footprint=64m", "-n", "2000"}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = test::nonEmptyLines(r.out);
  ASSERT_GE(lines.size(), 3u) << r.out;
  const std::vector<std::string> row = fieldsOf(lines[1]);  // cpu core instructions cycles IPC ...
  ASSERT_GE(row.size(), 5u) << lines[1];
  const double instructions = std::stod(row[2]), cycles = std::stod(row[3]);
  EXPECT_EQ(instructions, 2000);
  const double ipc = instructions / cycles;
  EXPECT_GT(ipc, 0.0005) << lines[1];
  EXPECT_LT(ipc, 0.01) << lines[1];
  EXPECT_EQ(row[4], fourSignificant(ipc)) << lines[1];
  // The total's cycles at 2 GHz, in microseconds (between 1 and 1000 of them: 2000 loads of 100-500 ns each).
  const std::vector<std::string> total = fieldsOf(lines[2]);  // total: N instructions measured in C cycles (T µs ...
  ASSERT_GE(total.size(), 9u) << lines[2];
  const double totalCycles = std::stod(total[5]);
  const double micro = totalCycles / 2.0e9 * 1e6;
  ASSERT_GT(micro, 1.0);
  ASSERT_LT(micro, 1000.0);
  EXPECT_EQ(total[7], "(" + fourSignificant(micro)) << lines[2];
  EXPECT_EQ(total[8], "µs") << lines[2];
}

TEST_F(CliRunSummary, ANanosecondRunShowsItsTimeInNanoseconds) {
  // 100 ALU instructions from a cold start (instruction fetch from DRAM) take about a thousand cycles: at 4 GHz, a
  // few hundred nanoseconds.
  const test::ProgramResult r =
      test::runProgram({"run", "-q", "--set", "system.freq_ghz=4.0", "gen:alu,count=100"}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> lines = test::nonEmptyLines(r.out);
  ASSERT_GE(lines.size(), 3u) << r.out;
  const std::vector<std::string> total = fieldsOf(lines[2]);
  ASSERT_GE(total.size(), 9u) << lines[2];
  const double nanos = std::stod(total[5]) / 4.0;  // four cycles a nanosecond at 4 GHz
  ASSERT_GE(nanos, 1.0);
  ASSERT_LT(nanos, 1000.0);
  EXPECT_EQ(total[7], "(" + fourSignificant(nanos)) << lines[2];
  EXPECT_EQ(total[8], "ns") << lines[2];
}

TEST_F(CliRunSummary, AThreadThatRanPastNWaitingForItsSiblingIsNamedWithWhenAndHowMuch) {
  // An ALU thread (IPC near 1) reaches 2000 instructions within a few thousand cycles; its sibling's pointer chase
  // needs hundreds of thousands (one DRAM access per load), so the ALU thread runs on for almost the whole run.
  const test::ProgramResult r =
      test::runProgram({"run", "-q", "gen:chase,footprint=64m", "gen:alu", "-n", "2000"}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> notes;
  for (const std::string& line : test::nonEmptyLines(r.out)) {
    if (line.rfind("note: ", 0) == 0) notes.push_back(line);
  }
  ASSERT_EQ(notes.size(), 1u) << r.out;
  EXPECT_NE(notes[0].find("note: cpu 1 reached 2000 instructions at cycle "), std::string::npos) << notes[0];
  EXPECT_EQ(notes[0].find("cpu 0"), std::string::npos) << "the slow thread did not run past N: " << notes[0];
  EXPECT_NE(notes[0].find("its trace restarting whenever it ended) until every thread had 2000"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("for the 4000 measured"), std::string::npos) << notes[0];
}

TEST_F(CliRunSummary, ThreadsThatReachNTogetherOrAloneGetNoNote) {
  for (const std::vector<std::string>& traces :
       {std::vector<std::string>{"gen:alu"}, std::vector<std::string>{"gen:alu", "gen:alu"}}) {
    std::vector<std::string> args{"run", "-q", "-n", "2000"};
    args.insert(args.end(), traces.begin(), traces.end());
    const test::ProgramResult r = test::runProgram(args, io_.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("note:"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace smtlab
