#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/program_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <boost/crc.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/resources.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/tracer/kernel_stack.hpp"
#include "smtlab/tracer/recorder.hpp"
#include "smtlab/tracer/tracer_revision.hpp"
#include "smtlab/tracer/x86_decoder.hpp"

namespace smtlab {
namespace fs = std::filesystem;

namespace {

// The probe's sources and make_initramfs.sh (workloads/kpath/) and the kernel script (scripts/kpath_kernel.sh), under
// the resource root: the source tree, or the installed package (common/resources.hpp).
fs::path probeDir() { return resourcePath("workloads/kpath"); }
constexpr const char* kManifest = "kpaths.json";
// The guest kernel's boot options (kpath_count=N follows them). A cache recorded with other options is recorded again
// (kpathBootOptionsMatch): nokaslr keeps the kernel's addresses the same in every boot; recordings made with KASLR
// are not comparable.
constexpr const char* kBootOptions =
    "console=ttyS0 mitigations=off init_on_alloc=0 nokaslr quiet rdinit=/init no_timer_check panic=-1";
// Per-CPU stream cap: the probe's regions at the default count take ~100 MB; a runaway region stops here.
constexpr std::uint64_t kStreamLimitBytes = 2ull << 30;

std::vector<KpathInfo> makeTable() {
  std::vector<KpathInfo> t;
#define REGION false, "", "", KpathInfo::Device::Kept
#define EXCURSION true, "", "", KpathInfo::Device::Kept
#define RESCHED_IPI true, "asm_sysvec_reschedule_ipi", "__schedule", KpathInfo::Device::Kept
#define WAKE_IPI false, "asm_sysvec_call_function_single", "__schedule", KpathInfo::Device::Kept
#define SUBMIT false, "", "", KpathInfo::Device::Submit
#define DEVICE_IRQ false, "", "", KpathInfo::Device::Only
#define KPATH(name, kind, what) t.push_back(KpathInfo{#name, kind, what});
#include "kpath/kpath_paths.h"
#undef KPATH
#undef DEVICE_IRQ
#undef SUBMIT
#undef WAKE_IPI
#undef RESCHED_IPI
#undef EXCURSION
#undef REGION
  for (std::size_t id = 0; id < t.size(); ++id) {  // a table error is the source's, caught by every test that runs
    const bool submit = t[id].device == KpathInfo::Device::Submit;
    const bool next = id + 1 < t.size() && t[id + 1].device == KpathInfo::Device::Only;
    const bool previous = id > 0 && t[id - 1].device == KpathInfo::Device::Submit;
    if (submit != next || (t[id].device == KpathInfo::Device::Only && !previous)) {
      throw std::logic_error(fmt::format("kpath_paths.h: path '{}': a SUBMIT path is followed by its DEVICE_IRQ path, "
                                         "and only then", t[id].name));
    }
  }
  return t;
}

// Runs argv with stdin from /dev/null and stdout + stderr into `logFile`; kills it (by its pid) after `timeout`.
// Returns the exit status (128 + signal when killed), or -1 on a timeout.
int runLogged(const std::vector<std::string>& args, const std::string& logFile, int timeoutSeconds) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw TraceError("kpath: fork failed");
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(logFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0) std::_Exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execvp(argv[0], argv.data());
    std::_Exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw TraceError("kpath: waitpid failed");
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string lastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const std::size_t nl = t.find_last_of('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

// Keeps a failed boot's console as DIR/failed-boot.log (writeFileAtomically: complete or not at all) so that the
// whole of it can be read after the boot's work directory is gone; returns a phrase naming it, or "" when it cannot
// (the boot's own failure is the error to report, not this).
std::string keepFailedConsole(const fs::path& dir, const std::string& log) {
  const fs::path kept = dir / "failed-boot.log";
  try {
    writeFileAtomically(kept, log, "the failed boot's console");
  } catch (const Error&) {
    return "";
  }
  return fmt::format("; the whole console is in {}", kept.string());
}

bool newer(const fs::path& a, const fs::path& b) {
  std::error_code e1, e2;
  const auto ta = fs::last_write_time(a, e1), tb = fs::last_write_time(b, e2);
  return !e1 && !e2 && ta > tb;
}

// Any file of workloads/kpath (the probe's C files and header, the path table, the initramfs script) modified after
// the recording: the rule for manifests without a probe digest (kpathProbeSourcesChanged). A missing folder counts
// as unchanged.
bool probeSourcesNewerThan(const fs::path& manifest) {
  std::error_code ec;
  for (fs::directory_iterator it(probeDir(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && newer(it->path(), manifest)) return true;
  }
  return false;
}

// The digest of this build's probe sources, once per process (they do not change under a running program).
const std::string& currentProbeDigest() {
  static const std::string digest = kpathProbeDigest(probeDir().string());
  return digest;
}

// Path traces recorded before native version 3 carry no uops; all paths are recorded in one boot, so
// the first one tells. A missing or unreadable file makes the cache stale as well.
bool kpathCacheCarriesUops(const fs::path& dir) {
  try {
    return NativeTraceReader((dir / (kpaths().front().name + ".trace")).string(), false).version() >= 3;
  } catch (const Error&) {
    return false;
  }
}

// The manifest parsed, once per process while its time and size stay (a study opens a source per call on a file
// page of its own: parsing 50 KB of JSON for each cost about a millisecond). Throws what parsing throws.
// A file's modification time and size, to tell a rewritten manifest from the one read before; nullopt when either
// cannot be had (then nothing is taken from memory).
using FileStamp = std::pair<std::int64_t, std::uintmax_t>;
std::optional<FileStamp> fileStamp(const fs::path& p) {
  std::error_code e1, e2;
  const auto time = static_cast<std::int64_t>(fs::last_write_time(p, e1).time_since_epoch().count());
  const std::uintmax_t size = fs::file_size(p, e2);
  if (e1 || e2) return std::nullopt;
  return FileStamp{time, size};
}

// True when the manifest names the boot options this build records with (a missing key: recorded before they were
// kept, so with KASLR).
bool kpathBootOptionsMatch(const fs::path& manifest) {
  try {
    const boost::json::value& m = *kpathManifest(manifest);
    const auto* options = m.as_object().if_contains("boot_options");
    return options != nullptr && options->is_string() && options->as_string() == kBootOptions;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::shared_ptr<const boost::json::value> kpathManifest(const std::string& manifest) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<FileStamp, std::shared_ptr<const boost::json::value>>> parsed;
  const std::optional<FileStamp> stamp = fileStamp(manifest);
  std::lock_guard lock(mutex);
  auto& [seen, value] = parsed[manifest];
  if (!value || !stamp || seen != *stamp) {
    value = std::make_shared<const boost::json::value>(boost::json::parse(readFile(manifest)));
    seen = stamp.value_or(FileStamp{});
  }
  return value;
}

std::string guestComplaint(const std::string& log) {
  static constexpr std::array<std::string_view, 6> kSigns = {"kpath probe failed", "kpath: insmod", "kpath: cannot",
                                                             "Kernel panic", "BUG:", "Oops"};
  static constexpr std::string_view kPhase = "kpath probe: ";
  std::vector<std::string> found;
  std::string phase;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
    bool complaint = false;
    for (const std::string_view sign : kSigns) complaint = complaint || line.find(sign) != std::string::npos;
    if (complaint && found.size() < 4) found.push_back(line);
    if (const std::size_t at = line.find(kPhase); !complaint && at != std::string::npos) {
      phase = line.substr(at + kPhase.size());
    }
  }
  std::string said;
  if (found.empty()) {
    said = "its console ended with: " + lastLine(log);
  } else {
    said = "the guest said: ";
    for (std::size_t k = 0; k < found.size(); ++k) said += (k == 0 ? "" : " | ") + found[k];
  }
  return phase.empty() ? said + " (the probe had not started)" : fmt::format("{} (the probe's last phase: {})", said,
                                                                            phase);
}

const std::vector<KpathInfo>& kpaths() {
  static const std::vector<KpathInfo> table = makeTable();
  return table;
}

std::string kpathProbeDigest(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  if (files.empty()) return "";
  std::sort(files.begin(), files.end());
  boost::crc_32_type crc;
  std::uintmax_t size = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw TraceError(fmt::format("kpath: cannot read probe source {}", f.string()));
    const std::string name = f.filename().string();
    crc.process_bytes(name.data(), name.size() + 1);  // with its terminating NUL: the name ends here
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) throw TraceError(fmt::format("kpath: cannot read probe source {}", f.string()));
    crc.process_bytes(bytes.data(), bytes.size());
    size += bytes.size();
  }
  return fmt::format("crc32-{}-{:08x}", size, crc.checksum());
}

bool kpathProbeSourcesChanged(const std::optional<std::string>& kept, const std::string& digest,
                              const std::function<bool()>& sourcesNewer) {
  return kept ? *kept != digest : sourcesNewer();
}

std::string kpathCacheDir() {
  if (const char* d = std::getenv("SMTLAB_KPATH_CACHE"); d && *d) return d;
  return defaultCacheDir("kpath").string();
}

std::string systemTracerPluginPath() {
  return findTracerPlugin("SMTLAB_QEMU_SYSTEM_PLUGIN", "libsmtlab_system_tracer.so");
}

std::optional<std::string> systemTracerUnavailableReason() {
  if (!x86DecoderAvailable()) return "smtlab was built without capstone (Debian: libcapstone-dev)";
  if (findOnPath("qemu-system-x86_64").empty()) return "qemu-system-x86_64 not found (Debian: qemu-system-x86)";
  if (systemTracerPluginPath().empty()) {
    return "the QEMU system tracer plugin was not built (qemu-plugin.h could not be had at configure time; see "
           "docs/tracing.md) and SMTLAB_QEMU_SYSTEM_PLUGIN is not set";
  }
  return std::nullopt;
}

KernelSymbols parseKernelSymbols(const std::string& console) {
  KernelSymbols symbols;
  std::istringstream in(console);
  std::string line;
  constexpr std::string_view kTag = "kpath: symbol ";
  while (std::getline(in, line)) {
    const std::size_t at = line.find(kTag);
    if (at == std::string::npos) continue;
    std::istringstream fields(line.substr(at + kTag.size()));
    std::string name, hex;
    if (!(fields >> name >> hex)) continue;
    char* end = nullptr;
    const std::uint64_t addr = std::strtoull(hex.c_str(), &end, 16);
    if (end && *end == '\0' && addr != 0) symbols[name] = addr;
  }
  return symbols;
}

std::uint64_t removeStaleRecordingWork(const std::string& dir) {
  auto pidSuffix = [](std::string_view name, std::string_view prefix) {
    return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
           std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  std::uint64_t freed = 0;
  std::error_code ec;
  std::vector<fs::path> stale;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t trace = name.rfind(".trace.tmp");
    const bool work = pidSuffix(name, "boot.tmp") && it->is_directory(ec) && !it->is_symlink(ec);
    const bool split = trace != std::string::npos && trace > 0 &&
                       pidSuffix(std::string_view(name).substr(trace), ".trace.tmp") && it->is_regular_file(ec);
    if (work || split) stale.push_back(it->path());
  }
  for (const fs::path& p : stale) {
    std::error_code e;
    if (fs::is_directory(fs::symlink_status(p, e))) {
      const fs::recursive_directory_iterator end;
      for (auto f = fs::recursive_directory_iterator(p, e); !e && f != end; f.increment(e)) {
        std::error_code se;
        if (f->is_regular_file(se) && !f->is_symlink(se)) freed += f->file_size(se);
      }
    } else {
      freed += fs::file_size(p, e);
    }
    fs::remove_all(p, e);
  }
  return freed;
}

namespace {

// The cache's manifest, after rewriting once per process any of its traces written before native version 4 with the
// checksum that version carries (upgradeNativeTrace: the same records, no new boot). A trace that cannot be rewritten
// (a read-only cache) is read as it is, with the reader's note.
std::string upgradedCache(const fs::path& dir, const fs::path& manifest) {
  static std::mutex mutex;
  static std::set<std::string> done;
  const std::lock_guard lock(mutex);
  if (!done.insert(dir.string()).second) return manifest.string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".trace" || !it->is_regular_file()) continue;
    try {
      upgradeNativeTrace(it->path().string());
    } catch (const TraceError&) {
      // kept as it is: the reader notes that it carries no checksum
    }
  }
  return manifest.string();
}

}  // namespace

