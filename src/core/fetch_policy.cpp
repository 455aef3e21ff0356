#include "smtlab/core/fetch_policy.hpp"

#include <algorithm>
#include <array>

#include "smtlab/common/enum_table.hpp"
#include "smtlab/common/state_io.hpp"

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
  void visitState(StateIo& io) override { io(last_); }

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
  void visitState(StateIo& io) override { io(last_); }

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

class MlpPolicy final : public CountingPolicy<FrontEndKey> {
 public:
  bool gatesOnMemoryMiss() const override { return true; }
  bool flushesOnMemoryMiss() const override { return true; }
  bool gatesAtMlpDistance() const override { return true; }
};

template <class P>
std::unique_ptr<IThreadChoice> make() {
  return std::make_unique<P>();
}

constexpr std::array<FetchPolicyInfo, 7> kFetchPolicies{{
    {FetchPolicy::RoundRobin, "round_robin", "Pentium 4: alternate every cycle; a stalled thread yields its slot",
     &make<RoundRobinPolicy>},
    {FetchPolicy::ICount, "icount",
     "fewest instructions in the front-end pipe, uop queue and issue queue first (Tullsen et al. 1996)",
     &make<ICountPolicy>},
    {FetchPolicy::BrCount, "brcount", "fewest unresolved branches first", &make<BrCountPolicy>},
    {FetchPolicy::MissCount, "misscount", "fewest L1D misses in flight first", &make<MissCountPolicy>},
    {FetchPolicy::Stall, "stall",
     "ICOUNT, and a thread whose load misses the cache named by core.long_latency_miss fetches nothing until the "
     "data returns (Tullsen & Brown 2001)",
     &make<StallPolicy>},
    {FetchPolicy::Flush, "flush",
     "STALL, and that thread's instructions younger than the load are squashed and fetched again (Tullsen & Brown "
     "2001)",
     &make<FlushPolicy>},
    {FetchPolicy::Mlp, "mlp",
     "FLUSH from the load's predicted memory-level-parallelism distance on: the thread fetches on up to the youngest "
     "long-latency load its window would overlap with it, then waits for the data; what lies beyond is squashed "
     "(Eyerman & Eeckhout 2007; core.mlp_predictor_entries)",
     &make<MlpPolicy>},
}};
static_assert(inEnumOrder(kFetchPolicies), "kFetchPolicies: one row per FetchPolicy, in enum order");

constexpr std::array<ThreadChoiceInfo, 3> kThreadChoices{{
    {ThreadChoice::RoundRobin, "round_robin",
     "Pentium 4: alternate every cycle; a thread that cannot proceed yields (Marr et al. 2002)",
     &make<RoundRobinPolicy>},
    {ThreadChoice::ICount, "icount", "fewest instructions in the front-end pipe, uop queue and issue queue first",
     &make<ICountPolicy>},
    {ThreadChoice::OldestFirst, "oldest_first",
     "rename: the thread whose next instruction was fetched earliest; retire: the thread whose head was renamed "
     "earliest",
     &make<OldestFirstPolicy>},
}};
static_assert(inEnumOrder(kThreadChoices), "kThreadChoices: one row per ThreadChoice, in enum order");

}  // namespace

std::span<const FetchPolicyInfo> fetchPolicyTable() { return kFetchPolicies; }
std::span<const ThreadChoiceInfo> threadChoiceTable() { return kThreadChoices; }

std::unique_ptr<IThreadChoice> makeFetchPolicy(FetchPolicy policy) {
  const auto* row = enumRow(kFetchPolicies, policy);
  return row != nullptr ? row->make() : make<RoundRobinPolicy>();  // only a corrupted value has no row
}

std::unique_ptr<IThreadChoice> makeThreadChoice(ThreadChoice policy) {
  const auto* row = enumRow(kThreadChoices, policy);
  return row != nullptr ? row->make() : make<RoundRobinPolicy>();  // only a corrupted value has no row
}

}  // namespace smtlab
