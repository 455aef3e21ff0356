#include "smtlab/trace/generators.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/vector_source.hpp"

namespace smtlab {
namespace {

std::vector<Instr> gen(const std::string& spec, std::uint64_t max = 0) {
  auto g = makeGenerator(spec);
  return readAll(*g, max);
}

// The registers some record writes.
std::set<RegId> writtenRegs(const std::vector<Instr>& v) {
  std::set<RegId> s;
  for (const Instr& in : v)
    for (RegId r : in.dst)
      if (r != kNoReg) s.insert(r);
  return s;
}

TEST(Generators, DeterministicBySeed) {
  for (const char* name : {"alu", "chain,op=load", "fp", "chase,footprint=64k,work=1", "stream,store_every=3",
                           "branchy", "spin,pause=1", "mix"}) {
    const std::string spec = std::string("gen:") + name + ",count=5000";
    EXPECT_EQ(gen(spec), gen(spec)) << spec;
    EXPECT_EQ(gen(spec + ",seed=1"), gen(spec)) << "seed defaults to 1: " << spec;
  }
  // Generators with randomness differ between seeds.
  for (const char* name : {"chain,op=load", "chase,footprint=64k", "branchy", "mix"}) {
    const std::string spec = std::string("gen:") + name + ",count=5000";
    EXPECT_NE(gen(spec + ",seed=1"), gen(spec + ",seed=2")) << spec;
  }
}

TEST(Generators, CountAndLength) {
  auto g = makeGenerator("gen:alu,count=1000");
  EXPECT_EQ(g->length(), std::optional<std::uint64_t>(1000));
  EXPECT_EQ(readAll(*g).size(), 1000u);
  Instr batch[10];
  EXPECT_EQ(g->read(batch), 0u);
  EXPECT_EQ(gen("gen:mix").size(), 1000000u);  // default count
  EXPECT_EQ(gen("gen:alu,count=2k").size(), 2000u);
  auto endless = makeGenerator("gen:branchy,count=0");
  EXPECT_FALSE(endless->length().has_value());
  EXPECT_EQ(readAll(*endless, 100000).size(), 100000u);
  EXPECT_EQ(endless->describe(), "gen:branchy,count=0");
}

TEST(Generators, RewindRepeatsTheSequence) {
  for (const char* spec : {"gen:mix,count=3000", "gen:chase,footprint=4k,work=2,count=3000", "gen:branchy,count=3000",
                           "gen:stream,store_every=2,footprint=1k,count=3000", "gen:spin,count=3000"}) {
    auto g = makeGenerator(spec);
    const std::vector<Instr> first = readAll(*g, 1234);  // stop mid-way, then rewind
    g->rewind();
    const std::vector<Instr> all = readAll(*g);
    ASSERT_EQ(all.size(), 3000u);
    EXPECT_EQ(std::vector<Instr>(all.begin(), all.begin() + 1234), first) << spec;
    g->rewind();
    EXPECT_EQ(readAll(*g), all) << spec;
  }
}

TEST(Generators, BodyLoopPcs) {
  const auto v = gen("gen:alu,count=300,body=100");
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].pc, 0x400000 + 4 * (i % 100));
}

TEST(Generators, AluHasNoDependencies) {
  const auto v = gen("gen:alu,count=1000");
  const auto written = writtenRegs(v);
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].op, OpClass::Int);
    EXPECT_EQ(v[i].dst[0], intReg(static_cast<int>(i % 16)));
    for (RegId r : v[i].src) EXPECT_TRUE(r == kNoReg || !written.count(r));
  }
}

TEST(Generators, FpAlternatesAndIsIndependent) {
  const auto v = gen("gen:fp,count=100");
  const auto written = writtenRegs(v);
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].op, i % 2 ? OpClass::FMul : OpClass::FAdd);
    EXPECT_EQ(v[i].dst[0], fpReg(static_cast<int>(i % 16)));
    for (RegId r : v[i].src) EXPECT_TRUE(r == kNoReg || !written.count(r));
  }
}

