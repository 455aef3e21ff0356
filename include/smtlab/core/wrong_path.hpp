// Wrong-path uops: after a mispredicted branch is fetched, its thread keeps fetching, renaming and
// issuing uops until the branch resolves, and these take shared slots (fetch, uop queue, rename, ROB and IQ share,
// issue slots and functional units) from the sibling; at resolution they are squashed and never retire.
//
// Where they come from (docs/model.md "Wrong path"): the thread's own code at the predicted target, walked through
// its table of recently fetched instructions (recent_code.hpp) — real op classes and register operands — for as long
// as the table knows the next PC; after that (or when the target is unknown: a wrong indirect target) uop k has the
// op class and registers of the thread's k-th most recent fetched instruction counted from the oldest of the last
// kWrongPathMix (its own recent mix, replayed in order: deterministic, no seed needed). Either way their source
// registers are renamed: they wait for real in-flight producers or older wrong-path uops (the scheduler parks them
// until the producer issues). They have no memory addresses (chosen: the trace has only the addresses of the correct
// path; a wrong-path load takes a load port and delivers at the L1-hit time but touches no cache; a store takes a
// store port but no store-queue entry), so they cannot pollute or prefetch. They never consume trace sequence
// numbers: they live in their own per-thread ring, allocated once.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/core/recent_code.hpp"
#include "smtlab/trace/record.hpp"

namespace smtlab {

struct CoreQueues;

inline constexpr std::uint32_t kWrongPathMix = 32;  // recent instructions whose op classes a wrong path replays

// What a scheduler entry (WaitEntry::uop) or a wrong-path uop's producer names: a real instruction, by its sequence
// number, or a wrong-path uop, by its index in the thread's wrong-path ring. One word, told apart by the top bit (no
// trace reaches 2^63 instructions), so that a scheduler entry stays small; the named constructors and
// accessors keep a ring index from being read as a sequence number.
class UopRef {
 public:
  constexpr UopRef() = default;
  static constexpr UopRef real(SeqNum seq) { return UopRef{seq.value}; }
  static constexpr UopRef wrongPath(std::uint64_t index) { return UopRef{index | kWrongPathTag}; }
  constexpr bool isWrongPath() const { return (bits_ & kWrongPathTag) != 0; }
  constexpr SeqNum seq() const { return SeqNum{bits_}; }                         // of a real instruction
  constexpr std::uint64_t wrongPathIndex() const { return bits_ & ~kWrongPathTag; }  // of a wrong-path uop
  constexpr bool operator==(const UopRef&) const = default;

 private:
  static constexpr std::uint64_t kWrongPathTag = std::uint64_t{1} << 63;
  constexpr explicit UopRef(std::uint64_t bits) : bits_(bits) {}
  std::uint64_t bits_ = 0;
};

inline constexpr std::uint64_t kNoParked = ~std::uint64_t{0};

struct WrongPathUop {
  Cycle availableAt{0};   // reaches the end of the front-end pipe
  std::uint64_t age = 0;  // rename age (the core-wide counter of RenameAllocate): tells this uop from a reused slot
  OpClass op = OpClass::Int;
  bool issued = false;
  bool fromCode = false;  // walked from the thread's code (recent_code.hpp), not the synthetic mix
  std::array<RegId, kMaxSrcRegs> srcRegs{kNoReg, kNoReg, kNoReg, kNoReg};
  std::array<RegId, kMaxDstRegs> dstRegs{kNoReg, kNoReg};
  // Set at rename: the producers of its sources still in flight then (a real instruction or an older wrong-path
  // uop), with the producer's rename age (tells it from a reused slot).
  std::uint8_t producers = 0;
  std::array<UopRef, kMaxSrcRegs> producer{};
  std::array<std::uint64_t, kMaxSrcRegs> producerAge{};
  Cycle doneAt = Cycle::never();  // its result, once issued
  // The scheduler's lists of uops parked until a producer issues (scheduler.cpp, parkWrongPath): the ring index of
  // the first wrong-path uop parked on this one, and, while this one is parked, the next uop parked on the same
  // producer and its scheduler entry's readyAt. kNoParked ends a list.
  std::uint64_t parkedConsumers = kNoParked;
  std::uint64_t parkedNext = kNoParked;
  Cycle parkedReadyAt{0};
};

// One thread's wrong path. Ring positions only grow: [head, renamed) are in the ROB (of which `unissued` also in the
// IQ), [renamed, entered) in the uop queue, [entered, tail) in the front-end pipe.
struct WrongPathState {
  std::vector<WrongPathUop> ring;
  std::uint64_t mask = 0;
  std::uint64_t head = 0, renamed = 0, entered = 0, tail = 0;
  std::uint32_t unissued = 0;
  // Counts squashes and resets: a scheduler entry parked under an older value is of a squashed wrong path (host
  // speed: the scheduler drops such entries all at once instead of scanning them).
  std::uint64_t episode = 0;
  std::uint64_t sinceBranch = 0;       // wrong-path uops fetched since the mispredicted branch (indexes the mix)
  Cycle resolveAt = Cycle::never();    // the branch's result is known: the wrong path is squashed (fetch of the
                                       // right path follows mispredict_penalty later)
  std::array<CodeOp, kWrongPathMix> mix{};  // the last fetched instructions, a ring (the synthetic fallback)
  std::uint32_t mixNext = 0;
  RecentCode code;        // the thread's recently fetched code by PC (the wrong path's source where it knows it)
  Addr walkPc = 0;        // the next wrong-path PC to fetch from `code`; 0: synthetic from the mix
  // Wrong-path rename map: ring index + 1 of the youngest wrong-path writer of each register (stale when below head:
  // indices only grow and a squash moves head past everything).
  std::array<std::uint64_t, kArchRegs> renameMap{};

  void allocate(std::uint32_t capacity);  // a power of two: pipe + uop queue + ROB
  void visitState(StateIo& io) {
    io(ring, mask, head, renamed, entered, tail, unissued, episode, sinceBranch, resolveAt, mix, mixNext, code, walkPc,
       renameMap);
  }
  void reset();                           // nothing in flight, no history (a new trace)
  std::uint32_t pipeCount() const { return static_cast<std::uint32_t>(tail - entered); }
  std::uint32_t queued() const { return static_cast<std::uint32_t>(entered - renamed); }
  std::uint32_t inRob() const { return static_cast<std::uint32_t>(renamed - head); }
  bool empty() const { return head == tail; }
  WrongPathUop& at(std::uint64_t index) { return ring[index & mask]; }
  const WrongPathUop& at(std::uint64_t index) const { return ring[index & mask]; }
  // A real instruction was fetched: it joins the mix and the code table.
  void noteFetched(const Instr& in) {
    CodeOp& m = mix[mixNext++ % kWrongPathMix];
    m.op = in.op;
    m.src = in.src;
    m.dst = in.dst;
    code.noteFetched(in);
  }
  // Mispredicted branch `in` was fetched: the wrong path starts at its predicted target (if the code is known).
  void startWalk(const Instr& in) { walkPc = code.wrongPathStart(in); }
  // Puts the next wrong-path uop into the front-end pipe; it can leave the pipe at `availableAt`.
  void fetchOne(Cycle availableAt);
  // Squashes every wrong-path uop of thread t, giving back its uop-queue, ROB and IQ entries (resolveAt stays: the
  // caller knows whether the branch survives).
  void squash(std::uint32_t t, CoreQueues& queues);
};

}  // namespace smtlab
