// Thread choice: which hardware thread(s) a stage serves this cycle. One interface, IThreadChoice, used at fetch
// (core.fetch_policy), rename/allocate (core.rename_policy) and retire (core.retire_policy). Each policy is a small
// class; makeFetchPolicy and makeThreadChoice register them by name in one place.
#pragma once

#include <cstdint>
#include <memory>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/capacity.hpp"

namespace smtlab {

// What a policy may look at for one thread, filled by the stage each cycle.
struct ThreadCandidate {
  bool eligible = false;         // the thread can use the stage now (fetch: running, not held, room in its pipe)
  std::uint32_t frontEnd = 0;    // instructions in the front-end pipe, uop queue and issue queue (ICOUNT)
  std::uint32_t branches = 0;    // unresolved branches (BRCOUNT; fetch only)
  std::uint32_t dataMisses = 0;  // loads missing the L1D in flight (MISSCOUNT; fetch only)
  std::uint64_t oldest = 0;      // age of the thread's next instruction for this stage, smaller = older (OLDEST)
};
using FetchCandidate = ThreadCandidate;

class IThreadChoice {
 public:
  virtual ~IThreadChoice() = default;
  // Writes the eligible threads in the order they should be served into `order`; returns how many.
  virtual std::uint32_t choose(const ThreadCandidate* threads, std::uint32_t count, Cycle now,
                               std::uint32_t* order) = 0;
  // STALL and FLUSH gate a thread whose load misses to memory; FLUSH also squashes its younger instructions.
  virtual bool gatesOnMemoryMiss() const { return false; }
  virtual bool flushesOnMemoryMiss() const { return false; }
  // Whether the fetch stage must compute ThreadCandidate::dataMisses (costly, only MISSCOUNT needs it).
  virtual bool needsDataMisses() const { return false; }
  // Whether the policy reads the counters at all (round robin needs only `eligible`): stages skip filling them.
  virtual bool needsCounters() const { return true; }
};
using IFetchPolicy = IThreadChoice;

std::unique_ptr<IThreadChoice> makeFetchPolicy(FetchPolicy policy);
// The policies of rename/allocate and retire: round_robin, icount, oldest_first.
std::unique_ptr<IThreadChoice> makeThreadChoice(ThreadChoice policy);

}  // namespace smtlab