std::string ensureKpathCache(const KpathBuildOptions& o) {
  const fs::path dir = kpathCacheDir();
  const fs::path manifest = dir / kManifest;
  // Once per process and cache: a recording that was killed (SIGKILL, a power cut) could not remove its work folder
  // (about 500 MB) or its unfinished traces, and the next recording would only happen when the probe or the tracer
  // changes. Asked without waiting: if the lock is taken, a recording is running, and it removes them itself.
  static std::mutex sweptMutex;
  static std::set<std::string> swept;
  {
    std::lock_guard guard(sweptMutex);
    if (swept.insert(dir.string()).second && fs::is_directory(dir)) {
      const int fd = ::open((dir / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
      if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0) {
        const std::uint64_t freed = removeStaleRecordingWork(dir.string());
        if (freed > 0 && !o.quiet) {
          std::fprintf(stderr, "smtlab: kpath: removed %.0f MB left in %s by a recording that was interrupted\n",
                       static_cast<double>(freed) / 1e6, dir.c_str());
        }
      }
      if (fd >= 0) ::close(fd);  // releases the flock
    }
  }
  // What the cache's own files say (uops, boot options, tracer stamp) is asked once per process while the manifest
  // keeps its time and size: opening a trace to read its version cost about a millisecond per source.
  static std::mutex checkedMutex;
  static std::map<std::string, FileStamp> checked;
  auto filesCurrent = [&] {
    const std::optional<FileStamp> stamp = fileStamp(manifest);
    std::lock_guard lock(checkedMutex);
    const auto it = checked.find(manifest.string());
    if (stamp && it != checked.end() && it->second == *stamp) return true;
    const bool ok = kpathCacheCarriesUops(dir) && kpathBootOptionsMatch(manifest) && tracerStampCurrent(manifest.string());
    if (ok && stamp) {
      checked[manifest.string()] = *stamp;
    } else {
      checked.erase(manifest.string());
    }
    return ok;
  };
  // The probe's sources are compared by content where the manifest keeps their digest: a checkout or a worktree
  // gives the files new times, and recording again would replace the cache's recording with another boot's (whose
  // timing differs), under every user of the cache.
  auto sourcesChanged = [&] {
    std::optional<std::string> kept;
    try {
      const auto* o = kpathManifest(manifest)->if_object();
      const auto* v = o != nullptr ? o->if_contains("probe_sources") : nullptr;
      if (v != nullptr && v->is_string()) kept = std::string(v->as_string());
    } catch (const std::exception&) {
      return true;  // an unreadable manifest: record again
    }
    try {
      return kpathProbeSourcesChanged(kept, currentProbeDigest(), [&] { return probeSourcesNewerThan(manifest); });
    } catch (const TraceError&) {
      return true;  // a probe source cannot be read: record, which reports it
    }
  };
  auto current = [&] {
    return fs::exists(manifest) && !sourcesChanged() && (filesCurrent() || systemTracerUnavailableReason());
  };
  if (current()) return upgradedCache(dir, manifest);
  if (auto why = systemTracerUnavailableReason()) throw TraceError("kpath: cannot record kernel paths: " + *why);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw TraceError(fmt::format("kpath: cannot create cache directory {}: {}", dir.string(), ec.message()));
  // One recording at a time per cache (parallel tests or sweeps): the others wait and then find it current.
  struct Lock {
    int fd;
    ~Lock() {
      if (fd >= 0) ::close(fd);  // releases the flock
    }
  } lock{::open((dir / ".lock").c_str(), O_CREAT | O_RDWR, 0644)};
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX) != 0) {
    throw TraceError(fmt::format("kpath: cannot lock {}", (dir / ".lock").string()));
  }
  if (current()) return upgradedCache(dir, manifest);
  removeStaleRecordingWork(dir.string());  // under the lock: any other recording's work is a killed one's
  const std::string tag = fmt::format("boot.tmp{}", ::getpid());
  const fs::path work = dir / tag;
  fs::create_directories(work, ec);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(p, e);
    }
  } cleanup{work};

  // The pinned Debian kernel (downloaded once into ~/.cache/smtlab/kpath) and the initramfs with the probe.
  const fs::path kernelLog = work / "kernel.log";
  if (runLogged({resourcePath("scripts/kpath_kernel.sh").string()}, kernelLog.string(), 600) != 0) {
    throw TraceError(fmt::format("kpath: cannot get the kernel: {}", lastLine(readFile(kernelLog))));
  }
  const std::string vmlinuz = lastLine(readFile(kernelLog));
  // The script prints vmlinuz-RELEASE; the disk's modules lie beside it in modules-RELEASE.
  const fs::path modules = fs::path(vmlinuz).parent_path() /
                           ("modules-" + fs::path(vmlinuz).filename().string().substr(std::string("vmlinuz-").size()));
  const fs::path initrd = work / "initrd.gz", initrdLog = work / "initrd.log", disk = work / "disk.img";

  if (!o.quiet) {
    std::fprintf(stderr, "smtlab: kpath: booting Linux under qemu-system-x86_64 to record %zu kernel paths x %d "
                         "(about a minute; once per cache)\n", kpaths().size(), o.count);
  }
  const std::string rawPrefix = (work / "raw").string();
  const fs::path console = work / "console.log";
  // nokaslr: the kernel's text, modules and direct map lie at the same addresses in every boot, as they did in the
  // reference study's 2.4/2.5 kernels (no KASLR before 3.14). With KASLR each recording put kernel code and data in
  // other cache sets and predictor slots: two boots of one probe gave dbench (20 clients, HT on) 181 and 219 MB/s;
  // with nokaslr the spread left comes from where interrupts and daemons land (docs/tracing.md, "Two recordings").
  // la57=off: the modelled CPUs have 4-level paging, so kernel data lies in the upper half (0xffff8...) as the
  // model's shared kernel region expects; QEMU's max CPU would otherwise give 5-level paging and a direct map at
  // 0xff1.... mitigations=off and init_on_alloc=0: the kernels of the reference study had neither speculation
  // barriers nor zeroing of every allocation (Debian turns the latter on by default; it adds a 4 KiB clear to each
  // path name lookup). no_timer_check: TCG on a loaded host
  // can be too slow for the kernel's IO-APIC timer check, which then panics. panic=-1 with -no-reboot turns any
  // panic into QEMU's exit instead of a hang. monitor=off: with MONITOR/MWAIT the guest's idle loop polls, and a
  // waker then sets a flag instead of sending an IPI; TCG's MWAIT does not wake on that write, so a wake-up of a
  // task on an idle CPU was lost (a -smp 2 boot hung). Without it the idle loop uses HLT, as the reference study's
  // 2002 Xeon MP (no MONITOR/MWAIT before Prescott) did. Two CPUs in one socket, so that they share a last-level cache as
  // sibling cores do: the probe pins every path but the reschedule IPI to CPU 0, the IPI's receiver to CPU 1 (and a
  // wake-up between CPUs that share a cache sends RESCHEDULE_VECTOR, not the wake-list's call-function IPI). The
  // disk (fsync on ext4) is a raw image on virtio-blk, made afresh for each recording.
  const std::vector<std::string> qemu = {
      "qemu-system-x86_64", "-m", "256", "-cpu", "max,la57=off,monitor=off", "-smp", "2,sockets=1,cores=2,threads=1", "-nic",
      "none", "-nographic", "-no-reboot", "-drive", fmt::format("file={},if=virtio,format=raw", disk.string()),
      "-kernel", vmlinuz, "-initrd", initrd.string(), "-append",
      fmt::format("{} kpath_count={}", kBootOptions, o.count),
      "-plugin", fmt::format("{},out={},limit={}", systemTracerPluginPath(), rawPrefix, kStreamLimitBytes)};
  // A probe that fails in the guest gets one more boot, on a fresh disk, its failure printed first: a recording once
  // failed in CI (a loaded 2-core host) and the next boot on the same host succeeded. The failed boot's data is
  // dropped whole, so nothing of it reaches the cache. A second failure, or a boot past the time limit, is the error.
  constexpr int kBoots = 2;
  double bootSeconds = 0;
  std::string log;
  for (int boot = 1;; ++boot) {
    // The initramfs, and the disk made afresh: a boot writes files on it.
    if (runLogged({(probeDir() / "make_initramfs.sh").string(), initrd.string(), modules.string(), disk.string()},
                  initrdLog.string(), 300) != 0) {
      throw TraceError(fmt::format("kpath: cannot build the initramfs: {}", lastLine(readFile(initrdLog))));
    }
    for (const std::string& f : systemCpuFiles(rawPrefix)) fs::remove(f, ec);
    const auto t0 = std::chrono::steady_clock::now();
    const int status = runLogged(qemu, console.string(), o.timeoutSeconds);
    bootSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log = readFile(console);
    if (status == -1) {
      throw TraceError(fmt::format("kpath: the guest did not finish within {} s (SMTLAB_KPATH_TIMEOUT); {}{}",
                                   o.timeoutSeconds, guestComplaint(log), keepFailedConsole(dir, log)));
    }
    if (log.find("kpath: probe ok") != std::string::npos) break;
    const std::string failure = fmt::format("kpath: the probe did not complete in the guest (qemu status {}); {}{}",
                                            status, guestComplaint(log), keepFailedConsole(dir, log));
    if (boot == kBoots) throw TraceError(failure);
    std::fprintf(stderr, "smtlab: %s; booting once more\n", failure.c_str());
  }

  std::uint64_t rawBytes = 0;
  for (const std::string& f : systemCpuFiles(rawPrefix)) rawBytes += fs::file_size(f, ec);
  const auto t1 = std::chrono::steady_clock::now();
  SplitStats stats;
  const KernelSymbols symbols = parseKernelSymbols(log);
  const auto instances = splitKpathRecording(rawPrefix, dir.string(), &stats, symbols);
  const double splitSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  if (stats.limitReached) throw TraceError("kpath: a CPU's stream reached the plugin's byte limit; lower the count");

  boost::json::object m, paths;
  for (std::size_t id = 0; id < kpaths().size(); ++id) {
    boost::json::array list;
    for (const KpathInstance& i : instances[id]) list.emplace_back(boost::json::array{i.offset, i.length, i.kernelInstructions});
    paths[kpaths()[id].name] = boost::json::object{{"file", kpaths()[id].name + ".trace"}, {"instances", std::move(list)}};
  }
  m["kernel"] = lastLine(readFile(fs::path(vmlinuz).parent_path() / "kernel-package.txt"));
  m["count"] = o.count;
  m["boot_options"] = kBootOptions;
  m["probe_sources"] = currentProbeDigest();
  m["boot_seconds"] = bootSeconds;
  m["split_seconds"] = splitSeconds;
  m["instructions"] = stats.instructions;
  m["raw_bytes"] = rawBytes;
  m["broken_regions"] = stats.broken;
  m["cut_blocks"] = stats.cut;
  m["dropped_accesses"] = stats.droppedAccesses;
  m["delivery_accesses"] = stats.deliveryAccesses;
  m["interrupts_removed"] = stats.interrupts;
  m["device_interrupts_moved"] = stats.deviceInterrupts;
  m["paths"] = std::move(paths);
  boost::json::object symbolTable;
  for (const auto& [name, addr] : symbols) symbolTable[name] = addr;
  m["symbols"] = std::move(symbolTable);
  const fs::path tmp = dir / (std::string(kManifest) + "." + tag);
  std::ofstream(tmp) << boost::json::serialize(m) << "\n";
  fs::rename(tmp, manifest);
  writeTracerStamp(manifest.string());  // the recording's tracer revision (tracer_revision.hpp)
  if (!o.quiet) {
    std::fprintf(stderr, "smtlab: kpath: recorded %llu instructions in %.1f s (boot, probe, power-off), split in "
                         "%.1f s into %s\n", static_cast<unsigned long long>(stats.instructions), bootSeconds,
                 splitSeconds, dir.c_str());
  }
  return manifest.string();
}

}  // namespace smtlab
