// A native trace that cannot be written completely (disk full, file size limit) ends with one error naming the trace
// and leaves no file behind, in every compression. The failure is made without root or a small file system:
// a forked child runs with RLIMIT_FSIZE (setrlimit(2)) and SIGXFSZ ignored, so write(2) past the limit fails with
// EFBIG, as it fails with ENOSPC on a full disk. Each child runs under a deadline, so a writer that loops on a failed
// write fails the test instead of hanging it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/native_format.hpp"
#include "trace_test_util.hpp"

namespace smtlab {
namespace {

namespace fs = std::filesystem;

// Far below what the traces below take (100 k gen:mix records: about 3 bytes each even compressed, docs/traces.md).
constexpr rlim_t kFileSizeLimit = 64 * 1024;
// Generous for a loaded machine: an intact write of these traces takes well under a second.
constexpr auto kDeadline = std::chrono::seconds(60);

struct LimitedRun {
  bool finished = false;  // false: still running at the deadline (then killed)
  int exitCode = -1;      // -1 when killed by a signal
  std::string output;     // what the child wrote on its pipe (stderr for a program)
};

// Runs `body` in a child whose files may not grow past kFileSizeLimit; the child's fd 2 is a pipe read here.
LimitedRun runWithFileSizeLimit(const std::function<int()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 2);
    ::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the process instead of failing the write
    const rlimit limit{kFileSizeLimit, kFileSizeLimit};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::_exit(body());
  }
  ::close(fds[1]);
  LimitedRun run;
  const auto stop = std::chrono::steady_clock::now() + kDeadline;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(stop - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child closed its end: it has ended (or closed stderr)
    run.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (std::chrono::steady_clock::now() < stop && ::waitpid(pid, &status, WNOHANG) == 0) ::usleep(10000);
  if (::waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return run;
  }
  run.finished = true;
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// A directory of its own, so that a leftover temporary file shows.
class ScratchDirectory {
 public:
  ScratchDirectory() : path_(fs::temp_directory_path() / ("smtlab-write-failure-" + std::to_string(::getpid()) + "-" +
                                                          std::to_string(counter_++))) {
    fs::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
    return names;
  }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string fileSizeLimitMessage(const std::string& trace) {
  return trace + ": write failed: the file is larger than allowed (file size limit reached)";
}

class NativeWriteFailure : public ::testing::TestWithParam<Compression> {};

TEST_P(NativeWriteFailure, AWriteThatFailsEndsInOneErrorAndLeavesNoFile) {
  ScratchDirectory dir;
  const std::string trace = dir.file("t.smt");
  const LimitedRun run = runWithFileSizeLimit([&] {
    try {
      auto gen = makeGenerator("gen:mix,count=100000");
      writeNativeTrace(*gen, trace, GetParam());
    } catch (const TraceError& e) {
      std::fputs(e.what(), stderr);
      return 1;
    }
    return 0;
  });
  ASSERT_TRUE(run.finished) << compressionName(GetParam()) << ": the writer still ran after " << kDeadline.count()
                            << " s (killed)";
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_EQ(run.output, fileSizeLimitMessage(trace));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{});  // neither the trace nor its temporary file
}

INSTANTIATE_TEST_SUITE_P(AllCompressions, NativeWriteFailure,
                         ::testing::Values(Compression::None, Compression::Zstd, Compression::Xz),
                         [](const auto& info) { return std::string(compressionName(info.param)); });

// The program: `trace gen` and `trace convert` end with one line and status 1, leaving nothing in the folder.
class TraceCommandWriteFailure : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    if (!fs::exists(SMTLAB_BINARY)) GTEST_SKIP() << "smtlab program not built";
  }
};

LimitedRun runSmtlabWithFileSizeLimit(std::vector<std::string> args) {
  args.insert(args.begin(), SMTLAB_BINARY);
  return runWithFileSizeLimit([&] {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());  // an ignored signal stays ignored, and the limit stays, across exec
    std::fprintf(stderr, "cannot run %s: %s\n", argv[0], std::strerror(errno));
    return 127;
  });
}

TEST_P(TraceCommandWriteFailure, GenAndConvertEndWithOneLineAndNoFile) {
  const std::string compression = GetParam();
  ScratchDirectory input, output;
  const std::string source = input.file("in.smt");
  auto gen = makeGenerator("gen:mix,count=100000");
  writeNativeTrace(*gen, source, Compression::None);  // written here, without the limit
  const std::string trace = output.file("t.smt");
  const std::string expected = "smtlab trace: error: " + fileSizeLimitMessage(trace) + "\n";

  const LimitedRun generated = runSmtlabWithFileSizeLimit(
      {"trace", "gen", "gen:mix", "-n", "100000", "-o", trace, "--compression", compression});
  ASSERT_TRUE(generated.finished) << "trace gen still ran after " << kDeadline.count() << " s (killed)";
  EXPECT_EQ(generated.exitCode, 1);
  EXPECT_EQ(generated.output, expected);
  EXPECT_EQ(output.entries(), std::vector<std::string>{});

  const LimitedRun converted =
      runSmtlabWithFileSizeLimit({"trace", "convert", source, trace, "--compression", compression});
  ASSERT_TRUE(converted.finished) << "trace convert still ran after " << kDeadline.count() << " s (killed)";
  EXPECT_EQ(converted.exitCode, 1);
  EXPECT_EQ(converted.output, expected);
  EXPECT_EQ(output.entries(), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(CompressedOutputs, TraceCommandWriteFailure, ::testing::Values("zstd", "xz"));

}  // namespace
}  // namespace smtlab
