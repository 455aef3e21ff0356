// Atomic outputs: nothing appears under the real name until commit; a failed or abandoned output leaves no file;
// bad destinations are refused before anything is written, with the reason; an input is never its own output.
#include "smtlab/common/output_file.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
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

TEST_F(OutputFileTest, AReplacedFileKeepsItsPermissionBits) {
  const fs::path target = dir_ / "private.json";
  std::ofstream(target) << "old";
  fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);  // 0640
  writeFileAtomically(target, "new");
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

// An output named by a symbolic link is written where the link points, as a shell's `>` writes, and the link stays.
// Before, the rename replaced the link with a regular file and left the file it named as it was.
TEST_F(OutputFileTest, ASymbolicLinkIsWrittenThrough) {
  fs::create_directories(dir_ / "real");
  const fs::path real = dir_ / "real" / "stats.json";
  std::ofstream(real) << "old";
  fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write);  // 0600: kept, not the umask's 0644
  fs::create_symlink("real/stats.json", dir_ / "link.json");                // relative to the link's folder
  writeFileAtomically(dir_ / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(slurp(real), "new");
  struct stat st {};
  ASSERT_EQ(::stat(real.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(entries(), 2u);  // link.json and real/: no temporary file left in either folder
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "real"), {}), 1);
  // A link to a link is followed to the end; a dangling link's file is created where it points.
  fs::create_symlink("link.json", dir_ / "link2.json");
  writeFileAtomically(dir_ / "link2.json", "newer");
  EXPECT_EQ(slurp(real), "newer");
  fs::create_symlink(dir_ / "real" / "new.json", dir_ / "dangling.json");  // absolute
  writeFileAtomically(dir_ / "dangling.json", "created");
  EXPECT_TRUE(fs::is_symlink(dir_ / "dangling.json"));
  EXPECT_EQ(slurp(dir_ / "real" / "new.json"), "created");
  // A link that points to itself is refused by name, before anything is written.
  fs::create_symlink("loop.json", dir_ / "loop.json");
  const std::string loop = messageOf([&] { checkOutputPath(dir_ / "loop.json", "JSON output"); });
  EXPECT_NE(loop.find("cannot write JSON output '"), std::string::npos) << loop;
  EXPECT_NE(loop.find("loop.json': too many levels of symbolic links"), std::string::npos) << loop;
}

TEST_F(OutputFileTest, BadDestinationsNameTheReason) {
  EXPECT_NE(messageOf([&] { checkOutputPath(dir_ / "missing" / "x.json"); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { checkOutputPath(dir_); }).find("is a directory"), std::string::npos);
  std::ofstream(dir_ / "file") << "x";
  EXPECT_NE(messageOf([&] { checkOutputPath(dir_ / "file" / "x.json"); }).find("not a directory"),
            std::string::npos);
  EXPECT_NE(messageOf([&] { checkOutputPath(""); }).find("the path is empty"), std::string::npos);
  // A socket can be neither renamed onto nor opened for writing.
  const fs::path socketPath = dir_ / "s.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socketPath.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0) << socketPath;
  EXPECT_NE(messageOf([&] { checkOutputPath(socketPath); }).find("a socket"), std::string::npos);
  ::close(fd);
  if (::geteuid() != 0) {  // root may write anywhere: the permission case can only be checked as another user
    fs::create_directories(dir_ / "ro");
    fs::permissions(dir_ / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    EXPECT_NE(messageOf([&] { checkOutputPath(dir_ / "ro" / "x"); }).find("not writable"), std::string::npos);
    fs::permissions(dir_ / "ro", fs::perms::owner_all);
  }
}

TEST_F(OutputFileTest, StreamTargetsAreWrittenInPlaceWithNoTemporaryFile) {
  EXPECT_TRUE(isStreamTarget("-"));
  EXPECT_TRUE(isStreamTarget("/dev/stdout"));
  EXPECT_TRUE(isStreamTarget("/dev/null"));
  EXPECT_FALSE(isStreamTarget(dir_ / "out.json"));
  EXPECT_TRUE(isStandardOutput("-"));
  EXPECT_FALSE(isStandardOutput(dir_ / "out.json"));
  EXPECT_NO_THROW(checkOutputPath("/dev/null"));
  EXPECT_NO_THROW(writeFileAtomically("/dev/null", "{}\n", "JSON output"));
  // A FIFO: what is written arrives at its reader, and nothing is made beside it.
  const fs::path fifo = dir_ / "out.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  {
    OutputFile out(fifo, std::ios::binary, "JSON output");
    EXPECT_EQ(out.tempPath(), fifo);
    out.stream() << "{\"a\": 1}";
    out.commit();
  }
  char buf[64] = {};
  EXPECT_EQ(::read(reader, buf, sizeof buf - 1), 8);
  ::close(reader);
  EXPECT_EQ(std::string(buf), "{\"a\": 1}");
  EXPECT_EQ(entries(), 1u);
  EXPECT_TRUE(fs::is_fifo(fifo));
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
