// The machine's configuration: one plain struct per component with its defaults. TOML presets (configs/*.toml) and
// `--set key=value` overrides are applied onto these defaults by the loader (loader.hpp), which knows every key's
// name, type, range and one-line doc. Components copy what they need into const members at construction.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "smtlab/common/enum_table.hpp"
#include "smtlab/core/fetch_policy.hpp"  // FetchPolicy, ThreadChoice: declared beside their table

namespace smtlab {

// How a queue's entries are divided between the hardware threads of a core.
enum class Sharing : std::uint8_t { Replicated, Partitioned, Shared, Capped };
inline constexpr std::array<EnumInfo<Sharing>, 4> kSharingTable{{
    {Sharing::Replicated, "replicated", "each thread owns `entries` of its own"},
    {Sharing::Partitioned, "partitioned",
     "`entries` split evenly between active threads; recombined when a sibling is idle"},
    {Sharing::Shared, "shared", "first come, first served"},
    {Sharing::Capped, "capped", "shared, but no thread holds more than `cap` x entries"},
}};
static_assert(inEnumOrder(kSharingTable));

// How the partitionable structures are divided at run time (core.allocation_policy): `static` keeps each structure's
// `sharing` mode, an adaptive policy sets the shares each cycle. Names, docs and factories: allocationPolicyTable()
// in core/allocation_policy.hpp.
enum class AllocationPolicy : std::uint8_t { Static, Dcra, HillClimbing };

// DCRA's parameters (core.dcra; core/allocation_policy.hpp, docs/model.md "Allocation policies").
struct DcraConfig {
  std::uint32_t activity_window = 256;  // a thread is active for a structure if it held an entry this many cycles ago
  std::uint32_t slow_misses = 1;        // L1D misses in flight that make a thread slow
  std::uint32_t slow_hold = 0;          // cycles a thread stays slow after those misses have returned
  double sharing_factor = 0.0;          // C, the part of a fast thread's share lent to slow ones; 0 = 1 / active threads
};

// What hill climbing climbs (core.hill_climbing.metric), measured over each epoch from the threads' retired
// instructions.
enum class ClimbMetric : std::uint8_t { Throughput, Hmean };
inline constexpr std::array<EnumInfo<ClimbMetric>, 2> kClimbMetricTable{{
    {ClimbMetric::Throughput, "throughput", "the sum of the running threads' IPCs"},
    {ClimbMetric::Hmean, "hmean", "the harmonic mean of the running threads' IPCs (throughput weighed by balance)"},
}};
static_assert(inEnumOrder(kClimbMetricTable));

// Hill climbing's parameters (core.hill_climbing; core/allocation_policy.hpp, docs/model.md "Allocation policies").
struct HillClimbingConfig {
  std::uint32_t epoch = 65536;   // cycles per trial epoch
  double step = 0.0625;          // how far one trial moves the partition: a fraction of every structure
  double min_share = 0.0625;     // the least fraction of every structure a running thread keeps
  ClimbMetric metric = ClimbMetric::Throughput;
};

// The cache whose miss makes a load "long-latency" for the STALL and FLUSH fetch policies.
enum class LongLatencyMiss : std::uint8_t { L1, L2, Llc };
// Tullsen & Brown 2001 trigger on an L2 miss, the last level of their machine: llc here.
inline constexpr std::array<EnumInfo<LongLatencyMiss>, 3> kLongLatencyMissTable{{
    {LongLatencyMiss::L1, "l1", "a load served by the L2 or beyond"},
    {LongLatencyMiss::L2, "l2", "a load served by the LLC or beyond"},
    {LongLatencyMiss::Llc, "llc", "a load served by DRAM"},
}};
static_assert(inEnumOrder(kLongLatencyMissTable));

// What a load does about an older store of its thread whose address is not known yet (core.lsu.memory_dependence).
enum class MemDependence : std::uint8_t { Off, Speculate, Wait, Predictor };
inline constexpr std::array<EnumInfo<MemDependence>, 4> kMemDependenceTable{{
    {MemDependence::Off, "off", "memory order is not modelled: loads never look at older stores' addresses"},
    {MemDependence::Speculate, "speculate",
     "always go ahead; a load that read before a conflicting older store resolved is flushed"},
    {MemDependence::Wait, "wait", "always wait until every older store's address is known"},
    {MemDependence::Predictor, "predictor",
     "go ahead unless the load's PC has conflicted before (a per-PC \"has conflicted\" bit)"},
}};
static_assert(inEnumOrder(kMemDependenceTable));

struct QueueConfig {
  std::uint32_t entries = 32;
  Sharing sharing = Sharing::Shared;
  double cap = 1.0;  // for Capped: fraction of entries one thread may hold
};

// A physical register file: its entries hold every hardware thread's committed (architectural) values
// and the results of renamed, unretired writers. entries = 0: unlimited, rename never waits for a register.
struct RegisterFileConfig {
  std::uint32_t entries = 0;
  Sharing sharing = Sharing::Shared;  // how the entries not holding architectural state are divided
  double cap = 1.0;                   // for Capped: fraction of those one thread may hold
  std::uint32_t architectural = 17;   // entries each hardware thread's committed registers hold permanently
};

// Issue ports: the unit classes a uop can need. kUnitClassTable gives their core.ports names (in
// this order in port strings) and docs; parsePort, portText and the core.ports doc read it.
enum class UnitClass : std::uint8_t {
  IntAlu, Branch, IntMul, IntDiv, FpAdd, FpMul, FpDiv, Load, StoreAddress, StoreData
};
inline constexpr std::array<EnumInfo<UnitClass>, 10> kUnitClassTable{{
    {UnitClass::IntAlu, "int_alu", "simple integer op"},
    {UnitClass::Branch, "branch", "branch / jump / call / return"},
    {UnitClass::IntMul, "int_mul", "integer multiply"},
    {UnitClass::IntDiv, "int_div", "integer divider (unpipelined: keeps its busy interval on its port)"},
    {UnitClass::FpAdd, "fp_add", "FP/SIMD add"},
    {UnitClass::FpMul, "fp_mul", "FP/SIMD multiply"},
    {UnitClass::FpDiv, "fp_div", "FP divide/sqrt"},
    {UnitClass::Load, "load", "load uop (AGU + L1D access)"},
    {UnitClass::StoreAddress, "store_address", "store-address uop (STA)"},
    {UnitClass::StoreData, "store_data", "store-data uop (STD)"},
}};
static_assert(inEnumOrder(kUnitClassTable));
inline constexpr int kUnitClasses = static_cast<int>(kUnitClassTable.size());
inline constexpr int kMaxPorts = 32;  // real cores have up to 12; tests and sweeps go wider

// One issue port: for each unit class it feeds, how many uops of that class it accepts per cycle (0 = not fed). A
// NetBurst double-speed ALU is rate 2 for simple integer uops on a port whose other classes take the whole cycle.
struct PortConfig {
  std::array<std::uint8_t, kUnitClasses> rate{};
  bool operator==(const PortConfig&) const = default;
};

// Today's unit counts as ports (3 ALUs, one unit of each other class, 2 load ports, one store-address and one
// store-data port): the default when a config gives no core.ports.
inline std::vector<PortConfig> defaultPorts() {
  std::vector<PortConfig> out;
  auto port = [&](std::initializer_list<UnitClass> classes) {
    PortConfig p;
    for (UnitClass c : classes) p.rate[static_cast<int>(c)] = 1;
    out.push_back(p);
  };
  for (int i = 0; i < 3; ++i) port({UnitClass::IntAlu, UnitClass::Branch});
  port({UnitClass::IntMul});
  port({UnitClass::IntDiv});
  port({UnitClass::FpAdd});
  port({UnitClass::FpMul});
  port({UnitClass::FpDiv});
  port({UnitClass::Load});
  port({UnitClass::Load});
  port({UnitClass::StoreAddress});
  port({UnitClass::StoreData});
  return out;
}

// A class of execution units: its latency and pipelining. How many there are is given by core.ports (the removed
// `count` key), how many uops an instruction of the class decodes into by `uops`.
struct FuConfig {
  std::uint32_t latency = 1;
  bool pipelined = true;  // false: a unit is busy for `latency` cycles per operation
  // Cycles a unit stays busy per operation; 0 = derived (1 if pipelined, else latency). A microcoded operation keeps
  // its unit for fewer cycles than its result takes.
  std::uint32_t interval = 0;
  // Cycles one thread must wait between two of its own operations on this unit class (0 = no limit): a microcode
  // sequence one thread cannot overlap with its next, while the sibling's can.
  std::uint32_t thread_interval = 0;
  // Uops the decoder makes of one operation of this class, memory uops not included: more than 4 come
  // from the microcode sequencer. A trace that recorded Instr::uops overrides it.
  std::uint32_t uops = 1;
};

struct FuSetConfig {
  FuConfig int_alu{1, true};
  FuConfig int_mul{3, true};
  FuConfig int_div{20, false};
  FuConfig fp_add{3, true};
  FuConfig fp_mul{5, true};
  FuConfig fp_div{20, false};
  FuConfig load{0, true};   // latency: address-generation cycles before the cache access
  FuConfig store{1, true};  // latency: cycles until a store-address or store-data uop is done
};

struct BranchConfig {
  std::uint32_t mispredict_penalty = 14;  // cycles from resolving a mispredicted branch to fetching the right path
  std::uint32_t history_bits = 12;        // global history length (per thread, replicated)
  std::uint32_t pht_entries = 4096;       // shared pattern history table (2-bit counters), gshare-indexed
  bool pht_thread_tagged = false;         // PHT entries carry their logical processor's id (NetBurst's global
                                          // history array): a sibling's entry is a miss, predicted statically
  std::uint32_t pht_assoc = 1;            // ways of a thread-tagged PHT: the threads' entries for one index coexist
                                          // (untagged, every index has its own entry whatever the ways)
  std::uint32_t btb_entries = 4096;       // shared branch target buffer
  std::uint32_t btb_assoc = 4;
  std::uint32_t btb_miss_penalty = 3;     // fetch bubble when a taken branch misses the BTB (decode redirect)
  std::uint32_t ras_entries = 16;         // return stack per thread (replicated)
};

// The load/store unit's memory ordering (core/load_store_unit.hpp). Every switch defaults to off, the simplest model
// (stores write the L1 at retire); a preset turns on what its core has.
struct LsuConfig {
  bool store_buffer = false;            // retired stores keep their SQ entry until they drain into the L1
  std::uint32_t stores_per_cycle = 1;   // L1D store bandwidth: retired stores written per cycle, all threads
  bool forwarding = false;              // a load covered by an older store takes its data from the store queue
  std::uint32_t forward_latency = 4;    // load-to-use cycles of a forwarded load
  bool forward_same_address = false;    // NetBurst: forwarding also needs the load to start at the store's address
  MemDependence memory_dependence = MemDependence::Off;
  std::uint32_t predictor_entries = 1024;  // per-PC "has conflicted" bits, shared by the core's threads
  bool alias_4k = false;                // a load matching an older store in address bits 0..11 only waits for it
  bool alias_64k = false;               // NetBurst: one L1D line per address modulo 64 KiB
  bool sibling_order_clears = false;    // a sibling's visible store clears a thread that read its line out of order
};

struct CoreConfig {
  std::uint32_t threads = 2;  // hardware threads per core; 1 = SMT off
  FetchPolicy fetch_policy = FetchPolicy::RoundRobin;
  std::uint32_t fetch_width = 4;
  std::uint32_t fetch_threads = 1;  // threads that may fetch in one cycle
  std::uint32_t build_width = 0;    // trace-cache build mode: instructions the shared decoder delivers per cycle (0 off)
  bool fetch_prefetch = false;      // after an L1I miss, the next code line on the thread's path is read ahead
  bool fetch_break_on_taken = true; // a taken branch ends the thread's fetch for the cycle
  // A microcoded instruction's uops come from the microcode sequencer through its thread's fetch slot: the
  // ceil(uops / fetch_width) cycles it streams are cycles the thread wins the fetch choice (false: its fetch is held for
  // that many cycles while its siblings fetch every cycle).
  bool microcode_shares_fetch = false;
  std::uint32_t frontend_depth = 5; // cycles from fetch until a uop can be renamed
  std::uint32_t rename_width = 4;
  std::uint32_t issue_width = 6;
  std::uint32_t retire_width = 4;
  ThreadChoice rename_policy = ThreadChoice::RoundRobin;  // which thread renames/allocates in a cycle
  ThreadChoice retire_policy = ThreadChoice::RoundRobin;  // which thread retires in a cycle
  LongLatencyMiss long_latency_miss = LongLatencyMiss::Llc;  // STALL/FLUSH/MLP trigger
  std::uint32_t mlp_predictor_entries = 2048;  // MLP-aware fetch: per-PC MLP distances, shared by the core's threads
  AllocationPolicy allocation_policy = AllocationPolicy::Static;  // one policy for every partitionable structure
  DcraConfig dcra{};
  HillClimbingConfig hill_climbing{};
  QueueConfig uop_queue{32, Sharing::Partitioned, 1.0};
  QueueConfig rob{128, Sharing::Partitioned, 1.0};
  QueueConfig iq{48, Sharing::Capped, 0.75};
  QueueConfig lq{48, Sharing::Partitioned, 1.0};
  QueueConfig sq{32, Sharing::Partitioned, 1.0};
  FuSetConfig fu{};
  std::vector<PortConfig> ports = defaultPorts();  // issue ports, `core.ports`
  BranchConfig branch{};
  LsuConfig lsu{};  // load/store unit: store buffer, forwarding, memory ordering
  bool recombine = true;              // partitioned queues recombine when a sibling is idle
  std::uint32_t recombine_cycles = 100;  // pipeline drain when the set of active threads changes
  std::uint32_t pause_cycles = 40;    // a pause keeps its thread from fetching for this many cycles
  std::uint64_t watchdog_cycles = 2000000;  // no retirement for this long with work in flight = deadlock
  // Speculation: wrong-path uops and NetBurst replay.
  bool wrong_path = true;             // a mispredicting thread fetches and issues wrong-path uops until resolution
  bool replay = false;                // NetBurst: a load's dependents issue at the L1-hit time and replay on a miss
  std::uint32_t replay_period = 7;    // cycles around the replay loop before a replayed uop issues again
  // Physical register files and the stack engine (rename_allocate, register_file.hpp).
  RegisterFileConfig int_prf{0, Sharing::Shared, 1.0, 17};
  RegisterFileConfig fp_prf{0, Sharing::Shared, 1.0, 24};
  bool stack_engine = false;  // push/pop/call/ret update the stack pointer at decode (no dependent uop chain)
  // The window counts uops (uopwindow): load + op and STA + STD fuse into one slot of the ROB, the uop
  // queue and the rename/retire widths (they still issue as separate uops).
  bool micro_fusion = false;
};

// Gives unit class `cls` exactly `n` ports of its own (one uop per cycle each), removing it from the ports that fed it
// (a port left feeding nothing is dropped); int_alu brings the branches along, as in defaultPorts(). For tests and
// sweeps that vary one unit count the way the removed core.fu.<class>.count did.
inline void setUnitCount(CoreConfig& core, UnitClass cls, std::uint32_t n) {
  const bool withBranch = cls == UnitClass::IntAlu;
  std::vector<PortConfig> out;
  for (PortConfig p : core.ports) {
    p.rate[static_cast<int>(cls)] = 0;
    if (withBranch) p.rate[static_cast<int>(UnitClass::Branch)] = 0;
    bool any = false;
    for (auto r : p.rate) any |= r != 0;
    if (any) out.push_back(p);
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    PortConfig p;
    p.rate[static_cast<int>(cls)] = 1;
    if (withBranch) p.rate[static_cast<int>(UnitClass::Branch)] = 1;
    out.push_back(p);
  }
  core.ports = std::move(out);
}

struct CacheConfig {
  std::uint32_t size_kb = 32;
  std::uint32_t assoc = 8;
  std::uint32_t latency = 4;  // load-to-use cycles on a hit at this level (cumulative, not added to the levels above)
  std::uint32_t mshrs = 8;    // misses outstanding at once
};

struct TlbConfig {
  std::uint32_t entries = 64;
  std::uint32_t assoc = 4;
  std::uint32_t miss_latency = 30;  // page walk
};

struct DramConfig {
  std::uint32_t latency = 200;        // cycles from the LLC miss to data
  double bytes_per_cycle = 8.0;       // bandwidth shared by all cores
};

struct MemConfig {
  std::uint32_t line_bytes = 64;
  std::uint32_t page_bytes = 4096;
  CacheConfig l1i{32, 8, 1, 4};
  CacheConfig l1d{32, 8, 4, 10};
  CacheConfig l2{256, 8, 12, 16};
  CacheConfig llc{4096, 16, 40, 32};
  DramConfig dram{};
  TlbConfig itlb{64, 4, 30};   // per hardware thread (replicated)
  TlbConfig dtlb{64, 4, 30};   // per core, shared by its threads
  bool next_line_prefetch = false;  // L2 prefetches the next line on a miss
  // A stream prefetcher into the L2 (mem/memory_system.cpp), per core and shared by its threads: two successive LLC
  // misses within trigger_bytes of each other in one page start a stream, which then keeps ahead_bytes ahead of the
  // demand accesses, within the page. streams = 0: none.
  struct StreamPrefetchConfig {
    std::uint32_t streams = 0;
    std::uint32_t trigger_bytes = 256;
    std::uint32_t ahead_bytes = 256;
  } stream_prefetch{};
  bool threads_share_address_space = false;  // all traces are threads of one process (one asid)
  // L1I lines carry the hardware thread's id (NetBurst's trace cache): a line one thread brought in does not serve its
  // siblings, which bring in their own copy (same set, another way); the L2 below is shared as usual.
  bool l1i_thread_tagged = false;
  // The L1D is write-through and does not allocate on a store miss (NetBurst): every store goes on to the L2 through
  // wc_buffers write-combining buffers per core, shared by its threads (mem/write_combining.hpp); a buffer takes
  // wc_write_cycles to write its line into the L2 once the line is owned, one line at a time. false: write-back,
  // write-allocate L1D.
  bool l1d_write_through = false;
  std::uint32_t wc_buffers = 6;
  std::uint32_t wc_write_cycles = 2;
  // Topology and OS costs: tagged TLBs keep their entries across address-space switches.
  bool tlb_tagged = false;  // true: Machine::flushTlb does nothing (PCID / ASID-tagged TLBs)
  // Page walks through the caches, mem/page_walker.hpp.
  struct PageWalkConfig {
    bool caches = false;           // a TLB miss walks the page table through the data caches (false: miss_latency)
    std::uint32_t levels = 4;      // page-table levels (x86-64: 4; 32-bit paging with 4 KiB pages: 2)
    std::uint32_t pwc_entries = 0; // page-walk cache: upper-level entries kept per core (0 = none)
    bool from_l2 = false;          // walk loads start at the L2 instead of the L1D
  } page_walk{};
};

// Energy per event and static power (energy/energy_model.hpp). Dynamic energies in nanojoules per event; powers in
// watts. The defaults are rough figures for a 22 nm core; presets calibrate their own (see the preset's comments).
struct EnergyConfig {
  double fetch_nj = 0.10;      // per instruction fetched
  double rename_nj = 0.10;     // per instruction renamed/allocated
  double retire_nj = 0.05;     // per instruction retired
  double int_alu_nj = 0.05;    // per operation issued to each unit class
  double int_mul_nj = 0.20;
  double int_div_nj = 0.80;
  double fp_add_nj = 0.20;
  double fp_mul_nj = 0.30;
  double fp_div_nj = 1.00;
  double load_nj = 0.10;
  double store_nj = 0.10;
  double l1i_nj = 0.05;        // per access at each cache level
  double l1d_nj = 0.08;
  double l2_nj = 0.30;
  double llc_nj = 1.00;
  double dram_nj = 15.0;       // per line read or written
  double core_active_w = 2.0;  // static power of a core with at least one running thread
  double core_halted_w = 0.3;  // static power of a core whose threads are all halted
  double uncore_w = 2.0;       // LLC, memory controller, ... while any core runs
  double package_idle_w = 1.0; // the whole package (and DRAM) when every logical CPU is halted
};

struct SystemConfig {
  std::uint32_t cores = 1;  // cores per package
  double freq_ghz = 3.0;  // for converting cycles to seconds
  // Topology: packages of `cores` cores, each package with its own LLC; DRAM shared by all.
  std::uint32_t packages = 1;
  bool siblings_adjacent = true;  // logical CPU numbering: true = APIC-ID order (Linux 2.4/2.5), false = cores first
};

// Costs the OS layer charges (python/smtlab/os/kernel.py with charge_os_costs=True).
struct OsCostConfig {
  std::uint32_t wake_cycles = 0;   // waking a halted logical CPU: IPI delivery + HLT exit, before it runs anything
  std::uint32_t timer_cycles = 0;  // one timer interrupt (tick) on a running logical CPU
};

// How the run loop advances time. Not part of the model: every choice here gives the same statistics.
struct SimConfig {
  bool skip = true;  // jump over cycles in which no core can change anything (event skipping)
  // NetBurst replay (core.replay): a replay attempt booked when its uop was first sent is not a wake-up point; it is
  // counted when the core next wakes (false = the core wakes at every attempt, the reference this is checked against).
  bool replay_deferred = true;
};

struct Config {
  SystemConfig system{};
  SimConfig sim{};
  OsCostConfig os{};
  CoreConfig core{};
  MemConfig mem{};
  EnergyConfig energy{};
  std::uint64_t seed = 1;  // seeds anything random in the model (none of the defaults is)
  std::string source;      // where the config came from (file name or "defaults"), for messages
};

}  // namespace smtlab
