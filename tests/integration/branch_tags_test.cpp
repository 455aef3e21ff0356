// NetBurst's global history array is shared with entries tagged with a logical processor id
// (core.branch.pht_thread_tagged): two threads running the same code each need their own entries, and a thread that
// finds its sibling's entry is predicted statically. Expected counts are derived on paper in each test.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

// `iterations` of a loop: three independent ALU ops, a forward conditional branch that is always taken (to +0x40),
// one ALU op at its target, and a direct jump back. With history_bits = 0 the pattern table is indexed by the PC
// alone, so every sighting of the branch, by either thread, uses one entry.
std::vector<Instr> forwardBranchLoop(std::uint32_t iterations) {
  std::vector<Instr> out;
  for (std::uint32_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < 3; ++k) out.push_back(opAt(0x400000 + 4 * k, OpClass::Int, 1 + k, -1));
    Instr br = opAt(0x40000c, OpClass::Branch, -1, -1);
    br.taken = true;
    br.target = 0x40004c;
    out.push_back(br);
    out.push_back(opAt(0x40004c, OpClass::Int, 4, -1));
    Instr back = opAt(0x400050, OpClass::Jump, -1, -1);
    back.taken = true;
    back.target = 0x400000;
    out.push_back(back);
  }
  return out;
}

Config tagConfig(std::uint32_t threads, bool tagged, std::uint32_t ways = 1) {
  Config c = baseConfig(threads);
  c.core.branch.pht_assoc = ways;
  c.core.wrong_path = false;  // fetch simply stops at a mispredict: the count below does not depend on the path
  c.core.branch.history_bits = 0;
  c.core.branch.pht_thread_tagged = tagged;
  return c;
}

// Retired mispredicts of each logical CPU, every one running the loop in its own address space.
std::vector<std::uint64_t> mispredicts(const Config& c, std::uint32_t iterations) {
  Machine m(c);
  m.setChecking(true);
  for (std::uint32_t t = 0; t < c.core.threads; ++t) {
    m.attach(LogicalCpu{t}, cursorFor(forwardBranchLoop(iterations)), Asid{t + 1});
  }
  runToEnd(m);
  const json::object stats = m.statsJson();
  std::vector<std::uint64_t> out;
  for (std::uint32_t t = 0; t < c.core.threads; ++t) out.push_back(u64(cpuStats(stats, t).at("mispredicts")));
  return out;
}

TEST(BranchTags, TwoThreadsOnOneForwardBranchMispredictAtEverySightingInSteadyState) {
  // Untagged, the counter starts weakly taken and the branch is always taken: no sighting is wrong, whoever trained
  // the entry. Tagged: a sighting that finds the sibling's entry is predicted statically, forward = not taken:
  // wrong. A thread that guessed wrong waits for the branch to resolve (the front-end depth, issue and the
  // mispredict penalty: tens of cycles) while its sibling, which fetches every other cycle, sights the branch
  // within a few cycles and takes the entry back, and is then waiting in turn. So the sightings alternate and every
  // one mispredicts. The first few iterations run on cold caches (the code's first lines come from memory), where a
  // thread can sight the branch twice in a row; steady state is measured as the difference between runs of 2n and
  // n iterations: every one of the n extra sightings per thread mispredicts.
  constexpr std::uint32_t n = 200;
  for (const std::uint64_t m : mispredicts(tagConfig(2, false), 2 * n)) EXPECT_EQ(m, 0u);
  const std::vector<std::uint64_t> shortRun = mispredicts(tagConfig(2, true), n);
  const std::vector<std::uint64_t> longRun = mispredicts(tagConfig(2, true), 2 * n);
  for (std::uint32_t t = 0; t < 2; ++t) EXPECT_EQ(longRun[t] - shortRun[t], n) << "thread " << t;
}

TEST(BranchTags, WithTwoWaysEachThreadKeepsItsOwnEntryAndNeverMispredicts) {
  // core.branch.pht_assoc = 2: the branch's index has a set of two ways. The first thread to sight it takes one
  // untrained way (weakly taken: right), the second takes the other, and from then on each finds its own entry,
  // trained taken. No sighting is predicted statically, so there are no mispredicts at all, as without tags.
  for (const std::uint64_t m : mispredicts(tagConfig(2, true, 2), 400)) EXPECT_EQ(m, 0u);
}

TEST(BranchTags, ALoneThreadRunsExactlyAsWithoutTags) {
  // Invariant: an entry no sibling has trained is the thread's own.
  constexpr std::uint32_t n = 200;
  EXPECT_EQ(mispredicts(tagConfig(1, true), n), mispredicts(tagConfig(1, false), n));
  EXPECT_EQ(endCycleAlone(tagConfig(1, true), forwardBranchLoop(n)),
            endCycleAlone(tagConfig(1, false), forwardBranchLoop(n)));
  EXPECT_EQ(endCycleAlone(tagConfig(1, true, 4), forwardBranchLoop(n)),
            endCycleAlone(tagConfig(1, false), forwardBranchLoop(n)));
}

}  // namespace
}  // namespace smtlab::test
