// The one thread-choice interface at rename/allocate and retire: round_robin keeps the Pentium 4 alternation, icount
// serves the thread with the fewest instructions in the front end and issue queue, oldest_first the thread whose next
// instruction is oldest. Expected orders are worked out by hand from those rules.
#include <gtest/gtest.h>

#include "../stage_test_util.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/rename_allocate.hpp"
#include "smtlab/core/retire_unit.hpp"

namespace smtlab::test {
namespace {

std::vector<Instr> ints(int n) { return std::vector<Instr>(static_cast<std::size_t>(n), instr(OpClass::Int, {1})); }

TEST(ThreadChoice, OldestFirstServesTheSmallestAgeAndTiesGoInTurn) {
  auto policy = makeThreadChoice(ThreadChoice::OldestFirst);
  ThreadCandidate c[3];
  for (auto& x : c) x.eligible = true;
  c[0].oldest = 50;
  c[1].oldest = 10;
  c[2].oldest = 30;
  std::uint32_t order[3];
  ASSERT_EQ(policy->choose(c, 3, Cycle{0}, order), 3u);
  EXPECT_EQ((std::vector<std::uint32_t>{order[0], order[1], order[2]}), (std::vector<std::uint32_t>{1, 2, 0}));
  // A tie between 0 and 2 after 1 was served: the turn starts after thread 1, so 2 before 0.
  c[1].eligible = false;
  c[0].oldest = c[2].oldest = 7;
  ASSERT_EQ(policy->choose(c, 3, Cycle{1}, order), 2u);
  EXPECT_EQ(order[0], 2u);
}

// Thread 0's 4 queued instructions reached the end of the front end at cycle 5, thread 1's 4 at cycle 9.
struct RenameRace {
  StageHarness h;
  RenameAllocate rename;
  explicit RenameRace(ThreadChoice policy, std::uint32_t queued1 = 4)
      : h(withPolicy(policy)), rename(h.config, h.threads, h.queues) {
    h.attach(0, ints(10));
    h.attach(1, ints(10));
    h.queueUops(0, 4);
    h.queueUops(1, queued1);
    for (std::uint64_t s = 0; s < 4; ++s) h.threads[0].front[s].availableAt = Cycle{5};
    for (std::uint64_t s = 0; s < queued1; ++s) h.threads[1].front[s].availableAt = Cycle{9};
  }
  static Config withPolicy(ThreadChoice p) {
    Config c = stageConfig(2);
    c.core.rename_width = 4;
    c.core.rename_policy = p;
    return c;
  }
  std::uint32_t firstServed() {
    rename.tick(Cycle{10}, false);
    return h.threads[0].robTail > SeqNum{0} ? 0u : 1u;
  }
};

TEST(ThreadChoice, RenameRoundRobinStartsWithTheThreadAfterTheLastServed) {
  RenameRace r(ThreadChoice::RoundRobin);
  EXPECT_EQ(r.firstServed(), 1u);  // the turn starts after thread 0, as on the Pentium 4
}

TEST(ThreadChoice, RenameOldestFirstServesTheEarlierFetchedThread) {
  RenameRace r(ThreadChoice::OldestFirst);
  EXPECT_EQ(r.firstServed(), 0u);  // fetched 4 cycles earlier
  r.rename.tick(Cycle{11}, false);
  EXPECT_EQ(r.h.threads[1].robTail.value, 4u);  // thread 0 has nothing left: thread 1 next
}

TEST(ThreadChoice, RenameIcountServesTheThreadWithFewerInTheFrontEnd) {
  // Thread 1 has 8 queued, thread 0 has 4: ICOUNT serves thread 0 although the turn would be thread 1's.
  RenameRace r(ThreadChoice::ICount, 8);
  EXPECT_EQ(r.firstServed(), 0u);
}

TEST(ThreadChoice, RetireOldestFirstDrainsTheOlderThreadFirst) {
  // Thread 1's 8 instructions are renamed before thread 0's 8 (the rename turn starts with thread 1), so they have
  // the smaller ages; all are done at cycle 1; width 4. Round robin would retire (t0, t1) = (0,4), (4,4), (4,8),
  // (8,8), alternating; oldest_first retires thread 1's 4 + 4 first, then thread 0's.
  Config c = stageConfig(2);
  c.core.rename_width = 32;
  c.core.retire_width = 4;
  c.core.retire_policy = ThreadChoice::OldestFirst;
  StageHarness h(c);
  StubLoadStore lsu(4);
  std::vector<CoreEvent> events;
  RenameAllocate rename(h.config, h.threads, h.queues);
  RetireUnit retire(h.config, h.threads, h.queues, lsu, events);
  for (std::uint32_t t = 0; t < 2; ++t) {
    h.attach(t, ints(8));
    h.queueUops(t, 8);
  }
  rename.tick(Cycle{0}, false);  // round robin rename: thread 1 first...
  rename.tick(Cycle{0}, false);  // ...then thread 0, so thread 1's ages are smaller: it is older
  for (std::uint32_t t = 0; t < 2; ++t) {
    for (std::uint64_t s = 0; s < 8; ++s) {
      h.threads[t].rob[s].issued = true;
      h.threads[t].rob[s].doneAt = Cycle{1};
    }
  }
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {{0, 4}, {0, 8}, {4, 8}, {8, 8}};
  for (std::uint64_t cycle = 1; cycle <= 4; ++cycle) {
    retire.tick(Cycle{cycle});
    EXPECT_EQ(h.threads[0].stats.instructions, expected[cycle - 1].first) << cycle;
    EXPECT_EQ(h.threads[1].stats.instructions, expected[cycle - 1].second) << cycle;
  }
}

}  // namespace
}  // namespace smtlab::test
