// GeneratorOptions::max_cycle_lines (the source_spec fuzz target's cap on the permutation generators' set-up cost).
#include <gtest/gtest.h>

#include <set>

#include "smtlab/common/error.hpp"
#include "smtlab/trace/generators.hpp"
#include "smtlab/trace/vector_source.hpp"

namespace smtlab {
namespace {

std::set<Addr> loadLines(const std::string& spec, const GeneratorOptions& options, std::uint64_t n) {
  auto g = makeGenerator(spec, options);
  std::set<Addr> lines;
  for (const Instr& in : readAll(*g, n)) {
    if (in.loads[0].size > 0) lines.insert(in.loads[0].addr / 64);
  }
  return lines;
}

// A 1 MiB chase has 16384 lines; with the cap at 64 the walk is one cycle over 64 lines, so 1000 loads (more than
// 64) touch exactly 64 distinct lines, the first 64 of the footprint (kGenDataBase onwards). Without the cap, 1000
// loads of a single-cycle walk over 16384 lines touch 1000 distinct lines.
TEST(GeneratorOptions, CapLimitsTheWalkToThatManyLines) {
  const std::string spec = "gen:chase,footprint=1m,count=1000";
  const std::set<Addr> capped = loadLines(spec, {.max_cycle_lines = 64}, 0);
  ASSERT_EQ(capped.size(), 64u);
  EXPECT_EQ(*capped.begin(), kGenDataBase / 64);
  EXPECT_EQ(*capped.rbegin(), kGenDataBase / 64 + 63);
  EXPECT_EQ(loadLines(spec, {}, 0).size(), 1000u);
}

// Within the cap nothing changes: the same records as without options.
TEST(GeneratorOptions, FootprintWithinTheCapGivesTheSameStream) {
  for (const char* spec : {"gen:chase,footprint=4k,work=1,count=500", "gen:chain,op=load,footprint=8k,count=500"}) {
    auto a = makeGenerator(spec);
    auto b = makeGenerator(spec, {.max_cycle_lines = 128});
    EXPECT_EQ(readAll(*a, 0), readAll(*b, 0)) << spec;
  }
}

// The parser sees the spec unchanged: a bad footprint is still refused with the cap set.
TEST(GeneratorOptions, CapDoesNotChangeWhatIsRefused) {
  EXPECT_THROW(makeGenerator("gen:chase,footprint=100", {.max_cycle_lines = 64}), TraceError);
  EXPECT_THROW(makeGenerator("gen:chase,footprint=8g", {.max_cycle_lines = 64}), TraceError);
}

}  // namespace
}  // namespace smtlab
