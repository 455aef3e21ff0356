// Thread choice: which hardware thread(s) a stage serves this cycle. One interface, IThreadChoice, used at fetch
// (core.fetch_policy), rename/allocate (core.rename_policy) and retire (core.retire_policy). Each policy is a small
// class; fetchPolicyTable() and threadChoiceTable() register them (name, doc, factory) in one place.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

// No config.hpp here: it includes this header for the two enums below.
#include "smtlab/common/types.hpp"

namespace smtlab {

class StateIo;

// Thread choice at fetch (core.fetch_policy); its names, docs and factories are the rows of fetchPolicyTable().
enum class FetchPolicy : std::uint8_t { RoundRobin, ICount, BrCount, MissCount, Stall, Flush, Mlp };

// Thread choice at rename/allocate and retire (core.rename_policy, core.retire_policy; one thread per cycle is
// served); its rows are threadChoiceTable()'s.
enum class ThreadChoice : std::uint8_t { RoundRobin, ICount, OldestFirst };

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
  // MLP-aware fetch: the gate and the flush start the predicted MLP distance past the load (mlp_predictor.hpp).
  virtual bool gatesAtMlpDistance() const { return false; }
  // Whether the fetch stage must compute ThreadCandidate::dataMisses (costly, only MISSCOUNT needs it).
  virtual bool needsDataMisses() const { return false; }
  // Whether the policy reads the counters at all (round robin needs only `eligible`): stages skip filling them.
  virtual bool needsCounters() const { return true; }
  // The policy's own state, such as whose turn it is (a snapshot: common/state_io.hpp).
  virtual void visitState(StateIo&) {}
};
using IFetchPolicy = IThreadChoice;

// One row of a policy table: the config name, what the policy does (docs, `smtlab config show`, Python), its factory.
template <class E>
struct PolicyInfo {
  E value;
  std::string_view name;
  std::string_view doc;
  std::unique_ptr<IThreadChoice> (*make)();
};
using FetchPolicyInfo = PolicyInfo<FetchPolicy>;
using ThreadChoiceInfo = PolicyInfo<ThreadChoice>;

// THE lists of policies, in enum order: core.fetch_policy, and core.rename_policy / core.retire_policy (rows in
// fetch_policy.cpp, checked against the enums above). The config's parser, its docs, the Python export and the
// factories below read them; a new policy is one enum value and one row.
std::span<const FetchPolicyInfo> fetchPolicyTable();
std::span<const ThreadChoiceInfo> threadChoiceTable();

std::unique_ptr<IThreadChoice> makeFetchPolicy(FetchPolicy policy);
std::unique_ptr<IThreadChoice> makeThreadChoice(ThreadChoice policy);

}  // namespace smtlab
