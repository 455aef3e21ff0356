#include "smtlab/core/fetch_policy.hpp"

#include <algorithm>

namespace smtlab {
namespace {

// Pentium 4: the front end alternates between threads every cycle; a thread that cannot fetch yields its slot.
class RoundRobinPolicy final : public IFetchPolicy {
 public:
  std::uint32_t choose(const FetchCandidate* threads, std::uint32_t count, Cycle, std::uint32_t* order) override {
    std::uint32_t n = 0;
    for (std::uint32_t i = 1; i <= count; ++i) {
      const std::uint32_t t = (last_ + i) % count;
      if (threads[t].eligible) order[n++] = t;
    }
    if (n > 0) last_ = order[0];
    return n;
  }

 private:
  std::uint32_t last_ = 0;
};

// Orders eligible threads by a counter, lowest first; ties go round-robin so no thread is favoured for its id.
template <class Key>
class CountingPolicy : public IFetchPolicy {
 public:
  std::uint32_t choose(const FetchCandidate* threads, std::uint32_t count, Cycle, std::uint32_t* order) override {
    std::uint32_t n = 0;
    for (std::uint32_t i = 1; i <= count; ++i) {
      const std::uint32_t t = (last_ + i) % count;
      if (threads[t].eligible) order[n++] = t;
    }
    std::stable_sort(order, order + n,
                     [&](std::uint32_t a, std::uint32_t b) { return Key{}(threads[a]) < Key{}(threads[b]); });
    if (n > 0) last_ = order[0];
    return n;
  }

 private:
  std::uint32_t last_ = 0;
};

struct FrontEndKey {
  std::uint32_t operator()(const FetchCandidate& c) const { return c.frontEnd; }
};
struct BranchKey {
  std::uint32_t operator()(const FetchCandidate& c) const { return c.branches; }
};
struct MissKey {
  std::uint64_t operator()(const FetchCandidate& c) const {
    return (static_cast<std::uint64_t>(c.dataMisses) << 32) | c.frontEnd;
  }
};

class ICountPolicy final : public CountingPolicy<FrontEndKey> {};
class BrCountPolicy final : public CountingPolicy<BranchKey> {};
class MissCountPolicy final : public CountingPolicy<MissKey> {
 public:
  bool needsDataMisses() const override { return true; }
};
class StallPolicy final : public CountingPolicy<FrontEndKey> {
 public:
  bool gatesOnMemoryMiss() const override { return true; }
};
class FlushPolicy final : public CountingPolicy<FrontEndKey> {
 public:
  bool gatesOnMemoryMiss() const override { return true; }
  bool flushesOnMemoryMiss() const override { return true; }
};

}  // namespace

std::unique_ptr<IFetchPolicy> makeFetchPolicy(FetchPolicy policy) {
  switch (policy) {
    case FetchPolicy::RoundRobin:
      return std::make_unique<RoundRobinPolicy>();
    case FetchPolicy::ICount:
      return std::make_unique<ICountPolicy>();
    case FetchPolicy::BrCount:
      return std::make_unique<BrCountPolicy>();
    case FetchPolicy::MissCount:
      return std::make_unique<MissCountPolicy>();
    case FetchPolicy::Stall:
      return std::make_unique<StallPolicy>();
    case FetchPolicy::Flush:
      return std::make_unique<FlushPolicy>();
  }
  return std::make_unique<RoundRobinPolicy>();
}

}  // namespace smtlab
