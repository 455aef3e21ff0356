// Atomic outputs: nothing appears under the real name until commit; a failed or abandoned output leaves no file;
// bad destinations are refused before anything is written, with the reason; an input is never its own output.
#include "smtlab/common/output_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("smtlab-output-file-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  std::string messageOf(const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

TEST_F(OutputFileTest, NothingUnderTheRealNameUntilCommit) {
  const fs::path target = dir_ / "out.json";
  OutputFile out(target);
  out.stream() << "{\"a\": 1}";
  out.stream().flush();
  EXPECT_FALSE(fs::exists(target));
  EXPECT_TRUE(fs::exists(out.tempPath()));
  EXPECT_EQ(out.tempPath().parent_path(), dir_);  // same directory: the rename is atomic
  out.commit();
  EXPECT_EQ(slurp(target), "{\"a\": 1}");
  EXPECT_EQ(entries(), 1u);  // the temporary file is gone
}

TEST_F(OutputFileTest, AbandonedOutputLeavesNothingAndKeepsTheOldFile) {
  const fs::path target = dir_ / "result.csv";
  std::ofstream(target) << "old complete result\n";
  {
    OutputFile out(target);
    out.stream() << "half of a new res";
    // destroyed without commit, as when the run fails
  }
  EXPECT_EQ(slurp(target), "old complete result\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, CommittedFileHasOrdinaryPermissions) {
  const fs::path target = dir_ / "perm.txt";
  writeFileAtomically(target, "x");
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(OutputFileTest, BadDestinationsNameTheReason) {
  EXPECT_NE(messageOf([&] { checkOutputPath(dir_ / "missing" / "x.json"); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { checkOutputPath(dir_); }).find("is a directory"), std::string::npos);
  std::ofstream(dir_ / "file") << "x";
  EXPECT_NE(messageOf([&] { checkOutputPath(dir_ / "file" / "x.json"); }).find("not a directory"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { checkOutputPath("/dev/null"); }).find("not a regular file"), std::string::npos);
  if (::geteuid() != 0) {  // root may write anywhere: the permission case can only be checked as another user
    fs::create_directories(dir_ / "ro");
    fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(messageOf([&] { checkOutputPath(dir_ / "ro" / "x"); }).find("not writable"), std::string::npos);
    fs::permissions(dir_ / "ro", fs::perms::owner_all);
  }
}

TEST_F(OutputFileTest, TheSameFileByAnotherNameIsRefused) {
  const fs::path input = dir_ / "trace.smt";
  std::ofstream(input) << "precious";
  fs::create_symlink(input, dir_ / "link.smt");
  EXPECT_TRUE(sameFile(input, dir_ / "link.smt"));
  EXPECT_TRUE(sameFile(input, dir_ / "." / "trace.smt"));
  EXPECT_FALSE(sameFile(input, dir_ / "other.smt"));
  EXPECT_NE(messageOf([&] { refuseOverwritingInput(input, dir_ / "link.smt"); }).find("it is the input file"),
            std::string::npos);
  EXPECT_EQ(slurp(input), "precious");
  EXPECT_NO_THROW(refuseOverwritingInput(input, dir_ / "other.smt"));
}

}  // namespace
}  // namespace smtlab
