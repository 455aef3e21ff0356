// The machine's memory hierarchy: per-core L1I/L1D/L2, one LLC per package, DRAM shared by all packages, ITLB per
// thread and DTLB per core; a TLB miss costs a fixed latency or a page walk through the caches (page_walker.hpp).
// Every access walks the levels at once and returns the cycle its data is ready (a timestamp model): a hit at a
// level costs that level's cumulative load-to-use latency, a miss holds an MSHR of each level it passes until the
// data is back, and the line is installed at once with its future ready cycle so later accesses merge with it.
#include "smtlab/mem/memory_system.hpp"

#include <algorithm>
#include <bit>

#include <fmt/format.h>

#include "memory_checks.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/mem/address_space.hpp"
#include "smtlab/mem/cache.hpp"
#include "smtlab/mem/dram.hpp"
#include "smtlab/mem/page_walker.hpp"
#include "smtlab/mem/stream_prefetcher.hpp"
#include "smtlab/mem/tlb.hpp"
#include "smtlab/mem/write_combining.hpp"

namespace smtlab {

namespace {

struct Outcome {
  Cycle ready;
  MemLevel level;
  bool primaryMiss = false;  // this level missed and sent the request below (not a merge)
};

std::vector<Cache> makeCaches(std::uint32_t n, const CacheConfig& config, std::uint32_t lineBytes,
                              const std::string& name) {
  std::vector<Cache> v;
  v.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) v.emplace_back(config, lineBytes, name);
  return v;
}

std::vector<Tlb> makeTlbs(std::uint32_t n, const TlbConfig& config, const std::string& name) {
  std::vector<Tlb> v;
  v.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) v.emplace_back(config, name);
  return v;
}

}  // namespace

struct MemorySystem::Impl {
  Impl(const MemConfig& config, std::uint32_t coreCount, std::uint32_t threadsPerCore, std::uint32_t packageCount)
      : lineBytes(checkedLineBytes(config, coreCount, packageCount)),
        lineShift(static_cast<std::uint32_t>(std::countr_zero(config.line_bytes))),
        pageShift(static_cast<std::uint32_t>(std::countr_zero(config.page_bytes))),
        cores(coreCount),
        threads(threadsPerCore),
        coresPerPackage(coreCount / packageCount),
        nextLinePrefetch(config.next_line_prefetch),
        l1iThreadTagged(config.l1i_thread_tagged),
        walkCaches(config.page_walk.caches),
        walkFromL2(config.page_walk.from_l2),
        l1i(makeCaches(coreCount, config.l1i, lineBytes, "mem.l1i")),
        l1d(makeCaches(coreCount, config.l1d, lineBytes, "mem.l1d")),
        l2(makeCaches(coreCount, config.l2, lineBytes, "mem.l2")),
        llc(makeCaches(packageCount, config.llc, lineBytes, "mem.llc")),
        itlb(makeTlbs(coreCount * threadsPerCore, config.itlb, "mem.itlb")),
        dtlb(makeTlbs(coreCount, config.dtlb, "mem.dtlb")),
        dram(config.dram, lineBytes),
        walker(config, coreCount),
        walkStats(coreCount),
        l1dWriteThrough(config.l1d_write_through) {
    if (l1dWriteThrough) wc.assign(coreCount, WriteCombiningBuffers(config.wc_buffers, config.wc_write_cycles));
    if (config.stream_prefetch.streams > 0) {
      streamPrefetchers.assign(coreCount, StreamPrefetcher(config.stream_prefetch, lineShift, pageShift));
    }
  }

