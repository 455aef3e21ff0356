// Memory-ordering machine clears between the logical CPUs of a core (core.lsu.sibling_order_clears): a store of one
// thread that writes the L1D clears a sibling that has issued a load of the same physical line while an older load
// of its own still waits for its data. Each expected count is derived on paper in its test.
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

constexpr Addr kFar = 0x4000000;     // a line nobody touched: its load goes to DRAM (200 cycles and more)
constexpr Addr kShared = 0x80000;    // the line both threads use
constexpr Addr kOther = 0x80040;     // the next line
constexpr Addr kKernelShared = 0xffff'8880'0100'0000ULL;  // a kernel-half line: one line in every address space

Instr storeTo(Addr pc, Addr addr) {
  Instr in = op(OpClass::Store, pc, {}, {});
  in.stores[0] = MemRef{addr, 8};
  return in;
}

// Reader: a load of a far line (older, pending for the DRAM latency), a load of `shared` (no dependence: it issues
// right after rename and has its data long before the far load), then 40 integer ops. farFirst = false puts the
// shared load first: it is then the oldest load, which x86's ordering lets read whenever it likes.
std::vector<Instr> reader(Addr shared, bool farFirst = true) {
  std::vector<Instr> out;
  const Instr far = load(0x400000, 1, {}, kFar);
  const Instr near = load(0x400004, 2, {}, shared);
  out.push_back(farFirst ? far : near);
  out.push_back(farFirst ? near : far);
  for (int i = 0; i < 40; ++i) out.push_back(op(OpClass::Int, 0x400010 + 4 * Addr(i), {3}, {3}));
  return out;
}

struct Sibling {
  std::uint64_t readerClears;
  std::uint64_t writerClears;
  std::uint64_t readerRetired;
  std::uint64_t readerSquashed;
};

// The reader on logical CPU 0, a writer of one store to `written` on CPU 1, in address spaces asidReader and
// asidWriter. The store retires within a few tens of cycles and writes the L1D right after (store buffer, an idle
// drain); the reader's far load is still waiting for DRAM then.
Sibling run(bool on, Addr readLine, Addr written, Asid asidReader = Asid{1}, Asid asidWriter = Asid{1},
            bool farFirst = true) {
  Config c = baseConfig(2);
  c.core.lsu.store_buffer = true;
  c.core.lsu.sibling_order_clears = on;
  Machine m(c);
  m.setChecking(true);
  const std::vector<Instr> r = reader(readLine, farFirst);
  m.attach(LogicalCpu{0}, cursorFor(r), asidReader);
  m.attach(LogicalCpu{1}, cursorFor(std::vector<Instr>{storeTo(0x500000, written)}), asidWriter);
  runToEnd(m);
  const json::object stats = m.statsJson();
  auto clears = [&](std::size_t cpu) {
    return u64(cpuStats(stats, cpu).at("lsu").as_object().at("sibling_order_clears"));
  };
  return {clears(0), clears(1), u64(cpuStats(stats, 0).at("instructions")), u64(cpuStats(stats, 0).at("squashed"))};
}

TEST(SiblingOrder, AStoreToALineTheSiblingReadOutOfOrderClearsItOnce) {
  // When the store writes the L1D the reader's shared load has issued, its far load has not got its data: one clear,
  // which restarts the reader at the far load (its oldest unretired instruction). The refetched shared load issues
  // again; no second store comes, so one clear in all. The writer has no loads: never cleared. Every instruction of
  // the reader retires once (42), and the clear squashed what had been fetched after the restart point (> 0).
  const Sibling s = run(true, kShared, kShared);
  EXPECT_EQ(s.readerClears, 1u);
  EXPECT_EQ(s.writerClears, 0u);
  EXPECT_EQ(s.readerRetired, 42u);
  EXPECT_GT(s.readerSquashed, 0u);
  // Switched off (the default), the same run clears nothing and squashes nothing.
  const Sibling off = run(false, kShared, kShared);
  EXPECT_EQ(off.readerClears, 0u);
  EXPECT_EQ(off.readerSquashed, 0u);
  EXPECT_EQ(off.readerRetired, 42u);
}

TEST(SiblingOrder, OnlyTheSameLineInTheSameMemoryClears) {
  // A store to the next line: no load of the reader reads it, no clear.
  EXPECT_EQ(run(true, kShared, kOther).readerClears, 0u);
  // One user address in two address spaces is two physical lines (address_space.hpp): no clear.
  EXPECT_EQ(run(true, kShared, kShared, Asid{1}, Asid{2}).readerClears, 0u);
  // A kernel-half address is one line in every address space: the clear of the first test.
  EXPECT_EQ(run(true, kKernelShared, kKernelShared, Asid{1}, Asid{2}).readerClears, 1u);
}

TEST(SiblingOrder, TheOldestPendingLoadIsNeverCleared) {
  // The shared load first: no older load of the reader is pending when the store writes, so its early read cannot be
  // seen out of order (x86 orders a thread's loads), and nothing is cleared. This is also what guarantees progress:
  // a thread's oldest pending load always completes.
  EXPECT_EQ(run(true, kShared, kShared, Asid{1}, Asid{1}, false).readerClears, 0u);
}

}  // namespace
}  // namespace smtlab::test