TEST(Generators, ChainSourceIsPreviousDestination) {
  const std::pair<const char*, OpClass> ops[] = {{"int", OpClass::Int},   {"imul", OpClass::IMul},
                                                 {"idiv", OpClass::IDiv}, {"fadd", OpClass::FAdd},
                                                 {"fmul", OpClass::FMul}, {"fdiv", OpClass::FDiv},
                                                 {"load", OpClass::Load}};
  for (const auto& [name, op] : ops) {
    const auto v = gen(std::string("gen:chain,count=200,op=") + name);
    const bool fp = op == OpClass::FAdd || op == OpClass::FMul || op == OpClass::FDiv;
    for (std::size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i].op, op);
      EXPECT_EQ(v[i].dst[0], fp ? fpReg(1) : intReg(1));
      EXPECT_EQ(v[i].src[0], v[i].dst[0]);
      EXPECT_EQ(v[i].src[1], kNoReg);
      if (i > 0) {
        EXPECT_EQ(v[i].src[0], v[i - 1].dst[0]);
      }
      EXPECT_EQ(v[i].hasLoad(), op == OpClass::Load);
    }
  }
}

// The addresses of the loads visit every line of the footprint once per cycle, then repeat the same cycle.
void expectLineCycle(const std::vector<Addr>& addrs, std::uint64_t footprint) {
  const std::size_t lines = footprint / 64;
  ASSERT_GE(addrs.size(), 2 * lines);
  std::set<Addr> seen;
  for (std::size_t i = 0; i < lines; ++i) {
    EXPECT_EQ(addrs[i] % 64, 0u);
    EXPECT_GE(addrs[i], kGenDataBase);
    EXPECT_LT(addrs[i], kGenDataBase + footprint);
    seen.insert(addrs[i]);
  }
  EXPECT_EQ(seen.size(), lines);
  for (std::size_t i = lines; i < addrs.size(); ++i) EXPECT_EQ(addrs[i], addrs[i - lines]);
  // Random, not sequential: successive lines are rarely neighbours.
  std::size_t sequential = 0;
  for (std::size_t i = 1; i < lines; ++i) sequential += addrs[i] == addrs[i - 1] + 64;
  EXPECT_LT(sequential, lines / 10);
}

TEST(Generators, ChainLoadWalksCyclicPermutation) {
  const auto v = gen("gen:chain,op=load,count=200");  // default footprint 4096: 64 lines
  std::vector<Addr> a;
  for (const Instr& in : v) a.push_back(in.loads[0].addr);
  expectLineCycle(a, 4096);
}

TEST(Generators, ChaseCoversFootprintWithWork) {
  const std::uint64_t footprint = 256 * 1024;  // 4096 lines
  const auto v = gen("gen:chase,footprint=256k,work=2,count=" + std::to_string(3 * 2 * 4096));
  std::vector<Addr> a;
  const auto written = writtenRegs(v);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i % 3 == 0) {
      ASSERT_EQ(v[i].op, OpClass::Load);
      EXPECT_EQ(v[i].dst[0], intReg(1));
      EXPECT_EQ(v[i].src[0], intReg(1));
      a.push_back(v[i].loads[0].addr);
    } else {
      ASSERT_EQ(v[i].op, OpClass::Int);
      EXPECT_NE(v[i].dst[0], intReg(1));
      EXPECT_FALSE(written.count(v[i].src[0]));
    }
  }
  expectLineCycle(a, footprint);
}

TEST(Generators, CyclicLineOrderIsOneCycle) {
  for (std::uint64_t n : {1u, 2u, 3u, 100u, 1000u}) {
    SplitMix64 rng(9);
    const auto order = cyclicLineOrder(n, rng);
    ASSERT_EQ(order.size(), n);
    EXPECT_EQ(order[0], 0u);
    EXPECT_EQ(std::set<std::uint32_t>(order.begin(), order.end()).size(), n);
  }
}

