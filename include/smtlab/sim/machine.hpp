// The whole simulated machine: `system.packages` packages of `system.cores` cores run in lock step over one memory
// system (an LLC per package, DRAM shared). Logical CPUs are the hardware threads as Linux numbers them: APIC-ID
// order (siblings adjacent) or cores first (cpu N and N + all cores are siblings), system.siblings_adjacent; see
// docs/model.md "Topology". The caller attaches
// trace cursors to logical CPUs, runs the machine until a cycle bound or an event, and reads statistics; the run loop
// jumps over cycles in which no core can do anything.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <boost/json/object.hpp>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/core.hpp"
#include "smtlab/core/core_event.hpp"
#include "smtlab/mem/memory_system.hpp"
#include "smtlab/trace/cursor.hpp"

namespace smtlab {

struct CpuInfo {
  LogicalCpu id;
  CoreId core;  // the machine's core index: package * system.cores + core within the package
  ThreadId thread;
  std::vector<LogicalCpu> siblings;  // the other logical CPUs of the same core
  std::uint32_t package = 0;         // physical package (socket), which has its own LLC
};

// EventKind, its names and docs: kEventKindTable in core/core_event.hpp.

// One trace advanced by Machine::warm (functional warming, docs/sampling.md). The trace is attached nowhere meanwhile.
struct WarmLane {
  LogicalCpu cpu;               // the hardware thread whose ITLB, history and return stack it warms
  TraceCursor* cursor = nullptr;
  Asid asid{0};                 // as given to attach
  double ipc = 1;               // instructions per simulated cycle at which it advances
  bool restart = false;         // at the end of its trace it starts again; otherwise it stops there
  std::uint64_t done = 0;       // out: instructions it executed in the last warm()
  bool ended = false;           // out: its trace ended (only without restart); an ended lane is skipped
  Cycle endedAt{0};             // out: when it ended
  double credit = 0;            // the fraction of an instruction carried to the next slice
};

struct Event {
  EventKind kind;
  LogicalCpu cpu;
  Cycle cycle;
  std::uint32_t markId = 0;
};

class Machine {
 public:
  explicit Machine(const Config& config);
  ~Machine();
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const Config& config() const { return config_; }
  // The next cycle to simulate.
  Cycle now() const { return now_; }
  std::uint32_t logicalCpus() const { return static_cast<std::uint32_t>(cpus_.size()); }
  const CpuInfo& cpu(LogicalCpu cpu) const;

  // Puts a trace on an idle logical CPU. The cursor must not be attached elsewhere.
  void attach(LogicalCpu cpu, std::shared_ptr<TraceCursor> cursor, Asid asid);
  // Takes the trace off a logical CPU: its in-flight instructions are squashed and the cursor rewinds to the oldest
  // unretired one, so nothing is lost or retired twice. Returns nullptr if nothing was attached.
  std::shared_ptr<TraceCursor> detach(LogicalCpu cpu);
  // HLT: the logical CPU stays idle, so partitioned queues recombine for its siblings. It must have no trace.
  void halt(LogicalCpu cpu);
  bool busy(LogicalCpu cpu) const;
  const TraceCursor* attached(LogicalCpu cpu) const;
  // After the CPU has retired `count` instructions in total (its statistics' count), it stops retiring and a
  // RetireLimit event is raised. clearRetireLimit lets it go on.
  void setRetireLimit(LogicalCpu cpu, std::uint64_t count);
  void clearRetireLimit(LogicalCpu cpu);
  // Restarts a finished trace from its beginning on the same CPU (after a SourceEnded event).
  void restartTrace(LogicalCpu cpu);

  // OS costs. An address-space switch on `cpu` away from `asid`: drops that asid's entries from the
  // CPU's ITLB, its core's DTLB and page-walk cache, unless mem.tlb_tagged (then nothing). Returns the TLB entries
  // dropped. With mem.threads_share_address_space every trace runs in asid 0, so that one is flushed.
  std::uint32_t flushTlb(LogicalCpu cpu, Asid asid);
  // Cycles from waking the halted `cpu` until it can run (os.wake_cycles); 0 when the CPU is not idle.
  std::uint32_t wakeCost(LogicalCpu cpu) const;
  std::uint32_t packages() const { return config_.system.packages; }

  // Checks the pipeline invariants every simulated cycle (slow; for tests and checking runs). Also switched on for
  // every machine by the environment variable SMTLAB_CHECK=1.
  void setChecking(bool on);

  // Simulates until cycle `until` or the end of the first cycle in which an event happens; returns the events (a
  // CycleBound event when `until` was reached without any other).
  std::vector<Event> run(Cycle until);
  // True when run() would jump straight to any bound: event skipping is on (sim.skip) and no core can change
  // anything until the caller does (nothing runs, no wake-up is pending). A caller running in slices can then take
  // the whole stretch in one call.
  bool quiescent() const;

  // Functional warming (docs/sampling.md): simulated time advances by `cycles` while each lane executes ipc x cycles
  // instructions of its trace without pipeline timing, through its CPU's caches, TLBs, branch predictor and
  // prefetchers. The lanes take turns in slices of kWarmSliceCycles, so the tables they share hold their mix. No lane's
  // CPU may have a trace attached. Statistics of caches and TLBs count these accesses (reset before measuring).
  static constexpr std::uint64_t kWarmSliceCycles = 128;
  void warm(std::span<WarmLane> lanes, std::uint64_t cycles);

  // The machine's whole state: its clock, the memory system and every core (a window snapshot, docs/sampling.md;
  // common/state_io.hpp). Only with no trace attached (between a sampled run's windows): throws UsageError otherwise.
  void visitState(StateIo& io);

  // Zeroes every statistic (threads, caches, cycle count) while keeping the machine's state: ends a warm-up.
  void resetStats();
  // Cycles since the statistics were last reset.
  std::uint64_t measuredCycles() const { return now_.value - statsBase_.value; }
  // Measured cycles in which at least one logical CPU had work; the rest the whole package was halted.
  std::uint64_t busyCycles() const { return busyCycles_; }

  // Statistics: per logical CPU thread statistics, caches, the effective config; names match the JSON of `smtlab
  // run`. Reading them charges skipped cycles up to now() first.
  const ThreadStats& threadStats(LogicalCpu cpu);
  boost::json::object statsJson();
  boost::json::object cpuStatsJson(LogicalCpu cpu);
  MemorySystem& memory() { return *memory_; }
  Core& core(CoreId id) { return *cores_[id.value]; }
  std::uint32_t cores() const { return static_cast<std::uint32_t>(cores_.size()); }

 private:
  void checkCpu(LogicalCpu cpu, const char* what) const;
  void flushAll();
  bool anyWork() const;

  Config config_;
  const bool skip_;  // sim.skip: jump over cycles in which no core can change anything
  Cycle now_{0};
  Cycle statsBase_{0};
  std::uint64_t busyCycles_ = 0;  // measured cycles in which some logical CPU had work (the package was not idle)
  std::unique_ptr<MemorySystem> memory_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::vector<CpuInfo> cpus_;
  std::vector<LogicalCpu> cpuOf_;  // index core * threads + thread: the logical CPU of that hardware thread
};

// JSON of one thread's statistics (instructions, ipc, cpi stack, occupancy, ...), as in `smtlab run --json`.
boost::json::object threadStatsJson(const ThreadStats& stats, const Core& core, std::uint32_t thread);

}  // namespace smtlab
