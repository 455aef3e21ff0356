// The MLP distance predictor of MLP-aware fetch (Eyerman & Eeckhout 2007): distances worked out by hand from the
// definition. A long-latency load's distance is the youngest long-latency load within a window of W instructions
// starting at it, minus its own position; it is written when the instruction W younger retires.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "smtlab/common/state_io.hpp"
#include "smtlab/core/mlp_predictor.hpp"

namespace smtlab {
namespace {

// Three PCs in three entries of a 64-entry table (the index is the low bits of pc ^ pc >> 13).
constexpr Addr kMlpPcA = 0x401004, kMlpPcB = 0x401008, kMlpPcC = 0x40100c;

// Retires instructions [from, to) of thread t: the ones listed in `loads` (seq -> pc) are long-latency loads.
void retireSpan(MlpPredictor& p, std::uint32_t t, std::uint64_t from, std::uint64_t to,
            const std::vector<std::pair<std::uint64_t, Addr>>& loads) {
  for (std::uint64_t s = from; s < to; ++s) {
    Addr pc = 0x500000 + 4 * s;
    bool ll = false;
    for (const auto& [seq, at] : loads) {
      if (seq == s) {
        pc = at;
        ll = true;
      }
    }
    p.retired(t, SeqNum{s}, pc, ll);
  }
}

TEST(MlpPredictor, AnUntrainedLoadPredictsNoParallelism) {
  MlpPredictor p(64, {8});
  EXPECT_EQ(p.predict(kMlpPcA), 0u);
}

TEST(MlpPredictor, EachLoadGetsTheDistanceToTheYoungestMissInItsWindow) {
  // Window 8; misses at 0 (A), 3 (B), 5 (C). Window of 0 is [0, 7]: youngest miss 5, distance 5. Window of 3 is
  // [3, 10]: 5, distance 2. Window of 5 is [5, 12]: only itself, 0.
  MlpPredictor p(64, {8});
  const std::vector<std::pair<std::uint64_t, Addr>> loads{{0, kMlpPcA}, {3, kMlpPcB}, {5, kMlpPcC}};
  retireSpan(p, 0, 0, 8, loads);  // seq 7 retired: no window has closed yet
  EXPECT_EQ(p.predict(kMlpPcA), 0u);
  retireSpan(p, 0, 8, 9, loads);  // seq 8 closes the window of 0
  EXPECT_EQ(p.predict(kMlpPcA), 5u);
  EXPECT_EQ(p.predict(kMlpPcB), 0u);
  retireSpan(p, 0, 9, 13, loads);  // seq 11 closes 3's, seq 12 not yet 5's
  EXPECT_EQ(p.predict(kMlpPcB), 2u);
  retireSpan(p, 0, 13, 14, loads);
  EXPECT_EQ(p.predict(kMlpPcC), 0u);
}

TEST(MlpPredictor, AMissExactlyAWindowYoungerIsOutsideIt) {
  // Window 8: a miss at 8 is the ninth instruction from 0, outside [0, 7]; one at 7 is inside.
  MlpPredictor p(64, {8});
  retireSpan(p, 0, 0, 20, {{0, kMlpPcA}, {8, kMlpPcB}});
  EXPECT_EQ(p.predict(kMlpPcA), 0u);
  MlpPredictor q(64, {8});
  retireSpan(q, 0, 0, 20, {{0, kMlpPcA}, {7, kMlpPcB}});
  EXPECT_EQ(q.predict(kMlpPcA), 7u);
}

TEST(MlpPredictor, ADependentChainReadsAsParallelismAsThePapersRegisterDoes) {
  // Every fourth instruction a miss (a pointer chase with three ints between loads), window 16: the window of a load
  // at 4k holds the misses 4k + 4, 4k + 8 and 4k + 12, so its distance is 12 whether or not they overlapped.
  MlpPredictor p(64, {16});
  std::vector<std::pair<std::uint64_t, Addr>> loads;
  for (std::uint64_t s = 0; s < 64; s += 4) loads.emplace_back(s, kMlpPcA);
  retireSpan(p, 0, 0, 64, loads);
  EXPECT_EQ(p.predict(kMlpPcA), 12u);
}

TEST(MlpPredictor, ThreadsKeepTheirOwnWindowsAndShareTheTable) {
  // Thread 0 (window 8) and thread 1 (window 4) retire interleaved; thread 1's miss at 2 must not count in thread 0's
  // window. Thread 0: misses at 0 (A) and 6 (B) -> A's distance 6. Thread 1: misses at 0 (C) and 2 -> C's 2; then its
  // miss at 10 of PC A (window [10, 13], alone) writes A's shared entry with 0.
  MlpPredictor p(64, {8, 4});
  for (std::uint64_t s = 0; s < 9; ++s) {
    p.retired(0, SeqNum{s}, s == 0 ? kMlpPcA : (s == 6 ? kMlpPcB : 0x600000 + s), s == 0 || s == 6);
    p.retired(1, SeqNum{s}, s == 0 ? kMlpPcC : 0x700000 + s, s == 0 || s == 2);
  }
  EXPECT_EQ(p.predict(kMlpPcA), 6u);
  EXPECT_EQ(p.predict(kMlpPcC), 2u);
  retireSpan(p, 1, 9, 15, {{10, kMlpPcA}});
  EXPECT_EQ(p.predict(kMlpPcA), 0u);
}

TEST(MlpPredictor, ABoundThreadStartsWithAnEmptyRegister) {
  // A miss pending when the trace is attached again (a restart) never gets a distance from the new trace's misses.
  MlpPredictor p(64, {8});
  retireSpan(p, 0, 0, 3, {{0, kMlpPcA}});
  p.threadBound(0);
  retireSpan(p, 0, 3, 30, {{4, kMlpPcB}, {6, kMlpPcC}});
  EXPECT_EQ(p.predict(kMlpPcA), 0u);
  EXPECT_EQ(p.predict(kMlpPcB), 2u);
}

TEST(MlpPredictor, ASnapshotRestoresTheTableAndThePendingMisses) {
  MlpPredictor a(64, {8});
  retireSpan(a, 0, 0, 12, {{0, kMlpPcA}, {5, kMlpPcB}, {9, kMlpPcC}});  // A closed (5); B and C pending
  StateIo out;
  a.visitState(out);
  MlpPredictor b(64, {8});
  StateIo in(out.bytes(), "test");
  b.visitState(in);
  in.expectEnd();
  EXPECT_EQ(b.predict(kMlpPcA), 5u);
  retireSpan(b, 0, 12, 20, {});
  EXPECT_EQ(b.predict(kMlpPcB), 4u);  // window [5, 12] holds 9
  EXPECT_EQ(b.predict(kMlpPcC), 0u);
}

}  // namespace
}  // namespace smtlab
