// Runs the smtlab program's trace subcommands end to end (skipped when the program is not built).
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "smtlab/trace/native_format.hpp"
#include "smtlab/trace/vector_source.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

struct CommandResult {
  int status;
  std::string out;
};

CommandResult runSmtlab(const std::string& args) {
  const std::string cmd = std::string(SMTLAB_BINARY) + " " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  CommandResult r{-1, {}};
  if (!p) return r;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

class TraceCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(SMTLAB_BINARY)) GTEST_SKIP() << "smtlab program not built";
  }
};

TEST_F(TraceCommand, GenConvertHeadInfo) {
  test::TempPath text(".txt"), native(".smt");
  ASSERT_EQ(runSmtlab("trace gen gen:spin,pause=1,count=100 -o " + text.str()).status, 0);
  const std::vector<Instr> records = parseTextTrace(test::readFile(text.str()));
  ASSERT_EQ(records.size(), 100u);
  EXPECT_EQ(records[0].op, OpClass::Pause);

  ASSERT_EQ(runSmtlab("trace convert " + text.str() + " " + native.str() + " --compression xz").status, 0);
  EXPECT_TRUE(isNativeTrace(native.str()));
  const CommandResult head = runSmtlab("trace head " + native.str() + " -n 4");
  ASSERT_EQ(head.status, 0);
  EXPECT_EQ(parseTextTrace(head.out), std::vector<Instr>(records.begin(), records.begin() + 4));

  const CommandResult info = runSmtlab("trace info " + native.str());
  ASSERT_EQ(info.status, 0);
  EXPECT_NE(info.out.find("instructions:     100\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("distinct pcs:     4\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("taken 100.0%"), std::string::npos) << info.out;
}

TEST_F(TraceCommand, ErrorsExitNonZero) {
  EXPECT_NE(runSmtlab("trace head gen:nosuch").status, 0);
  EXPECT_NE(runSmtlab("trace info /nonexistent/file.smt").status, 0);
  EXPECT_NE(runSmtlab("trace gen gen:alu,count=0 -o /dev/null").status, 0);  // endless without -n
  EXPECT_NE(runSmtlab("trace frobnicate").status, 0);
}

}  // namespace
}  // namespace smtlab
