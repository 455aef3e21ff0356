// Statistics as JSON, with the names documented in docs/statistics.md; `smtlab run --json` and the Python binding
// both use these functions, so the names are the same everywhere.
#include <boost/json.hpp>
#include "smtlab/common/version.hpp"

#include "smtlab/config/loader.hpp"
#include "smtlab/energy/energy_model.hpp"
#include "smtlab/sim/machine.hpp"

namespace smtlab {

namespace json = boost::json;

namespace {
double ratio(double a, double b) { return b == 0 ? 0.0 : a / b; }

// What the energy model reads, from the measured part of the run (brings each core's active-cycle count up to now).
EnergyCounts energyCounts(Machine& m) {
  const MemorySystem& mem = m.memory();
  EnergyCounts counts;
  counts.cores.reserve(m.cores());
  for (std::uint32_t c = 0; c < m.cores(); ++c) {
    Core& core = m.core(CoreId{c});
    core.flushAccounting(m.now());
    EnergyCounts::Core& out = counts.cores.emplace_back();
    out.threads.reserve(core.threads());
    for (std::uint32_t t = 0; t < core.threads(); ++t) {
      const ThreadStats& s = core.thread(t).stats;
      // Squashed instructions and wrong-path uops were fetched too.
      out.threads.push_back({s.fetched + s.squashed + s.wrongPathFetched, s.instructions});
    }
    out.renamed = core.renamed();
    out.issuedByUnit = core.issuedByUnit();
    out.l1iAccesses = mem.l1iStats(CoreId{c}).accesses;
    out.l1dAccesses = mem.l1dStats(CoreId{c}).accesses;
    out.l2Accesses = mem.l2Stats(CoreId{c}).accesses;
    out.cyclesActive = core.cyclesActive();
  }
  for (std::uint32_t p = 0; p < mem.packages(); ++p) counts.llcAccesses.push_back(mem.llcStats(p).accesses);
  const DramStats& d = mem.dramStats();
  counts.dramAccesses = d.reads + d.writes;
  counts.busyCycles = m.busyCycles();
  counts.measuredCycles = m.measuredCycles();
  return counts;
}

json::object cacheJson(const CacheStats& s, std::uint64_t instructions) {
  return json::object{{"accesses", s.accesses},
                      {"misses", s.misses},
                      {"miss_rate", ratio(double(s.misses), double(s.accesses))},
                      {"mpki", ratio(1000.0 * double(s.misses), double(instructions))},
                      {"mshr_merges", s.mshrMerges},
                      {"mshr_full_cycles", s.mshrFullCycles},
                      {"writebacks", s.writebacks},
                      {"prefetches", s.prefetches}};
}
json::object tlbJson(const TlbStats& s, std::uint64_t instructions) {
  return json::object{{"accesses", s.accesses},
                      {"misses", s.misses},
                      {"mpki", ratio(1000.0 * double(s.misses), double(instructions))},
                      {"walk_cycles", s.walkCycles},
                      {"flushed", s.flushed}};
}

CacheStats sumCacheStats(const CacheStats& a, const CacheStats& b) {
  return CacheStats{a.accesses + b.accesses,         a.misses + b.misses,         a.mshrMerges + b.mshrMerges,
                    a.mshrFullCycles + b.mshrFullCycles, a.writebacks + b.writebacks, a.prefetches + b.prefetches};
}
}  // namespace

json::object threadStatsJson(const ThreadStats& s, const Core& core, std::uint32_t thread) {
  json::object o;
  o["instructions"] = s.instructions;
  o["cycles"] = s.cycles;
  o["ipc"] = ratio(double(s.instructions), double(s.cycles));
  o["cpi"] = ratio(double(s.cycles), double(s.instructions));
  json::object stack, stackCycles;
  for (int c = 0; c < kCpiCauses; ++c) {
    const auto name = cpiCauseName(static_cast<CpiCause>(c));
    stack[name] = ratio(double(s.cpi[c]), double(s.instructions));
    stackCycles[name] = s.cpi[c];
  }
  o["cpi_stack"] = std::move(stack);
  o["cpi_stack_cycles"] = std::move(stackCycles);
  json::object occ;
  for (int q = 0; q < kQueueKinds; ++q) {
    const SharedCapacity& cap = core.queue(static_cast<QueueKind>(q));
    occ[queueKindName(static_cast<QueueKind>(q))] =
        json::object{{"mean", ratio(double(s.occupancy[q].sum), double(s.cycles))},
                     {"max", s.occupancy[q].max},
                     {"limit", cap.limit(thread)},
                     {"entries", cap.total()}};
  }
  o["occupancy"] = std::move(occ);
  o["fetched"] = s.fetched;
  o["squashed"] = s.squashed;
  o["branches"] = s.branches;
  o["mispredicts"] = s.mispredicts;
  o["branch_mpki"] = ratio(1000.0 * double(s.mispredicts), double(s.instructions));
  o["btb_misses"] = s.btbMisses;
  o["fetched_branches"] = s.fetchedBranches;
  o["fetched_mispredicts"] = s.fetchedMispredicts;
  o["fetched_btb_misses"] = s.fetchedBtbMisses;
  o["fetched_pht_tag_misses"] = s.fetchedPhtTagMisses;
  o["loads"] = s.loads;
  o["stores"] = s.stores;
  o["marks"] = s.marks;
  o["loads_by_level"] = json::object{{"l1", s.loadLevel[0]}, {"l2", s.loadLevel[1]}, {"llc", s.loadLevel[2]},
                                     {"dram", s.loadLevel[3]}};
  o["fetch_icache_stall_cycles"] = s.fetchIcacheStallCycles;
  o["fetch_built"] = s.fetchBuilt;
  o["fetch_streamed_lines"] = s.fetchStreamedLines;
  o["fetch_build_wait_cycles"] = s.fetchBuildWaitCycles;
  o["fetch_gated_cycles"] = s.fetchGatedCycles;
  o["flushes"] = s.flushes;
  o["wrong_path_fetched"] = s.wrongPathFetched;
  o["wrong_path_issued"] = s.wrongPathIssued;
  o["wrong_path_from_code"] = s.wrongPathFromCode;
  o["replayed"] = s.replayed;
  {
    json::object hist;
    for (int b = 0; b < kResolveBuckets; ++b) hist[kResolveBucketNames[b]] = s.mispredictResolveHistogram[b];
    const double n = double(s.mispredictsResolved);
    const double f = double(s.mispredictFetchToRename), r = double(s.mispredictRenameToReady),
                 x = double(s.mispredictReadyToResolve);
    o["mispredict_resolve"] = json::object{{"count", s.mispredictsResolved},
                                           {"mean_cycles", ratio(f + r + x, n)},
                                           {"fetch_to_rename", ratio(f, n)},
                                           {"rename_to_ready", ratio(r, n)},
                                           {"ready_to_resolve", ratio(x, n)},
                                           {"histogram", std::move(hist)}};
  }
  o["lsu"] = json::object{{"loads_forwarded", s.loadsForwarded},
                          {"forward_stalls", s.forwardStalls},
                          {"store_address_waits", s.storeAddressWaits},
                          {"memory_order_flushes", s.memoryOrderFlushes},
                          {"sibling_order_clears", s.siblingOrderClears},
                          {"alias_4k_stalls", s.alias4kStalls},
                          {"alias_64k_conflicts", s.alias64kConflicts}};
  return o;
}

json::object Machine::cpuStatsJson(LogicalCpu cpu) {
  const ThreadStats& s = threadStats(cpu);
  const CpuInfo& info = cpus_[cpu.value];
  json::object o = threadStatsJson(s, *cores_[info.core.value], info.thread.value);
  o["id"] = cpu.value;
  o["core"] = info.core.value;
  o["thread"] = info.thread.value;
  const TraceCursor* cur = attached(cpu);
  o["trace"] = cur != nullptr ? json::value(cur->describe()) : json::value(nullptr);
  return o;
}

json::object Machine::statsJson() {
  flushAll();
  json::object root;
  root["smtlab_version"] = std::string(version());
  root["cycles"] = measuredCycles();
  root["seconds"] = double(measuredCycles()) / (config_.system.freq_ghz * 1e9);
  json::array cpus;
  std::uint64_t total = 0;
  for (std::uint32_t c = 0; c < cpus_.size(); ++c) {
    json::object o = cpuStatsJson(LogicalCpu{c});
    total += threadStats(LogicalCpu{c}).instructions;
    cpus.push_back(std::move(o));
  }
  root["instructions"] = total;
  root["logical_cpus"] = std::move(cpus);
  json::array cores;
  for (auto& corePtr : cores_) {
    Core& core = *corePtr;
    const CoreId id = core.id();
    std::uint64_t insns = 0;
    for (std::uint32_t t = 0; t < core.threads(); ++t) insns += core.thread(t).stats.instructions;
    json::object o;
    o["id"] = id.value;
    o["instructions"] = insns;
    o["cycles_active"] = core.cyclesActive();
    o["ipc"] = ratio(double(insns), double(core.cyclesActive()));
    o["partition_drains"] = core.drains();
    o["l1i"] = cacheJson(memory_->l1iStats(id), insns);
    o["l1d"] = cacheJson(memory_->l1dStats(id), insns);
    o["l2"] = cacheJson(memory_->l2Stats(id), insns);
    o["dtlb"] = tlbJson(memory_->dtlbStats(id), insns);
    json::array itlbs;
    for (std::uint32_t t = 0; t < core.threads(); ++t) itlbs.push_back(tlbJson(memory_->itlbStats(id, ThreadId{t}), insns));
    o["itlb"] = std::move(itlbs);
    const PageWalkStats& w = memory_->pageWalkStats(id);
    o["page_walk"] = json::object{{"walks", w.walks}, {"loads", w.loads}, {"pwc_hits", w.pwcHits}};
    const WriteCombiningStats wcs = memory_->writeCombiningStats(id);
    o["write_combining"] = json::object{{"writes", wcs.writes},
                                        {"merges", wcs.merges},
                                        {"flushes", wcs.flushes},
                                        {"wait_cycles", wcs.waitCycles}};
    o["package"] = memory_->packageOf(id);
    cores.push_back(std::move(o));
  }
  root["cores"] = std::move(cores);
  // One LLC per package; "llc" is the machine's total, so a reader of one package's machine needs no "packages".
  json::array packages;
  CacheStats llcTotal;
  for (std::uint32_t p = 0; p < memory_->packages(); ++p) {
    std::uint64_t insns = 0;
    json::array ids;
    for (auto& corePtr : cores_) {
      if (memory_->packageOf(corePtr->id()) != p) continue;
      ids.push_back(corePtr->id().value);
      for (std::uint32_t t = 0; t < corePtr->threads(); ++t) insns += corePtr->thread(t).stats.instructions;
    }
    packages.push_back(json::object{{"id", p}, {"cores", std::move(ids)}, {"instructions", insns},
                                    {"llc", cacheJson(memory_->llcStats(p), insns)}});
    llcTotal = sumCacheStats(llcTotal, memory_->llcStats(p));
  }
  root["packages"] = std::move(packages);
  root["llc"] = cacheJson(llcTotal, total);
  const DramStats& d = memory_->dramStats();
  root["dram"] = json::object{{"reads", d.reads}, {"writes", d.writes}, {"queue_cycles", d.queueCycles}};
  root["energy"] = energyJson(config(), energyCounts(*this));
  return root;
}

}  // namespace smtlab
