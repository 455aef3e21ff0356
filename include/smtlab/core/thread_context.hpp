// The replicated state of one hardware thread: its trace cursor (architectural PC), rename map, return stack and
// branch history, its share of every queue's contents, and its statistics. One struct per thread, so that no
// per-thread state is scattered over parallel arrays.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/branch_predictor.hpp"
#include "smtlab/core/core_stats.hpp"
#include "smtlab/core/fu_kind.hpp"
#include "smtlab/core/wrong_path.hpp"
#include "smtlab/mem/memory_system.hpp"
#include "smtlab/trace/cursor.hpp"

namespace smtlab {

inline constexpr std::uint32_t kNoDep = 0xffffffffu;
// A rename-map entry whose register's value is in the register file (no producer in flight). No instruction gets this
// number (a cursor would have to read 2^64 - 1 records).
inline constexpr SeqNum kNoProducer{~std::uint64_t{0}};

// What functional unit an instruction needs: FuKind, kFuKinds (fu_kind.hpp).

// One renamed instruction in the reorder buffer. Slot = seq.value & mask of the thread's ROB ring.
struct Uop {
  const Instr* instr = nullptr;
  SeqNum seq{0};
  std::uint64_t age = 0;  // unique per rename in the core: tells this incarnation from a refetched one
  Cycle readyAt{0};       // operands ready, once pendingSrcs == 0
  Cycle doneAt = Cycle::never();
  std::uint32_t depHead = kNoDep;  // consumers waiting on this uop (nodes of the thread's dependency pool)
  std::uint8_t pendingSrcs = 0;
  FuKind fu = FuKind::None;
  MemLevel level = MemLevel::L1;
  bool valid = false;
  bool issued = false;
  bool mispredicted = false;
  bool btbMiss = false;
  bool hasLoad = false;
  bool hasStore = false;
  // The instruction's uops (set at rename from the UopDecoder). Each issues through its own port at its
  // own cycle; the instruction is `issued` (doneAt final) when its last uop has issued.
  std::uint8_t iqHeld = 0;       // issue-queue entries still held (one per uop not yet issued)
  std::uint8_t helpersLeft = 0;  // microcode uops still to issue
  bool loadLeft = false;         // the load uop has not issued
  bool opLeft = false;           // the op uop has not issued (it waits for the load's data)
  bool staLeft = false;          // store-address uop
  bool stdLeft = false;          // store-data uop (waits for the op's result, or the load's data)
  bool hasOp = false;
  bool opNeedsPort = true;
  UnitClass opClass = UnitClass::IntAlu;
  Cycle loadDataAt{0};  // the load uop's data is ready
  Cycle opDoneAt{0};    // the op uop's result is ready
  Cycle partsDoneAt{0}; // latest completion of the uops issued so far
  Cycle loadIssuedAt{0};  // the load uop's issue cycle (replay schedules the dependents from it)
  // NetBurst replay (replay.hpp): when the scheduler expects the operands, assuming every load
  // producer hits the L1D (<= readyAt; equals it without replay), and, once issued, when it expects this uop's
  // result (the L1-hit time of a missing load; doneAt otherwise).
  Cycle scheduledAt{0};
  Cycle consumersScheduledAt{0};
  // Physical registers and stack engine: register-file entries taken at rename (freed at retire or
  // squash); a stack update whose stack-pointer write the stack engine did at decode; the engine's "offset not zero"
  // state after this instruction (restored when younger ones are squashed).
  std::uint8_t intRegs = 0;
  std::uint8_t fpRegs = 0;
  bool stackUpdate = false;
  bool stackDelta = false;
  // The window counts uops (uopwindow): ROB entries still held (the instruction's fused-domain uops at
  // rename; retire frees them as its uops retire, a squash frees what is left).
  std::uint8_t robHeld = 1;
};

// A renamed instruction (or wrong-path uop) waiting in the scheduler: ready at `readyAt` (operands known), oldest
// `age` first.
struct WaitEntry {
  Cycle readyAt;
  std::uint64_t age;
  std::uint32_t thread;
  UopRef uop;
};

// An instruction's uops as the decoder makes them (uop_decode.hpp says how).
struct UopPlan {
  std::uint8_t total = 1;      // uops of the instruction (issue-queue entries, front-end slots)
  std::uint8_t helpers = 0;    // microcode uops beyond the structural ones (issue on integer ALU ports)
  bool microcoded = false;
  bool load = false;           // a load uop
  bool op = false;             // an op uop (after the load's data when there is a load)
  bool storeAddress = false;   // STA
  bool storeData = false;      // STD (after the op's result, else the load's data, else the sources)
  bool opNeedsPort = true;     // false for nop / pause / mark: they take an issue slot but no port
  bool valid = false;          // set by the decoder (a hand-filled front entry leaves it to rename)
  UnitClass opClass = UnitClass::IntAlu;
  FuKind opFu = FuKind::None;  // latency and energy class of the op uop
  // Slots in the fused domain (uopwindow): ROB entries, uop-queue entries, rename and retire bandwidth. total minus
  // one per micro-fused pair (load + op, STA + STD) with core.micro_fusion; total without.
  std::uint8_t fused = 1;
};

// Per instruction fetched but not yet renamed (the uop queue). Slot = seq.value & mask of the thread's uop ring.
struct FrontEntry {
  Cycle availableAt{0};  // cycle it reaches the end of the front-end pipe and may enter the uop queue
  bool mispredicted = false;
  bool btbMiss = false;
  UopPlan plan;          // decoded once at fetch, read by rename
  std::uint8_t uopqHeld = 0;  // uop-queue entries it took on entering the queue (uopwindow; freed at rename)
};

// Why a thread's fetch is held, for the CPI stack.
enum class FetchBlock : std::uint8_t { None, Mispredict, BtbMiss, Pause, ICache, Microcode };

enum class ThreadState : std::uint8_t {
  Idle,      // nothing attached (halted)
  Running,   // has a trace with work left
  Finished,  // its trace ended and everything retired; idle until detached
};

struct ThreadContext {
  ThreadState state = ThreadState::Idle;
  std::shared_ptr<TraceCursor> cursorOwner;
  TraceCursor* cursor = nullptr;
  Asid asid{0};
  std::uint32_t asidTag = 0;

