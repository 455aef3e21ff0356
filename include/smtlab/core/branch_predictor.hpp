// Branch prediction: a gshare pattern table and a branch target buffer shared by the threads of a core, with the
// global history and the return stack kept per thread (replicated), as on the Pentium 4. Trace-driven: the outcome
// is known at fetch, so the predictor is asked and trained there and only the cost of a wrong guess is simulated.
//
// With core.branch.pht_thread_tagged (NetBurst: the global history array is shared, "with entries that are tagged
// with a logical processor ID", Marr et al., ITJ 6(1) 2002) every pattern-table entry belongs to the logical
// processor that last trained it, and a thread uses only its own entries. The table has core.branch.pht_assoc ways:
// an index selects a set, the index bits above the set are the entry's tag, so a lone thread never fills a set and
// predicts exactly as with the untagged direct-mapped table, while two threads running the same code each keep their
// own entry for an index as long as the set has room. A branch with no entry of its thread where every way holds a
// trained entry has no dynamic prediction: it is predicted statically, backward taken and forward not taken (the
// IA-32 optimization manual's rule for a branch with no valid entry), and replaces the least recently used way,
// weakly towards the outcome (chosen: the hardware's allocation rule is not published). A way no thread has trained
// is anyone's. With one way the sibling's entry at an index is taken over at every sighting.
#pragma once

#include <cstdint>
#include <vector>

#include "smtlab/common/state_io.hpp"
#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/trace/record.hpp"

namespace smtlab {

// Per-thread predictor state (part of the thread's replicated context).
struct ThreadBranchState {
  std::uint64_t history = 0;
  std::vector<Addr> returnStack;  // ring buffer of call sites
  std::uint32_t rasTop = 0;       // number of pushes minus pops (wraps in the ring)
  std::uint32_t rasCount = 0;     // valid entries, at most the ring size
  std::uint8_t owner = 1;         // this logical processor's tag in a thread-tagged pattern table (index + 1)
  bool lastTagMiss = false;       // the last conditional branch had no entry of its own in a full set (static)
  void visitState(StateIo& io) { io(history, returnStack, rasTop, rasCount, owner, lastTagMiss); }
};

enum class BranchOutcome : std::uint8_t {
  Correct,      // direction and target right
  BtbMiss,      // direction right, a taken direct branch missed the BTB: a short decode redirect bubble
  Mispredict,   // direction or target wrong: fetch stops until the branch resolves
};

class BranchPredictor {
 public:
  BranchPredictor() = default;
  explicit BranchPredictor(const BranchConfig& config);
  // The state of logical processor `thread` of the core (its tag in a thread-tagged pattern table).
  ThreadBranchState makeThreadState(std::uint32_t thread = 0) const;
  // Predicts `instr` for a thread, trains the tables with the real outcome and says what the guess cost.
  BranchOutcome predictAndTrain(const Instr& instr, std::uint32_t asidTag, ThreadBranchState& thread);
  // The shared tables (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(lruClock_, phtClock_, pht_, tagged_, btb_); }

 private:
  struct BtbEntry {
    Addr tag = 0;
    Addr target = 0;
    std::uint32_t lru = 0;
    bool valid = false;
  };
  bool btbLookup(Addr key, Addr& target);
  void btbUpdate(Addr key, Addr target);

  std::uint32_t historyMask_ = 0;
  std::uint32_t phtMask_ = 0;
  std::uint32_t btbSets_ = 1;
  std::uint32_t btbAssoc_ = 1;
  std::uint32_t rasEntries_ = 16;
  std::uint32_t lruClock_ = 0;
  // Thread-tagged pattern table: `phtWays_` entries per set, a set chosen by the index's low bits.
  struct TaggedEntry {
    std::uint64_t lastUse = 0;  // LRU stamp
    std::uint32_t tag = 0;      // the index bits above the set
    std::uint8_t owner = 0;     // the logical processor + 1 that trained it (0: never trained)
    std::uint8_t counter = 2;   // 2-bit counter, weakly taken
  };
  bool predictConditional(const Instr& instr, ThreadBranchState& thread, std::size_t index);

  std::uint32_t phtWays_ = 1;
  std::uint32_t phtSetBits_ = 0;
  std::uint64_t phtClock_ = 0;
  std::vector<std::uint8_t> pht_;  // untagged: one 2-bit counter per index
  std::vector<TaggedEntry> tagged_;
  std::vector<BtbEntry> btb_;
};

}  // namespace smtlab
