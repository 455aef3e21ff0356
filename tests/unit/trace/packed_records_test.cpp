#include "smtlab/trace/packed_records.hpp"

#include <random>

#include <gtest/gtest.h>

namespace smtlab {
namespace {

// Records with every field set at random, memory operands present or not in every slot (an absent one as a default
// MemRef; a few with only an address or only a size, which must survive too).
std::vector<Instr> randomRecords(std::size_t n) {
  std::mt19937_64 rng(7);
  auto pick = [&](std::uint64_t below) { return rng() % below; };
  std::vector<Instr> v(n);
  for (Instr& in : v) {
    in.pc = rng();
    in.target = pick(3) == 0 ? 0 : rng();
    in.markId = static_cast<std::uint32_t>(rng());
    in.op = static_cast<OpClass>(pick(static_cast<std::uint64_t>(OpClass::Mark) + 1));
    in.branch = static_cast<BranchKind>(pick(static_cast<std::uint64_t>(BranchKind::Other) + 1));
    in.taken = pick(2) != 0;
    in.microcoded = pick(2) != 0;
    in.uops = static_cast<std::uint8_t>(rng());
    for (RegId& r : in.src) r = static_cast<RegId>(rng());
    for (RegId& r : in.dst) r = static_cast<RegId>(rng());
    auto mem = [&](MemRef& m) {
      switch (pick(5)) {
        case 0: m = MemRef{rng(), static_cast<std::uint8_t>(1 + pick(64))}; break;
        case 1: m = MemRef{rng(), 0}; break;
        case 2: m = MemRef{0, 8}; break;
        default: break;  // absent
      }
    };
    for (MemRef& m : in.loads) mem(m);
    for (MemRef& m : in.stores) mem(m);
  }
  return v;
}

TEST(PackedRecords, EveryRecordComesBackExactly) {
  const std::vector<Instr> recs = randomRecords(5000);
  const PackedRecords packed(recs);
  ASSERT_EQ(packed.size(), recs.size());
  for (std::size_t i = 0; i < recs.size(); ++i) ASSERT_EQ(packed.get(i), recs[i]) << "record " << i;
  std::vector<Instr> middle(100);
  packed.copy(2000, middle);
  for (std::size_t i = 0; i < middle.size(); ++i) EXPECT_EQ(middle[i], recs[2000 + i]);
  EXPECT_EQ(packed.all(), recs);
}

TEST(PackedRecords, ARecordWithOneLoadTakesUnderHalfOfAnInstr) {
  // 40 bytes of fixed fields plus 8 + 1 for the load's address and size: 49 bytes, against sizeof(Instr) = 128.
  std::vector<Instr> recs(1000);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    recs[i].pc = 0xffffffff81000000 + 4 * i;
    recs[i].op = OpClass::Load;
    recs[i].loads[0] = MemRef{0xffff888000000000 + 8 * i, 8};
  }
  const PackedRecords packed(recs);
  EXPECT_EQ(packed.bytes(), recs.size() * 49);
  EXPECT_LT(packed.bytes(), recs.size() * sizeof(Instr) / 2);
  EXPECT_EQ(packed.all(), recs);
}

}  // namespace
}  // namespace smtlab
