// The front end: thread choice at fetch (an IFetchPolicy), the I-cache and ITLB access per code line, branch
// prediction, and the front-end pipe (decode / trace-cache delivery, frontend_depth cycles) that ends in the uop
// queue. Trace-driven: after a mispredicted branch the thread fetches synthetic wrong-path uops (core.wrong_path,
// wrong_path.hpp) until the branch resolves; then they are squashed and the right path is fetched after the refill
// penalty. With core.wrong_path = false its fetch simply stops, and the sibling gets the front end.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <memory>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/branch_predictor.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/core/uop_decode.hpp"
#include "smtlab/mem/memory_system.hpp"

namespace smtlab {

class FrontEnd final : public IBranchResolutionPort {
 public:
  FrontEnd(CoreId core, const Config& config, MemorySystem& memory, std::span<ThreadContext> threads,
           CoreQueues& queues);

  // Fetch stage: the policy orders the threads that can fetch; the first gets up to fetch_width instructions (with
  // fetch_threads > 1 the next ones get what is left). True if any thread could fetch (the next cycle can differ).
  bool fetch(Cycle now);
  // Instructions at the end of the front-end pipe enter the uop queue, in fetch order over the threads, while their
  // thread's share has room.
  bool deliver(Cycle now);
  // A mispredicted branch executed: its thread fetches again mispredict_penalty cycles after `done`.
  void mispredictResolved(std::uint32_t thread, const Uop& branch, Cycle done) override;
  // Wrong path: squashes the wrong-path uops of every thread whose mispredicted branch's result has come by `now`;
  // its right path is fetched mispredict_penalty cycles later (called first in the cycle). True if any.
  // Inline: asked at every tick, and almost always no result is due (the earliest one is kept).
  bool resolveWrongPaths(Cycle now) { return earliestResolve_ <= now && squashResolvedWrongPaths(now); }

  // Functional warming (docs/sampling.md): thread t's next instruction reaches the trace cache / L1I and the ITLB when
  // it starts a new code line, and a branch trains the predictor as at fetch (shared tables, the thread's history and
  // return stack); no timing. The thread has no trace attached.
  void warm(std::uint32_t t, Asid asid, const Instr& in, Cycle now) {
    ThreadContext& th = threads_[t];
    const Addr line = in.pc >> lineShift_;
    if (line != th.lastFetchLine) {
      memory_.fetch(core_, ThreadId{t}, asid, in.pc, now);
      th.lastFetchLine = line;
    }
    if (in.isBranch()) predictor_.predictAndTrain(in, asid.value, th.branch);
  }

  const IFetchPolicy& policy() const { return *policy_; }
  const BranchPredictor& predictor() const { return predictor_; }
  // The predictor's tables, the policy's and the decoder's turns (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);
  // Instructions one thread can have in the front-end pipe: fetch_width x frontend_depth.
  std::uint32_t pipeCapacity() const { return pipeCapacity_; }

 private:
  std::uint32_t fetchThread(std::uint32_t t, std::uint32_t budget, Cycle now);
  std::uint32_t fetchWrongPath(std::uint32_t t, std::uint32_t budget, Cycle now);
  // Trace-cache build mode: the shared decoder serves one thread in build mode this cycle (core.build_width).
  void decode(Cycle now);
  // A microcoded instruction (right or wrong path) just fetched: the sequencer streams its uops for `cycles` cycles.
  void holdForMicrocode(ThreadContext& th, std::uint32_t cycles, Cycle now);
  // core.fetch_prefetch: the instruction fetcher reads the next code line on thread t's path into its streaming
  // buffer while the decoder builds `line`.
  void prefetchNextLine(ThreadContext& th, std::uint32_t t, Addr line, Cycle now);
  bool squashResolvedWrongPaths(Cycle now);  // resolveWrongPaths, when a result may be due
  // When thread t's next instruction (or wrong-path uop) reached the end of its front-end pipe (never if none).
  Cycle pipeHeadArrival(std::uint32_t t) const;
  // Thread t's next instruction at the end of the pipe takes its uop-queue entries; false if they do not fit.
  bool enterUopQueue(std::uint32_t t);

  const CoreId core_;
  const std::uint32_t threadCount_;
  const std::uint32_t fetchWidth_, fetchThreads_, frontendDepth_;
  const std::uint32_t mispredictPenalty_, btbMissPenalty_, pauseCycles_;
  const bool breakOnTaken_;
  const bool microcodeSharesFetch_;  // core.microcode_shares_fetch
  const std::uint32_t lineShift_;
  const std::uint32_t l1iLatency_;
  const std::uint32_t buildWidth_;  // core.build_width: 0 = no build mode
  const bool fetchPrefetch_;        // core.fetch_prefetch
  const std::uint32_t pipeCapacity_;
  // No thread's WrongPathState::resolveAt is before this (a lower bound: a branch squashed with its thread's younger
  // instructions leaves it behind, which costs one needless look).
  Cycle earliestResolve_ = Cycle::never();
  const bool wrongPath_;
  const bool deliveryOrderFree_;  // the threads may enter the uop queue in any order (front_end.cpp)
  MemorySystem& memory_;
  std::span<ThreadContext> threads_;
  CoreQueues& queues_;
  std::unique_ptr<IFetchPolicy> policy_;
  const bool policyNeedsCounters_;  // round robin reads only `eligible`: the counters are not filled
  const bool policyNeedsMisses_;    // MISSCOUNT's dataMisses (asked once, not by a virtual call every cycle)
  const bool mlpGate_;              // MLP-aware fetch: a gated thread still fetches up to its gateAfter
  BranchPredictor predictor_;
  std::vector<std::uint32_t> fetchOrder_;
  std::vector<FetchCandidate> candidates_;
  std::uint32_t decodeNext_ = 0;  // the thread the shared decoder tries first next cycle (round robin)
  std::uint32_t deliverTieNext_ = 0;  // of threads whose instructions reached the uop queue together, the one first
  const UopDecoder decoder_;  // tells microcoded instructions (the microcode sequencer)
  // Per op class: the cycles a wrong-path instruction of that class holds its thread's fetch, as on the right path:
  // ceil(uops / fetch_width) for a microcoded one (the microcode sequencer streams its uops), else 0.
  const std::array<std::uint8_t, kOpClassCount> wrongPathMicrocodeCycles_;
};

}  // namespace smtlab