  // One cache level: hit, merge with an in-flight fill, or a primary miss that waits for an MSHR, asks `below`
  // (a callable Cycle -> Outcome) and installs the line; a dirty victim goes to `writeback(line, cycle)`.
  // In functional mode (setFunctional) only contents and replacement change: a hit touches its line, a miss fills
  // it as present from cycle 0 with no MSHR taken, and `below` is asked at `now` (DRAM is not timed).
  template <class Below, class Writeback>
  Outcome accessCache(Cache& c, MemLevel level, LineAddr line, Cycle now, bool write, Below&& below,
                      Writeback&& writeback) {
    CacheStats& s = c.stats();
    ++s.accesses;
    const std::uint32_t entry = c.find(line);
    if (functional) [[unlikely]] {
      if (entry != Cache::kNotFound) {
        c.touch(entry);
        if (write) c.setDirty(entry);
        return Outcome{now, level};
      }
      ++s.misses;
      Outcome out = below(now);
      const Cache::Eviction ev = c.fill(line, Cycle{0}, out.level, write);
      if (ev.dirty) {
        ++s.writebacks;
        writeback(ev.line, now);
      }
      out.primaryMiss = true;
      return out;
    }
    const Cycle hitReady = now + c.latency();
    if (entry != Cache::kNotFound) {
      c.touch(entry);
      if (write) c.setDirty(entry);
      const Cycle lineReady = c.ready(entry);
      if (lineReady <= hitReady) return Outcome{hitReady, level};
      // The line's fill is still in flight: this access joins it (an MSHR merge, counted as a miss).
      ++s.misses;
      ++s.mshrMerges;
      return Outcome{lineReady, c.source(entry)};
    }
    ++s.misses;
    const Cache::MshrGrant grant = c.acquireMshr(now);
    Outcome out = below(grant.start);
    c.holdMshr(grant.slot, out.ready);
    const Cache::Eviction ev = c.fill(line, out.ready, out.level, write);
    if (ev.dirty) {
      ++s.writebacks;
      writeback(ev.line, now);
    }
    out.primaryMiss = true;
    return out;
  }

  Outcome llcAccess(std::uint32_t core, LineAddr line, Cycle now) {
    Cache& c = llc[core / coresPerPackage];
    return accessCache(
        c, MemLevel::LLC, line, now, false,
        // The request leaves for DRAM once the LLC has found it missing: idle-channel total = llc + dram latency.
        [this, &c](Cycle start) {
          if (functional) return Outcome{start, MemLevel::Dram};
          return Outcome{dram.read(start + c.latency()), MemLevel::Dram};
        },
        [this](LineAddr, Cycle when) {
          if (!functional) dram.write(when);
        });
  }

  void writebackToLlc(std::uint32_t core, LineAddr line, Cycle when) {
    // Non-inclusive: a victim the level below does not hold goes further down instead of allocating there.
    Cache& c = llc[core / coresPerPackage];
    const std::uint32_t entry = c.find(line);
    if (entry != Cache::kNotFound) {
      c.setDirty(entry);
    } else if (!functional) {
      dram.write(when);
    }
  }

  void writebackToL2(std::uint32_t core, LineAddr line, Cycle when) {
    Cache& c = l2[core];
    const std::uint32_t entry = c.find(line);
    if (entry != Cache::kNotFound) {
      c.setDirty(entry);
    } else {
      writebackToLlc(core, line, when);
    }
  }

  // write: a request for ownership from the write-combining buffers (the L2 allocates on a write miss and its line
  // becomes dirty).
  Outcome l2Access(std::uint32_t core, LineAddr line, Cycle now, bool write = false) {
    Cache& c = l2[core];
    const Outcome out = accessCache(
        c, MemLevel::L2, line, now, write, [this, core, line](Cycle start) { return llcAccess(core, line, start); },
        [this, core](LineAddr victim, Cycle when) { writebackToLlc(core, victim, when); });
    if (nextLinePrefetch && out.primaryMiss) {
      const LineAddr next = line.next();
      if ((next.firstByte(lineShift) >> pageShift) == (line.firstByte(lineShift) >> pageShift)) {
        prefetchLine(core, c, next, now);  // within the page only
      }
    }
    if (!streamPrefetchers.empty()) {
      streamPrefetchers[core].observe(line, out.primaryMiss && out.level == MemLevel::Dram,
                                      [&](LineAddr p) { prefetchLine(core, c, p, now); });
    }
    return Outcome{out.ready, out.level};
  }

  // A prefetch into the L2 (the next line on a demand miss, or a stream's): through the LLC like a miss, but never
  // waits for an MSHR (dropped when none is free) and skips a line the L2 holds or has in flight.
  void prefetchLine(std::uint32_t core, Cache& c, LineAddr line, Cycle now) {
    if (c.find(line) != Cache::kNotFound) return;
    if (functional) [[unlikely]] {  // no MSHR and no timing: the line is there from now on
      ++c.stats().prefetches;
      const Outcome out = llcAccess(core, line, now);
      const Cache::Eviction ev = c.fill(line, Cycle{0}, out.level, false);
      if (ev.dirty) {
        ++c.stats().writebacks;
        writebackToLlc(core, ev.line, now);
      }
      return;
    }
    const std::uint32_t slot = c.freeMshrAt(now);
    if (slot == Cache::kNotFound) return;
    ++c.stats().prefetches;
    const Outcome out = llcAccess(core, line, now);
    c.holdMshr(slot, out.ready);
    const Cache::Eviction ev = c.fill(line, out.ready, out.level, false);
    if (ev.dirty) {
      ++c.stats().writebacks;
      writebackToLlc(core, ev.line, now);
    }
  }

