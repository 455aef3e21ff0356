// SeqNum: an instruction's place in its thread's program order. It orders older before younger, steps
// on in program order, gives a count as the difference of two, and never converts from or to a plain integer, a Cycle
// or a LineAddr, so a count, a time or an address cannot be passed where a sequence number is meant. Expected values
// are worked by hand.
#include <cstdint>
#include <type_traits>

#include <gtest/gtest.h>

#include "smtlab/common/types.hpp"

namespace smtlab {
namespace {

// No implicit conversion either way; explicit construction only from the integer it wraps.
static_assert(!std::is_convertible_v<std::uint64_t, SeqNum>);
static_assert(!std::is_convertible_v<std::uint32_t, SeqNum>);
static_assert(!std::is_convertible_v<int, SeqNum>);
static_assert(!std::is_convertible_v<SeqNum, std::uint64_t>);
static_assert(!std::is_constructible_v<std::uint64_t, SeqNum>);
static_assert(!std::is_convertible_v<SeqNum, bool>);
static_assert(!std::is_convertible_v<Cycle, SeqNum>);
static_assert(!std::is_constructible_v<SeqNum, Cycle>);
static_assert(!std::is_convertible_v<SeqNum, Cycle>);
static_assert(!std::is_constructible_v<Cycle, SeqNum>);
static_assert(!std::is_convertible_v<LineAddr, SeqNum>);
static_assert(!std::is_constructible_v<SeqNum, LineAddr>);
static_assert(!std::is_convertible_v<SeqNum, LineAddr>);
static_assert(!std::is_constructible_v<LineAddr, SeqNum>);
static_assert(!std::is_convertible_v<ThreadId, SeqNum>);
static_assert(!std::is_constructible_v<SeqNum, ThreadId>);
static_assert(std::is_constructible_v<SeqNum, std::uint64_t>);  // explicitly, where the cursor numbers records
// A sequence number cannot be compared with, or have added to it, another kind of quantity.
template <class A, class B>
concept Comparable = requires(A a, B b) { a < b; };
template <class A, class B>
concept Addable = requires(A a, B b) { a + b; };
template <class A, class B>
concept Subtractable = requires(A a, B b) { a - b; };
static_assert(Comparable<SeqNum, SeqNum>);
static_assert(!Comparable<SeqNum, std::uint64_t>);
static_assert(!Comparable<SeqNum, Cycle>);
static_assert(!Comparable<SeqNum, LineAddr>);
static_assert(!Addable<SeqNum, SeqNum>);  // the sum of two positions means nothing
static_assert(!Addable<SeqNum, Cycle>);
static_assert(!Subtractable<SeqNum, Cycle>);
static_assert(!Subtractable<Cycle, SeqNum>);
// The difference of two is a count (an integer), not another sequence number.
static_assert(std::is_same_v<decltype(SeqNum{} - SeqNum{}), std::uint64_t>);
// Zero cost: the same size as the integer it wraps, copied as plain bytes.
static_assert(sizeof(SeqNum) == sizeof(std::uint64_t));
static_assert(std::is_trivially_copyable_v<SeqNum>);

TEST(SeqNum, OlderComparesLessThanYounger) {
  EXPECT_LT(SeqNum{0}, SeqNum{1});
  EXPECT_LT(SeqNum{41}, SeqNum{42});
  EXPECT_GT(SeqNum{1000}, SeqNum{999});
  EXPECT_LE(SeqNum{7}, SeqNum{7});
  EXPECT_GE(SeqNum{7}, SeqNum{7});
  EXPECT_EQ(SeqNum{7}, SeqNum{7});
  EXPECT_NE(SeqNum{7}, SeqNum{8});
  // Unsigned order: the largest number (2^64 - 1) is younger than every other.
  EXPECT_LT(SeqNum{0x7fffffffffffffffu}, SeqNum{~std::uint64_t{0}});
  EXPECT_LT(SeqNum{0}, SeqNum{~std::uint64_t{0}});
  // A default-made one is the first instruction a cursor reads.
  EXPECT_EQ(SeqNum{}, SeqNum{0});
}

TEST(SeqNum, StepsOnInProgramOrder) {
  EXPECT_EQ(SeqNum{41}.next(), SeqNum{42});
  EXPECT_EQ(SeqNum{42}.prev(), SeqNum{41});
  EXPECT_EQ(SeqNum{10} + 5, SeqNum{15});
  SeqNum s{3};
  EXPECT_EQ(++s, SeqNum{4});
  EXPECT_EQ(s, SeqNum{4});
  EXPECT_EQ(--s, SeqNum{3});
  s += 100;
  EXPECT_EQ(s, SeqNum{103});
}

TEST(SeqNum, DifferenceIsTheCountBetween) {
  // [10, 15) holds instructions 10..14: five of them.
  EXPECT_EQ(SeqNum{15} - SeqNum{10}, 5u);
  EXPECT_EQ(SeqNum{10} - SeqNum{10}, 0u);
  // A ROB of 4 slots (mask 3): seq 6 sits in slot 2, seq 9 in slot 1.
  EXPECT_EQ(SeqNum{6}.value & 3u, 2u);
  EXPECT_EQ(SeqNum{9}.value & 3u, 1u);
}

}  // namespace
}  // namespace smtlab
