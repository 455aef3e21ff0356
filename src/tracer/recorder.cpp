#include "smtlab/tracer/recorder.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string_view>
#include <thread>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "smtlab/common/output_file.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/tracer/program_file.hpp"
#include "smtlab/tracer/tracer_revision.hpp"

namespace smtlab {
namespace fs = std::filesystem;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr int kDiskCheckEvery = 5;  // polls: the disk is looked at every 100 ms (about 50 MB of raw stream)

std::uint64_t fileSize(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(n);
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

fs::path directoryOf(const std::string& prefix) {
  const fs::path dir = fs::path(prefix).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

std::uint64_t freeBytes(const fs::path& dir) {
  struct statvfs s {};
  if (::statvfs(dir.c_str(), &s) != 0) return UINT64_MAX;  // unknown: the raw budget and write errors still apply
  return static_cast<std::uint64_t>(s.f_bavail) * s.f_frsize;
}

// An absolute form of a path (an empty one stays empty).
std::string absolute(const std::string& path) { return path.empty() ? path : fs::absolute(path).string(); }

// A copy of a program in a private folder /tmp/smtlab-record-XXXXXX (the same path length everywhere; not $TMPDIR,
// whose length varies), removed with the object.
class PrivateProgramCopy {
 public:
  explicit PrivateProgramCopy(const std::string& program) {
    char pattern[] = "/tmp/smtlab-record-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      throw TraceError(fmt::format("trace record --fixed-env: cannot create a private folder under /tmp: {}",
                                   std::strerror(errno)));
    }
    folder_ = pattern;
    std::error_code ec;
    fs::copy_file(program, fs::path(folder_) / fs::path(program).filename(), ec);
    if (ec) {
      const std::string why = ec.message();
      remove();
      throw TraceError(fmt::format("trace record --fixed-env: cannot copy '{}' to {}: {}", program, folder_, why));
    }
  }
  PrivateProgramCopy(const PrivateProgramCopy&) = delete;
  PrivateProgramCopy& operator=(const PrivateProgramCopy&) = delete;
  ~PrivateProgramCopy() { remove(); }
  const std::string& folder() const { return folder_; }

 private:
  void remove() {
    std::error_code ec;
    if (!folder_.empty()) fs::remove_all(folder_, ec);
    folder_.clear();
  }
  std::string folder_;
};

std::string megabytes(std::uint64_t bytes) { return fmt::format("{:.0f} MB", static_cast<double>(bytes) / 1e6); }