  Outcome l1Access(Cache& l1, std::uint32_t core, LineAddr line, Cycle now, bool write) {
    return accessCache(
        l1, MemLevel::L1, line, now, write, [this, core, line](Cycle start) { return l2Access(core, line, start); },
        [this, core](LineAddr victim, Cycle when) { writebackToL2(core, victim, when); });
  }

  void checkCore(CoreId core) const {
    if (core.value >= cores) [[unlikely]] {
      throw UsageError(fmt::format("memory system: core {} out of range (machine has {} cores)", core.value, cores));
    }
  }

  // A page walk through the caches: the entries' loads one after the other, each starting when the
  // previous one's data is back; returns the cycle the translation is known.
  Cycle walk(std::uint32_t core, Asid asid, Addr addr, Cycle now) {
    const PageWalker::Plan plan = walker.plan(core, asid, addr);
    PageWalkStats& ws = walkStats[core];
    ++ws.walks;
    ws.loads += plan.count;
    ws.pwcHits += plan.pwcHit ? 1 : 0;
    Cycle t = now;
    for (std::uint32_t i = 0; i < plan.count; ++i) {
      const LineAddr line = LineAddr::of(plan.entries[i], lineShift);
      t = walkFromL2 ? l2Access(core, line, t).ready : l1Access(l1d[core], core, line, t, false).ready;
    }
    return t;
  }

  Tlb::Translation translate(Tlb& tlb, std::uint32_t core, Asid asid, Addr addr, Addr phys, Cycle now) {
    if (!walkCaches) return tlb.translate(phys >> pageShift, now);
    return tlb.translate(phys >> pageShift, now, [&](Cycle start) { return walk(core, asid, addr, start); });
  }

  MemResult dataAccess(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now, bool write) {
    checkCore(core);
    Tlb& tlb = dtlb[core.value];
    Cache& l1 = l1d[core.value];
    const Addr first = physicalAddress(asid, addr);
    const Tlb::Translation tr = translate(tlb, core.value, asid, addr, first, now);
    Outcome out = l1Access(l1, core.value, LineAddr::of(first, lineShift), tr.ready, write);
    MemResult result{out.ready, out.level, tr.miss};
    const Addr last = physicalAddress(asid, addr + (size > 0 ? size - 1 : 0));
    if (LineAddr::of(last, lineShift) != LineAddr::of(first, lineShift)) [[unlikely]] {
      // An access split across two lines (maybe two pages): ready when both halves are.
      Tlb::Translation tr2 = tr;
      if ((last >> pageShift) != (first >> pageShift)) {
        const Addr lastVirtual = addr + size - 1;
        tr2 = translate(tlb, core.value, asid, lastVirtual, last, now);
      }
      const Outcome out2 = l1Access(l1, core.value, LineAddr::of(last, lineShift), tr2.ready, write);
      result.ready = std::max(result.ready, out2.ready);
      result.level = std::max(result.level, out2.level);
      result.tlbMiss = result.tlbMiss || tr2.miss;
    }
    return result;
  }

