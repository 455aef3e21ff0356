// Thread choice at fetch: which hardware thread(s) the front end serves this cycle. Each policy is a small class
// behind IFetchPolicy; makeFetchPolicy registers them all by name in one place.
#pragma once

#include <cstdint>
#include <memory>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/capacity.hpp"

namespace smtlab {

// What a policy may look at for one thread, filled by the fetch stage each cycle.
struct FetchCandidate {
  bool eligible = false;           // running, not stalled, has instructions, room in its uop queue share
  std::uint32_t frontEnd = 0;      // instructions in the uop queue and issue queue (ICOUNT)
  std::uint32_t branches = 0;      // unresolved branches (BRCOUNT)
  std::uint32_t dataMisses = 0;    // loads missing the L1D in flight (MISSCOUNT)
};

class IFetchPolicy {
 public:
  virtual ~IFetchPolicy() = default;
  // Writes the eligible threads in the order they should be served into `order`; returns how many.
  virtual std::uint32_t choose(const FetchCandidate* threads, std::uint32_t count, Cycle now,
                               std::uint32_t* order) = 0;
  // STALL and FLUSH gate a thread whose load misses to memory; FLUSH also squashes its younger instructions.
  virtual bool gatesOnMemoryMiss() const { return false; }
  virtual bool flushesOnMemoryMiss() const { return false; }
  // Whether the fetch stage must compute FetchCandidate::dataMisses (costly, only MISSCOUNT needs it).
  virtual bool needsDataMisses() const { return false; }
};

std::unique_ptr<IFetchPolicy> makeFetchPolicy(FetchPolicy policy);

}  // namespace smtlab
