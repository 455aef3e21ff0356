// Helpers for testing one stage unit with stub neighbours: per-thread contexts and queue capacities built as Core
// builds them, traces from hand-written records, a load/store port and a branch port that record what they are told.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "smtlab/config/config.hpp"
#include "smtlab/core/branch_predictor.hpp"
#include "smtlab/core/stage_ports.hpp"
#include "smtlab/core/thread_context.hpp"
#include "smtlab/trace/cursor.hpp"
#include "smtlab/trace/record.hpp"
#include "smtlab/trace/vector_source.hpp"

namespace smtlab::test {

inline Instr instr(OpClass opClass, std::vector<int> dst = {}, std::vector<int> src = {}, Addr pc = 0x400000) {
  Instr in;
  in.op = opClass;
  in.pc = pc;
  in.branch = defaultBranchKind(opClass);
  for (std::size_t k = 0; k < dst.size(); ++k) in.dst[k] = static_cast<RegId>(dst[k]);
  for (std::size_t k = 0; k < src.size(); ++k) in.src[k] = static_cast<RegId>(src[k]);
  return in;
}
inline Instr loadOf(Addr addr, int dst) {
  Instr in = instr(OpClass::Load, {dst});
  in.loads[0] = MemRef{addr, 8};
  return in;
}
inline Instr storeTo(Addr addr, int src) {
  Instr in = instr(OpClass::Store, {}, {src});
  in.stores[0] = MemRef{addr, 8};
  return in;
}
// n stores of r1 to consecutive lines from 0x1000 (2 uops each: store-address and store-data).
inline std::vector<Instr> stores(int n) {
  std::vector<Instr> v;
  for (int i = 0; i < n; ++i) v.push_back(storeTo(0x1000 + 64 * static_cast<Addr>(i), 1));
  return v;
}
// A load of r1 from 0x1000 and three ALU instructions that each read r1 (the replay tests' chain).
inline std::vector<Instr> loadWithThreeDependents() {
  return {loadOf(0x1000, 1), instr(OpClass::Int, {2}, {1}), instr(OpClass::Int, {3}, {1}),
          instr(OpClass::Int, {4}, {1})};
}

// Every queue `entries` large and shared unless a test says otherwise; 3 ALUs, widths 4.
inline Config stageConfig(std::uint32_t threads) {
  Config c;
  c.core.threads = threads;
  for (QueueConfig* q : {&c.core.uop_queue, &c.core.rob, &c.core.iq, &c.core.lq, &c.core.sq}) {
    q->entries = 32;
    q->sharing = Sharing::Shared;
  }
  return c;
}

// The state Core shares between its units, built the way Core builds it.
struct StageHarness {
  Config config;
  std::vector<ThreadContext> threads;
  CoreQueues queues;

  explicit StageHarness(const Config& c) : config(c), threads(c.core.threads) {
    const auto& k = c.core;
    queues[QueueKind::UopQueue] = SharedCapacity("uop_queue", k.uop_queue, k.threads, k.recombine);
    queues[QueueKind::Rob] = SharedCapacity("rob", k.rob, k.threads, k.recombine);
    queues[QueueKind::Iq] = SharedCapacity("iq", k.iq, k.threads, k.recombine);
    queues[QueueKind::Lq] = SharedCapacity("lq", k.lq, k.threads, k.recombine);
    queues[QueueKind::Sq] = SharedCapacity("sq", k.sq, k.threads, k.recombine);
    queues.registers = RegisterFiles(c);
    BranchPredictor predictor(k.branch);
    for (auto& th : threads) th.allocate(64, 128, 32, predictor.makeThreadState());
  }
  // Attaches a trace of these records to thread t at cycle `now`.
  void attach(std::uint32_t t, std::vector<Instr> records, Cycle now = Cycle{0}) {
    auto cursor = std::make_shared<TraceCursor>(std::make_unique<VectorSource>(std::move(records), "test"));
    threads[t].bind(std::move(cursor), Asid{t + 1}, now);
  }
  // Puts the next n instructions of thread t into its uop queue, as the front end would have.
  void queueUops(std::uint32_t t, std::uint32_t n) {
    ThreadContext& th = threads[t];
    for (std::uint32_t i = 0; i < n; ++i) {
      ASSERT_NE(th.cursor->peek(), nullptr);
      th.front[th.cursor->fetchSeq().value & th.frontMask] = FrontEntry{};
      th.front[th.cursor->fetchSeq().value & th.frontMask].uopqHeld = 1;  // the one uop-queue entry taken below
      th.cursor->advanceFetch();
      queues[QueueKind::UopQueue].take(t);
    }
    th.enteredSeq = th.cursor->fetchSeq();
  }
};

// Records what the scheduler and retire tell the load/store unit; loads take `loadLatency` cycles.
class StubLoadStore final : public ILoadStorePort {
 public:
  explicit StubLoadStore(std::uint32_t loadLatency) : loadLatency_(loadLatency) {}
  Cycle executeLoad(std::uint32_t thread, Uop& uop, Cycle now) override {
    loads.emplace_back(thread, uop.seq.value);
    uop.level = loadLatency_ > 100 ? MemLevel::Dram : MemLevel::L1;
    return now + loadLatency_;
  }
  void retireMemory(std::uint32_t thread, const Uop& uop, Cycle) override {
    retired.emplace_back(thread, uop.seq.value);
  }
  std::vector<std::pair<std::uint32_t, std::uint64_t>> loads, retired;

 private:
  std::uint32_t loadLatency_;
};

class StubBranches final : public IBranchResolutionPort {
 public:
  void mispredictResolved(std::uint32_t thread, const Uop& branch, Cycle done) override {
    resolved.push_back({thread, branch.seq.value, done.value});
  }
  struct Call {
    std::uint32_t thread;
    std::uint64_t seq;
    std::uint64_t done;
    bool operator==(const Call&) const = default;
  };
  std::vector<Call> resolved;
};

}  // namespace smtlab::test
