#include "smtlab/core/load_store_unit.hpp"

#include <algorithm>
#include <bit>

#include "smtlab/core/allocation_policy.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/mem/address_space.hpp"

namespace smtlab {

namespace {
bool overlaps(const MemRef& a, const MemRef& b) { return a.addr < b.addr + b.size && b.addr < a.addr + a.size; }
// The bytes agree in address bits 0..11 (the part of the address Intel's loads compare first) but not in full.
bool overlapsIn4k(const MemRef& a, const MemRef& b) {
  constexpr Addr kPage = 0xfff;
  const Addr x = a.addr & kPage;
  const Addr y = b.addr & kPage;
  return x < y + b.size && y < x + a.size;
}
// The distance predictor's window per thread: the reorder-buffer entries the thread may hold under its static share.
std::unique_ptr<MlpPredictor> makeMlpPredictor(const Config& config, const CoreQueues& queues) {
  std::vector<std::uint32_t> window(config.core.threads);
  for (std::uint32_t t = 0; t < config.core.threads; ++t) window[t] = queues[QueueKind::Rob].limit(t);
  return std::make_unique<MlpPredictor>(config.core.mlp_predictor_entries, std::move(window));
}
}  // namespace

LoadStoreUnit::LoadStoreUnit(CoreId core, const Config& config, MemorySystem& memory,
                             std::span<ThreadContext> threads, CoreQueues& queues, LongLatencyAction action)
    : core_(core),
      loadAgu_(config.core.fu.load.latency),
      mlp_(action == LongLatencyAction::MlpFlush ? makeMlpPredictor(config, queues) : nullptr),
      longLatency_(action, config.core.long_latency_miss, mlp_.get()),
      countMisses_(makeFetchPolicy(config.core.fetch_policy)->needsDataMisses() ||
                   makeAllocationPolicy(config.core)->needsDataMisses()),
      storeBuffer_(config.core.lsu.store_buffer),
      forwarding_(config.core.lsu.forwarding),
      forwardSameAddress_(config.core.lsu.forward_same_address),
      forwardLatency_(config.core.lsu.forward_latency),
      memDependence_(config.core.lsu.memory_dependence),
      alias4k_(config.core.lsu.alias_4k),
      ordering_(forwarding_ || memDependence_ != MemDependence::Off || alias4k_),
      tracking_(storeBuffer_ || ordering_),
      aliasPenalty_(config.mem.l2.latency),
      predictorMask_(config.core.lsu.predictor_entries - 1),
      memory_(memory),
      threads_(threads),
      queues_(queues),
      alias64k_(config.core.lsu.alias_64k ? 1 : 0, Alias64k(config.mem.line_bytes)),
      stores_(core, config.core.threads, config.core.sq.entries, config.core.lsu.stores_per_cycle, memory, threads,
              queues[QueueKind::Sq], alias64k_.empty() ? nullptr : &alias64k_[0], config.mem.l2.latency),
      conflictBits_(memDependence_ == MemDependence::Predictor ? config.core.lsu.predictor_entries : 1, 0),
      speculative_(config.core.threads),
      holdCounted_(config.core.threads),
      snoopSiblings_(config.core.lsu.sibling_order_clears && config.core.threads > 1),
      lineShift_(static_cast<std::uint32_t>(std::countr_zero(config.mem.line_bytes))) {
  pendingFlushes_.reserve(static_cast<std::size_t>(config.core.issue_width) * kMaxThreads);
  if (snoopSiblings_) {
    // The drain writes at most stores_per_cycle stores per cycle; a store's clears name each sibling at most once.
    written_.reserve(config.core.lsu.stores_per_cycle);
    siblingClears_.reserve(static_cast<std::size_t>(config.core.lsu.stores_per_cycle + 1) * kMaxThreads);
    stores_.setWrittenLog(&written_);
  }
  orderViolations_.reserve(static_cast<std::size_t>(config.core.issue_width) * kMaxThreads);
  // Every in-flight load operand can be a speculative one (the ROB bounds them); reserved once, no hot-path growth.
  speculativeCap_ = static_cast<std::size_t>(std::bit_ceil(std::max(1u, config.core.rob.entries))) * kMaxLoads;
  if (memDependence_ == MemDependence::Speculate || memDependence_ == MemDependence::Predictor) {
    for (auto& s : speculative_) s.reserve(speculativeCap_);
  }
}

void LoadStoreUnit::search(std::uint32_t t, const Uop& load, Cycle now, Search& out) {
  out = Search{};
  stores_.sync(t);
  const Instr& in = *load.instr;
  const std::uint32_t n = stores_.size(t);
  const std::uint32_t retired = stores_.retiredCount(t);
  const bool waitForAddresses = memDependence_ == MemDependence::Wait ||
                                (memDependence_ == MemDependence::Predictor && predictsConflict(in.pc));
  auto holdFor = [&](Hold h, Cycle retry) {
    if (out.hold == Hold::None) out.hold = h;
    out.retryAt = std::min(out.retryAt, retry);
  };
  for (int k = 0; k < kMaxLoads; ++k) {
    const MemRef& ld = in.loads[k];
    if (!ld.valid()) continue;
    // Youngest older store first: the one whose bytes the load would read.
    for (std::uint32_t i = n; i-- > 0;) {
      const StoreEntry& e = stores_.at(t, i);
      const bool inFlight = i >= retired;
      if (inFlight && e.seq >= load.seq) continue;  // younger (or this instruction's own store part)
      if (inFlight && e.addressAt > now) {
        if (memDependence_ == MemDependence::Off) continue;
        if (waitForAddresses) {
          holdFor(Hold::StoreAddress, Cycle::never());  // ask again when a store of the thread has issued
          break;
        }
        out.bypassedUnknown = true;
        continue;
      }
      // Until it has written the L1D the store is where the bytes are; a buffered one writes no earlier than its line
      // is owned.
      const Cycle written = !inFlight ? std::max(e.ownedAt, now + 1) : now + 1;
      bool decided = false;
      for (const MemRef& st : e.refs) {
        if (!st.valid()) continue;
        if (overlaps(ld, st)) {
          const bool covers = st.addr <= ld.addr && ld.addr + ld.size <= st.addr + st.size &&
                              (!forwardSameAddress_ || st.addr == ld.addr);
          if (forwarding_ && covers && inFlight && e.dataAt == Cycle::never()) {
            // Its address is known but its data uop has not issued: the load waits for the data, asked
            // again when a store uop of the thread issues.
            holdFor(Hold::StoreData, Cycle::never());
          } else if (forwarding_ && covers) {
            out.forwarded[k] = true;
            out.dataAt[k] = e.dataAt;
            out.source[k] = inFlight ? e.seq.next() : kNoStore;
          } else if (forwarding_ || memDependence_ != MemDependence::Off) {
            holdFor(Hold::ForwardStall, written);  // the store-forwarding stall
          }
          decided = true;
          break;
        }
        if (alias4k_ && overlapsIn4k(ld, st)) {
          holdFor(Hold::Alias4k, written);
          decided = true;
          break;
        }
      }
      if (decided) break;
    }
  }
}

void LoadStoreUnit::countHold(std::uint32_t t, const Uop& load, Hold hold) {
  ThreadContext& th = threads_[t];
  auto& counted = holdCounted_[t];
  if (counted.size() != th.rob.size()) counted.assign(th.rob.size(), {0, 0});  // once, when first needed
  auto& [age, kinds] = counted[load.seq.value & th.robMask];
  if (age != load.age) {
    age = load.age;
    kinds = 0;
  }
  const auto bit = static_cast<std::uint8_t>(1u << static_cast<int>(hold));
  if ((kinds & bit) != 0) return;
  kinds |= bit;
  switch (hold) {
    case Hold::StoreAddress:
      ++th.stats.storeAddressWaits;
      break;
    case Hold::ForwardStall:
      ++th.stats.forwardStalls;
      break;
    case Hold::Alias4k:
      ++th.stats.alias4kStalls;
      break;
    case Hold::StoreData:  // a wait for the store's data uop, not a stall of the forwarding itself
    case Hold::None:
      break;
  }
}

Cycle LoadStoreUnit::loadMayIssueAt(std::uint32_t t, const Uop& load, Cycle now) {
  if (!ordering_) return now;
  search(t, load, now, last_);
  if (last_.hold == Hold::None) {
    lastThread_ = t;
    lastAge_ = load.age;
    lastCycle_ = now;
    return now;
  }
  lastCycle_ = Cycle::never();
  countHold(t, load, last_.hold);
  return last_.retryAt;
}

Cycle LoadStoreUnit::executeLoad(std::uint32_t t, Uop& u, Cycle now) {
  ThreadContext& th = threads_[t];
  const Search* found = nullptr;
  if (ordering_) {
    // The search of loadMayIssueAt in this cycle still holds (nothing of this thread changed in between).
    if (lastCycle_ != now || lastThread_ != t || lastAge_ != u.age) search(t, u, now, last_);
    lastCycle_ = Cycle::never();
    found = &last_;
  }
  Cycle dataReady = now;
  MemLevel level = MemLevel::L1;
  bool forwarded = false;
  for (int k = 0; k < kMaxLoads; ++k) {
    const MemRef& ld = u.instr->loads[k];
    if (!ld.valid()) continue;
    if (found != nullptr && found->forwarded[k]) {
      // From the store queue: no cache access; the data come forward_latency after the load or the store's data.
      dataReady = std::max(dataReady, std::max(now, found->dataAt[k]) + forwardLatency_);
      forwarded = true;
      continue;
    }
    MemResult r = memory_.load(core_, th.asid, ld.addr, ld.size, now + loadAgu_);
    if (!alias64k_.empty() && alias64k_[0].touch(th.asid, ld.addr) && r.level == MemLevel::L1) {
      r.ready = std::max(r.ready, now + loadAgu_ + aliasPenalty_);  // the aliased line was evicted: an L2 hit
      r.level = MemLevel::L2;
      ++th.stats.alias64kConflicts;
    }
    dataReady = std::max(dataReady, r.ready);
    level = std::max(level, r.level);
  }
  if (forwarded) ++th.stats.loadsForwarded;
  if (found != nullptr && found->bypassedUnknown && speculativeCap_ != 0 && speculative_[t].capacity() != 0) {
    auto& spec = speculative_[t];
    if (spec.size() + kMaxLoads > speculativeCap_) pruneSpeculative(t);
    for (int k = 0; k < kMaxLoads; ++k) {
      const MemRef& ld = u.instr->loads[k];
      if (ld.valid() && spec.size() < speculativeCap_) {
        spec.push_back({u.seq, u.age, ld, found->source[k], u.instr->pc});
      }
    }
  }
  u.level = level;
  if (countMisses_ && level != MemLevel::L1) {
    // Remember the miss for MISSCOUNT; drop the ones that have returned.
    std::erase_if(th.missDone, [&](Cycle c) { return c <= now; });
    th.missDone.push_back(dataReady);
  }
  longLatency_.onLoad(th, t, u.seq, u.instr->pc, level, now, dataReady, pendingFlushes_);
  return dataReady;
}

void LoadStoreUnit::pruneSpeculative(std::uint32_t t) {
  const ThreadContext& th = threads_[t];
  std::erase_if(speculative_[t], [&](const SpeculativeLoad& l) {
    if (th.cursor == nullptr || l.seq < th.cursor->retireSeq() || l.seq >= th.robTail) return true;
    const Uop& u = th.rob[l.seq.value & th.robMask];
    return !u.valid || u.age != l.age;
  });
}

void LoadStoreUnit::executeStore(std::uint32_t t, const Uop& u, Cycle now) {
  if (!tracking_) return;
  StoreEntry* e = stores_.inFlight(t, u.seq);
  if (e == nullptr) return;
  e->addressAt = now;
  // With uops the data comes with the store-data uop (storeDataReady), which may issue before or after this one.
  if (u.doneAt != Cycle::never()) e->dataAt = u.doneAt;
  auto& spec = speculative_[t];
  if (spec.empty()) return;
  pruneSpeculative(t);
  // The oldest younger load that read bytes this store writes from the cache or an older store: it read too early.
  const SpeculativeLoad* victim = nullptr;
  for (const SpeculativeLoad& l : spec) {
    if (l.seq <= u.seq || l.source > u.seq) continue;  // older, or ordered behind a store younger than this one
    if (victim != nullptr && victim->seq <= l.seq) continue;
    for (const MemRef& st : u.instr->stores) {
      if (st.valid() && overlaps(l.ref, st)) {
        victim = &l;
        break;
      }
    }
  }
  if (victim == nullptr) return;
  if (memDependence_ == MemDependence::Predictor) conflictBits_[(victim->pc ^ (victim->pc >> 12)) & predictorMask_] = 1;
  orderViolations_.emplace_back(t, victim->seq);
  const SeqNum from = victim->seq;
  std::erase_if(spec, [&](const SpeculativeLoad& l) { return l.seq >= from; });  // squashed with it
}

void LoadStoreUnit::storeDataReady(std::uint32_t t, const Uop& u, Cycle dataAt) {
  if (!tracking_) return;
  StoreEntry* e = stores_.inFlight(t, u.seq);
  if (e != nullptr) e->dataAt = dataAt;
}

void LoadStoreUnit::retireMemory(std::uint32_t t, const Uop& u, Cycle now) {
  if (u.hasStore && storeBuffer_) {
    stores_.retire(t, u.seq, now);  // keeps its SQ entry until it has written the L1D (drainStores)
  } else if (u.hasStore) {
    if (tracking_) stores_.retireWritten(t, u.seq);  // written now: no longer in the queue
    const ThreadContext& th = threads_[t];
    if (snoopSiblings_) snoopSiblings(t, th.asid, u.instr->stores, now);
    for (const MemRef& st : u.instr->stores) {
      if (!st.valid()) continue;
      memory_.store(core_, th.asid, st.addr, st.size, now);
      if (!alias64k_.empty()) alias64k_[0].touch(th.asid, st.addr);  // the line is now the one at its position
    }
    queues_[QueueKind::Sq].release(t);
  }
  if (u.hasLoad) queues_[QueueKind::Lq].release(t);
}

void LoadStoreUnit::snoopWritten(Cycle now) {
  for (const WrittenStore& w : written_) snoopSiblings(w.thread, w.asid, w.refs, now);
  written_.clear();
}

void LoadStoreUnit::snoopSiblings(std::uint32_t t, Asid asid, const std::array<MemRef, kMaxStores>& st, Cycle now) {
  // The lines the store writes, as the caches see them (physical: two processes' equal user addresses are two lines,
  // a kernel address is one line in every address space; address_space.hpp). An access may span two lines.
  std::array<std::uint64_t, 2 * kMaxStores> lines{};
  std::size_t count = 0;
  for (const MemRef& ref : st) {
    if (!ref.valid()) continue;
    lines[count++] = physicalAddress(asid, ref.addr) >> lineShift_;
    lines[count++] = physicalAddress(asid, ref.addr + ref.size - 1) >> lineShift_;
  }
  if (count == 0) return;
  auto written = [&](Asid other, const MemRef& ref) {
    const std::uint64_t first = physicalAddress(other, ref.addr) >> lineShift_;
    const std::uint64_t last = physicalAddress(other, ref.addr + ref.size - 1) >> lineShift_;
    for (std::size_t i = 0; i < count; ++i) {
      if (lines[i] == first || lines[i] == last) return true;
    }
    return false;
  };
  for (std::uint32_t s = 0; s < threads_.size(); ++s) {
    const ThreadContext& th = threads_[s];
    if (s == t || th.cursor == nullptr || th.state != ThreadState::Running) continue;
    // Oldest first. A load that has issued reads out of order, and so may have read the line too early, only while an
    // older load of its thread has not yet got its data (x86 orders a thread's loads); the oldest pending load is
    // never cleared, which also keeps the thread making progress.
    bool olderPending = false;
    for (SeqNum seq = th.cursor->retireSeq(); seq < th.robTail; ++seq) {
      const Uop& u = th.rob[seq.value & th.robMask];
      if (!u.valid || !u.hasLoad) continue;
      if (olderPending && !u.loadLeft) {
        const Instr& in = *u.instr;
        if (std::any_of(in.loads.begin(), in.loads.end(),
                        [&](const MemRef& ld) { return ld.valid() && written(th.asid, ld); })) {
          siblingClears_.emplace_back(s, th.cursor->retireSeq());
          break;
        }
      }
      olderPending = olderPending || u.loadLeft || u.loadDataAt > now;
    }
  }
}

void LoadStoreUnit::squashFrom(std::uint32_t t, SeqNum from) {
  if (!tracking_) return;
  stores_.squashFrom(t, from);
  std::erase_if(speculative_[t], [&](const SpeculativeLoad& l) { return l.seq >= from; });
  if (lastThread_ == t) lastCycle_ = Cycle::never();
}

void LoadStoreUnit::threadBound(std::uint32_t t) {
  if (mlp_) mlp_->threadBound(t);
  if (!tracking_) return;
  stores_.rebind(t);
  speculative_[t].clear();
  if (lastThread_ == t) lastCycle_ = Cycle::never();
}

void LoadStoreUnit::visitState(StateIo& io) {
  io(alias64k_, stores_, conflictBits_, speculative_, speculativeCap_, holdCounted_, last_, lastThread_, lastAge_,
     lastCycle_, pendingFlushes_, orderViolations_, written_, siblingClears_);
  if (mlp_) io(*mlp_);
}

}  // namespace smtlab
