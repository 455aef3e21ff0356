// The memory-level-parallelism (MLP) distance predictor of the MLP-aware fetch policy (core.fetch_policy = "mlp";
// Eyerman & Eeckhout, "A Memory-Level Parallelism Aware Fetch Policy for SMT Processors", HPCA 2007).
//
// A long-latency load's MLP distance is how far, in instructions of its thread, the youngest long-latency load lies
// that a window of the thread's reorder-buffer share starting at it still holds: 0 for an isolated miss, more when
// further misses follow that the out-of-order window could send to memory together. The policy lets a thread whose
// load goes to memory keep fetching up to that distance past the load, so that those misses are exposed, and then
// holds its fetch until the data returns. As in the paper, the register records which retired loads were
// long-latency, not whether they overlapped: a chain of dependent misses (a pointer chase) reads as MLP too.
//
// Training at retirement (the paper's long-latency shift register, LLSR): the retire unit reports every retired
// instruction of the thread; the long-latency loads among them wait in a per-thread queue until an instruction a
// whole window younger retires, and the distance to the youngest long-latency load then in the queue (all of them
// lie inside the window) is written to the table entry of the oldest one's PC. The queue holds sequence numbers, not
// one bit per instruction: the same distances, at a cost per long-latency load instead of per instruction.
//
// The table is indexed by the load's PC and shared by the core's threads (like the branch tables; two copies of one
// program train the same entries). Its size is core.mlp_predictor_entries (chosen: 2,048, the order of a branch
// predictor's table; the distances it holds are small, at most the window). An entry never written predicts 0, so
// an untrained load acts as FLUSH would.
#pragma once

#include <cstdint>
#include <vector>

#include "smtlab/common/types.hpp"

namespace smtlab {

class StateIo;

class MlpPredictor {
 public:
  // `entries` a power of two; `window[t]` the reorder-buffer share of thread t, in instructions (at least 1).
  MlpPredictor(std::uint32_t entries, std::vector<std::uint32_t> window);

  // The predicted MLP distance of the load at `pc`, in instructions (0: no other miss overlaps it).
  std::uint32_t predict(Addr pc) const { return table_[index(pc)]; }

  // Thread t retired the instruction `seq` (at `pc`); `longLatency`: a load served beyond the long-latency level.
  // Called for every retired instruction, in program order.
  void retired(std::uint32_t t, SeqNum seq, Addr pc, bool longLatency) {
    Llsr& q = llsr_[t];
    if (q.count != 0 && seq.value - q.at(0).seq >= window_[t]) closeWindows(t, seq);
    if (longLatency) q.push({seq.value, pc});
  }

  // A trace was attached to (or restarted on) thread t: its queue starts empty.
  void threadBound(std::uint32_t t) { llsr_[t].clear(); }

  // The table and each thread's queue (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io);

 private:
  struct Pending {
    std::uint64_t seq;
    Addr pc;
  };
  // A ring of the retired long-latency loads still inside their window, oldest first. Every pending load is less
  // than a window older than the youngest, so a ring of `window` entries never overflows.
  struct Llsr {
    std::vector<Pending> ring;
    std::uint32_t head = 0, count = 0;
    const Pending& at(std::uint32_t k) const { return ring[(head + k) % ring.size()]; }
    void push(Pending p) { ring[(head + count++) % ring.size()] = p; }
    void pop() {
      head = (head + 1) % static_cast<std::uint32_t>(ring.size());
      --count;
    }
    void clear() { head = count = 0; }
  };

  std::uint32_t index(Addr pc) const { return static_cast<std::uint32_t>((pc ^ (pc >> 13)) & mask_); }
  // The windows of the oldest pending loads that `seq` has closed: each one's distance is written.
  void closeWindows(std::uint32_t t, SeqNum seq);

  const std::uint64_t mask_;
  std::vector<std::uint16_t> table_;
  std::vector<std::uint32_t> window_;
  std::vector<Llsr> llsr_;
};

}  // namespace smtlab
