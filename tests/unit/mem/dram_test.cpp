// The DRAM channel: latency plus one line transfer per line_bytes / bytes_per_cycle, booked in the order requests are
// made (not in time order).
#include "smtlab/mem/dram.hpp"

#include <gtest/gtest.h>

namespace smtlab {
namespace {

// 64-byte lines at 2 bytes per cycle: 32 cycles of channel time per line; latency 100.
Dram makeDram() { return Dram(DramConfig{100, 2.0}, 64); }

TEST(Dram, BackToBackReadsQueueForTheChannel) {
  Dram d = makeDram();
  EXPECT_EQ(d.read(Cycle{0}).value, 100u);
  EXPECT_EQ(d.read(Cycle{0}).value, 132u);  // waits for the first transfer (32 cycles)
  EXPECT_EQ(d.read(Cycle{10}).value, 164u);
}

TEST(Dram, AnEarlierRequestMadeLaterUsesAGapBeforeAFutureBooking) {
  Dram d = makeDram();
  EXPECT_EQ(d.read(Cycle{3000}).value, 3100u);  // booked for the future (a load behind a page walk)
  EXPECT_EQ(d.read(Cycle{500}).value, 600u);    // made afterwards, due earlier: not behind the 3000 booking
  // Due at 2990: the 10 cycles before the 3000 booking are too short for a 32-cycle transfer, so it starts when that
  // booking ends (3032) and its data is back 100 later.
  EXPECT_EQ(d.read(Cycle{2990}).value, 3132u);
}

TEST(Dram, ALongIdleGapForgetsOldBookings) {
  Dram d = makeDram();
  for (int i = 0; i < 10; ++i) d.read(Cycle{static_cast<std::uint64_t>(i)});
  // Far beyond the booking horizon: the old bookings are dropped (all of them) and the channel is free.
  EXPECT_EQ(d.read(Cycle{10'000'000}).value, 10'000'100u);
  EXPECT_EQ(d.read(Cycle{20'000'000}).value, 20'000'100u);
}

}  // namespace
}  // namespace smtlab
