#include "smtlab/core/branch_predictor.hpp"

#include <bit>

#include "smtlab/mem/address_space.hpp"

namespace smtlab {

BranchPredictor::BranchPredictor(const BranchConfig& config)
    : historyMask_(config.history_bits >= 32 ? ~0u : (1u << config.history_bits) - 1),
      phtMask_(std::bit_ceil(config.pht_entries) - 1),
      btbAssoc_(std::max(1u, config.btb_assoc)),
      rasEntries_(std::max(1u, config.ras_entries)),
      phtWays_(config.pht_thread_tagged ? std::max(1u, config.pht_assoc) : 1) {
  const std::size_t entries = std::bit_ceil(config.pht_entries);
  if (config.pht_thread_tagged) {
    tagged_.resize(entries);
    phtSetBits_ = static_cast<std::uint32_t>(std::countr_zero(entries / phtWays_));
  } else {
    pht_.assign(entries, 2);  // weakly taken
  }
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

bool BranchPredictor::predictConditional(const Instr& in, ThreadBranchState& th, std::size_t index) {
  TaggedEntry* set = &tagged_[(index & ((std::size_t{1} << phtSetBits_) - 1)) * phtWays_];
  const auto tag = static_cast<std::uint32_t>(index >> phtSetBits_);
  TaggedEntry* entry = nullptr;
  TaggedEntry* untrained = nullptr;
  TaggedEntry* victim = &set[0];
  for (std::uint32_t w = 0; w < phtWays_; ++w) {
    TaggedEntry& e = set[w];
    if (e.owner == th.owner && e.tag == tag) {
      entry = &e;
      break;
    }
    if (e.owner == 0 && untrained == nullptr) untrained = &e;
    if (e.lastUse < victim->lastUse) victim = &e;
  }
  bool predictTaken;
  if (entry == nullptr && untrained != nullptr) {
    entry = untrained;  // anyone's: its counter predicts, as in an untagged table
  }
  if (entry != nullptr) {
    predictTaken = entry->counter >= 2;
  } else {
    // Every way holds another entry (the sibling's, or this thread's for other indices): no dynamic prediction.
    // Static prediction (a target below the branch is a loop's back edge); the LRU way is replaced, weakly
    // towards the outcome.
    th.lastTagMiss = true;
    predictTaken = in.target != 0 && in.target < in.pc;
    entry = victim;
    entry->counter = in.taken ? 1 : 2;  // trained below to 2 (weakly taken) or 1 (weakly not taken)
  }
  entry->owner = th.owner;
  entry->tag = tag;
  entry->lastUse = ++phtClock_;
  if (in.taken && entry->counter < 3) ++entry->counter;
  if (!in.taken && entry->counter > 0) --entry->counter;
  return predictTaken;
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
      bool predictTaken;
      if (tagged_.empty()) {
        std::uint8_t& counter = pht_[index];
        predictTaken = counter >= 2;
        if (in.taken && counter < 3) ++counter;
        if (!in.taken && counter > 0) --counter;
      } else {
        predictTaken = predictConditional(in, th, index);
      }
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
