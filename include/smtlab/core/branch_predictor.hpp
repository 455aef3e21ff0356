// Branch prediction: a gshare pattern table and a branch target buffer shared by the threads of a core, with the
// global history and the return stack kept per thread (replicated), as on the Pentium 4. Trace-driven: the outcome
// is known at fetch, so the predictor is asked and trained there and only the cost of a wrong guess is simulated.
//
// With core.branch.pht_thread_tagged (NetBurst: the global history array is shared, "with entries that are tagged
// with a logical processor ID", Marr et al., ITJ 6(1) 2002) every pattern-table entry belongs to the logical
// processor that last trained it. A thread that finds its sibling's entry has no dynamic prediction: the branch is
// predicted statically, backward taken and forward not taken (the rule of the IA-32 optimization manual for a branch
// the predictor does not know), and the entry becomes the thread's, weakly towards the outcome (chosen: the
// hardware's allocation rule is not published). An entry no thread has trained is anyone's: a lone thread predicts
// exactly as without tags.
#pragma once

#include <cstdint>
#include <vector>

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
  bool lastTagMiss = false;       // the last conditional branch found its sibling's pattern-table entry
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
  std::vector<std::uint8_t> pht_;
  std::vector<std::uint8_t> phtOwner_;  // thread-tagged: the entry's logical processor + 1 (0: never trained)
  std::vector<BtbEntry> btb_;
};

}  // namespace smtlab
