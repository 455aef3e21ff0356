// Per-instruction statistics are architectural: counted when an instruction retires, so a trace detached and attached
// hundreds of times (every detach squashes what is in flight, which is fetched again later) gives exactly the counts
// one reads off its records. The expected numbers are counted here from the records themselves, not from a run.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

struct PaperCounts {
  std::uint64_t instructions = 0, branches = 0, loads = 0, stores = 0, marks = 0;
};

PaperCounts countRecords(const std::vector<Instr>& records) {
  PaperCounts c;
  for (const Instr& in : records) {
    ++c.instructions;
    c.branches += in.isBranch();
    c.loads += in.hasLoad();
    c.stores += in.hasStore();
    c.marks += in.op == OpClass::Mark;
  }
  return c;
}

// A hand-made trace: 6000 instructions, every 5th a branch whose direction follows a pattern the predictor cannot
// learn quickly, every 7th a load over 1 MiB, every 11th a store, a mark every 1000.
std::vector<Instr> madeTrace() {
  std::vector<Instr> v;
  std::uint64_t x = 12345;
  for (int i = 0; i < 6000; ++i) {
    const Addr pc = 0x400000 + 4 * static_cast<Addr>(i % 512);
    Instr in = op(OpClass::Int, pc, {1 + i % 6}, {1 + (i + 3) % 6});
    if (i % 1000 == 999) {
      in = op(OpClass::Mark, pc, {}, {});
      in.markId = static_cast<std::uint32_t>(i);
    } else if (i % 5 == 0) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      in = op(OpClass::Branch, pc, {}, {1});
      in.taken = (x >> 33) & 1;
      in.target = pc + 64;
    } else if (i % 7 == 0) {
      in = load(pc, 2, {3}, 0x10000000 + 64 * static_cast<Addr>((i * 37) % 16384));
    } else if (i % 11 == 0) {
      in = op(OpClass::Store, pc, {}, {2});
      in.stores[0] = MemRef{0x20000000 + 8 * static_cast<Addr>(i), 8};
    }
    v.push_back(in);
  }
  return v;
}

// Runs the records on CPU 0 of a two-thread core (gen:mix on CPU 1 competes), detaching and re-attaching them every
// 40..300 cycles until the trace ends; returns CPU 0's statistics.
json::object runWithSwitches(const std::vector<Instr>& records, std::uint64_t& detaches) {
  Config c = baseConfig(2);
  Machine m(c);
  m.setChecking(true);
  m.attach(LogicalCpu{1}, cursorFor("gen:mix,count=0,seed=4"), Asid{2});
  auto moving = cursorFor(records, "paper");
  bool ended = false;
  detaches = 0;
  for (std::uint32_t round = 0; !ended && round < 100000; ++round) {
    m.attach(LogicalCpu{0}, moving, Asid{1});
    moving.reset();
    const Cycle until{m.now().value + 40 + (round * 53) % 260};
    while (!ended && m.now() < until) {
      for (const Event& e : m.run(until)) ended |= e.kind == EventKind::SourceEnded && e.cpu.value == 0;
    }
    if (ended) break;
    moving = m.detach(LogicalCpu{0});
    ++detaches;
    m.run(Cycle{m.now().value + 17});  // CPU 0 idle for a moment, as between two tasks
  }
  EXPECT_TRUE(ended);
  return m.cpuStatsJson(LogicalCpu{0});
}

void expectPaperCounts(const std::vector<Instr>& records, const std::string& what) {
  const PaperCounts paper = countRecords(records);
  std::uint64_t detaches = 0;
  const json::object s = runWithSwitches(records, detaches);
  EXPECT_GT(detaches, 100u) << what;
  EXPECT_GT(u64(s.at("squashed")), 0u) << what << ": the switches should squash in-flight instructions";
  EXPECT_EQ(u64(s.at("instructions")), paper.instructions) << what;
  EXPECT_EQ(u64(s.at("branches")), paper.branches) << what;
  EXPECT_EQ(u64(s.at("loads")), paper.loads) << what;
  EXPECT_EQ(u64(s.at("stores")), paper.stores) << what;
  EXPECT_EQ(u64(s.at("marks")), paper.marks) << what;
  std::uint64_t byLevel = 0;
  for (const auto& [level, n] : s.at("loads_by_level").as_object()) byLevel += u64(n);
  EXPECT_EQ(byLevel, paper.loads) << what;
  // Each retired branch counts its last prediction once: at most one mispredict or BTB miss per branch.
  EXPECT_LE(u64(s.at("mispredicts")), paper.branches) << what;
  EXPECT_LE(u64(s.at("btb_misses")), paper.branches) << what;
  // The fetch side sees every incarnation: squashed branches were fetched again, so it counts more.
  EXPECT_GT(u64(s.at("fetched_branches")), paper.branches) << what;
  EXPECT_EQ(u64(s.at("fetched")), paper.instructions) << what << ": squashed fetches are taken back";
}

TEST(RetireStatistics, AMadeTraceSwitchedHundredsOfTimesGivesItsPaperCounts) {
  const auto records = madeTrace();
  const PaperCounts paper = countRecords(records);
  // On paper: 1200 branches (i % 5 == 0), marks at 999, 1999, ..., 5999 = 6.
  EXPECT_EQ(paper.branches, 1200u);
  EXPECT_EQ(paper.marks, 6u);
  expectPaperCounts(records, "made trace");
}

TEST(RetireStatistics, ARealProgramSwitchedHundredsOfTimesGivesItsCounts) {
  // The first 20000 instructions of the traced kernel:aim9_call0 (its generator look-alike without the tracer).
  auto source = openTrace("kernel:aim9_call0");
  const auto records = readAll(*source, 20000);
  ASSERT_EQ(records.size(), 20000u);
  EXPECT_GT(countRecords(records).branches, 1000u);
  expectPaperCounts(records, "kernel:aim9_call0");
}

}  // namespace
}  // namespace smtlab::test
