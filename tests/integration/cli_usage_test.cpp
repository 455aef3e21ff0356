// Usage errors of the command line: no command, an unknown command, or a command with nothing to work on (run,
// trace, config without arguments). Each prints the usage (or one line naming the unknown command) on stderr, nothing
// on stdout, and ends with exit status 2, as POSIX utilities and the argparse-based subcommands do; --help prints the
// same usage on stdout with exit status 0.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"

namespace smtlab {
namespace {

class CliUsage : public ::testing::Test {
 protected:
  test::ScratchDir io_{"cli-usage-io"};
  test::ProgramResult run(const std::vector<std::string>& args) const { return test::runProgram(args, io_.path()); }
};

// The line each usage text starts its synopsis with (from each command's --help).
struct UsageCase {
  std::vector<std::string> args;
  std::string synopsis;
};

const std::vector<UsageCase>& usageCases() {
  static const std::vector<UsageCase> cases{
      {{}, "usage: smtlab COMMAND"},
      {{"run"}, "usage: smtlab run [options] TRACE..."},
      {{"trace"}, "smtlab trace gen SPEC -o FILE"},
      {{"config"}, "usage: smtlab config show"},
  };
  return cases;
}

TEST_F(CliUsage, NoCommandOrNoSubcommandPrintsTheUsageOnStderrWithStatusTwo) {
  for (const UsageCase& c : usageCases()) {
    const std::string label = c.args.empty() ? "smtlab" : "smtlab " + c.args[0];
    const test::ProgramResult r = run(c.args);
    EXPECT_EQ(r.status, 2) << label << "\nstderr: " << r.err;
    EXPECT_EQ(r.out, "") << label;
    EXPECT_NE(r.err.find(c.synopsis), std::string::npos) << label << "\nstderr: " << r.err;
  }
}

TEST_F(CliUsage, HelpPrintsTheSameUsageOnStdoutWithStatusZero) {
  for (const UsageCase& c : usageCases()) {
    std::vector<std::string> args = c.args;
    args.push_back("--help");
    const std::string label = "smtlab " + (c.args.empty() ? std::string() : c.args[0] + " ") + "--help";
    const test::ProgramResult help = run(args);
    EXPECT_EQ(help.status, 0) << label << "\nstderr: " << help.err;
    EXPECT_EQ(help.err, "") << label;
    EXPECT_NE(help.out.find(c.synopsis), std::string::npos) << label << "\nstdout: " << help.out;
    // Without --help the same text, on the other stream.
    EXPECT_EQ(run(c.args).err, help.out) << label;
  }
}

TEST_F(CliUsage, AnUnknownCommandIsOneLineOnStderrWithStatusTwo) {
  const test::ProgramResult r = run({"simulate", "gen:alu"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> lines = test::nonEmptyLines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0], "smtlab: error: unknown command 'simulate' (try smtlab --help)");
}

}  // namespace
}  // namespace smtlab