  // A store at retirement. Write-back L1D: dataAccess (the line is owned when the returned cycle comes). Write-through
  // L1D (mem.l1d_write_through): the L1D's copy of the line, if it holds one, is updated (no fill on a miss, never
  // dirty), and the store goes into a write-combining buffer, which asks the L2 for the line; the returned cycle is
  // when the store is in a buffer, the level L1 if the L1D held the line, else L2.
  MemResult storeAccess(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now) {
    if (!l1dWriteThrough) return dataAccess(core, asid, addr, size, now, true);
    if (functional) [[unlikely]] return writeThroughFunctional(core, asid, addr, size, now);
    checkCore(core);
    Tlb& tlb = dtlb[core.value];
    const Addr first = physicalAddress(asid, addr);
    const Tlb::Translation tr = translate(tlb, core.value, asid, addr, first, now);
    MemResult result = writeThrough(core.value, LineAddr::of(first, lineShift), tr.ready);
    result.tlbMiss = tr.miss;
    const Addr last = physicalAddress(asid, addr + (size > 0 ? size - 1 : 0));
    if (LineAddr::of(last, lineShift) != LineAddr::of(first, lineShift)) [[unlikely]] {
      Tlb::Translation tr2 = tr;
      if ((last >> pageShift) != (first >> pageShift)) tr2 = translate(tlb, core.value, asid, addr + size - 1, last, now);
      const MemResult second = writeThrough(core.value, LineAddr::of(last, lineShift), tr2.ready);
      result.ready = std::max(result.ready, second.ready);
      result.level = std::max(result.level, second.level);
      result.tlbMiss = result.tlbMiss || tr2.miss;
    }
    return result;
  }

  MemResult writeThrough(std::uint32_t core, LineAddr line, Cycle now) {
    Cache& l1 = l1d[core];
    CacheStats& s = l1.stats();
    ++s.accesses;
    const std::uint32_t entry = l1.find(line);
    MemLevel level = MemLevel::L1;
    if (entry != Cache::kNotFound) {
      l1.touch(entry);
    } else {
      ++s.misses;
      level = MemLevel::L2;
    }
    const Cycle in = wc[core].write(line, now, [&](Cycle start) { return l2Access(core, line, start, true).ready; });
    return MemResult{in, level, false};
  }

  // A write-through store in functional mode: the L1D's copy is touched, the L2 owns the line (dirty), with no
  // write-combining buffer and no timing.
  MemResult writeThroughFunctional(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now) {
    checkCore(core);
    const Addr first = physicalAddress(asid, addr);
    const Addr last = physicalAddress(asid, addr + (size > 0 ? size - 1 : 0));
    const Tlb::Translation tr = translate(dtlb[core.value], core.value, asid, addr, first, now);
    auto write = [&](LineAddr line) {
      Cache& l1 = l1d[core.value];
      ++l1.stats().accesses;
      const std::uint32_t entry = l1.find(line);
      if (entry != Cache::kNotFound) {
        l1.touch(entry);
      } else {
        ++l1.stats().misses;
      }
      l2Access(core.value, line, now, true);
    };
    write(LineAddr::of(first, lineShift));
    if (LineAddr::of(last, lineShift) != LineAddr::of(first, lineShift)) [[unlikely]] {
      if ((last >> pageShift) != (first >> pageShift)) {
        translate(dtlb[core.value], core.value, asid, addr + size - 1, last, now);
      }
      write(LineAddr::of(last, lineShift));
    }
    return MemResult{now, MemLevel::L1, tr.miss};
  }

  void checkThread(ThreadId thread) const {
    if (thread.value >= threads) [[unlikely]] {
      throw UsageError(fmt::format("memory system: thread {} out of range (cores have {} threads)", thread.value,
                                   threads));
    }
  }

  // The L1I's key for a thread's code line. Thread-tagged (mem.l1i_thread_tagged): the thread's id goes into the
  // line's top lineShift bits, which a line address never uses (core.threads <= 8 and mem.line_bytes >= 8), so the set
  // index is unchanged and a sibling's copy takes another way; the L2 is always asked for the real line.
  LineAddr l1iKey(LineAddr line, ThreadId thread) const {
    if (!l1iThreadTagged) return line;
    return LineAddr::fromNumber(line.value ^ (std::uint64_t{thread.value} << (64 - lineShift)));
  }

  // A code line of `thread`, translated through its ITLB at `now`: the real line (what the L2 is asked for), its
  // L1I key, and the translation's ready cycle and miss.
  struct CodeLine {
    LineAddr line;
    LineAddr key;
    Tlb::Translation tr;
  };
  CodeLine codeLine(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now) {
    checkCore(core);
    checkThread(thread);
    const Addr phys = physicalAddress(asid, pc);
    const Tlb::Translation tr = translate(itlb[core.value * threads + thread.value], core.value, asid, pc, phys, now);
    const LineAddr line = LineAddr::of(phys, lineShift);
    return CodeLine{line, l1iKey(line, thread), tr};
  }

