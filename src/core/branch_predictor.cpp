#include "smtlab/core/branch_predictor.hpp"

#include <bit>

#include "smtlab/mem/address_space.hpp"

namespace smtlab {

BranchPredictor::BranchPredictor(const BranchConfig& config)
    : historyMask_(config.history_bits >= 32 ? ~0u : (1u << config.history_bits) - 1),
      phtMask_(std::bit_ceil(config.pht_entries) - 1),
      btbAssoc_(std::max(1u, config.btb_assoc)),
      rasEntries_(std::max(1u, config.ras_entries)),
      pht_(std::bit_ceil(config.pht_entries), 2) {  // weakly taken
  if (config.pht_thread_tagged) phtOwner_.assign(pht_.size(), 0);
  btbSets_ = std::bit_ceil(std::max(1u, config.btb_entries / btbAssoc_));
  btb_.resize(static_cast<std::size_t>(btbSets_) * btbAssoc_);
}

ThreadBranchState BranchPredictor::makeThreadState(std::uint32_t thread) const {
  ThreadBranchState s;
  s.owner = static_cast<std::uint8_t>(thread + 1);
  s.returnStack.assign(rasEntries_, 0);
  return s;
}

bool BranchPredictor::btbLookup(Addr key, Addr& target) {
  BtbEntry* set = &btb_[((key >> 2) & (btbSets_ - 1)) * btbAssoc_];
  for (std::uint32_t w = 0; w < btbAssoc_; ++w) {
    if (set[w].valid && set[w].tag == key) {
      set[w].lru = ++lruClock_;
      target = set[w].target;
      return true;
    }
  }
  return false;
}

void BranchPredictor::btbUpdate(Addr key, Addr target) {
  BtbEntry* set = &btb_[((key >> 2) & (btbSets_ - 1)) * btbAssoc_];
  BtbEntry* victim = &set[0];
  for (std::uint32_t w = 0; w < btbAssoc_; ++w) {
    if (set[w].valid && set[w].tag == key) {
      victim = &set[w];
      break;
    }
    if (!set[w].valid || set[w].lru < victim->lru) victim = &set[w];
  }
  *victim = BtbEntry{key, target, ++lruClock_, true};
}

BranchOutcome BranchPredictor::predictAndTrain(const Instr& in, std::uint32_t asidTag, ThreadBranchState& th) {
  // The BTB is shared but its entries are tagged with the address space, so processes do not alias. Kernel-half
  // branches are the same code in every address space (address_space.hpp), so they share one entry untagged.
  const Addr key = isKernelAddress(in.pc) ? in.pc : in.pc ^ (static_cast<Addr>(asidTag) << 48);
  BranchOutcome outcome = BranchOutcome::Correct;
  th.lastTagMiss = false;
  switch (in.branch) {
    case BranchKind::None:
      return BranchOutcome::Correct;
    case BranchKind::Conditional: {
      const std::size_t index = ((in.pc >> 2) ^ (th.history & historyMask_)) & phtMask_;
      std::uint8_t& counter = pht_[index];
      bool predictTaken = counter >= 2;
      if (!phtOwner_.empty() && phtOwner_[index] != th.owner) {
        if (phtOwner_[index] != 0) {
          // The sibling's entry: static prediction (a target below the branch is a loop's back edge), and the
          // entry is taken over, weakly towards the outcome.
          th.lastTagMiss = true;
          predictTaken = in.target != 0 && in.target < in.pc;
          counter = in.taken ? 1 : 2;  // trained below to 2 (weakly taken) or 1 (weakly not taken)
        }
        phtOwner_[index] = th.owner;
      }
      if (in.taken && counter < 3) ++counter;
      if (!in.taken && counter > 0) --counter;
      th.history = (th.history << 1) | (in.taken ? 1 : 0);
      if (predictTaken != in.taken) return BranchOutcome::Mispredict;
      if (in.taken) {
        Addr target = 0;
        if (!btbLookup(key, target)) outcome = BranchOutcome::BtbMiss;
        btbUpdate(key, in.target);
      }
      return outcome;
    }
    case BranchKind::DirectJump:
    case BranchKind::DirectCall: {
      Addr target = 0;
      if (!btbLookup(key, target)) outcome = BranchOutcome::BtbMiss;
      btbUpdate(key, in.target);
      break;
    }
    case BranchKind::IndirectJump:
    case BranchKind::IndirectCall:
    case BranchKind::Other: {
      Addr target = 0;
      if (!btbLookup(key, target) || target != in.target) outcome = BranchOutcome::Mispredict;
      btbUpdate(key, in.target);
      break;
    }
    case BranchKind::Return: {
      if (th.rasCount == 0) {
        outcome = BranchOutcome::Mispredict;  // underflow: nothing to predict from
      } else {
        th.rasTop = (th.rasTop + rasEntries_ - 1) % rasEntries_;
        const Addr callSite = th.returnStack[th.rasTop];
        --th.rasCount;
        // The trace gives the return target but not the call's length: a return to just after the recorded call
        // site (x86 calls are at most 15 bytes) counts as predicted. An unknown target (0) counts as predicted.
        if (in.target != 0 && (in.target <= callSite || in.target - callSite > 16)) {
          outcome = BranchOutcome::Mispredict;
        }
      }
      return outcome;
    }
  }
  if (in.branch == BranchKind::DirectCall || in.branch == BranchKind::IndirectCall) {
    th.returnStack[th.rasTop] = in.pc;
    th.rasTop = (th.rasTop + 1) % rasEntries_;
    if (th.rasCount < rasEntries_) ++th.rasCount;
  }
  return outcome;
}

}  // namespace smtlab
