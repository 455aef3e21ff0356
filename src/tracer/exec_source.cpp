// exec: sources: a program under QEMU streaming its main thread's instructions through a FIFO (exec_source.hpp).
#include "smtlab/tracer/exec_source.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/tracer/program_file.hpp"
#include "smtlab/tracer/recorder.hpp"

namespace smtlab {

namespace fs = std::filesystem;

namespace {

constexpr int kPollMilliseconds = 100;
// Chosen: QEMU and the plugin start in well under a second; a block file still missing after this means QEMU did not
// start the plugin (its own message is on stderr).
constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr std::string_view kPrefix = "exec:";

}  // namespace

std::vector<std::string> splitCommandLine(const std::string& command, const std::string& what) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord) words.push_back(std::move(word)), word.clear(), inWord = false;
    } else if (c == '\'') {
      const std::size_t end = command.find('\'', i + 1);
      if (end == std::string::npos) throw UsageError(fmt::format("{}: unterminated ' quote", what));
      word.append(command, i + 1, end - i - 1);
      i = end;
      inWord = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < command.size() && command[j] != '"'; ++j) {
        if (command[j] == '\\' && j + 1 < command.size() &&
            std::string_view("\"\\$`").find(command[j + 1]) != std::string_view::npos) {
          ++j;
        }
        word.push_back(command[j]);
      }
      if (j >= command.size()) throw UsageError(fmt::format("{}: unterminated \" quote", what));
      i = j;
      inWord = true;
    } else if (c == '\\') {
      if (i + 1 >= command.size()) throw UsageError(fmt::format("{}: a backslash ends the command", what));
      word.push_back(command[++i]);
      inWord = true;
    } else {
      word.push_back(c);
      inWord = true;
    }
  }
  if (inWord) words.push_back(std::move(word));
  if (words.empty()) throw UsageError(fmt::format("{}: no program given (exec:PROGRAM ARGS...)", what));
  return words;
}

ExecTraceSource::ExecTraceSource(const std::string& spec)
    : RawTraceSource(nullptr, spec, RawDecodeOptions{.dropLastBlock = false}, CustomInput{}), spec_(spec) {
  const std::string what = fmt::format("source {}", shortQuote(spec));
  if (spec.rfind(kPrefix, 0) != 0) throw UsageError(fmt::format("{}: not an exec: source", what));
  if (auto why = tracerUnavailableReason()) throw TraceError(fmt::format("{}: cannot trace: {}", what, *why));
  try {
    command_ = resolveTracedProgram(splitCommandLine(spec.substr(kPrefix.size()), what));
  } catch (const TraceError& e) {
    std::string message = e.what();
    if (message.rfind("trace record: ", 0) == 0) message.erase(0, 14);
    throw TraceError(fmt::format("{}: {}", what, message));
  }
  start();
  begin();
}

ExecTraceSource::~ExecTraceSource() { stop(); }