  MemResult fetchAccess(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now) {
    const CodeLine code = codeLine(core, thread, asid, pc, now);
    const std::uint32_t c = core.value;
    const LineAddr line = code.line;
    // L1I lines are never dirty, so no victim is ever written back (a tagged one is no real line).
    const Outcome out = accessCache(
        l1i[c], MemLevel::L1, code.key, code.tr.ready, false,
        [this, c, line](Cycle start) { return l2Access(c, line, start); }, [](LineAddr, Cycle) {});
    return MemResult{out.ready, out.level, code.tr.miss};
  }

  MemResult prefetchCode(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now) {
    const CodeLine code = codeLine(core, thread, asid, pc, now);
    Cache& c = l1i[core.value];
    // A line the L1I holds (built, or its fill under way) is not read: no statistics, no LRU update.
    if (c.find(code.key) != Cache::kNotFound) return MemResult{code.tr.ready + c.latency(), MemLevel::L1, code.tr.miss};
    // The request takes one of the L1I's miss slots (mem.l1i.mshrs) until its bytes are back, like a fetch miss.
    const Cache::MshrGrant grant = c.acquireMshr(code.tr.ready);
    const Outcome out = l2Access(core.value, code.line, grant.start);
    c.holdMshr(grant.slot, out.ready);
    return MemResult{out.ready, out.level, code.tr.miss};
  }

  MemResult fetchStreamed(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle ready, MemLevel level) {
    checkCore(core);
    checkThread(thread);
    const LineAddr line = LineAddr::of(physicalAddress(asid, pc), lineShift);
    Cache& c = l1i[core.value];
    CacheStats& s = c.stats();
    ++s.accesses;
    ++s.misses;  // the trace cache did not hold it: its instructions are decoded (built), then it does
    const LineAddr key = l1iKey(line, thread);
    if (c.find(key) == Cache::kNotFound) c.fill(key, ready, level, false);
    return MemResult{ready, level, false};
  }

  const std::uint32_t lineBytes;
  const std::uint32_t lineShift;
  const std::uint32_t pageShift;
  const std::uint32_t cores;
  const std::uint32_t threads;
  const std::uint32_t coresPerPackage;
  const bool nextLinePrefetch;
  const bool l1iThreadTagged;  // mem.l1i_thread_tagged
  const bool walkCaches;  // mem.page_walk.caches
  const bool walkFromL2;
  std::vector<Cache> l1i;
  std::vector<Cache> l1d;
  std::vector<Cache> l2;
  std::vector<Cache> llc;  // one per package
  std::vector<Tlb> itlb;  // index core * threads + thread
  std::vector<Tlb> dtlb;
  Dram dram;
  PageWalker walker;
  std::vector<PageWalkStats> walkStats;  // per core
  std::vector<StreamPrefetcher> streamPrefetchers;  // per core; empty without mem.stream_prefetch
  const bool l1dWriteThrough;  // mem.l1d_write_through
  std::vector<WriteCombiningBuffers> wc;  // per core; empty with a write-back L1D
  bool functional = false;  // setFunctional: contents only, no timing (sampling's functional warming)
};

MemorySystem::MemorySystem(const MemConfig& config, std::uint32_t cores, std::uint32_t threadsPerCore,
                           std::uint32_t packages)
    : impl_(std::make_unique<Impl>(config, checkedCount(cores, "system.cores"),
                                   checkedCount(threadsPerCore, "core.threads"), checkedPackages(cores, packages))) {}

MemorySystem::~MemorySystem() = default;

MemResult MemorySystem::load(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now) {
  return impl_->dataAccess(core, asid, addr, size, now, false);
}

MemResult MemorySystem::store(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now) {
  return impl_->storeAccess(core, asid, addr, size, now);
}

MemResult MemorySystem::fetch(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now) {
  return impl_->fetchAccess(core, thread, asid, pc, now);
}

MemResult MemorySystem::prefetchCode(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now) {
  return impl_->prefetchCode(core, thread, asid, pc, now);
}

MemResult MemorySystem::fetchStreamed(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle ready, MemLevel level) {
  return impl_->fetchStreamed(core, thread, asid, pc, ready, level);
}