  // Front end.
  // Fetched, not renamed: seq [robTail, enteredSeq) sit in the uop queue, [enteredSeq, fetchSeq) are still in the
  // front-end pipe (decode, trace cache delivery), which holds at most fetch_width x frontend_depth of them.
  std::vector<FrontEntry> front;  // ring, seq.value & frontMask
  SeqNum enteredSeq{0};
  std::uint64_t frontMask = 0;
  Cycle fetchResumeAt{0};
  FetchBlock fetchBlock = FetchBlock::None;
  bool waitingBranch = false;        // a mispredicted branch was fetched and has not resolved
  SeqNum waitingBranchSeq{0};
  Cycle waitingBranchFetchedAt{0};   // its fetch and rename cycles (the mispredict_resolve statistics)
  Cycle waitingBranchRenamedAt{0};
  Addr lastFetchLine = ~Addr{0};
  bool building = false;             // trace-cache build mode: lastFetchLine missed, so fetch goes through the decoder
  // core.fetch_prefetch: the code line the instruction fetcher read ahead into the thread's streaming buffer
  // (kNoStreamLine: none), its bytes there from streamReady, read from streamLevel.
  static constexpr Addr kNoStreamLine = ~Addr{0};
  Addr streamLine = kNoStreamLine;
  Cycle streamReady{0};
  MemLevel streamLevel = MemLevel::L2;
  std::uint32_t microcodeSlots = 0;  // core.microcode_shares_fetch: fetch slots the microcode sequencer still needs
  Cycle gatedUntil{0};               // STALL / FLUSH: a load of this thread misses to memory until then
  SeqNum gateAfter{0};               // MLP-aware fetch: while gated, the thread may still fetch up to this instruction
  // A long-latency load holds this thread's fetch at `now` (STALL, FLUSH; `byDistance`: MLP-aware fetch, which holds
  // it only once the thread has fetched past gateAfter).
  bool fetchGated(Cycle now, bool byDistance) const {
    return gatedUntil > now && (!byDistance || cursor->fetchSeq() > gateAfter);
  }

  // Rename and the reorder buffer: renamed uops are seq [cursor->retireSeq(), robTail).
  std::array<SeqNum, kArchRegs> renameMap = noProducers();  // producer seq, kNoProducer = value in the register file
  std::vector<Uop> rob;
  std::uint64_t robMask = 0;
  SeqNum robTail{0};
  std::vector<std::uint32_t> depNext;  // dependency nodes: slot * kMaxSrcRegs + k -> next node
  std::uint32_t unresolvedBranches = 0;
  std::vector<Cycle> missDone;       // completion cycles of loads that missed the L1D (kept for MISSCOUNT only)
  // Stack engine: the decoder's stack-pointer offset is not zero (a stack update since the last sync
  // or explicit write), as of the youngest renamed instruction and of the youngest retired one.
  bool stackDelta = false;
  bool retiredStackDelta = false;

  ThreadBranchState branch;

  // Wrong path: synthetic uops fetched while waitingBranch, in their own ring (wrong_path.hpp).
  WrongPathState wrongPath;

  // Retirement stops when stats.instructions reaches this (then an event is raised).
  std::uint64_t retireLimit = ~std::uint64_t{0};

  bool retiredThisCycle = false;
  // The per-thread watchdog: the last cycle the thread retired, or was not expected to (not running, at its retire
  // limit, just attached). A sibling's retirement does not count, so a starved thread is stopped too.
  Cycle lastRetire{0};
  ThreadStats stats;
  CpiCause lastCause = CpiCause::Base;
  bool lastGated = false;  // STALL/FLUSH held its fetch at the last tick (charged with the CPI stack)
  std::array<std::uint32_t, kQueueKinds> lastOccupancy{};

  // Sizes the per-thread rings once (ROB and front end: powers of two) and gives the thread its predictor state.
  void allocate(std::uint32_t robCapacity, std::uint32_t frontCapacity, std::uint32_t loadQueueEntries,
                ThreadBranchState branchState);
  // Puts a trace on the thread: nothing in flight, fetch starts at the cursor's next instruction at `now`.
  void bind(std::shared_ptr<TraceCursor> trace, Asid space, Cycle now);
  // Everything but the trace (a snapshot is taken with no trace attached: common/state_io.hpp). The ROB's
  // instruction pointers point into a cursor's ring and are not kept; the entries of a detached thread are dead.
  void visitState(StateIo& io);

  std::uint32_t robCount() const { return static_cast<std::uint32_t>(robTail - cursor->retireSeq()); }
  std::uint32_t frontCount() const { return static_cast<std::uint32_t>(cursor->fetchSeq() - robTail); }
  std::uint32_t pipeCount() const { return static_cast<std::uint32_t>(cursor->fetchSeq() - enteredSeq); }
  Uop& robSlot(SeqNum seq) { return rob[seq.value & robMask]; }

 private:
  static constexpr std::array<SeqNum, kArchRegs> noProducers() {
    std::array<SeqNum, kArchRegs> map;
    map.fill(kNoProducer);
    return map;
  }
};

}  // namespace smtlab