void ExecTraceSource::start() {
  std::string pattern = (fs::temp_directory_path() / "smtlab-exec-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw TraceError(fmt::format("{}: cannot make a temporary folder: {}", spec_, std::strerror(errno)));
  }
  folder_ = pattern;
  prefix_ = folder_ + "/stream";
  const std::string fifo = prefix_ + ".t0.raw";
  if (::mkfifo(fifo.c_str(), 0600) != 0) {
    const int err = errno;
    stop();
    throw TraceError(fmt::format("{}: cannot make a FIFO in {}: {}", spec_, folder_, std::strerror(err)));
  }
  // Opened before QEMU, without blocking, so that the plugin's open for writing finds a reader at once.
  fd_ = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    stop();
    throw TraceError(fmt::format("{}: cannot open the FIFO: {}", spec_, std::strerror(err)));
  }
  std::vector<std::string> argv = {qemuPath(), "-cpu", "max", "-plugin",
                                   fmt::format("{},out={}", fs::absolute(tracerPluginPath()).string(), prefix_)};
  argv.insert(argv.end(), command_.begin(), command_.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) {
    const int err = errno;
    stop();
    throw TraceError(fmt::format("{}: fork failed: {}", spec_, std::strerror(err)));
  }
  if (pid_ == 0) {
    // The program's input is nothing and its output is not smtlab's (it would land in the run's summary); its errors
    // and QEMU's stay on stderr. No core file of a crashing guest in the working directory.
    const struct rlimit noCore {0, 0};
    ::setrlimit(RLIMIT_CORE, &noCore);
    const int devNull = ::open("/dev/null", O_RDWR);
    if (devNull < 0) std::_Exit(127);
    ::dup2(devNull, 0);
    ::dup2(devNull, 1);
    ::execv(cargv[0], cargv.data());
    std::_Exit(127);
  }
  ended_ = false;
  // The block file exists (with its magic) before the guest runs its first instruction.
  const std::string blocks = prefix_ + ".blocks";
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (;;) {
    std::error_code ec;
    if (fs::file_size(blocks, ec) >= 8 && !ec) break;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      ended_ = true;
      pid_ = -1;
      stop();
      throw TraceError(fmt::format("{}: QEMU ended before the program started (status {}; its message, if any, is "
                                   "above)",
                                   spec_, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      stop();
      throw TraceError(fmt::format("{}: the tracer plugin did not start within {} s", spec_, kStartTimeout.count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  table_ = std::make_shared<RawBlockTable>(blocks, true);
  setBlockTable(table_);
}

void ExecTraceSource::stop() {
  // QEMU first: with the FIFO closed under it, the plugin would report a failed write before the kill reached it.
  if (pid_ > 0 && !ended_) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pid_ = -1;
  ended_ = true;
  if (!folder_.empty()) {
    std::error_code ec;
    fs::remove_all(folder_, ec);
    folder_.clear();
  }
}

void ExecTraceSource::restartInput() {
  stop();
  start();
}

bool ExecTraceSource::moreBlocks() { return table_ && table_->refresh(); }

void ExecTraceSource::checkEnd() {
  const std::string program = fs::path(command_.front()).filename().string();
  if (WIFSIGNALED(status_)) {
    throw TraceError(fmt::format("{}: {} was killed by {}; the run stops with it", spec_, program,
                                 signalName(WTERMSIG(status_))));
  }
  const int code = WEXITSTATUS(status_);
  if (code == 125 || (code == 127 && emitted() == 0)) {
    throw TraceError(fmt::format("{}: QEMU or its tracer plugin failed (status {}; its message is above)", spec_, code));
  }
  if (code != 0) {
    std::fprintf(stderr, "%s: %s exited with status %d; its trace ends there\n", spec_.c_str(), program.c_str(), code);
  }
}

std::size_t ExecTraceSource::fillBuffer(char* buf, std::size_t n) {
  if (fd_ < 0) return 0;
  for (;;) {
    const ssize_t got = ::read(fd_, buf, n);
    if (got > 0) return static_cast<std::size_t>(got);
    if (got < 0 && errno != EAGAIN && errno != EINTR) {
      throw TraceError(fmt::format("{}: reading the stream failed: {}", spec_, std::strerror(errno)));
    }
    // Nothing to read: the writer has closed (got == 0 once it had opened, or QEMU has ended), or it is busy.
    if (!ended_) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        status_ = status;
        ended_ = true;
        continue;  // read what it wrote before it ended
      }
    }
    if (ended_ && got <= 0) {
      checkEnd();
      return 0;
    }
    // Live tracing follows one thread: a second one would fill the folder with its stream for nobody.
    std::error_code ec;
    if (fs::exists(prefix_ + ".t1.raw", ec)) {
      stop();
      throw TraceError(fmt::format("{}: the program started a second thread; live tracing follows single-threaded "
                                   "programs (record a multi-threaded one with `smtlab trace record`)",
                                   spec_));
    }
    pollfd p{fd_, POLLIN, 0};
    // A writer that has closed leaves the FIFO "hung up", which poll reports at once: wait a little for QEMU's exit.
    if (::poll(&p, 1, kPollMilliseconds) > 0 && !(p.revents & POLLIN)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace smtlab