std::uint32_t MemorySystem::flushTlb(CoreId core, ThreadId thread, Asid asid) {
  impl_->checkCore(core);
  if (thread.value >= impl_->threads) {
    throw UsageError(fmt::format("flushTlb: thread {} out of range (cores have {} threads)", thread.value,
                                 impl_->threads));
  }
  // Page numbers carry the asid (mod 2^16) in their top bits (address_space.hpp); kernel pages, which the study
  // maps as global, are not tagged with a user asid and so survive, as global pages do on x86 (CR4.PGE).
  const std::uint32_t tagShift = 48 - impl_->pageShift;
  const std::uint64_t tag = asid.value & 0xffffU;
  auto ofAsid = [tagShift, tag](std::uint64_t page) { return (page >> tagShift) == tag; };
  std::uint32_t n = impl_->itlb[core.value * impl_->threads + thread.value].flush(ofAsid);
  n += impl_->dtlb[core.value].flush(ofAsid);
  impl_->walker.flush(core.value, asid);
  return n;
}

std::uint32_t MemorySystem::outstandingMisses(CoreId core, Cycle now) const {
  impl_->checkCore(core);
  return impl_->l1d[core.value].busyMshrs(now);
}

void MemorySystem::setFunctional(bool on) { impl_->functional = on; }

bool MemorySystem::functional() const { return impl_->functional; }

void MemorySystem::visitState(StateIo& io) {
  Impl& m = *impl_;
  io.mark("memory");
  io(m.l1i, m.l1d, m.l2, m.llc, m.itlb, m.dtlb, m.dram, m.walker, m.walkStats, m.streamPrefetchers, m.wc,
     m.functional);
}

std::uint32_t MemorySystem::lineBytes() const { return impl_->lineBytes; }

void MemorySystem::resetStats() {
  for (auto* caches : {&impl_->l1i, &impl_->l1d, &impl_->l2}) {
    for (Cache& c : *caches) c.resetStats();
  }
  for (Cache& c : impl_->llc) c.resetStats();
  for (PageWalkStats& w : impl_->walkStats) w = {};
  for (Tlb& t : impl_->itlb) t.resetStats();
  for (Tlb& t : impl_->dtlb) t.resetStats();
  impl_->dram.resetStats();
  for (WriteCombiningBuffers& w : impl_->wc) w.resetStats();
}

const CacheStats& MemorySystem::l1iStats(CoreId core) const {
  impl_->checkCore(core);
  return impl_->l1i[core.value].stats();
}

const CacheStats& MemorySystem::l1dStats(CoreId core) const {
  impl_->checkCore(core);
  return impl_->l1d[core.value].stats();
}

const CacheStats& MemorySystem::l2Stats(CoreId core) const {
  impl_->checkCore(core);
  return impl_->l2[core.value].stats();
}

std::uint32_t MemorySystem::packages() const { return static_cast<std::uint32_t>(impl_->llc.size()); }

std::uint32_t MemorySystem::packageOf(CoreId core) const {
  impl_->checkCore(core);
  return core.value / impl_->coresPerPackage;
}

const CacheStats& MemorySystem::llcStats(std::uint32_t package) const {
  if (package >= impl_->llc.size()) {
    throw UsageError(fmt::format("memory system: package {} out of range (machine has {} packages)", package,
                                 impl_->llc.size()));
  }
  return impl_->llc[package].stats();
}

const PageWalkStats& MemorySystem::pageWalkStats(CoreId core) const {
  impl_->checkCore(core);
  return impl_->walkStats[core.value];
}

WriteCombiningStats MemorySystem::writeCombiningStats(CoreId core) const {
  impl_->checkCore(core);
  return impl_->wc.empty() ? WriteCombiningStats{} : impl_->wc[core.value].stats();
}

bool MemorySystem::l1dWriteThrough() const { return impl_->l1dWriteThrough; }

const TlbStats& MemorySystem::itlbStats(CoreId core, ThreadId thread) const {
  impl_->checkCore(core);
  if (thread.value >= impl_->threads) {
    throw UsageError(fmt::format("memory system: thread {} out of range (cores have {} threads)", thread.value,
                                 impl_->threads));
  }
  return impl_->itlb[core.value * impl_->threads + thread.value].stats();
}

const TlbStats& MemorySystem::dtlbStats(CoreId core) const {
  impl_->checkCore(core);
  return impl_->dtlb[core.value].stats();
}

const DramStats& MemorySystem::dramStats() const { return impl_->dram.stats(); }

}  // namespace smtlab