TEST(Generators, StreamIsSequentialAndWraps) {
  const auto v = gen("gen:stream,footprint=1k,count=300");
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].op, OpClass::Load);
    EXPECT_EQ(v[i].dst[0], intReg(static_cast<int>(i % 8)));
    EXPECT_EQ(v[i].loads[0].addr, kGenDataBase + (8 * i) % 1024);
  }
  const auto s = gen("gen:stream,footprint=1k,store_every=4,count=1000");
  std::uint64_t loads = 0, stores = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i % 4 == 3) {
      ASSERT_EQ(s[i].op, OpClass::Store);
      EXPECT_EQ(s[i].stores[0].addr, kGenDataBase + 1024 + (8 * stores) % 1024);
      ++stores;
    } else {
      ASSERT_EQ(s[i].op, OpClass::Load);
      EXPECT_EQ(s[i].loads[0].addr, kGenDataBase + (8 * loads) % 1024);
      ++loads;
    }
  }
}

double takenRate(const std::vector<Instr>& v, std::set<Addr>* branchPcs = nullptr) {
  std::uint64_t br = 0, taken = 0;
  for (const Instr& in : v) {
    if (in.op != OpClass::Branch) continue;
    ++br;
    taken += in.taken;
    EXPECT_EQ(in.target, in.pc + 64);
    if (branchPcs) branchPcs->insert(in.pc);
  }
  return static_cast<double>(taken) / static_cast<double>(br);
}

TEST(Generators, BranchyTakenRateFollowsPredictability) {
  std::set<Addr> pcs;
  // 40000 branches: the standard deviation of the rate is at most 0.0025.
  EXPECT_NEAR(takenRate(gen("gen:branchy,count=160000"), &pcs), 0.5, 0.015);
  EXPECT_EQ(pcs.size(), 16u);
  EXPECT_NEAR(takenRate(gen("gen:branchy,count=160000,predictability=0.8")), 0.8, 0.015);
  EXPECT_EQ(takenRate(gen("gen:branchy,count=4000,predictability=1")), 1.0);
  EXPECT_EQ(takenRate(gen("gen:branchy,count=4000,predictability=0")), 0.0);
  pcs.clear();
  const auto v = gen("gen:branchy,count=1000,work=1,branches=5", 0);
  takenRate(v, &pcs);
  EXPECT_EQ(pcs.size(), 5u);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].op, i % 2 ? OpClass::Branch : OpClass::Int);
}

TEST(Generators, SpinLoop) {
  const auto v = gen("gen:spin,pause=1,count=12");
  const OpClass ops[] = {OpClass::Pause, OpClass::Load, OpClass::Int, OpClass::Branch};
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].op, ops[i % 4]);
    EXPECT_EQ(v[i].pc, 0x400000 + 4 * (i % 4));
  }
  EXPECT_EQ(v[1].loads[0].addr, kGenDataBase);
  EXPECT_EQ(v[2].src[0], v[1].dst[0]);
  EXPECT_EQ(v[3].src[0], v[2].dst[0]);
  EXPECT_TRUE(v[3].taken);
  EXPECT_EQ(v[3].target, 0x400000u);
  const auto w = gen("gen:spin,count=6");
  EXPECT_EQ(w[0].op, OpClass::Load);
  EXPECT_EQ(w[2].op, OpClass::Branch);
  EXPECT_EQ(w[3].op, OpClass::Load);
}

