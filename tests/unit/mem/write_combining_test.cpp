// NetBurst's write-combining buffers (mem/write_combining.hpp), with a stub L2 whose request for ownership takes a
// fixed time; every expected cycle is worked out by hand in the test.
#include "smtlab/mem/write_combining.hpp"

#include <vector>

#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"

namespace smtlab::wc_test {
namespace {

Cycle at(std::uint64_t c) { return Cycle{c}; }
LineAddr line(std::uint64_t n) { return LineAddr::fromNumber(n); }

// The L2's answer to a request for ownership sent at `start`: owned `latency` cycles later. Records the starts.
struct StubL2 {
  std::uint64_t latency;
  std::vector<Cycle> requests;
  auto rfo() {
    return [this](Cycle start) {
      requests.push_back(start);
      return start + latency;
    };
  }
};

TEST(WriteCombining, StoresToAHeldLineMergeAndNewLinesTakeFreeBuffersAtOnce) {
  WriteCombiningBuffers wc(2, 2);
  StubL2 l2{18, {}};
  EXPECT_EQ(wc.write(line(1), at(0), l2.rfo()), at(0));  // a free buffer: in at once, ownership asked for
  EXPECT_EQ(wc.write(line(1), at(3), l2.rfo()), at(3));  // merged: no second request
  EXPECT_EQ(wc.write(line(2), at(4), l2.rfo()), at(4));  // the second buffer
  EXPECT_EQ(l2.requests, (std::vector<Cycle>{at(0), at(4)}));
  const WriteCombiningStats& s = wc.stats();
  EXPECT_EQ(s.writes, 3u);
  EXPECT_EQ(s.merges, 1u);
  EXPECT_EQ(s.flushes, 0u);
  EXPECT_EQ(s.waitCycles, 0u);
}

TEST(WriteCombining, ANewLineWaitsForTheLeastRecentlyWrittenBufferToBeOwnedAndWritten) {
  WriteCombiningBuffers wc(2, 2);
  StubL2 l2{18, {}};
  wc.write(line(1), at(0), l2.rfo());  // A: owned at 18
  wc.write(line(2), at(1), l2.rfo());  // B: owned at 19
  // C at 5: both buffers hold lines; A was written least recently (0), so A goes into the L2 once owned, 18 .. 20,
  // and C takes its buffer at 20 (waited 15), asking for its own line then (owned at 38).
  EXPECT_EQ(wc.write(line(3), at(5), l2.rfo()), at(20));
  EXPECT_EQ(wc.write(line(2), at(21), l2.rfo()), at(21));  // B merges: now written at 21, after C (20)
  // A again at 22: the least recently written buffer is C's (20), though B's was taken first; C's line is owned at
  // 38, written 38 .. 40, and A gets in at 40 (waited 18).
  EXPECT_EQ(wc.write(line(1), at(22), l2.rfo()), at(40));
  EXPECT_EQ(l2.requests, (std::vector<Cycle>{at(0), at(1), at(20), at(40)}));
  const WriteCombiningStats& s = wc.stats();
  EXPECT_EQ(s.writes, 5u);
  EXPECT_EQ(s.merges, 1u);
  EXPECT_EQ(s.flushes, 2u);
  EXPECT_EQ(s.waitCycles, 15u + 18u);
}

TEST(WriteCombining, TheL2TakesOneBuffersLineAtATime) {
  WriteCombiningBuffers wc(2, 2);
  StubL2 l2{0, {}};  // lines owned at once (say, the L2 holds them already)
  wc.write(line(1), at(0), l2.rfo());
  wc.write(line(2), at(0), l2.rfo());
  // Two new lines in one cycle: the first buffer is written 10 .. 12, the second only after it, 12 .. 14.
  EXPECT_EQ(wc.write(line(3), at(10), l2.rfo()), at(12));
  EXPECT_EQ(wc.write(line(4), at(10), l2.rfo()), at(14));
  EXPECT_EQ(wc.stats().waitCycles, 2u + 4u);
}

TEST(WriteCombining, AStoreMergingIntoABufferStillBeingTakenGetsInWithTheStoreThatTookIt) {
  WriteCombiningBuffers wc(1, 2);
  StubL2 l2{18, {}};
  wc.write(line(1), at(0), l2.rfo());                      // owned at 18
  EXPECT_EQ(wc.write(line(2), at(1), l2.rfo()), at(20));   // waits for line 1's write, 18 .. 20
  EXPECT_EQ(wc.write(line(2), at(2), l2.rfo()), at(20));   // line 2's buffer exists only from 20
}

TEST(WriteCombining, ResetStatsKeepsTheBuffersContents) {
  WriteCombiningBuffers wc(2, 2);
  StubL2 l2{18, {}};
  wc.write(line(1), at(0), l2.rfo());
  wc.resetStats();
  EXPECT_EQ(wc.stats().writes, 0u);
  EXPECT_EQ(wc.write(line(1), at(50), l2.rfo()), at(50));
  EXPECT_EQ(wc.stats().merges, 1u);
}

TEST(WriteCombining, ZeroBuffersIsAConfigError) {
  EXPECT_THROW(WriteCombiningBuffers(0, 2), ConfigError);
}

}  // namespace
}  // namespace smtlab::wc_test