// The signal that interrupted the recording (0: none). Handlers only store it; the poll loop and the decoder act.
std::atomic<int> gInterrupt{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onInterrupt(int sig) { gInterrupt.store(sig); }

// Catches SIGINT, SIGTERM and SIGHUP for the duration of a recording (so that QEMU is killed and the files removed)
// and puts the previous handlers back.
class InterruptGuard {
 public:
  InterruptGuard() {
    gInterrupt.store(0);
    struct sigaction sa {};
    sa.sa_handler = onInterrupt;
    sa.sa_flags = SA_RESTART;  // the flag is looked at between steps; system calls need not fail with EINTR
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~InterruptGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  static void throwIfInterrupted(const std::string& during) {
    if (const int sig = gInterrupt.load()) {
      throw RecordInterrupted(fmt::format("trace record: interrupted by {} {}; nothing was written and every partial "
                                          "file was removed",
                                          signalName(sig), during),
                              sig);
    }
  }

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// The plugin's files (PREFIX.raw.blocks, .events, .tK.raw, .tK.ring): removed when the recording ends, whatever the path out,
// unless --keep-raw asked for them after a successful recording.
class RawFiles {
 public:
  explicit RawFiles(std::string prefix) : prefix_(std::move(prefix)) { removeAll(); }  // stale files of a past run
  ~RawFiles() {
    if (!keep_) removeAll();
  }
  RawFiles(const RawFiles&) = delete;
  RawFiles& operator=(const RawFiles&) = delete;

  const std::string& prefix() const { return prefix_; }
  std::string blocks() const { return prefix_ + ".blocks"; }
  std::string events() const { return prefix_ + ".events"; }
  std::vector<std::string> threads() const { return rawThreadFiles(prefix_); }
  std::string ring(std::size_t k) const { return fmt::format("{}.t{}.ring", prefix_, k); }
  std::uint64_t bytes() const {
    std::uint64_t n = fileSize(blocks());
    for (const auto& f : threads()) n += fileSize(f);
    return n;
  }
  void keep() { keep_ = true; }

 private:
  void removeAll() const {
    std::error_code ec;
    const std::vector<std::string> files = threads();
    for (std::size_t k = 0; k < files.size(); ++k) {
      fs::remove(files[k], ec);
      fs::remove(ring(k), ec);
    }
    fs::remove(blocks(), ec);
    fs::remove(events(), ec);
  }
  std::string prefix_;
  bool keep_ = false;
};

// What the plugin reported in PREFIX.events (see tools/qemu-tracer/smtlab_tracer.c).
struct PluginEvents {
  bool mainCapped = false;
  std::vector<int> cappedThreads;
  std::uint64_t forks = 0;
};

PluginEvents readEvents(const std::string& path) {
  PluginEvents e;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    long long a = -1;
    words >> kind >> a;
    if (!words || a < 0) throw TraceError(fmt::format("{}: bad plugin event line '{}'", path, line.substr(0, 80)));
    if (kind == "cap") {
      e.cappedThreads.push_back(static_cast<int>(a));
      if (a == 0) e.mainCapped = true;
    } else if (kind == "fork") {
      ++e.forks;
    } else {
      throw TraceError(fmt::format("{}: unknown plugin event '{}'", path, line.substr(0, 80)));
    }
  }
  return e;
}

// Passes a raw stream through, checking between batches for an interrupting signal (decoding 200 M instructions
// takes seconds).
class InterruptibleSource : public TraceSource {
 public:
  explicit InterruptibleSource(TraceSource& inner) : inner_(inner) {}
  std::size_t read(std::span<Instr> out) override {
    InterruptGuard::throwIfInterrupted("while decoding");
    return inner_.read(out);
  }
  void rewind() override { inner_.rewind(); }
  std::string describe() const override { return inner_.describe(); }

 private:
  TraceSource& inner_;
};

void killAndReap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::string signalName(int sig) {
  switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return fmt::format("signal {}", sig);
  }
}

std::uint64_t RecordResult::instructions() const {
  std::uint64_t n = 0;
  for (const auto& t : threads) n += t.instructions;
  return n;
}

std::string qemuPath() {
  if (const char* q = std::getenv("SMTLAB_QEMU"); q && *q) {
    const std::string path = findOnPath(q);
    return fs::exists(path) ? path : std::string();
  }
  return findOnPath("qemu-x86_64");
}

std::string tracerPluginPath() {
  return findTracerPlugin("SMTLAB_QEMU_PLUGIN", "libsmtlab_qemu_tracer.so");
}

std::optional<std::string> tracerUnavailableReason() {
  if (!x86DecoderAvailable()) return "smtlab was built without capstone (Debian: libcapstone-dev)";
  if (qemuPath().empty()) return "qemu-x86_64 not found (Debian: qemu-user; or set SMTLAB_QEMU)";
  if (tracerPluginPath().empty()) {
    return "the QEMU tracer plugin was not built (its header qemu-plugin.h could not be had at configure time; "
           "see docs/tracing.md) and SMTLAB_QEMU_PLUGIN is not set";
  }
  return std::nullopt;
}

namespace {

// "tNN" + `tail`: a thread's numbered file.
bool isThreadFile(std::string_view s, std::string_view tail) {
  if (s.size() <= 1 + tail.size() || s[0] != 't' || !s.ends_with(tail)) return false;
  const std::string_view digits = s.substr(1, s.size() - 1 - tail.size());
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What follows "PREFIX." in the names a recording writes or removes: trace, json, tK.trace, raw.blocks, raw.events,
// raw.tK.raw, raw.tK.ring (no std::regex: GCC 12's <regex> warns in the hardening builds).
bool isRecordingSuffix(std::string_view s) {
  if (s == "trace" || s == "json" || s == "raw.blocks" || s == "raw.events" || isThreadFile(s, ".trace")) return true;
  if (!s.starts_with("raw.")) return false;
  s.remove_prefix(4);
  return isThreadFile(s, ".raw") || isThreadFile(s, ".ring");
}

// True when `file` is one the recording with `prefix` writes or removes: PREFIX.trace, .json, .tK.trace, and the
// plugin's PREFIX.raw.blocks, .events, .tK.raw, .tK.ring. By name (lexically, absolute), and for the two fixed names
// also as the same file through another name (a link).
bool isRecordingOutput(const fs::path& file, const std::string& prefix) {
  const fs::path a = fs::absolute(file).lexically_normal(), p = fs::absolute(prefix).lexically_normal();
  if (a.parent_path() == p.parent_path()) {
    const std::string name = a.filename().string(), stem = p.filename().string() + ".";
    if (name.size() > stem.size() && name.compare(0, stem.size(), stem) == 0 &&
        isRecordingSuffix(name.substr(stem.size()))) {
      return true;
    }
  }
  return sameFile(file, prefix + ".trace") || sameFile(file, prefix + ".json");
}

// The program and every argument that names an existing file must survive the recording: `-o prog -- ./prog.trace`
// replaced the program with its own trace, `-o data -- cat data.trace` the file the program read.
void refuseOutputsOverInputs(const std::vector<std::string>& inputs, const std::string& prefix) {
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (in.empty() || !fs::exists(in, ec) || fs::is_directory(in, ec)) continue;
    if (isRecordingOutput(in, prefix)) {
      throw UsageError(fmt::format("trace record: the outputs of -o {} would replace '{}', which the recorded "
                                   "command uses; give another -o prefix",
                                   prefix, in));
    }
  }
}

}  // namespace

RecordResult recordProgram(const RecordOptions& o) {
  if (auto why = tracerUnavailableReason()) throw TraceError("trace record: cannot trace: " + *why);
  // Everything that can be checked is checked before QEMU starts: the program, the outputs, the disk.
  const std::vector<std::string> command = resolveTracedProgram(o.command);
  std::vector<std::string> inputs = command;
  inputs.insert(inputs.end(), o.command.begin(), o.command.end());
  refuseOutputsOverInputs(inputs, o.outPrefix);
  checkOutputPath(o.outPrefix + ".trace", "trace");
  checkOutputPath(o.outPrefix + ".json", "manifest");
  const fs::path dir = directoryOf(o.outPrefix);
  if (const std::uint64_t free = freeBytes(dir); free < o.minFreeBytes) {
    throw TraceError(fmt::format("trace record: only {} free on the file system of '{}'; recording needs at least {} "
                                 "free (the raw stream takes about 5 bytes per instruction before it is decoded)",
                                 megabytes(free), dir.string(), megabytes(o.minFreeBytes)));
  }

  InterruptGuard interruptGuard;
  // With a fixed environment QEMU starts in the program's folder, so every path it is given must be absolute.
  RawFiles raw(absolute(o.outPrefix + ".raw"));
  std::string pluginArg = fmt::format("{},out={}", absolute(tracerPluginPath()), raw.prefix());
  if (o.skip) pluginArg += fmt::format(",skip={}", o.skip);
  if (o.maxInstructions) pluginArg += fmt::format(",max={}", o.maxInstructions);
  std::vector<std::string> argv = {absolute(qemuPath()), "-cpu", o.cpu, "-plugin", pluginArg};
  argv.insert(argv.end(), command.begin(), command.end());
  // A fixed environment: the program runs from a private copy in a folder whose path has the same length on every
  // machine, as ./NAME, with no environment. Static glibc's start-up reads the program's absolute path
  // (/proc/self/exe) into its stack and copies its folder to the heap, so the folder's length moves addresses too.
  std::optional<PrivateProgramCopy> copy;
  if (o.fixedEnvironment) {
    copy.emplace(command.front());
    argv[5] = "./" + fs::path(command.front()).filename().string();
  }
  const std::string programDir = copy ? copy->folder() : std::string();
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  char* emptyEnvironment[] = {nullptr};

  RecordResult result;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw TraceError(fmt::format("trace record: fork failed: {}", std::strerror(errno)));
  if (pid == 0) {  // execv puts the caught signals back to their defaults for QEMU
    // QEMU writes an ELF core of a guest killed by SIGSEGV/SIGABRT into the working directory when the core limit
    // allows: that file is not smtlab's to leave behind.
    const struct rlimit noCore {0, 0};
    ::setrlimit(RLIMIT_CORE, &noCore);
    if (o.detachProgramIo) {
      // The program's output is not smtlab's: filling the kernel: cache from `smtlab trace head kernel:X > f` wrote
      // the kernel's printf into f. Its input is nothing, so it never waits on smtlab's terminal or pipe.
      const int devNull = ::open("/dev/null", O_RDWR);
      if (devNull < 0) std::_Exit(127);
      ::dup2(devNull, 0);
      ::dup2(devNull, 1);
      if (devNull > 1) ::close(devNull);
    }
    if (o.fixedEnvironment) {
      if (::chdir(programDir.c_str()) != 0) std::_Exit(127);
      ::execve(cargv[0], cargv.data(), emptyEnvironment);
    } else {
      ::execv(cargv[0], cargv.data());
    }
    std::_Exit(127);
  }
  // Poll rather than block in waitpid: a signal to smtlab, or the raw stream outgrowing the disk, stops QEMU at once.
  int status = 0;
  for (int poll = 0;; ++poll) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      killAndReap(pid);
      throw TraceError(fmt::format("trace record: waitpid failed: {}", std::strerror(errno)));
    }
    if (gInterrupt.load()) {
      killAndReap(pid);
      InterruptGuard::throwIfInterrupted("while QEMU ran");
    }
    if (poll % kDiskCheckEvery == 0) {
      const std::uint64_t free = freeBytes(dir), rawBytes = raw.bytes();
      const bool overBudget = o.maxRawBytes != 0 && rawBytes > o.maxRawBytes;
      if (free < o.minFreeBytes || overBudget) {
        killAndReap(pid);
        throw TraceError(fmt::format(
            "trace record: stopped: the raw stream reached {} and {}; nothing was written (partial files removed). "
            "Lower --max-instructions (now {}) or record to a file system with more room",
            megabytes(rawBytes),
            overBudget ? fmt::format("its budget is {}", megabytes(o.maxRawBytes))
                       : fmt::format("only {} is left free on '{}' (the reserve is {})", megabytes(free),
                                     dir.string(), megabytes(o.minFreeBytes)),
            o.maxInstructions ? std::to_string(o.maxInstructions) : std::string("no cap")));
      }
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  result.traceSeconds = secondsSince(t0);
  InterruptGuard::throwIfInterrupted("while QEMU ran");  // QEMU itself may have died of the terminal's SIGINT
  const PluginEvents events = readEvents(raw.events());
  result.untracedChildren = events.forks;
  if (WIFSIGNALED(status)) {
    result.end = RecordEnd::Signal;
    result.signal = WTERMSIG(status);
    result.exitStatus = 128 + result.signal;
  } else {
    result.exitStatus = WEXITSTATUS(status);
    if (events.mainCapped) result.end = RecordEnd::MaxInstructions;
  }
  const std::vector<std::string> rawFiles = raw.threads();
  // A thread whose process died without the plugin's exit callback left the last part of its stream in its ring
  // (tools/qemu-tracer/smtlab_tracer.c): append it; the stream ends at its first zero word.
  for (std::size_t k = 0; k < rawFiles.size(); ++k) {
    if (fileSize(raw.ring(k)) == 0) continue;  // none (the thread finished normally)
    std::ifstream ring(raw.ring(k), std::ios::binary);
    std::ofstream out(rawFiles[k], std::ios::binary | std::ios::app);
    out << ring.rdbuf();
    if (!out.flush()) throw TraceError(fmt::format("trace record: cannot complete '{}' (disk full?)", rawFiles[k]));
  }
  if (result.end == RecordEnd::Exit && (result.exitStatus == 125 || result.exitStatus == 127)) {
    throw TraceError(fmt::format("trace record: {} failed (status {}) running '{}'; see its message above", argv[0],
                                 result.exitStatus, command[0]));
  }
  if (rawFiles.empty()) {
    throw TraceError(fmt::format("trace record: QEMU ran no instruction of '{}' (QEMU's status {}; see its message "
                                 "above)",
                                 command[0], result.exitStatus));
  }

  const auto t1 = std::chrono::steady_clock::now();
  auto table = std::make_shared<const RawBlockTable>(raw.blocks());
  std::vector<std::unique_ptr<OutputFile>> outputs;
  for (std::size_t k = 0; k < rawFiles.size(); ++k) {
    RawDecodeOptions decode;
    decode.skip = o.skip;
    decode.maxRecords = o.maxInstructions;
    decode.collapseRep = o.collapseRep;
    // A thread that did not stop by itself may have been cut inside its last block (see RawDecodeOptions).
    const bool stoppedItself = result.end == RecordEnd::MaxInstructions &&
                               std::find(events.cappedThreads.begin(), events.cappedThreads.end(),
                                         static_cast<int>(k)) != events.cappedThreads.end();
    decode.dropLastBlock = result.end == RecordEnd::Signal || (result.end == RecordEnd::MaxInstructions &&
                                                               !stoppedItself);
    RecordedThread t;
    t.path = k == 0 ? o.outPrefix + ".trace" : fmt::format("{}.t{}.trace", o.outPrefix, k);
    outputs.push_back(std::make_unique<OutputFile>(t.path, std::ios::binary, "trace"));
    outputs.back()->closeStream();
    RawTraceSource src(table, rawFiles[k], decode);
    InterruptibleSource guarded(src);
    t.instructions = writeNativeTrace(guarded, outputs.back()->tempPath().string(), Compression::Zstd);
    t.rawBytes = fileSize(rawFiles[k]);
    t.traceBytes = fileSize(outputs.back()->tempPath().string());
    result.threads.push_back(t);
  }
  result.decodeSeconds = secondsSince(t1);
  if (result.instructions() == 0) {
    const std::string why =
        result.end == RecordEnd::Signal
            ? fmt::format("it was killed by {} before it completed a block", signalName(result.signal))
        : o.skip ? fmt::format("it ran no more than --skip {} instructions", o.skip)
                 : fmt::format("QEMU's status {}; see its message above", result.exitStatus);
    throw TraceError(fmt::format("trace record: no instruction of '{}' was recorded ({}); nothing written",
                                 command[0], why));
  }

  // The threads share one address space: give them one id, stable for a given output name.
  result.asid = static_cast<std::uint32_t>(std::hash<std::string>{}(fs::absolute(o.outPrefix).string()) % 65521) + 1;
  boost::json::object m;
  boost::json::array cmd, threads;
  for (const auto& a : o.command) cmd.emplace_back(a);
  for (const auto& t : result.threads) {
    threads.emplace_back(boost::json::object{{"file", fs::path(t.path).filename().string()},
                                             {"instructions", t.instructions}});
  }
  m["command"] = std::move(cmd);
  m["asid"] = result.asid;
  m["threads"] = std::move(threads);
  m["qemu_cpu"] = o.cpu;
  m["skip"] = o.skip;
  m["max_instructions"] = o.maxInstructions;
  m["collapse_rep"] = o.collapseRep;
  m["fixed_environment"] = o.fixedEnvironment;
  m["tracer_revision"] = kTracerRevision;  // what the recording holds (tracer_revision.hpp)
  switch (result.end) {
    case RecordEnd::Exit:
      m["end"] = "exit";
      m["exit_status"] = result.exitStatus;
      break;
    case RecordEnd::Signal:
      m["end"] = "signal";
      m["signal"] = signalName(result.signal);
      m["exit_status"] = result.exitStatus;
      break;
    case RecordEnd::MaxInstructions:
      m["end"] = "max_instructions";
      m["exit_status"] = nullptr;  // the program did not finish
      break;
  }
  m["untraced_child_processes"] = result.untracedChildren;
  result.manifest = o.outPrefix + ".json";
  OutputFile manifest(result.manifest, std::ios::out, "manifest");
  manifest.stream() << boost::json::serialize(m) << "\n";
  InterruptGuard::throwIfInterrupted("while writing the outputs");
  // Traces first, the manifest last: a manifest names only traces that exist.
  for (auto& out : outputs) out->commit();
  manifest.commit();
  if (o.keepRaw) raw.keep();
  return result;
}

}  // namespace smtlab
