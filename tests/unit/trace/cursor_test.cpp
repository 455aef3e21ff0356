#include "smtlab/trace/cursor.hpp"

#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/vector_source.hpp"

namespace smtlab {
namespace {

std::vector<Instr> numbered(std::size_t n) {
  std::vector<Instr> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i].pc = 0x1000 + 4 * i;
    v[i].op = OpClass::Int;
  }
  return v;
}

TEST(TraceCursor, RewindThenRefetchGivesSameRecords) {
  const auto recs = numbered(40);
  TraceCursor c(std::make_unique<VectorSource>(recs), 16, 4);
  for (int i = 0; i < 10; ++i) {
    ASSERT_NE(c.peek(), nullptr);
    EXPECT_EQ(*c.peek(), recs[i]);
    c.advanceFetch();
  }
  c.retireOne();
  c.retireOne();  // retireSeq = 2
  c.rewindTo(SeqNum{2});
  for (int i = 2; i < 12; ++i) {
    ASSERT_NE(c.peek(), nullptr);
    EXPECT_EQ(*c.peek(), recs[i]);
    c.advanceFetch();
  }
  EXPECT_THROW(c.rewindTo(SeqNum{1}), Error);   // older than the oldest unretired
  EXPECT_THROW(c.rewindTo(SeqNum{13}), Error);  // younger than the fetch position
}

TEST(TraceCursor, AheadReadsMoreWhileTheRingHasRoomAndChangesNothing) {
  // Ring of 16, batches of 4. ahead(k) is the record k past the fetch position, read from the source if needed.
  const auto recs = numbered(40);
  TraceCursor c(std::make_unique<VectorSource>(recs), 16, 4);
  ASSERT_NE(c.peek(), nullptr);  // first batch: records 0..3
  EXPECT_EQ(c.loadedEnd(), SeqNum{4});
  ASSERT_NE(c.ahead(9), nullptr);
  EXPECT_EQ(*c.ahead(9), recs[9]);
  EXPECT_EQ(c.loadedEnd(), SeqNum{12});  // two more batches: records 4..11
  // Nothing has retired: 16 records fit, the 17th (ahead(16) = record 16) has no room.
  ASSERT_NE(c.ahead(15), nullptr);
  EXPECT_EQ(*c.ahead(15), recs[15]);
  EXPECT_EQ(c.ahead(16), nullptr);
  // Fetching then sees the same records, in order, and the end of the trace after the last.
  for (std::size_t i = 0; i < recs.size(); ++i) {
    ASSERT_NE(c.peek(), nullptr) << i;
    EXPECT_EQ(*c.peek(), recs[i]);
    c.advanceFetch();
    c.retireOne();
  }
  EXPECT_EQ(c.ahead(1), nullptr);
  EXPECT_EQ(c.peek(), nullptr);
}

TEST(TraceCursor, ReleasingADrainedRingLosesNothing) {
  // Invariant: releaseIfDrained() gives the ring back only when no record is between the retire and load positions,
  // and the cursor then reads on (or restarts) exactly as if it had kept it.
  const auto recs = numbered(40);
  TraceCursor c(std::make_unique<VectorSource>(recs), 16, 4);
  for (int i = 0; i < 6; ++i) c.advanceFetch(), c.peek();
  for (int i = 0; i < 3; ++i) c.retireOne();
  c.rewindTo(c.retireSeq());
  c.releaseIfDrained();  // records 3..7 are loaded, not retired: kept
  for (int i = 3; i < 8; ++i) {
    ASSERT_NE(c.peek(), nullptr);
    EXPECT_EQ(*c.peek(), recs[i]);
    c.advanceFetch();
    c.retireOne();
  }
  c.releaseIfDrained();  // drained: the ring goes; the next read makes a new one
  for (int i = 8; i < 40; ++i) {
    ASSERT_NE(c.peek(), nullptr) << i;
    EXPECT_EQ(*c.peek(), recs[i]);
    c.advanceFetch();
    c.retireOne();
    if (i % 7 == 0) c.releaseIfDrained();
  }
  EXPECT_TRUE(c.finished());
  c.releaseIfDrained();
  c.restart();
  ASSERT_NE(c.peek(), nullptr);
  EXPECT_EQ(*c.peek(), recs[0]);
  EXPECT_EQ(c.retired(), 40u);
}

TEST(TraceCursor, RestartAfterEnd) {
  const auto recs = numbered(5);
  TraceCursor c(std::make_unique<VectorSource>(recs), 8, 2);
  for (int i = 0; i < 5; ++i) {
    ASSERT_NE(c.peek(), nullptr);
    c.advanceFetch();
  }
  EXPECT_EQ(c.peek(), nullptr);
  EXPECT_THROW(c.restart(), Error);  // fetched but not retired
  for (int i = 0; i < 5; ++i) c.retireOne();
  EXPECT_TRUE(c.finished());
  c.restart();
  EXPECT_EQ(c.restarts(), 1u);
  ASSERT_NE(c.peek(), nullptr);
  EXPECT_EQ(*c.peek(), recs[0]);
  EXPECT_EQ(c.fetchSeq().value, 5u);  // sequence numbers keep counting
  EXPECT_EQ(c.retired(), 5u);
}

// A pipeline-like pattern of fetches, retirements and squashes: every record retires exactly once, in order.
TEST(TraceCursor, SquashesLoseAndDuplicateNothing) {
  auto gen = makeGenerator("gen:mix,count=20000,seed=5");
  const std::vector<Instr> expect = readAll(*gen);
  gen->rewind();
  TraceCursor c(std::move(gen), 64, 16);
  SplitMix64 rng(1);
  std::vector<Instr> retired;
  while (!c.finished()) {
    const std::uint64_t fetch = rng.below(8);
    for (std::uint64_t i = 0; i < fetch && c.fetchSeq() - c.retireSeq() < 48 && c.peek(); ++i) c.advanceFetch();
    const std::uint64_t retire = rng.below(6);
    for (std::uint64_t i = 0; i < retire && c.retireSeq() < c.fetchSeq(); ++i) {
      retired.push_back(c.at(c.retireSeq()));
      c.retireOne();
    }
    if (rng.below(10) == 0) c.rewindTo(c.retireSeq() + rng.below(c.fetchSeq() - c.retireSeq() + 1));
  }
  EXPECT_EQ(retired, expect);
}

}  // namespace
}  // namespace smtlab
