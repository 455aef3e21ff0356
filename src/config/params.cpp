// The one table of config keys: every key's name, field, doc and range, declared once in visitParams. Reading and
// writing a key's value and the outputs built from the table are in param_values.cpp; the names of choice values,
// port strings and key suggestions in param_choices.cpp.

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "param_table.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/core/allocation_policy.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/fu_kind.hpp"

namespace smtlab {
namespace config_detail {
namespace {

constexpr double kMaxInt = 1e12;  // a sane upper bound for counts of cycles

// The doc of a policy key, from its table: what it chooses, the policy names, where each is described.
template <class Table>
std::string policyDoc(std::string_view what, const Table& table) {
  std::vector<std::string_view> names;
  for (const auto& row : table) names.push_back(row.name);
  return fmt::format("{}: {} (each described in docs/model.md, \"Thread choice\")", what, fmt::join(names, ", "));
}

// Declares a queue guarded by a sharing policy (three keys).
template <class V>
void visitQueue(V& v, const std::string& prefix, QueueConfig& q, std::string_view what) {
  v(prefix + ".entries", q.entries,
    fmt::format("{} entries: per thread if replicated, else the core's total", what), 1, 65536);
  v(prefix + ".sharing", q.sharing,
    fmt::format("{} between threads: replicated (entries each) | partitioned (split among active threads) | "
                "shared | capped (at most cap x entries each)", what));
  v(prefix + ".cap", q.cap, fmt::format("capped only: fraction of the {} one thread may hold", what), 0, 1);
}

// Declares a physical register file (four keys).
template <class V>
void visitRegisterFile(V& v, const std::string& prefix, RegisterFileConfig& f, std::string_view what) {
  v(prefix + ".entries", f.entries,
    fmt::format("{} physical registers of the core (architectural state of every thread included; replicated: per "
                "thread); 0 = unlimited, rename never waits for one",
                what),
    0, 65536);
  v(prefix + ".sharing", f.sharing,
    fmt::format("{} registers beyond the architectural ones, between threads: replicated | partitioned | shared | "
                "capped",
                what));
  v(prefix + ".cap", f.cap, fmt::format("capped only: fraction of the renaming {} registers one thread may hold", what),
    0, 1);
  v(prefix + ".architectural", f.architectural,
    fmt::format("{} registers each hardware thread's committed state holds permanently", what), 0, 4096);
}

// Declares a class of functional units (three keys).
template <class V>
void visitFu(V& v, const std::string& prefix, FuConfig& f, std::string_view what, std::string_view latencyDoc) {
  v(prefix + ".latency", f.latency, std::string(latencyDoc), 0, 10000);
  v(prefix + ".pipelined", f.pipelined,
    fmt::format("{}: true = a unit takes a new uop every cycle, false = busy for `latency` cycles", what));
  v(prefix + ".interval", f.interval,
    fmt::format("{}: cycles a unit is busy per uop; 0 = from `pipelined` (1, or `latency`)", what), 0, 10000);
  v(prefix + ".thread_interval", f.thread_interval,
    fmt::format("{}: min cycles between two uops of ONE thread on these units (a microcode sequence it cannot "
                "overlap; the sibling can); 0 = no limit", what),
    0, 10000);
  v(prefix + ".uops", f.uops,
    fmt::format("{}: uops the decoder makes of one such instruction, load/store uops not counted; more than 4 come "
                "from the microcode sequencer (a recorded Instr::uops overrides it)", what),
    1, 255);
}

template <class V>
void visitCache(V& v, const std::string& prefix, CacheConfig& c, std::string_view what) {
  v(prefix + ".size_kb", c.size_kb, fmt::format("{} capacity in KiB", what), 1, 1 << 22);
  v(prefix + ".assoc", c.assoc, fmt::format("{} ways per set", what), 1, 1024);
  v(prefix + ".latency", c.latency,
    fmt::format("{} hit: total load-to-use cycles (cumulative, not added to the levels above)", what), 1, 100000);
  v(prefix + ".mshrs", c.mshrs, fmt::format("{} misses outstanding at once (MSHRs)", what), 1, 4096);
}

template <class V>
void visitTlb(V& v, const std::string& prefix, TlbConfig& t, std::string_view what) {
  v(prefix + ".entries", t.entries, fmt::format("{} entries", what), 1, 1 << 20);
  v(prefix + ".assoc", t.assoc, fmt::format("{} ways (= entries for fully associative)", what), 1, 1 << 20);
  v(prefix + ".miss_latency", t.miss_latency, fmt::format("{} miss: page-walk cycles", what), 0, 100000);
}

// THE declaration of every key. v(key, field, doc, min, max) for numbers, v(key, field, doc) for bools and choices.
template <class V>
void visitParams(Config& c, V&& v) {
  v("seed", c.seed, "seed for anything random in the model; same config + traces + seed = same result", 0, 1e18);

  v("system.cores", c.system.cores,
    "physical cores per package, each with core.threads hardware threads (all cores of a package share its LLC)", 1,
    64);
  // Topology.
  v("system.packages", c.system.packages,
    "physical packages (sockets), each with system.cores cores and its own LLC; DRAM is shared by all", 1, 64);
  v("system.siblings_adjacent", c.system.siblings_adjacent,
    "logical CPU numbering: true = APIC-ID order as Linux 2.4/2.5 (siblings adjacent: cpu = core x threads + "
    "thread), false = cores first as modern kernels via ACPI (cpu N and N + all cores are siblings)");
  // OS costs, charged by smtlab.os.Kernel(charge_os_costs=True).
  v("os.wake_cycles", c.os.wake_cycles,
    "cycles from waking a halted logical CPU (IPI delivery + HLT exit) until it can run anything", 0, 1e9);
  v("os.timer_cycles", c.os.timer_cycles, "cycles one timer interrupt (tick) takes from the task on a busy CPU", 0,
    1e9);
  v("system.freq_ghz", c.system.freq_ghz, "core clock in GHz; converts cycles to seconds and energy to power", 0.01,
    100);
  v("sim.skip", c.sim.skip,
    "event skipping: jump over cycles in which no core can change anything (false = tick every cycle; the "
    "statistics are identical, only slower)");
  v("sim.replay_deferred", c.sim.replay_deferred,
    "NetBurst replay: count the replay attempts booked when a uop is first sent when the core next wakes (false = "
    "wake the core at every attempt; the statistics are identical, only slower)");

  CoreConfig& k = c.core;
  v("core.threads", k.threads, "hardware threads per core (1 = SMT off, 2 = Hyper-Threading)", 1, 8);
  v("core.fetch_policy", k.fetch_policy, policyDoc("which thread fetches", fetchPolicyTable()));
  v("core.fetch_width", k.fetch_width,
    "instructions fetched per cycle, over all threads fetching that cycle (a microcoded one holds its thread's fetch "
    "for ceil(uops / fetch_width) cycles, or takes that many of its fetch slots: core.microcode_shares_fetch)",
    1, 64);
  v("core.fetch_threads", k.fetch_threads, "threads that may fetch in the same cycle (Pentium 4: 1)", 1, 8);
  v("core.build_width", k.build_width,
    "trace-cache build mode: after an L1I (trace cache) miss a thread's instructions come from the one decoder the "
    "threads share, this many per cycle, until its fetch reaches a line that hits (Pentium 4: 1; 0 = off, a miss "
    "costs only its latency)",
    0, 16);
  v("core.fetch_prefetch", k.fetch_prefetch,
    "instruction prefetch into per-thread streaming buffers: when a thread's code line misses the L1I (trace cache), "
    "or its fetch reaches a line read this way, the next line on its path is read from the L2 (or below) at once, so "
    "its bytes can be waiting when the decoder gets there (Pentium 4: the fetcher fills two 64-byte buffers per "
    "logical processor ahead of the decoder; false: each missing line is read when fetch reaches it)");
  v("core.microcode_shares_fetch", k.microcode_shares_fetch,
    "a microcoded instruction's uops reach the uop queue through its thread's fetch slot, ceil(uops / fetch_width) "
    "slots the fetch policy hands out among the threads like any other (Pentium 4: the microcode ROM is shared and "
    "alternates between logical processors like the trace cache); false: the thread's fetch is held that many cycles "
    "while siblings fetch every cycle");
  v("core.fetch_break_on_taken", k.fetch_break_on_taken,
    "a taken branch ends its thread's fetch for the cycle (false for a trace cache)");
  v("core.frontend_depth", k.frontend_depth,
    "cycles from fetch until a uop can be renamed; refilled after every mispredict", 0, 1000);
  v("core.rename_width", k.rename_width, "uops renamed/allocated per cycle, all threads together", 1, 64);
  v("core.issue_width", k.issue_width, "uops dispatched to functional units per cycle", 1, 64);
  v("core.long_latency_miss", k.long_latency_miss,
    "stall / flush / mlp fetch policies: a load missing this cache (l1 | l2 | llc) gates its thread's fetch until the "
    "data returns (flush also squashes its younger instructions; mlp does both from the load's predicted MLP distance "
    "on)");
  v("core.mlp_predictor_entries", k.mlp_predictor_entries,
    "mlp fetch policy: per-PC MLP distances (instructions to the youngest long-latency load a window overlaps), "
    "shared by the core's threads, power of two",
    1, 1 << 20);
  v("core.rename_policy", k.rename_policy, policyDoc("which thread renames/allocates each cycle", threadChoiceTable()));
  v("core.retire_policy", k.retire_policy, policyDoc("which thread retires each cycle", threadChoiceTable()));
  v("core.retire_width", k.retire_width, "uops retired per cycle, all threads together", 1, 64);
  // One key for every structure: DCRA classifies the threads once per cycle and applies one formula to each
  // resource it controls (Cazorla et al. 2004), and a policy that learns partitions (hill climbing, Choi and Yeung
  // 2006) moves the boundaries of all structures together; one policy per structure would only allow mixes no paper
  // defines.
  {
    std::vector<std::string> rows;
    for (const auto& row : allocationPolicyTable()) rows.push_back(fmt::format("{} ({})", row.name, row.doc));
    v("core.allocation_policy", k.allocation_policy,
      fmt::format("how the uop queue, ROB, IQ, LQ, SQ and limited register files are divided between threads at run "
                  "time: {}; docs/model.md \"Allocation policies\"",
                  fmt::join(rows, "; ")));
  }
  v("core.dcra.activity_window", k.dcra.activity_window,
    "dcra: a thread is active for a structure (counted among its sharers) while it held an entry of it within this "
    "many cycles",
    1, 1e9);
  v("core.dcra.slow_misses", k.dcra.slow_misses,
    "dcra: loads missing the L1D in flight that make a thread slow (it gets the larger share); fewer: fast", 1, 4096);
  v("core.dcra.slow_hold", k.dcra.slow_hold,
    "dcra: cycles a thread stays slow after the misses that made it slow have returned (0: classified anew each cycle, "
    "as in the paper)",
    0, 1e9);
  v("core.dcra.sharing_factor", k.dcra.sharing_factor,
    "dcra: C, the part of each fast active thread's even share a slow thread may take on top of its own (share = "
    "R/T x (1 + C x fast active threads)); 0 = 1/T, T the structure's active threads",
    0, 1);
  v("core.hill_climbing.epoch", k.hill_climbing.epoch,
    "hill_climbing: cycles of one trial epoch (a round tries one partition per running thread, then moves to the best)",
    64, 1e9);
  v("core.hill_climbing.step", k.hill_climbing.step,
    "hill_climbing: the fraction of every structure a trial gives one thread, taken evenly from the others", 0.001,
    0.5);
  v("core.hill_climbing.min_share", k.hill_climbing.min_share,
    "hill_climbing: the least fraction of every structure a running thread keeps", 0.0, 0.5);
  v("core.hill_climbing.metric", k.hill_climbing.metric,
    "hill_climbing: what an epoch's partition is judged by: throughput (sum of the threads' IPCs) | hmean "
    "(harmonic mean of their IPCs)");
  visitQueue(v, "core.uop_queue", k.uop_queue, "uop queue (decoded, awaiting rename)");
  visitQueue(v, "core.rob", k.rob, "reorder buffer");
  visitQueue(v, "core.iq", k.iq, "issue queue (schedulers)");
  visitQueue(v, "core.lq", k.lq, "load buffer");
  visitQueue(v, "core.sq", k.sq, "store buffer");

  for (const FuKindInfo& fu : kFuKindTable) {
    visitFu(v, fmt::format("core.fu.{}", fu.name), k.fu.*fu.config, fu.doc, fu.latencyDoc);
  }

  v("core.ports", k.ports,
    "issue ports, one string each: the unit classes it feeds, class:rate for more than one uop of a class per cycle "
    "(int_alu:2 = a double-speed ALU); classes: " + fmt::format("{}", fmt::join(unitClassNames(), " ")));
  // The window counts uops (uop_decode.hpp): micro-fusion of the fused domain.
  v("core.micro_fusion", k.micro_fusion,
    "micro-fusion: a load-op's load + op and a store's store-address + store-data take one slot of the ROB, the uop "
    "queue and the rename/retire widths (the fused domain), and still issue as separate uops");
  // Load/store unit: the post-retire store buffer.
  LsuConfig& lsu = k.lsu;
  v("core.lsu.store_buffer", lsu.store_buffer,
    "a retired store keeps its store-queue entry until it drains into the L1D, in program order per thread (false: "
    "it writes the L1D at retire and frees the entry at once)");
  v("core.lsu.stores_per_cycle", lsu.stores_per_cycle,
    "store_buffer: retired stores written to the L1D per cycle, all threads together; a store missing the L1D "
    "holds its thread's drain until the line is owned", 1, 16);
  // Store-to-load forwarding, memory ordering and aliasing (load_store_unit.hpp).
  v("core.lsu.forwarding", lsu.forwarding,
    "store-to-load forwarding: a load whose bytes one older store (in flight or buffered) covers takes its data from "
    "it without an L1D access; a partial overlap blocks the load until that store has written the L1D (with false, "
    "any overlap blocks so)");
  v("core.lsu.forward_same_address", lsu.forward_same_address,
    "forwarding: the load must also start at the store's address (NetBurst's alignment rule); otherwise it blocks "
    "like a partial overlap");
  v("core.lsu.forward_latency", lsu.forward_latency,
    "forwarding: load-to-use cycles of a forwarded load, counted from its issue or the store's data, whichever is "
    "later", 0, 1000);
  v("core.lsu.memory_dependence", lsu.memory_dependence,
    "a load and older stores with unknown addresses: off (not modelled), speculate (go; a conflict flushes from the "
    "load), wait (until they are known), predictor (go unless the load's PC conflicted before)");
  v("core.lsu.predictor_entries", lsu.predictor_entries,
    "memory_dependence = predictor: per-PC 'has conflicted' bits, shared by the core's threads, power of two", 1,
    1 << 24);
  v("core.lsu.alias_4k", lsu.alias_4k,
    "4K aliasing: a load whose bytes match an older store's in address bits 0..11 but not in the full address waits "
    "until that store has written the L1D, as if dependent");
  v("core.lsu.alias_64k", lsu.alias_64k,
    "NetBurst 64K aliasing: the L1D holds one line per virtual address modulo 64 KiB; an access whose line differs "
    "from the last line used at that position (other address or address space) misses the L1D and costs an L2 hit");
  v("core.lsu.sibling_order_clears", lsu.sibling_order_clears,
    "memory-ordering machine clears between logical CPUs: when a store of one thread writes the L1D, a sibling thread "
    "that has issued a load of the same (physical) line while an older load of its own is still in flight restarts "
    "after its last retired instruction");

  BranchConfig& b = k.branch;
  v("core.branch.mispredict_penalty", b.mispredict_penalty,
    "cycles from resolving a mispredicted branch to fetching the right path (frontend_depth comes on top)", 0, 10000);
  v("core.branch.history_bits", b.history_bits, "global history bits per thread (replicated), gshare index", 0, 30);
  v("core.branch.pht_entries", b.pht_entries, "pattern history table 2-bit counters, shared, power of two", 1,
    1 << 28);
  v("core.branch.pht_thread_tagged", b.pht_thread_tagged,
    "pattern history entries are tagged with their logical processor: a thread uses only its own entries; a branch "
    "with none, in a set with no untrained way, is predicted statically (backward taken, forward not taken) and "
    "replaces the set's least recently used way");
  v("core.branch.pht_assoc", b.pht_assoc,
    "ways of a thread-tagged pattern table (power of two): each set holds the entries of pht_assoc indices, so a "
    "thread's entry and its sibling's for one index can coexist; a miss in a full set is predicted statically and "
    "replaces the least recently used way (1: direct-mapped, the sibling's entry is taken over; untagged, every "
    "index keeps its own entry whatever the ways)", 1, 1 << 28);
  v("core.branch.btb_entries", b.btb_entries, "branch target buffer entries, shared, power of two sets", 1, 1 << 24);
  v("core.branch.btb_assoc", b.btb_assoc, "branch target buffer ways", 1, 1 << 24);
  v("core.branch.btb_miss_penalty", b.btb_miss_penalty, "fetch bubble cycles when a taken branch misses the BTB", 0,
    1000);
  v("core.branch.ras_entries", b.ras_entries, "return address stack entries per thread (replicated)", 1, 1024);

  v("core.recombine", k.recombine, "partitioned queues recombine for the other thread when a sibling halts");
  v("core.recombine_cycles", k.recombine_cycles,
    "pipeline-drain cycles whenever the set of active threads changes (partition / recombine)", 0, 1000000);
  v("core.pause_cycles", k.pause_cycles, "cycles a PAUSE keeps its thread from fetching", 0, 1000000);
  visitRegisterFile(v, "core.int_prf", k.int_prf, "integer");
  visitRegisterFile(v, "core.fp_prf", k.fp_prf, "FP/vector");
  v("core.stack_engine", k.stack_engine,
    "push/pop/call/ret update the stack pointer at decode, without a uop on the stack-pointer chain; an explicit "
    "read of the stack pointer after them waits one cycle for a sync uop (r4 is the stack pointer in every format)");
  v("core.watchdog_cycles", k.watchdog_cycles,
    "cycles without any retirement while work is in flight (by the core, or by one running thread while a "
    "sibling retires) before stopping with a deadlock error; a wait for the memory system with a known end (the oldest "
    "instruction a load served beyond the L1, or the fetch of the next one) counts as progress", 1000, kMaxInt);
  // Speculation: wrong-path uops and NetBurst replay.
  v("core.wrong_path", k.wrong_path,
    "after a mispredicted branch its thread fetches, renames and issues wrong-path uops (its own recent code at the "
    "predicted target, else its recent mix; register dependences, no memory accesses) until the branch resolves, "
    "taking shared slots; false = fetch stops at the branch");
  v("core.replay", k.replay,
    "NetBurst replay: a load's dependents issue when an L1D hit would deliver; on a miss they issue again every "
    "replay_period cycles until the data arrives, taking issue slots and units each time");
  v("core.replay_period", k.replay_period, "cycles around the replay loop before a replayed uop issues again", 1,
    1000);

  MemConfig& m = c.mem;
  v("mem.line_bytes", m.line_bytes, "cache line size in bytes at every level, power of two", 8, 4096);
  v("mem.page_bytes", m.page_bytes, "virtual-memory page size in bytes (TLB reach), power of two", 512, 1 << 30);
  visitCache(v, "mem.l1i", m.l1i, "L1 instruction cache (trace cache on NetBurst), per core,");
  visitCache(v, "mem.l1d", m.l1d, "L1 data cache, per core,");
  visitCache(v, "mem.l2", m.l2, "L2, private per core,");
  visitCache(v, "mem.llc", m.llc, "last-level cache, shared by all cores,");
  v("mem.dram.latency", m.dram.latency, "cycles from an LLC miss to the data, unloaded (ns x system.freq_ghz)", 1,
    1000000);
  v("mem.dram.bytes_per_cycle", m.dram.bytes_per_cycle,
    "DRAM bandwidth in bytes per core cycle, shared by all cores (GB/s / system.freq_ghz)", 0.001, 100000);
  visitTlb(v, "mem.itlb", m.itlb, "instruction TLB, per thread,");
  visitTlb(v, "mem.dtlb", m.dtlb, "data TLB, per core (shared by its threads),");
  v("mem.next_line_prefetch", m.next_line_prefetch, "the L2 prefetches the next line on a miss");
  v("mem.stream_prefetch.streams", m.stream_prefetch.streams,
    "streams the L2's stream prefetcher follows per core, shared by its threads (0 = no stream prefetcher)", 0, 64);
  v("mem.stream_prefetch.trigger_bytes", m.stream_prefetch.trigger_bytes,
    "two successive LLC misses at most this far apart in one page start a stream", 1, 1 << 30);
  v("mem.stream_prefetch.ahead_bytes", m.stream_prefetch.ahead_bytes,
    "a stream prefetches this far ahead of the demand accesses, never past its page", 1, 1 << 30);
  v("mem.l1i_thread_tagged", m.l1i_thread_tagged,
    "L1I lines are tagged with the hardware thread (NetBurst's trace cache): a sibling never hits a line another "
    "thread brought in, even for shared code, and fills its own copy from the L2");
  v("mem.l1d_write_through", m.l1d_write_through,
    "the L1D is write-through and does not allocate on a store miss (NetBurst): every store goes on to the L2 "
    "through the core's write-combining buffers, and a store that misses the L1D does not bring its line in");
  v("mem.wc_buffers", m.wc_buffers,
    "write-combining buffers per core, shared by its threads (with l1d_write_through): a store to a line no buffer "
    "holds takes a free one, or waits until the least recently written one has been written into the L2",
    1, 64);
  v("mem.wc_write_cycles", m.wc_write_cycles,
    "cycles a write-combining buffer takes to write its line into the L2 once the line is owned (one line at a time)",
    0, 1000);
  v("mem.threads_share_address_space", m.threads_share_address_space,
    "all traces are threads of one process (one address-space id), so they share lines");
  // OS costs and page walks.
  v("mem.tlb_tagged", m.tlb_tagged,
    "TLB entries are tagged with the address space (PCID): an address-space switch flushes nothing");
  v("mem.page_walk.caches", m.page_walk.caches,
    "a TLB miss walks the page table through the data caches (one PTE load per level) instead of costing "
    "miss_latency");
  v("mem.page_walk.levels", m.page_walk.levels,
    "page-table levels walked (x86-64: 4; 32-bit paging with 4 KiB pages: 2); 9 index bits per level with 8-byte "
    "entries, 10 bits with 4-byte entries when 2",
    1, 4);
  v("mem.page_walk.pwc_entries", m.page_walk.pwc_entries,
    "page-walk cache entries per core for the upper levels' entries (0 = none): a hit skips those levels' loads", 0,
    65536);
  v("mem.page_walk.from_l2", m.page_walk.from_l2, "walk loads start at the L2 instead of the L1D");

  EnergyConfig& e = c.energy;
  std::vector<std::pair<std::string, double*>> events = {
      {"fetch_nj", &e.fetch_nj}, {"rename_nj", &e.rename_nj}, {"retire_nj", &e.retire_nj}};
  for (const FuKindInfo& fu : kFuKindTable) events.emplace_back(fmt::format("{}_nj", fu.name), &(e.*fu.energyNj));
  for (const auto& [name, field] : std::initializer_list<std::pair<const char*, double*>>{
           {"l1i_nj", &e.l1i_nj}, {"l1d_nj", &e.l1d_nj}, {"l2_nj", &e.l2_nj}, {"llc_nj", &e.llc_nj},
           {"dram_nj", &e.dram_nj}}) {
    events.emplace_back(name, field);
  }
  for (const auto& [name, field] : events) {
    const std::string n(name);
    const std::string what = n.substr(0, n.size() - 3);
    const std::string doc =
        what == "fetch" || what == "rename" || what == "retire"
            ? fmt::format("nanojoules per instruction at {}", what)
        : what == "dram" ? std::string("nanojoules per DRAM line read or written")
        : what.starts_with("l") && what.size() <= 3 ? fmt::format("nanojoules per {} access", what)
                                                    : fmt::format("nanojoules per operation issued to a {} unit", what);
    v("energy." + n, *field, doc, 0, 1e6);
  }
  v("energy.core_active_w", e.core_active_w, "static watts of a core with at least one running thread", 0, 1e4);
  v("energy.core_halted_w", e.core_halted_w, "static watts of a core whose threads are all halted (package busy)", 0,
    1e4);
  v("energy.uncore_w", e.uncore_w, "watts of the uncore (LLC, memory controller, DRAM refresh) while any core runs", 0,
    1e4);
  v("energy.package_idle_w", e.package_idle_w, "watts of the whole package and DRAM when every logical CPU is halted",
    0, 1e4);
}

// Collects the declarations into Param records.
struct Collector {
  std::vector<Param>& out;

  template <class T>
  void operator()(std::string key, T& field, std::string doc, double min, double max) {
    out.push_back(Param{std::move(key), std::move(doc), FieldRef(&field), min, max});
  }
  template <class T>
  void operator()(std::string key, T& field, std::string doc) {
    out.push_back(Param{std::move(key), std::move(doc), FieldRef(&field), 0, 0});
  }
};

}  // namespace

std::vector<Param> paramTable(Config& config) {
  std::vector<Param> out;
  out.reserve(256);  // every key (about 150) without a reallocation: the table is built for each override
  visitParams(config, Collector{out});
  return out;
}

std::string_view sectionOf(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : key.substr(0, dot);
}

}  // namespace config_detail
}  // namespace smtlab
