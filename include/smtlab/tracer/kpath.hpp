// Real Linux kernel paths as traces: `kpath:NAME` boots Debian 12's own kernel under qemu-system-x86_64 with the
// system plugin and an initramfs whose probe (workloads/kpath/probe.c) runs every path of workloads/kpath/
// kpath_paths.h many times between markers; the recorded instances are cached and served one at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "smtlab/trace/source.hpp"
#include "smtlab/tracer/system_trace.hpp"

namespace boost::json {
class value;
}  // namespace boost::json

namespace smtlab {

struct KpathInfo {
  std::string name;        // kpath:NAME; its id is its index in kpaths()
  bool excursion = false;  // instances are the kernel runs inside the marked user region (interrupts)
  // Interrupt paths of one vector (RESCHED_IPI kind): only the kernel runs whose first instruction is entrySymbol
  // are instances, each cut before its first instruction at stopSymbol (addresses from the guest's /proc/kallsyms).
  // With excursion false (WAKE_IPI kind): the instance is the region's records from the first at entrySymbol up to
  // the first at stopSymbol after it; a region without entrySymbol holds none.
  std::string entrySymbol;
  std::string stopSymbol;
  // What becomes of device interrupts in the region (a REGION path takes out only those that hit its user code):
  // SUBMIT cuts every one out, wherever it landed, and hands it to the next path of the table, which is of the
  // DEVICE_IRQ kind; a DEVICE_IRQ path's instance is the device interrupts of its region and of the SUBMIT region
  // just before it on the same CPU (interrupts.hpp).
  enum class Device { Kept, Submit, Only };
  Device device = Device::Kept;
  std::string what;        // one line for listings
};

// Kernel symbol addresses of the recorded boot (the probe prints them from /proc/kallsyms; KASLR moves them per boot).
using KernelSymbols = std::map<std::string, std::uint64_t>;

// The table of workloads/kpath/kpath_paths.h.
const std::vector<KpathInfo>& kpaths();

// The content of the probe's sources: every regular file directly in `dir` (workloads/kpath: the probe's C files and
// header, the path table, the initramfs script), by name and bytes, in name order, as "crc32-SIZE-HEX". The same
// files give the same digest whatever their modification times (a fresh checkout, a worktree); "" for a missing
// folder. Throws TraceError naming a file that cannot be read.
std::string kpathProbeDigest(const std::string& dir);
// Whether a cache's recording was made from other probe sources than `digest`: `kept` is its manifest's
// "probe_sources", the digest it was recorded from; a manifest without one (recorded before the digest was kept)
// falls back to the old rule, `sourcesNewer()` (a probe file modified after the manifest), asked only then.
bool kpathProbeSourcesChanged(const std::optional<std::string>& kept, const std::string& digest,
                              const std::function<bool()>& sourcesNewer);
// $SMTLAB_KPATH_CACHE, else build/kpath of this build tree.
std::string kpathCacheDir();
// Removes what killed recordings left in the cache folder `dir`: their work folders (boot.tmpPID: the plugin's raw
// streams, about 500 MB) and the split's unfinished traces (NAME.trace.tmpPID). The caller holds the cache's lock, so
// no recording is using them. Nothing else is touched. Returns the bytes freed; errors are ignored (best effort).
std::uint64_t removeStaleRecordingWork(const std::string& dir);
// nullopt when kernel paths can be recorded here; otherwise why not (no capstone, qemu-system-x86_64, plugin).
std::optional<std::string> systemTracerUnavailableReason();
std::string systemTracerPluginPath();

struct KpathInstance {
  std::uint64_t offset = 0;  // first record in the path's trace file
  std::uint64_t length = 0;
  std::uint64_t kernelInstructions = 0;
};

// Splits the plugin's output (PREFIX.blocks, PREFIX.cpuK.raw) into one native trace per path, NAME.trace in `dir`
// (all instances one after the other), and returns the instances per path (indexed like kpaths()). Files are
// written under temporary names and renamed when complete. `symbols` must hold the entry and stop symbols of every
// path with an entrySymbol whose region occurs (else TraceError).
std::vector<std::vector<KpathInstance>> splitKpathRecording(const std::string& rawPrefix, const std::string& dir,
                                                            SplitStats* total = nullptr,
                                                            const KernelSymbols& symbols = {});
// The "kpath: symbol NAME HEXADDR" lines of a guest's console.
KernelSymbols parseKernelSymbols(const std::string& console);

// What went wrong in a recording guest, from its console (the text of a boot whose probe did not complete): the
// probe's own message (probe.c's die() prints "kpath probe failed: WHAT: ERRNO"), /init's complaints ("kpath:
// insmod ...", "kpath: cannot ..."), a kernel panic, BUG or oops, up to four such lines joined by " | " after "the
// guest said: "; else "its console ended with: " and its last line. Then where the probe was: "(the probe's last
// phase: PHASE)" from its last "kpath probe: PHASE" line, or "(the probe had not started)".
std::string guestComplaint(const std::string& console);

struct KpathBuildOptions {
  int count = 30;             // instances of each path the probe runs (30: ~57 M instructions, ~480 MB raw;
                              // sh_c runs at most 8)
  int timeoutSeconds = 900;   // the boot is stopped after this (the machine may be slow and shared)
  bool quiet = false;
};

// The parsed manifest (kpaths.json) at `manifestPath`, parsed once per process while the file keeps its time and size.
// Throws what boost::json throws for a file that is not JSON.
std::shared_ptr<const boost::json::value> kpathManifest(const std::string& manifestPath);

// Makes sure the cache exists and is current (boots and records when not); returns the manifest's path. Throws
// TraceError with one clear message when something needed is missing or the boot fails.
std::string ensureKpathCache(const KpathBuildOptions& options = {});

// Opens "kpath:NAME[,seed=N]": instance (splitmix64(N) mod instances) of the path, recording first if needed.
// Defined in kpath_instance.cpp, beside the source it returns and the per-process cache of instances it keeps.
std::unique_ptr<TraceSource> openKpathTrace(const std::string& spec);

}  // namespace smtlab
