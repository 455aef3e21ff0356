// Messages about tokens that are not UTF-8 (a --set key or value, a word of a text trace, a generator spec, a preset
// name) show each such byte as \xHH: the one line on stderr is valid UTF-8 text that names the byte.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "cli_program.hpp"
#include "program_output.hpp"

namespace smtlab {
namespace {

// True when `text` is well-formed UTF-8 (RFC 3629), checked here independently of the program's own escaping.
bool isUtf8(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t n = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

class CliMessageBytes : public ::testing::Test {
 protected:
  test::ScratchDir dir_{"cli-message-bytes"};
  test::ScratchDir io_{"cli-message-bytes-io"};

  // Exit status 1, one line on stderr, valid UTF-8, holding every fragment.
  void expectEscaped(const std::vector<std::string>& args, const std::vector<std::string>& fragments) const {
    const test::ProgramResult r = test::runProgram(args, io_.path());
    EXPECT_EQ(r.status, 1) << r.err;
    const std::vector<std::string> lines = test::nonEmptyLines(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_TRUE(isUtf8(lines[0])) << "not UTF-8: " << lines[0];
    for (const std::string& f : fragments) EXPECT_NE(lines[0].find(f), std::string::npos) << f << " in " << lines[0];
  }
};

TEST_F(CliMessageBytes, ASetValueOrKeyWithAByteThatIsNotUtf8IsQuotedWithTheByteAsHex) {
  expectEscaped({"config", "show", "--set", "core.rob.entries=6\xff" "4"}, {"got string \"6\\xff4\""});
  expectEscaped({"config", "show", "--set", "co\xffre.rob.entries=64"}, {"unknown key 'co\\xffre.rob.entries'"});
}

TEST_F(CliMessageBytes, ATextTraceWordAndAGeneratorSpecWithSuchAByteAreQuotedWithTheByteAsHex) {
  const std::string trace = (dir_ / "t.txt").string();
  std::ofstream(trace, std::ios::binary) << "# smtlab text trace v1\n400000 in\xfft dst=r0\n";
  expectEscaped({"trace", "info", trace}, {"t.txt:2", "unknown op 'in\\xfft'"});
  expectEscaped({"run", "gen:al\xe9u"}, {"unknown generator 'al\\xe9u'"});
}

}  // namespace
}  // namespace smtlab
