// Running the smtlab program from a test: with its stdout and stderr captured, a time limit (a case that would run for
// ever fails instead of hanging the suite), optionally in a given folder, as another user, or with stdout a pipe.
// Shared by the command-line test files of test_integration (one unity build: helpers live here, defined once).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "program_output.hpp"

namespace smtlab::test {

// The program under test; SMTLAB_TEST_BINARY may name another build of it (to show that a case fails on a build
// without the fix).
inline const char* smtlabBinary() {
  const char* other = std::getenv("SMTLAB_TEST_BINARY");
  return other != nullptr && *other != '\0' ? other : SMTLAB_BINARY;
}

// True when a user other than the owner may enter `dir` and every folder above it (o+x all the way up).
inline bool reachableByOthers(const std::filesystem::path& dir) {
  for (std::filesystem::path p = std::filesystem::absolute(dir);; p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
    if (p == p.root_path()) return true;
  }
}

// A copy of the program that an unprivileged user can execute wherever the checkout lives: the build folder may sit
// under a folder closed to others (root's home is 0700), so the copy goes to a new folder (mode 0755) in the first
// of $TMPDIR, /tmp, /var/tmp and /dev/shm that others can reach. Made once per test process and removed at its
// exit. The program links the model statically, so the copy runs alone; it still reads presets from the checkout.
class ReachableProgram {
 public:
  static const std::string& path() {
    static const ReachableProgram copy;
    return copy.program_;
  }
  ReachableProgram(const ReachableProgram&) = delete;
  ReachableProgram& operator=(const ReachableProgram&) = delete;

 private:
  ReachableProgram() {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const fs::path& base : {fs::temp_directory_path(ec), fs::path("/tmp"), fs::path("/var/tmp"),
                                fs::path("/dev/shm")}) {
      if (base.empty() || !reachableByOthers(base)) continue;
      std::string pattern = (base / "smtlab-reachable-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) continue;
      dir_ = pattern;
      ::chmod(dir_.c_str(), 0755);
      program_ = (dir_ / "smtlab").string();
      fs::copy_file(smtlabBinary(), program_, fs::copy_options::overwrite_existing, ec);
      ::chmod(program_.c_str(), 0755);
      if (!ec) return;
    }
    program_ = smtlabBinary();  // nowhere reachable: the user's run reports exit status 127
  }
  ~ReachableProgram() {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  std::string program_;
};

struct ProgramOptions {
  int limitSeconds = 60;
  uid_t asUser = 0;                // with a uid, the child drops root to it (and runs ReachableProgram's copy)
  std::filesystem::path cwd;       // entered before the uid is dropped, so it may lie under a closed folder
  bool stdoutIsPipe = false;       // stdout a pipe that the test reads, rather than a file
  std::vector<std::pair<std::string, std::string>> env;  // variables set in the child's environment
};

// Runs the program with `args`; stdout and stderr are captured through files in `ioDir`.
inline ProgramResult runProgram(const std::vector<std::string>& args, const std::filesystem::path& ioDir,
                                const ProgramOptions& options = {}) {
  const std::string program = options.asUser != 0 ? ReachableProgram::path() : smtlabBinary();
  const std::string outPath = (ioDir / "stdout").string(), errPath = (ioDir / "stderr").string();
  std::vector<std::string> argv0{program};
  argv0.insert(argv0.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv0) argv.push_back(a.data());
  argv.push_back(nullptr);
  int pipeFds[2] = {-1, -1};
  if (options.stdoutIsPipe && ::pipe(pipeFds) != 0) ADD_FAILURE() << "pipe: " << std::strerror(errno);
  const int in = ::open("/dev/null", O_RDONLY);
  const int out = options.stdoutIsPipe ? pipeFds[1] : ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (pipeFds[0] >= 0) ::close(pipeFds[0]);
    for (const auto& [name, value] : options.env) ::setenv(name.c_str(), value.c_str(), 1);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(125);
    if (options.asUser != 0 && (::setgid(options.asUser) != 0 || ::setuid(options.asUser) != 0)) ::_exit(126);
    ::execv(program.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(in);
  ::close(out);
  ::close(err);
  ProgramResult r;
  if (pid < 0) {
    ADD_FAILURE() << "cannot start " << program;
    if (pipeFds[0] >= 0) ::close(pipeFds[0]);
    return r;
  }
  if (pipeFds[0] >= 0) ::fcntl(pipeFds[0], F_SETFL, O_NONBLOCK);
  auto drain = [&] {
    char buf[65536];
    for (ssize_t n; pipeFds[0] >= 0 && (n = ::read(pipeFds[0], buf, sizeof buf)) > 0;) r.out.append(buf, std::size_t(n));
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.limitSeconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    drain();
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "smtlab did not finish within " << options.limitSeconds << " s (killed)";
      status = -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  drain();
  if (status != -1) r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (pipeFds[0] >= 0) {
    ::close(pipeFds[0]);
  } else {
    r.out = slurp(outPath);
  }
  r.err = slurp(errPath);
  return r;
}

}  // namespace smtlab::test
