// Splitting a kpath: recording (the system plugin's per-CPU streams) into one native trace per path of
// workloads/kpath/kpath_paths.h, each region of a path cut according to its kind (kpath.hpp, interrupts.hpp).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/native_format.hpp"
#include "smtlab/tracer/interrupts.hpp"
#include "smtlab/tracer/kpath.hpp"
#include "smtlab/tracer/raw_trace.hpp"
#include "smtlab/tracer/system_trace.hpp"

namespace smtlab {
namespace fs = std::filesystem;

std::vector<std::vector<KpathInstance>> splitKpathRecording(const std::string& rawPrefix, const std::string& dir,
                                                            SplitStats* total, const KernelSymbols& symbols) {
  const auto& table = kpaths();
  const std::vector<std::string> cpus = systemCpuFiles(rawPrefix);
  if (cpus.empty()) throw TraceError(fmt::format("kpath: the plugin wrote no stream ({}.cpu0.raw)", rawPrefix));
  const RawBlockTable blocks(rawPrefix + ".blocks");
  const std::string tag = fmt::format(".tmp{}", ::getpid());
  std::vector<std::unique_ptr<NativeTraceWriter>> writers(table.size());
  std::vector<std::vector<KpathInstance>> instances(table.size());
  auto add = [&](const SystemRegion& r) {
    auto& w = writers[r.id];
    if (!w) w = std::make_unique<NativeTraceWriter>((fs::path(dir) / (table[r.id].name + ".trace" + tag)).string());
    instances[r.id].push_back(KpathInstance{w->written(), r.instrs.size(), r.kernelInstructions()});
    for (const Instr& i : r.instrs) w->write(i);
  };
  // Where the guest's asynchronous interrupts enter and leave (probe.c print_symbols): a tick, an IPI or a device
  // interrupt that hits a region's user code is not part of that path (interrupts.hpp). A recording whose guest
  // did not report the return or the device stubs finds only those that a user-mode record precedes.
  InterruptVectors vectors;
  auto known = [&](const char* name) -> Addr {
    const auto it = symbols.find(name);
    return it == symbols.end() ? 0 : it->second;
  };
  for (const char* v : {"asm_sysvec_apic_timer_interrupt", "asm_sysvec_reschedule_ipi",
                        "asm_sysvec_call_function_single"}) {
    if (const Addr a = known(v)) vectors.system.push_back(a);
  }
  if (known("irq_entries_start") && known("spurious_entries_start") > known("irq_entries_start")) {
    vectors.deviceBegin = known("irq_entries_start");
    vectors.deviceEnd = known("spurious_entries_start");
  }
  vectors.iret = known("native_irq_return_iret");
  SplitStats sum;
  std::uint64_t interrupts = 0, moved = 0;
  for (const std::string& cpu : cpus) {
    // The device interrupts cut out of the last SUBMIT region on this CPU, waiting for its DEVICE_IRQ region.
    std::vector<SystemRegion> completions;
    const SplitStats s = splitSystemStream(blocks, cpu, [&](SystemRegion&& r) {
      if (r.id >= table.size()) throw TraceError(fmt::format("{}: region id {} is not a kpath", cpu, r.id));
      const KpathInfo& path = table[r.id];
      if (path.device == KpathInfo::Device::Submit) {
        completions.clear();
        interrupts += removeInterrupts(r, vectors, &completions);
        if (!r.instrs.empty()) add(r);
        return;
      }
      if (path.device == KpathInfo::Device::Only) {
        std::vector<SystemRegion> own;
        removeInterrupts(r, vectors, &own);
        SystemRegion instance;
        instance.id = r.id;
        for (auto* list : {&completions, &own}) {
          for (const SystemRegion& d : *list) {
            instance.instrs.insert(instance.instrs.end(), d.instrs.begin(), d.instrs.end());
            instance.kernel.insert(instance.kernel.end(), d.kernel.begin(), d.kernel.end());
            ++moved;
          }
        }
        completions.clear();
        if (!instance.instrs.empty()) add(instance);
        return;
      }
      if (!path.excursion && path.entrySymbol.empty()) {
        interrupts += removeInterrupts(r, vectors);
        if (!r.instrs.empty()) add(r);
        return;
      }
      if (path.entrySymbol.empty()) {
        for (const SystemRegion& e : kernelExcursions(r)) add(e);
        return;
      }
      auto address = [&](const std::string& symbol) {
        const auto it = symbols.find(symbol);
        if (it == symbols.end()) {
          throw TraceError(fmt::format("kpath: path '{}' needs the address of kernel symbol {}, which the guest did "
                                       "not report", path.name, symbol));
        }
        return it->second;
      };
      const std::uint64_t entry = address(path.entrySymbol), stop = address(path.stopSymbol);
      if (!path.excursion) {
        // WAKE_IPI: the region also holds the task's way into its sleep (an earlier __schedule, the idle loop);
        // the instance is what the CPU ran from the vector's entry to the next __schedule. A region without the
        // vector (the wake-up found the idle loop polling and sent no IPI) holds no instance.
        const auto from = std::find_if(r.instrs.begin(), r.instrs.end(), [&](const Instr& i) { return i.pc == entry; });
        if (from == r.instrs.end()) return;
        const auto to = std::find_if(from, r.instrs.end(), [&](const Instr& i) { return i.pc == stop; });
        const auto first = from - r.instrs.begin(), last = to - r.instrs.begin();
        r.kernel.erase(r.kernel.begin() + last, r.kernel.end());
        r.kernel.erase(r.kernel.begin(), r.kernel.begin() + first);
        r.instrs.erase(to, r.instrs.end());
        r.instrs.erase(r.instrs.begin(), r.instrs.begin() + first);
        interrupts += removeNestedInterrupts(r, vectors);
        add(r);
        return;
      }
      for (SystemRegion& e : kernelExcursions(r)) {
        if (e.instrs.front().pc != entry) continue;  // another interrupt (a tick) in the same region
        const auto cut = std::find_if(e.instrs.begin(), e.instrs.end(), [&](const Instr& i) { return i.pc == stop; });
        e.kernel.resize(static_cast<std::size_t>(cut - e.instrs.begin()));
        e.instrs.erase(cut, e.instrs.end());
        interrupts += removeNestedInterrupts(e, vectors);  // a tick pending at the handler's exit is not the IPI's
        add(e);
      }
    });
    sum.regions += s.regions;
    sum.broken += s.broken;
    sum.cut += s.cut;
    sum.instructions += s.instructions;
    sum.droppedAccesses += s.droppedAccesses;
    sum.deliveryAccesses += s.deliveryAccesses;
    sum.limitReached = sum.limitReached || s.limitReached;
  }
  sum.interrupts = interrupts;
  sum.deviceInterrupts = moved;
  for (std::size_t id = 0; id < table.size(); ++id) {
    if (!writers[id]) continue;
    writers[id]->close();
    const fs::path final = fs::path(dir) / (table[id].name + ".trace");
    fs::rename(final.string() + tag, final);
  }
  if (total) *total = sum;
  return instances;
}

}  // namespace smtlab
