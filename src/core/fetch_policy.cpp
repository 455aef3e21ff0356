#include "smtlab/core/fetch_policy.hpp"

#include <algorithm>

namespace smtlab {
namespace {

// The eligible threads in turn, starting after the one served first last time: the rotation every policy shares, so
// that ties never favour a thread for its id.
std::uint32_t eligibleInTurn(const ThreadCandidate* threads, std::uint32_t count, std::uint32_t last,
                             std::uint32_t* order) {
  std::uint32_t n = 0;
  for (std::uint32_t i = 1; i <= count; ++i) {
    const std::uint32_t t = (last + i) % count;
    if (threads[t].eligible) order[n++] = t;
  }
  return n;
}

// Pentium 4: the stage alternates between threads every cycle; a thread that cannot proceed yields its slot.
class RoundRobinPolicy final : public IThreadChoice {
 public:
  std::uint32_t choose(const ThreadCandidate* threads, std::uint32_t count, Cycle, std::uint32_t* order) override {
    const std::uint32_t n = eligibleInTurn(threads, count, last_, order);
    if (n > 0) last_ = order[0];
    return n;
  }
  bool needsCounters() const override { return false; }

 private:
  std::uint32_t last_ = 0;
};

// Orders eligible threads by a counter, lowest first; ties go round-robin so no thread is favoured for its id.
template <class Key>
class CountingPolicy : public IThreadChoice {
 public:
  std::uint32_t choose(const ThreadCandidate* threads, std::uint32_t count, Cycle, std::uint32_t* order) override {
    const std::uint32_t n = eligibleInTurn(threads, count, last_, order);
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
struct OldestKey {
  std::uint64_t operator()(const FetchCandidate& c) const { return c.oldest; }
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
class OldestFirstPolicy final : public CountingPolicy<OldestKey> {};
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

std::unique_ptr<IThreadChoice> makeThreadChoice(ThreadChoice policy) {
  switch (policy) {
    case ThreadChoice::RoundRobin:
      return std::make_unique<RoundRobinPolicy>();
    case ThreadChoice::ICount:
      return std::make_unique<ICountPolicy>();
    case ThreadChoice::OldestFirst:
      return std::make_unique<OldestFirstPolicy>();
  }
  return std::make_unique<RoundRobinPolicy>();
}

std::unique_ptr<IThreadChoice> makeFetchPolicy(FetchPolicy policy) {
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
