// `smtlab trace gen SPEC -n N` writes N records: a generator spec without count= takes its count from -n (gen:mix's
// own default, 1,000,000, would end the output first); a spec whose count= is below N writes that many, with one
// note saying so. A generator that spends seconds before its first record (ordering a pointer chase's lines at random
// over a footprint of 1 GiB or more) says so on stderr before and after.
#include <gtest/gtest.h>

#include <string>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"

namespace smtlab {
namespace {

class CliTraceCount : public ::testing::Test {
 protected:
  test::ScratchDir io_{"cli-trace-count-io"};
  test::ScratchDir out_{"cli-trace-count-out"};
};

TEST_F(CliTraceCount, MinusNSetsTheCountOfAGeneratorWhoseSpecGivesNone) {
  const std::string file = (out_.path() / "mix.smt").string();
  const test::ProgramResult r = test::runProgram({"trace", "gen", "gen:mix", "-n", "1000001", "-o", file}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "wrote 1000001 records to " + file + " (native)\n");
}

TEST_F(CliTraceCount, ACountInTheSpecBelowMinusNIsKeptAndSaidInOneNote) {
  const std::string file = (out_.path() / "short.smt").string();
  const test::ProgramResult r =
      test::runProgram({"trace", "gen", "gen:mix,count=1000", "-n", "5000", "-o", file}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "wrote 1000 records to " + file +
                       " (native)\nnote: 'gen:mix,count=1000' has only 1000 records, fewer than -n 5000\n");
}

TEST_F(CliTraceCount, AGibibyteChaseSaysItIsOrderingItsLinesBeforeTheFirstRecord) {
  const std::string file = (out_.path() / "chase.smt").string();
  const test::ProgramResult r =
      test::runProgram({"trace", "gen", "gen:chase,footprint=1g", "-n", "1", "-o", file}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  // 1 GiB / 64-byte lines = 16,777,216 lines.
  EXPECT_TRUE(r.err.starts_with("smtlab: gen:chase: putting the 16777216 lines of a 1024 MiB footprint in a random "
                                "order before the first instruction ...\nsmtlab: gen:chase: ordered in "))
      << r.err;
  EXPECT_TRUE(r.err.ends_with(" s\nwrote 1 records to " + file + " (native)\n")) << r.err;
}

TEST_F(CliTraceCount, ADefaultChaseStartsWithoutANote) {
  const std::string file = (out_.path() / "chase64m.smt").string();
  const test::ProgramResult r = test::runProgram({"trace", "gen", "gen:chase", "-n", "1", "-o", file}, io_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "wrote 1 records to " + file + " (native)\n");
}

}  // namespace
}  // namespace smtlab
