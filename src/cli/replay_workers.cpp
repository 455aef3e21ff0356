// Worker processes of a run from snapshots: the ranges, the processes, their window records, the merge.
#include "replay_workers.hpp"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"

namespace smtlab::cli {

namespace {

std::uint64_t usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<std::uint64_t>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The signal that asked the run to stop while the workers ran, or 0.
volatile std::sig_atomic_t gStop = 0;
extern "C" void noteStop(int signal) { gStop = signal; }

constexpr std::array<int, 3> kStopSignals{SIGINT, SIGTERM, SIGHUP};

// While the workers run, SIGINT, SIGTERM and SIGHUP interrupt the parent's wait (no SA_RESTART), so that it ends the
// workers and removes its temporary folder instead of dying and leaving both behind. Restored afterwards.
class StopGuard {
 public:
  StopGuard() {
    gStop = 0;
    struct sigaction action {};
    action.sa_handler = noteStop;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kStopSignals.size(); ++i) ::sigaction(kStopSignals[i], &action, &previous_[i]);
  }
  ~StopGuard() {
    for (std::size_t i = 0; i < kStopSignals.size(); ++i) ::sigaction(kStopSignals[i], &previous_[i], nullptr);
  }
  StopGuard(const StopGuard&) = delete;
  StopGuard& operator=(const StopGuard&) = delete;

 private:
  std::array<struct sigaction, 3> previous_{};
};

// A private folder for the workers' records, removed with everything in it when the run ends, however it ends.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / "smtlab-windows-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error(fmt::format("cannot make a folder for the workers' window records in {}: {} (set TMPDIR to a "
                              "writable folder)",
                              base.string(), std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct Worker {
  std::uint64_t first = 0, last = 0;
  pid_t pid = -1;
  bool running = false;
  std::filesystem::path records, error;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The worker's side: simulate the range, write its records, exit. Never returns; nothing here unwinds into the
// parent's code (a forked copy of it).
[[noreturn]] void workerMain(const std::string& dir, const Config& config, const Worker& w) {
  for (const int s : kStopSignals) ::signal(s, SIG_DFL);
  int status = 0;
  try {
    SnapshotRunOptions options;
    options.firstWindow = w.first;
    options.lastWindow = w.last;
    writeFileAtomically(w.records, simulateSnapshotWindows(dir, config, options), "window records");
  } catch (const std::exception& e) {
    std::ofstream(w.error) << e.what();
    status = 1;
  } catch (...) {
    std::ofstream(w.error) << "an unknown exception";
    status = 1;
  }
  ::_exit(status);
}

// Ends the workers still running (by their process ids) and waits for them.
void endWorkers(std::vector<Worker>& workers) {
  for (Worker& w : workers) {
    if (w.running) ::kill(w.pid, SIGKILL);
  }
  for (Worker& w : workers) {
    if (!w.running) continue;
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    w.running = false;
  }
}

// What became of a worker that did not exit with status 0.
std::string failure(const Worker& w, int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("the worker process simulating them was killed by signal {} ({}); no result was merged",
                       WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  std::string message = slurp(w.error);
  if (const auto nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
  if (message.empty()) message = fmt::format("the worker process exited with status {}", WEXITSTATUS(status));
  return message;
}

}  // namespace

void checkWorkers(std::uint64_t workers) {
  const std::uint64_t cpus = usableCpus();
  if (workers == 0) throw UsageError("--workers: give at least 1 (1: the windows one after the other in this process)");
  if (workers > kWorkersPerCpu * cpus) {
    throw UsageError(fmt::format("--workers {} is too many for this host: at most {} per CPU ({} CPUs, so {}); each "
                                 "worker is a process simulating its windows",
                                 workers, kWorkersPerCpu, cpus, kWorkersPerCpu * cpus));
  }
}

RunResult runFromSnapshotsInWorkers(const std::string& dir, const Config& config, const SnapshotRunOptions& range,
                                    std::uint64_t workers) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t count = snapshotWindowCount(dir);
  if (count == 0 || range.firstWindow >= count) {
    return runFromSnapshots(dir, config, range);  // refuses the range with the one-process run's message
  }
  const std::uint64_t first = range.firstWindow;
  const std::uint64_t last = std::min(range.lastWindow, count - 1);
  const std::uint64_t windows = last - first + 1;
  const std::uint64_t n = std::min(workers, windows);
  ScratchFolder scratch;
  // Contiguous ranges of nearly equal counts: a worker reads each trace forward from its start to its first window
  // and then on from window to window (TraceCursor::visitState), so a range costs one pass over the traces up to its
  // last window; windows dealt out one by one would each read the traces from the start again.
  std::vector<Worker> pool(n);
  for (std::uint64_t j = 0; j < n; ++j) {
    Worker& w = pool[j];
    w.first = first + j * windows / n;
    w.last = first + (j + 1) * windows / n - 1;
    w.records = scratch.path() / fmt::format("windows-{}-{}.rec", w.first, w.last);
    w.error = scratch.path() / fmt::format("windows-{}-{}.err", w.first, w.last);
  }
  StopGuard guard;
  std::fflush(stdout);
  std::fflush(stderr);
  for (Worker& w : pool) {
    const pid_t pid = ::fork();
    if (pid == 0) workerMain(dir, config, w);
    if (pid < 0) {
      const int err = errno;
      endWorkers(pool);
      throw Error(fmt::format("windows {}-{}: cannot start a worker process: {}", w.first, w.last, std::strerror(err)));
    }
    w.pid = pid;
    w.running = true;
  }
  for (std::uint64_t left = n; left > 0;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR && gStop == 0) continue;
      const int err = errno;
      endWorkers(pool);
      if (gStop != 0) {
        throw Error(fmt::format("interrupted by signal {} ({}); the workers were ended and no result was merged",
                                static_cast<int>(gStop), strsignal(gStop)));
      }
      throw Error(fmt::format("waiting for the worker processes: {}", std::strerror(err)));
    }
    Worker* w = nullptr;
    for (Worker& c : pool) {
      if (c.running && c.pid == pid) w = &c;
    }
    if (w == nullptr) continue;  // not one of ours
    w->running = false;
    --left;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      const std::string why = failure(*w, status);
      endWorkers(pool);
      throw Error(fmt::format("windows {}-{}: {}", w->first, w->last, why));
    }
  }
  std::vector<WindowRecords> records;
  for (const Worker& w : pool) {
    std::ifstream in(w.records, std::ios::binary);
    if (!in) throw Error(fmt::format("windows {}-{}: the worker wrote no window records", w.first, w.last));
    records.push_back({fmt::format("windows {}-{}", w.first, w.last), slurp(w.records)});
  }
  SnapshotRunOptions all = range;
  all.firstWindow = first;
  all.lastWindow = last;
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return mergeSnapshotWindows(dir, config, records, all, host);
}

}  // namespace smtlab::cli