TEST(Generators, MixFollowsItsParameters) {
  const auto v = gen("gen:mix,count=200000,fp=0.1");
  std::array<std::uint64_t, kOpClassCount> ops{};
  std::uint64_t mem = 0, hot = 0;
  // Distance counted in register-writing instructions, as docs/traces.md defines it.
  std::vector<std::uint64_t> writerOf(kArchRegs, ~0ull);
  std::uint64_t writers = 0, sources = 0, distSum = 0;
  for (const Instr& in : v) {
    ++ops[static_cast<int>(in.op)];
    for (const MemRef& m : {in.loads[0], in.stores[0]}) {
      if (!m.valid()) continue;
      ++mem;
      EXPECT_GE(m.addr, kGenDataBase);
      EXPECT_LT(m.addr, kGenDataBase + (1u << 20));
      hot += m.addr < kGenDataBase + 16 * 1024;
    }
    for (RegId r : in.src) {
      if (r == kNoReg || writerOf[r] == ~0ull) continue;
      ++sources;
      distSum += writers - writerOf[r];
    }
    if (in.dst[0] != kNoReg) {
      writerOf[in.dst[0]] = writers++;
    }
  }
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(ops[static_cast<int>(OpClass::Load)] / n, 0.25, 0.01);
  EXPECT_NEAR(ops[static_cast<int>(OpClass::Store)] / n, 0.10, 0.01);
  EXPECT_NEAR(ops[static_cast<int>(OpClass::Branch)] / n, 0.12, 0.01);
  EXPECT_NEAR(ops[static_cast<int>(OpClass::IMul)] / n, 0.02, 0.005);
  EXPECT_NEAR((ops[static_cast<int>(OpClass::FAdd)] + ops[static_cast<int>(OpClass::FMul)]) / n, 0.10, 0.01);
  EXPECT_NEAR(ops[static_cast<int>(OpClass::Int)] / n, 0.41, 0.01);
  EXPECT_NEAR(static_cast<double>(hot) / static_cast<double>(mem), 0.9, 0.01);
  // Geometric with mean 4 truncated at 31: the mean is 4 * (1 - 0.75^31) ~= 3.99.
  EXPECT_NEAR(static_cast<double>(distSum) / static_cast<double>(sources), 3.99, 0.05);
  std::vector<Instr> branches;
  for (const Instr& in : v)
    if (in.op == OpClass::Branch) branches.push_back(in);
  EXPECT_NEAR(takenRate(branches), 0.95, 0.01);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].pc, 0x400000 + 4 * (i % 256));
}

TEST(Generators, MixDependencyDistanceOne) {
  // dep=1: every source reads the register of the latest register-writing instruction.
  const auto v = gen("gen:mix,count=2000,dep=1");
  RegId last = kNoReg;
  for (const Instr& in : v) {
    for (RegId r : in.src)
      if (r != kNoReg && last != kNoReg) {
        EXPECT_EQ(r, last);
      }
    if (in.dst[0] != kNoReg) last = in.dst[0];
  }
}

void expectSpecError(const std::string& spec, const std::vector<std::string>& parts) {
  try {
    makeGenerator(spec);
    FAIL() << "no error for " << spec;
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(spec), std::string::npos) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
}

TEST(Generators, SpecErrorsNameKeyAndSpec) {
  expectSpecError("gen:nosuch", {"unknown generator 'nosuch'"});
  expectSpecError("gen:", {"missing generator name"});
  expectSpecError("gen:alu,foo=1", {"unknown key 'foo'"});
  expectSpecError("gen:alu,work=1", {"unknown key 'work'"});
  expectSpecError("gen:spin,body=4", {"unknown key 'body'"});
  expectSpecError("gen:alu,count=abc", {"'count'", "abc"});
  expectSpecError("gen:alu,seed=", {"'seed'", "missing value"});
  expectSpecError("gen:alu,seed=1,seed=2", {"duplicate key 'seed'"});
  expectSpecError("gen:alu,count", {"not key=value"});
  expectSpecError("gen:chain,op=fsqrt", {"'op'", "fsqrt"});
  expectSpecError("gen:chase,footprint=100", {"'footprint'", "multiple of the 64-byte line"});
  expectSpecError("gen:chase,footprint=8g", {"'footprint'", "out of range"});
  expectSpecError("gen:branchy,predictability=1.5", {"'predictability'", "out of range"});
  expectSpecError("gen:branchy,branches=0", {"'branches'", "out of range"});
  expectSpecError("gen:spin,pause=2", {"'pause'"});
  expectSpecError("gen:mix,load=0.6,store=0.5", {"exceed 1"});
  expectSpecError("gen:mix,dep=0.5", {"'dep'"});
  expectSpecError("gen:mix,footprint=64k,hot_kb=128", {"'hot_kb'"});
}

TEST(Generators, SizeSuffixes) {
  EXPECT_EQ(gen("gen:chase,footprint=64k,count=100"), gen("gen:chase,footprint=65536,count=100"));
  EXPECT_EQ(gen("gen:stream,footprint=1M,count=100"), gen("gen:stream,footprint=1048576,count=100"));
}

}  // namespace
}  // namespace smtlab
