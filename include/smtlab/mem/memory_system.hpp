// The memory hierarchy of the whole machine: per core private L1I, L1D and L2, an LLC shared by all cores, and DRAM
// with a latency and a bandwidth limit; an ITLB per hardware thread and a DTLB per core. Accesses are timed when they
// are made: the answer says at which cycle the data is ready and which level served it. Lines that are still in
// flight make later accesses wait for them (MSHR merging); a level whose MSHRs are all busy delays new misses.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/mem/write_combining.hpp"

namespace smtlab {

class StateIo;

enum class MemLevel : std::uint8_t { L1 = 0, L2 = 1, LLC = 2, Dram = 3 };
inline constexpr int kMemLevels = 4;

struct MemResult {
  Cycle ready;     // cycle at which the data is available to the requester
  MemLevel level;  // level that served it
  bool tlbMiss = false;
};

// Per-cache counters, read by the stats registry.
struct CacheStats {
  std::uint64_t accesses = 0;
  std::uint64_t misses = 0;
  std::uint64_t mshrMerges = 0;      // misses to a line already in flight
  std::uint64_t mshrFullCycles = 0;  // cycles a miss waited for a free MSHR
  std::uint64_t writebacks = 0;
  std::uint64_t prefetches = 0;
};

struct TlbStats {
  std::uint64_t accesses = 0;
  std::uint64_t misses = 0;
  // Page walks and flushes.
  std::uint64_t walkCycles = 0;  // cycles from each miss to its translation, summed
  std::uint64_t flushed = 0;     // entries dropped by address-space-switch flushes
};

// Page walks through the caches, per core.
struct PageWalkStats {
  std::uint64_t walks = 0;
  std::uint64_t loads = 0;     // page-table entry loads sent to the caches
  std::uint64_t pwcHits = 0;   // walks that skipped upper levels thanks to the page-walk cache
};

struct DramStats {
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  std::uint64_t queueCycles = 0;  // cycles requests waited for the bandwidth
};

class MemorySystem {
 public:
  // cores: all cores of the machine; threadsPerCore: hardware threads per core (each has its own ITLB); packages:
  // the cores are split evenly into this many packages (core c in package c / (cores / packages)), each with its
  // own LLC; DRAM and its bandwidth are shared by all.
  MemorySystem(const MemConfig& config, std::uint32_t cores, std::uint32_t threadsPerCore,
               std::uint32_t packages = 1);
  ~MemorySystem();
  MemorySystem(const MemorySystem&) = delete;
  MemorySystem& operator=(const MemorySystem&) = delete;

  // A data load of `size` bytes at `addr` in address space `asid`, issued at `now` by a thread of `core`.
  MemResult load(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now);
  // A store written to the cache at retirement. Write-back L1D: write-allocate; the returned ready cycle tells when
  // the line is owned. Write-through L1D (mem.l1d_write_through): no allocation on a miss; the store goes into one
  // of the core's write-combining buffers (write_combining.hpp), and the returned ready cycle is when it is in one
  // (level L1 if the L1D held the line, else L2).
  MemResult store(CoreId core, Asid asid, Addr addr, std::uint32_t size, Cycle now);
  // mem.l1d_write_through.
  bool l1dWriteThrough() const;
  // An instruction fetch of the line holding `pc`, through the thread's ITLB and the core's L1I.
  MemResult fetch(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now);
  // The instruction fetcher reading a code line ahead of the decoder into the thread's streaming buffer (NetBurst,
  // core.fetch_prefetch): through the thread's ITLB; a line the L1I (trace cache) holds is not read (level L1
  // returned); otherwise the line is read from the L2 or below, taking an L1I miss slot until it is back, but is not
  // put in the L1I: the trace cache holds a line only once its instructions have been decoded. The returned ready
  // cycle is when the bytes are in the buffer.
  MemResult prefetchCode(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle now);
  // The thread's fetch reaching a line prefetchCode read (bytes in the buffer from `ready`, read from `level`): an
  // L1I access and miss with no request below; the line is put in the L1I as its instructions are built.
  MemResult fetchStreamed(CoreId core, ThreadId thread, Asid asid, Addr pc, Cycle ready, MemLevel level);

  // An address-space switch on one hardware thread without tagged TLBs: drops the entries of `asid`
  // from that thread's ITLB, the core's DTLB (shared by its threads) and the core's page-walk cache. Returns the
  // TLB entries dropped.
  std::uint32_t flushTlb(CoreId core, ThreadId thread, Asid asid);

  // Loads of `core` that are currently missing the L1D (issued, data not yet back), for MISSCOUNT.
  std::uint32_t outstandingMisses(CoreId core, Cycle now) const;

  // Functional mode (sampled simulation's warming, docs/sampling.md): accesses update what the caches, TLBs, page-walk
  // cache and prefetchers hold and their replacement order, as timed accesses would, but take no MSHR, book no DRAM
  // time and fill lines as present at once; the returned ready cycles mean nothing. Statistics still count.
  void setFunctional(bool on);
  bool functional() const;

  std::uint32_t lineBytes() const;
  // Zeroes every statistic (caches, TLBs, DRAM), keeping the contents: ends a warm-up.
  void resetStats();
  // Everything the hierarchy holds: contents, replacement order, fills in flight, MSHRs, DRAM bookings, page-walk
  // caches, prefetch streams, write-combining buffers, statistics (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);

  // Statistics.
  const CacheStats& l1iStats(CoreId core) const;
  const CacheStats& l1dStats(CoreId core) const;
  const CacheStats& l2Stats(CoreId core) const;
  std::uint32_t packages() const;
  std::uint32_t packageOf(CoreId core) const;
  const CacheStats& llcStats(std::uint32_t package = 0) const;
  const PageWalkStats& pageWalkStats(CoreId core) const;
  // Zero with a write-back L1D.
  WriteCombiningStats writeCombiningStats(CoreId core) const;
  const TlbStats& itlbStats(CoreId core, ThreadId thread) const;
  const TlbStats& dtlbStats(CoreId core) const;
  const DramStats& dramStats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smtlab
