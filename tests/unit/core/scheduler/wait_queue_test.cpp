// WaitQueue (the scheduler's timing wheel): every entry comes out exactly once, at the first popDue whose cycle is at
// or after its readyAt, whether it sat in the wheel (due within 64 cycles of the last pop) or in the far heap; and
// earliest() is the smallest readyAt held. Expected sets are written out by hand from the pushes.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "smtlab/core/wait_queue.hpp"

namespace smtlab {
namespace {

WaitEntry entry(std::uint64_t readyAt, std::uint64_t age) {
  return WaitEntry{Cycle{readyAt}, age, 0, UopRef::real(SeqNum{age})};
}

// The ages popDue(now) hands out, sorted (the queue promises no order).
std::vector<std::uint64_t> due(WaitQueue& q, std::uint64_t now) {
  std::vector<std::uint64_t> ages;
  q.popDue(Cycle{now}, [&](const WaitEntry& e) {
    EXPECT_LE(e.readyAt.value, now) << "age " << e.age << " came out before its cycle";
    ages.push_back(e.age);
  });
  std::sort(ages.begin(), ages.end());
  return ages;
}

using Ages = std::vector<std::uint64_t>;

TEST(WaitQueue, NearEntriesComeOutAtTheirCycle) {
  WaitQueue q;
  q.reserve(8);
  q.popDue(Cycle{10}, [](const WaitEntry&) { FAIL() << "empty queue"; });  // the wheel now starts at cycle 11
  q.push(entry(11, 1));
  q.push(entry(13, 2));
  q.push(entry(11, 3));
  q.push(entry(74, 4));  // 11 + 63: the wheel's last slot
  EXPECT_EQ(q.earliest(), Cycle{11});
  EXPECT_EQ(due(q, 11), (Ages{1, 3}));
  EXPECT_EQ(q.earliest(), Cycle{13});
  EXPECT_EQ(due(q, 12), Ages{});
  EXPECT_EQ(due(q, 13), Ages{2});
  EXPECT_EQ(q.earliest(), Cycle{74});
  EXPECT_EQ(due(q, 73), Ages{});
  EXPECT_EQ(due(q, 74), Ages{4});
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.earliest(), Cycle::never());
}

TEST(WaitQueue, FarEntriesAndNeverWaitInTheHeap) {
  WaitQueue q;
  q.popDue(Cycle{0}, [](const WaitEntry&) {});  // the wheel covers cycles 1..64
  q.push(entry(65, 1));   // one past the wheel: the heap
  q.push(entry(400, 2));  // a miss to memory
  q.push(entry(5, 3));
  q.push(WaitEntry{Cycle::never(), 4, 0, UopRef::real(SeqNum{4})});  // waits for data that has no known cycle yet
  EXPECT_EQ(q.earliest(), Cycle{5});
  EXPECT_EQ(due(q, 64), Ages{3});
  EXPECT_EQ(q.earliest(), Cycle{65});
  EXPECT_EQ(due(q, 399), Ages{1});
  EXPECT_EQ(due(q, 400), Ages{2});
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.earliest(), Cycle::never());
}

TEST(WaitQueue, ASkipPastTheWholeWheelTakesEverythingDue) {
  // Event skipping jumps many cycles between two pops: every slot passed over is due, including slots whose index
  // wrapped around.
  WaitQueue q;
  q.popDue(Cycle{100}, [](const WaitEntry&) {});  // wheel covers 101..164
  for (std::uint64_t c = 101; c <= 164; c += 9) q.push(entry(c, c));  // 101, 110, ..., 164
  q.push(entry(170, 1000));  // heap
  EXPECT_EQ(due(q, 130), (Ages{101, 110, 119, 128}));
  // Pushed after the wheel moved to 131..194: 190 goes to the wheel, in a slot that wrapped around.
  q.push(entry(190, 2000));
  EXPECT_EQ(due(q, 1000), (Ages{137, 146, 155, 164, 1000, 2000}));
  EXPECT_TRUE(q.empty());
}

TEST(WaitQueue, ASteadyStreamComesOutOneCycleLater) {
  // One-cycle waits pushed every cycle, through freed and reused nodes: each pair comes out at the next pop.
  WaitQueue q;
  q.reserve(4);
  std::uint64_t age = 0;
  for (std::uint64_t now = 0; now < 1000; ++now) {
    const Ages out = due(q, now);
    if (now > 0) {
      ASSERT_EQ(out, (Ages{age - 1, age})) << "cycle " << now;
    }
    q.push(entry(now + 1, ++age));
    q.push(entry(now + 1, ++age));
  }
}

}  // namespace
}  // namespace smtlab
