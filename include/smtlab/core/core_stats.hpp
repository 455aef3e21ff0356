// Statistics of one hardware thread: plain counters bumped in the pipeline's hot path and read only when a report
// is asked for. The CPI stack charges every cycle a thread runs to exactly one cause.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "smtlab/common/enum_table.hpp"

namespace smtlab {

// Why a running thread retired nothing in a cycle (or Base when it retired something). A new cause gets a row in
// kCpiCauseTable below; its name, the JSON statistics, the Python export and the docs check all follow from that row.
enum class CpiCause : std::uint8_t {
  Base,
  Execute,
  Frontend,
  BranchMispredict,
  Pause,
  MemL1,  // MemL1..MemDram in MemLevel order: a load's cause is MemL1 + its level
  MemL2,
  MemLlc,
  MemDram,
  RobFull,
  RobPartition,
  IqFull,
  IqPartition,
  LqFull,
  LqPartition,
  SqFull,
  SqPartition,
  Drain,
  SiblingRetire,
  Regs,
};

// THE list of CPI-stack causes: name (JSON key under cpi_stack, Python smtlab.CPI_CAUSES) and what it means.
inline constexpr std::array<EnumInfo<CpiCause>, 20> kCpiCauseTable{{
    {CpiCause::Base, "base", "retired at least one instruction"},
    {CpiCause::Execute, "execute", "the oldest instruction waits for its operands or a functional unit"},
    {CpiCause::Frontend, "frontend",
     "nothing in flight: fetch starved (I-cache/ITLB miss, fetch slot to the sibling, pipeline fill)"},
    {CpiCause::BranchMispredict, "branch_mispredict", "refilling after a mispredicted branch"},
    {CpiCause::Pause, "pause", "a pause instruction holds the thread"},
    {CpiCause::MemL1, "mem_l1", "the oldest instruction is a load served by the L1D, not yet back"},
    {CpiCause::MemL2, "mem_l2", "the oldest instruction is a load served by the L2, not yet back"},
    {CpiCause::MemLlc, "mem_llc", "the oldest instruction is a load served by the LLC, not yet back"},
    {CpiCause::MemDram, "mem_dram", "the oldest instruction is a load served by DRAM, not yet back"},
    {CpiCause::RobFull, "rob_full", "could not allocate: the whole ROB is full"},
    {CpiCause::RobPartition, "rob_partition", "could not allocate: the thread's ROB share is full"},
    {CpiCause::IqFull, "iq_full", "could not allocate: the whole issue queue is full"},
    {CpiCause::IqPartition, "iq_partition", "could not allocate: the thread's issue-queue share is full"},
    {CpiCause::LqFull, "lq_full", "could not allocate: the whole load buffer is full"},
    {CpiCause::LqPartition, "lq_partition", "could not allocate: the thread's load-buffer share is full"},
    {CpiCause::SqFull, "sq_full", "could not allocate: the whole store buffer is full"},
    {CpiCause::SqPartition, "sq_partition", "could not allocate: the thread's store-buffer share is full"},
    {CpiCause::Drain, "drain", "the core drains to change partitioning (a sibling started or stopped)"},
    {CpiCause::SiblingRetire, "sibling_retire", "the oldest instruction is done but the retire slot went to the sibling"},
    {CpiCause::Regs, "regs",
     "could not allocate: no free physical register (integer or FP/vector file, or the thread's share)"},
}};
static_assert(inEnumOrder(kCpiCauseTable), "kCpiCauseTable: one row per CpiCause, in enum order");
inline constexpr int kCpiCauses = static_cast<int>(kCpiCauseTable.size());
constexpr std::string_view cpiCauseName(CpiCause cause) { return enumName(kCpiCauseTable, cause); }
constexpr std::optional<CpiCause> cpiCauseFromName(std::string_view name) { return enumFromName(kCpiCauseTable, name); }

// The queues whose occupancy is sampled every cycle.
enum class QueueKind : std::uint8_t { UopQueue, Rob, Iq, Lq, Sq };
inline constexpr int kQueueKinds = 5;
std::string_view queueKindName(QueueKind q);

struct OccupancyStats {
  std::uint64_t sum = 0;  // entries x cycles
  std::uint32_t max = 0;
};

// Histogram of a mispredicted branch's cycles from fetch to resolution: buckets [0,8) [8,16) [16,32) ... [256,inf).
inline constexpr int kResolveBuckets = 7;
inline constexpr std::array<std::string_view, kResolveBuckets> kResolveBucketNames{"0-7",    "8-15",    "16-31", "32-63",
                                                                                   "64-127", "128-255", "256+"};
constexpr int resolveBucket(std::uint64_t cycles) {
  int b = 0;
  for (std::uint64_t edge = 8; b < kResolveBuckets - 1 && cycles >= edge; edge *= 2) ++b;
  return b;
}

struct ThreadStats {
  std::uint64_t cycles = 0;        // cycles this thread had work attached (CPI stack total)
  std::uint64_t instructions = 0;  // retired
  std::uint64_t fetched = 0;
  std::uint64_t squashed = 0;      // fetched, then squashed and fetched again later
  // Architectural events are counted at retire, so an instruction squashed (context switch, FLUSH) and fetched
  // again counts once; the fetch-side counts include every fetched incarnation.
  std::uint64_t branches = 0;     // retired branches
  std::uint64_t mispredicts = 0;  // retired branches whose (last) prediction was wrong
  std::uint64_t btbMisses = 0;    // retired branches whose (last) fetch missed the BTB
  std::uint64_t fetchedBranches = 0;
  std::uint64_t fetchedMispredicts = 0;
  std::uint64_t fetchedBtbMisses = 0;
  std::uint64_t fetchedPhtTagMisses = 0;  // conditional branches predicted statically: no entry of theirs in a full set
  std::uint64_t loads = 0;
  std::uint64_t stores = 0;
  std::uint64_t marks = 0;
  std::uint64_t fetchIcacheStallCycles = 0;
  std::uint64_t fetchBuilt = 0;           // instructions fetched through the decoder in build mode (core.build_width)
  std::uint64_t fetchStreamedLines = 0;   // code lines the instruction fetcher had read ahead (core.fetch_prefetch)
  std::uint64_t fetchBuildWaitCycles = 0; // cycles in build mode waiting while the sibling had the shared decoder
  std::uint64_t fetchGatedCycles = 0;  // STALL/FLUSH kept the thread from fetching
  std::uint64_t flushes = 0;           // FLUSH policy squashes
  // Wrong path and replay.
  std::uint64_t wrongPathFetched = 0;  // synthetic wrong-path uops fetched after mispredicted branches
  std::uint64_t wrongPathIssued = 0;   // of those, issued to a unit before their branch resolved
  std::uint64_t wrongPathFromCode = 0; // of those fetched, walked from the thread's own recent code (recent_code.hpp)
  std::uint64_t replayed = 0;          // extra issues of a load's dependents that went before its data (NetBurst)
  // Mispredicted branches from fetch to resolution (their result, when the scheduler executes them): each fetched
  // incarnation that resolved, whether or not the wrong path is modelled. The three parts add up to the total.
  std::uint64_t mispredictsResolved = 0;
  std::uint64_t mispredictFetchToRename = 0;  // cycles summed: front-end pipe and uop queue
  std::uint64_t mispredictRenameToReady = 0;  // cycles summed: waiting for its operands
  std::uint64_t mispredictReadyToResolve = 0; // cycles summed: waiting for a port, then executing
  std::array<std::uint64_t, kResolveBuckets> mispredictResolveHistogram{};  // fetch to resolution, see resolveBucket
  // Load/store unit, counted when a load issues (every incarnation, like the fetch-side counts).
  std::uint64_t loadsForwarded = 0;        // served by store-to-load forwarding (no L1D access)
  std::uint64_t forwardStalls = 0;         // held by an older store that overlaps but cannot forward
  std::uint64_t storeAddressWaits = 0;     // held for an older store's unknown address
  std::uint64_t memoryOrderFlushes = 0;    // read before a conflicting older store's address was known: flushed
  std::uint64_t siblingOrderClears = 0;    // restarted because a sibling's store wrote a line it had read early
  std::uint64_t alias4kStalls = 0;         // held by an older store matching in address bits 0..11 only
  std::uint64_t alias64kConflicts = 0;     // L1D hits turned into misses by NetBurst's 64K aliasing (loads, stores)
  std::array<std::uint64_t, 4> loadLevel{};
  std::array<std::uint64_t, kCpiCauses> cpi{};
  std::array<OccupancyStats, kQueueKinds> occupancy{};
};

}  // namespace smtlab
