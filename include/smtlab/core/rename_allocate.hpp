// Rename / allocate: takes instructions from the uop queue, allocates their ROB, issue queue, load and store queue
// entries (each through its SharedCapacity, so the sharing policy decides), and links every source operand to its
// in-flight producer through the thread's rename map. One thread per cycle, chosen by core.rename_policy among the
// threads that can allocate (Pentium 4: alternate; a thread that cannot allocate yields its turn). Each destination
// register takes a physical register (register_file.hpp), and with core.stack_engine the stack engine does
// push/pop/call/ret's stack-pointer update at decode.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/core_stats.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/core/uop_decode.hpp"

namespace smtlab {

class RenameAllocate {
 public:
  RenameAllocate(const Config& config, std::span<ThreadContext> threads, CoreQueues& queues);

  // Renames up to rename_width instructions of one thread (none while the core drains). Instructions whose operands
  // are all known go to dispatched(), for the scheduler.
  bool tick(Cycle now, bool draining);
  // Why thread t cannot allocate its next instruction now (Base if it can or has nothing to rename).
  CpiCause blockCause(std::uint32_t t) const;
  // hasRenamable(t) && blockCause(t) == Base, without working out a reason: rename asks it before every instruction
  // it renames (several times per cycle), the CPI stack needs the reason only once per cycle. Core::checkInvariants
  // checks that the two agree.
  bool canAllocate(std::uint32_t t) const;
  bool hasRenamable(std::uint32_t t) const {
    const ThreadContext& th = threads_[t];
    return th.state == ThreadState::Running &&
           (th.robTail != th.enteredSeq || th.wrongPath.renamed != th.wrongPath.entered);
  }

  // Renamed this cycle with every operand's ready time known, in rename order (the scheduler takes them).
  const std::vector<WaitEntry>& dispatched() const { return dispatched_; }
  void clearDispatched() { dispatched_.clear(); }

  // Thread t's instructions from its youngest renamed one on were squashed: the uops of it still to pass rename
  // (renameDebt_) are gone.
  void squashed(std::uint32_t t) { renameDebt_[t] = 0; }

  // Instructions renamed since the last reset (for the energy model).
  std::uint64_t renamed() const { return renamed_; }
  // Its turn-taking, rename ages and bandwidth debts (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);
  void resetStats() { renamed_ = 0; }

 private:
  // Renames thread t's next instruction (or wrong-path uop); returns its fused-domain uops (rename bandwidth).
  std::uint32_t renameOne(std::uint32_t t, Cycle now);
  // Wrong path: the next wrong-path uop of thread t takes a ROB and an IQ entry (no registers, no LQ/SQ entry).
  void renameWrongPath(std::uint32_t t, Cycle now);
  CpiCause registerBlock(std::uint32_t t, const Instr& in) const;  // blockCause's register-file check
  // The thread the configured policy serves (threadCount_ if none can rename).
  std::uint32_t chooseByPolicy(Cycle now);
  // Issue-queue entries the instruction takes: one per uop, at most the thread's share. A microcode
  // sequence streams in from the sequencer, uop by uop, so it never needs more room at once than the thread is
  // guaranteed (chosen: the claim is capped there). Capping at the thread's limit instead starved a 41-uop divide for
  // ever on netburst: the IQ's 48 entries capped at 36 per thread leave only 12 while a pointer-chasing sibling keeps
  // its 36 full. (Inline, as robEntriesFor: blockCause asks both several times per cycle.)
  std::uint32_t iqEntriesFor(std::uint32_t t, const UopPlan& plan) const {
    return std::max<std::uint32_t>(1, std::min<std::uint32_t>(plan.total, queues_[QueueKind::Iq].guaranteed(t)));
  }
  // ROB entries the instruction takes: one per fused-domain uop (uopwindow), at most what the thread is guaranteed. A
  // microcode sequence longer than the thread is guaranteed claims only that (chosen, the issue queue's rule: the
  // sequence streams through; a whole sequence that can never fit would stall its thread for ever).
  std::uint32_t robEntriesFor(std::uint32_t t, const UopPlan& plan) const {
    return std::max<std::uint32_t>(1, std::min<std::uint32_t>(plan.fused, queues_[QueueKind::Rob].guaranteed(t)));
  }
  // The instruction's uops: as the front end decoded them at fetch, else (a unit test's hand-filled front entry)
  // decoded here once into the entry (decodeInto). A reference into the thread's front ring: valid until the entry is
  // refetched.
  const UopPlan& planOf(std::uint32_t t, SeqNum seq) const {
    const ThreadContext& th = threads_[t];
    const UopPlan& plan = th.front[seq.value & th.frontMask].plan;
    return plan.valid ? plan : decodeInto(t, seq);
  }
  // Out of line and never inlined: inlined, the decoder's registers made every canAllocate() call (rename asks it
  // for every instruction, ~2.4 times per renamed one) save and restore six of them (1.4 % of a gen:mix run).
  [[gnu::noinline, gnu::cold]] const UopPlan& decodeInto(std::uint32_t t, SeqNum seq) const;

  const std::uint32_t threadCount_;
  const std::uint32_t renameWidth_;
  const bool stackEngine_;     // core.stack_engine
  const bool registersLimited_;  // a physical register file is limited: rename asks it
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  std::unique_ptr<IThreadChoice> policy_;
  const bool policyNeedsCounters_;
  // round_robin is evaluated in place, lazily (the first thread in turn that can proceed), like the Pentium 4's
  // alternation: a switch on a const instead of filling every candidate and a virtual call each cycle.
  const bool roundRobin_;
  std::uint32_t lastServed_ = 0;
  std::vector<ThreadCandidate> candidates_;
  std::vector<std::uint32_t> order_;
  std::vector<WaitEntry> dispatched_;
  std::uint64_t ageCounter_ = 0;  // unique per rename in the core: tells an incarnation from a refetched one
  std::uint64_t renamed_ = 0;
  const UopDecoder decoder_;  // an instruction's uops
  // Uops of an instruction already renamed that still take rename bandwidth at the thread's next turns (uopwindow:
  // rename_width counts uops, an instruction may straddle cycles). Sized once per thread.
  std::vector<std::uint32_t> renameDebt_;
};

}  // namespace smtlab
