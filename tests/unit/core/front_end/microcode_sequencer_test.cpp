// The microcode sequencer: a microcoded instruction holds its own thread's fetch/decode slot for
// ceil(uops / fetch_width) cycles, and a sibling takes the slot meanwhile; or, with core.microcode_shares_fetch, it
// needs that many of the fetch slots the policy hands out, so a sibling and the sequence alternate.
#include <gtest/gtest.h>

#include "front_end_bench.hpp"
#include "../stage_test_util.hpp"
#include "smtlab/core/front_end.hpp"

namespace smtlab::test {
namespace {

Config sequencerConfig(std::uint32_t threads) {
  Config c = stageConfig(threads);
  c.core.fetch_width = 4;
  c.core.frontend_depth = 5;
  c.core.fetch_policy = FetchPolicy::RoundRobin;
  c.mem.l1i.latency = 1;
  c.mem.next_line_prefetch = false;
  c.core.fu.int_div.uops = 10;  // > 4: a microcode sequence
  return c;
}

std::vector<Instr> divThenInts() {
  std::vector<Instr> t{instr(OpClass::IDiv, {1}, {2})};
  for (int i = 0; i < 12; ++i) t.push_back(instr(OpClass::Int, {3}));
  return t;
}

TEST(MicrocodeSequencer, AMicrocodedDivideBlocksItsOwnThreadsDecode) {
  // One thread, fetch_width 4. The divide (10 uops) is fetched at cycle f and holds the thread's slot for
  // ceil(10 / 4) = 3 cycles: nothing more is fetched at f, f+1, f+2; at f+3 the next 4 ints come.
  FrontEndBench b(sequencerConfig(1));
  b.h.attach(0, divThenInts());
  std::uint64_t f = 0;
  while (b.h.threads[0].cursor->fetchSeq().value == 0 && f < 10000) b.front.fetch(Cycle{++f});
  ASSERT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);  // the divide alone
  b.front.fetch(Cycle{f + 1});
  b.front.fetch(Cycle{f + 2});
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  b.front.fetch(Cycle{f + 3});
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 5u);
}

TEST(MicrocodeSequencer, TheRecordedUopCountSetsTheHoldAndANonMicrocodedRecordHasNone) {
  // Instr::uops / microcoded from the trace override the preset: 20 recorded uops hold ceil(20 / 4) = 5 cycles; the
  // same divide recorded as 2 plain uops holds none (the next 4 come at f+1).
  for (const bool microcoded : {true, false}) {
    FrontEndBench b(sequencerConfig(1));
    auto t = divThenInts();
    t[0].uops = microcoded ? 20 : 2;
    t[0].microcoded = microcoded;
    b.h.attach(0, t);
    std::uint64_t f = 0;
    while (b.h.threads[0].cursor->fetchSeq().value == 0 && f < 10000) b.front.fetch(Cycle{++f});
    const std::uint64_t firstFetch = b.h.threads[0].cursor->fetchSeq().value;
    std::uint64_t next = f;
    while (b.h.threads[0].cursor->fetchSeq().value == firstFetch && next < f + 100) b.front.fetch(Cycle{++next});
    if (microcoded) {
      EXPECT_EQ(firstFetch, 1u);
      EXPECT_EQ(next - f, 5u);
    } else {
      EXPECT_EQ(firstFetch, 4u);  // the divide and 3 ints in one fetch
      EXPECT_EQ(next - f, 1u);
    }
  }
}

TEST(MicrocodeSequencer, TheSiblingTakesTheSlotWhileTheSequencerDelivers) {
  // Two threads, round robin. Thread 1 (ints only) starts first and warms its code line; thread 0 is attached later.
  // Once thread 0 has fetched its divide at cycle f it is held for ceil(10 / 4) = 3 cycles, and thread 1 fetches 4
  // ints at each of f+1 and f+2 (the slot is not wasted); thread 0 fetches again at f+3.
  Config c = sequencerConfig(2);
  c.core.uop_queue.entries = 8192;  // delivery never backs up into the front-end pipe in this test
  FrontEndBench b(c);
  b.h.attach(1, std::vector<Instr>(4000, instr(OpClass::Int, {4})));
  std::uint64_t now = 0;
  auto tick = [&] {
    ++now;
    b.front.fetch(Cycle{now});
    b.front.deliver(Cycle{now});
  };
  while (b.h.threads[1].cursor->fetchSeq().value == 0 && now < 10000) tick();
  b.h.attach(0, divThenInts(), Cycle{now});
  while (b.h.threads[0].cursor->fetchSeq().value == 0 && now < 10000) tick();
  ASSERT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  const std::uint64_t before = b.h.threads[1].cursor->fetchSeq().value;
  tick();
  tick();
  EXPECT_EQ(b.h.threads[1].cursor->fetchSeq().value - before, 8u);
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  tick();
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 5u);
}

TEST(MicrocodeSequencer, SharingTheFetchSlotAloneTakesTheSameCycles) {
  // core.microcode_shares_fetch with one thread: it wins every slot, so the divide's ceil(10 / 4) = 3 slots are f,
  // f+1, f+2 as with the hold, and the next 4 ints come at f+3.
  Config c = sequencerConfig(1);
  c.core.microcode_shares_fetch = true;
  FrontEndBench b(c);
  b.h.attach(0, divThenInts());
  std::uint64_t f = 0;
  while (b.h.threads[0].cursor->fetchSeq().value == 0 && f < 10000) b.front.fetch(Cycle{++f});
  ASSERT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  b.front.fetch(Cycle{f + 1});
  b.front.fetch(Cycle{f + 2});
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  b.front.fetch(Cycle{f + 3});
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 5u);
}

TEST(MicrocodeSequencer, SharingTheFetchSlotTheSequenceAndTheSiblingAlternate) {
  // As TheSiblingTakesTheSlotWhileTheSequencerDelivers, with core.microcode_shares_fetch. Round robin hands the slot
  // to thread 1 at f+1, to thread 0's sequence at f+2 (its 2nd of 3 slots), thread 1 at f+3, the sequence's 3rd slot
  // at f+4, thread 1 at f+5; thread 0 fetches the next 4 ints at f+6. Thread 1 got 3 slots of 4 ints in f+1..f+5,
  // and the divide took 2 x 3 - 1 = 5 cycles of the front end instead of 3.
  Config c = sequencerConfig(2);
  c.core.uop_queue.entries = 8192;
  c.core.microcode_shares_fetch = true;
  FrontEndBench b(c);
  b.h.attach(1, std::vector<Instr>(4000, instr(OpClass::Int, {4})));
  std::uint64_t now = 0;
  auto tick = [&] {
    ++now;
    b.front.fetch(Cycle{now});
    b.front.deliver(Cycle{now});
  };
  while (b.h.threads[1].cursor->fetchSeq().value == 0 && now < 10000) tick();
  b.h.attach(0, divThenInts(), Cycle{now});
  while (b.h.threads[0].cursor->fetchSeq().value == 0 && now < 10000) tick();
  ASSERT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  const std::uint64_t before = b.h.threads[1].cursor->fetchSeq().value;
  for (int i = 0; i < 5; ++i) tick();
  EXPECT_EQ(b.h.threads[1].cursor->fetchSeq().value - before, 12u);
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 1u);
  tick();
  EXPECT_EQ(b.h.threads[0].cursor->fetchSeq().value, 5u);
}

}  // namespace
}  // namespace smtlab::test
