// One table per enum (enum_table.hpp; CONTRIBUTING.md, "An enum value"): every list derived from a table (names, the
// parser, the JSON statistics, port strings, key docs, the policy factories, the docs pages) holds every value of the
// enum. Each check fails when a value is missing from a derived list, or when a derived list is edited back into a
// hand-kept copy that drifts.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "smtlab/core/core_event.hpp"
#include "smtlab/core/core_stats.hpp"
#include "smtlab/core/allocation_policy.hpp"
#include "smtlab/core/fetch_policy.hpp"
#include "smtlab/core/fu_kind.hpp"

namespace smtlab::test {
namespace {

std::string readDoc(const std::string& name) {
  std::ifstream in(std::string(SMTLAB_SOURCE_DIR) + "/docs/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The part of `text` from the line holding `heading` up to the next "#" heading.
std::string section(const std::string& text, const std::string& heading) {
  const auto start = text.find(heading);
  if (start == std::string::npos) return {};
  const auto end = text.find("\n#", start + heading.size());
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string docOf(const std::string& key) {
  for (const ParamInfo& p : describeConfig(Config{})) {
    if (p.key == key) return p.doc;
  }
  return {};
}

std::string typeOf(const std::string& key) {
  for (const ParamInfo& p : describeConfig(Config{})) {
    if (p.key == key) return p.type;
  }
  return {};
}

// Names are unique, non-empty snake_case words, each with a doc: they are config values and JSON keys.
template <class Table>
void expectWellFormed(const Table& table) {
  std::set<std::string_view> seen;
  for (const auto& row : table) {
    EXPECT_FALSE(row.name.empty());
    EXPECT_EQ(row.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string_view::npos) << row.name;
    EXPECT_FALSE(row.doc.empty()) << row.name;
    EXPECT_TRUE(seen.insert(row.name).second) << "duplicate name " << row.name;
  }
}

TEST(EnumTables, CpiCausesRoundTripAndAllAppearInTheJsonStatistics) {
  expectWellFormed(kCpiCauseTable);
  ASSERT_EQ(kCpiCauses, 20);  // the causes of docs/model.md "The CPI stack", counted by hand: update both together
  for (int c = 0; c < kCpiCauses; ++c) {
    const auto cause = static_cast<CpiCause>(c);
    EXPECT_EQ(cpiCauseFromName(cpiCauseName(cause)), cause) << cpiCauseName(cause);
  }
  EXPECT_FALSE(cpiCauseFromName("no_such_cause").has_value());
  // The load causes are indexed by memory level (core.cpp: MemL1 + level): the table must keep that order.
  EXPECT_EQ(cpiCauseName(static_cast<CpiCause>(static_cast<int>(CpiCause::MemL1) + static_cast<int>(MemLevel::Dram))),
            "mem_dram");

  // A real run: both stacks carry exactly the table's causes, and the cycles add up to the thread's cycles (every
  // cycle is charged to exactly one cause, so a cause missing from the JSON would leave a gap).
  const auto stats = runCounted(baseConfig(2), {"gen:mix,count=0", "gen:branchy,count=0"}, 20000);
  for (std::size_t cpu = 0; cpu < 2; ++cpu) {
    const auto& s = cpuStats(stats, cpu);
    for (const char* stack : {"cpi_stack", "cpi_stack_cycles"}) {
      const auto& o = s.at(stack).as_object();
      EXPECT_EQ(o.size(), kCpiCauseTable.size()) << stack;
      for (const auto& row : kCpiCauseTable) EXPECT_TRUE(o.contains(row.name)) << stack << " lacks " << row.name;
    }
    std::uint64_t sum = 0;
    for (const auto& kv : s.at("cpi_stack_cycles").as_object()) sum += u64(kv.value());
    EXPECT_EQ(sum, u64(s.at("cycles")));
  }
}

TEST(EnumTables, EveryCpiCauseIsDocumentedInModelMd) {
  const std::string stack = section(readDoc("model.md"), "### The CPI stack");
  ASSERT_FALSE(stack.empty()) << "docs/model.md lost its section \"### The CPI stack\"";
  for (const auto& row : kCpiCauseTable) {
    EXPECT_NE(stack.find(fmt::format("| `{}` |", row.name)), std::string::npos)
        << "docs/model.md \"The CPI stack\" has no row for " << row.name;
  }
}

TEST(EnumTables, EventKindsRoundTripAndTheMachinePassesThemOn) {
  expectWellFormed(kEventKindTable);
  for (const auto& row : kEventKindTable) EXPECT_EQ(eventKindFromName(eventKindName(row.value)), row.value);
  // A run that ends its trace and reaches its bound raises kinds with the names of the table.
  Machine m(baseConfig(1));
  m.attach(LogicalCpu{0}, cursorFor("gen:alu,count=50"), Asid{1});
  std::set<std::string_view> names;
  for (int i = 0; i < 4 && names.size() < 2; ++i) {
    for (const Event& e : m.run(Cycle{m.now().value + 100000})) names.insert(eventKindName(e.kind));
  }
  EXPECT_EQ(names, (std::set<std::string_view>{"source_ended", "cycle_bound"}));
}

TEST(EnumTables, FetchPoliciesParseBuildAndAreDocumented) {
  expectWellFormed(fetchPolicyTable());
  ASSERT_EQ(fetchPolicyTable().size(), 7u);  // round_robin icount brcount misscount stall flush mlp (docs/model.md)
  const std::string model = readDoc("model.md");
  const std::string config = readDoc("config.md");
  const std::string keyDoc = docOf("core.fetch_policy");
  for (const auto& row : fetchPolicyTable()) {
    Config c;
    applyOverride(c, "core.fetch_policy", row.name, "test");
    EXPECT_EQ(c.core.fetch_policy, row.value) << row.name;
    EXPECT_EQ(fetchPolicyName(row.value), row.name);
    const auto policy = makeFetchPolicy(row.value);
    ASSERT_NE(policy, nullptr) << row.name;
    // STALL gates on a long-latency miss, FLUSH gates and squashes (Tullsen & Brown 2001); no other policy does.
    EXPECT_EQ(policy->gatesOnMemoryMiss(),
              row.value == FetchPolicy::Stall || row.value == FetchPolicy::Flush || row.value == FetchPolicy::Mlp);
    EXPECT_EQ(policy->flushesOnMemoryMiss(), row.value == FetchPolicy::Flush || row.value == FetchPolicy::Mlp);
    EXPECT_EQ(policy->gatesAtMlpDistance(), row.value == FetchPolicy::Mlp);
    const std::string quoted = fmt::format("`{}`", row.name);
    EXPECT_NE(model.find(quoted), std::string::npos) << "docs/model.md does not describe " << row.name;
    EXPECT_NE(config.find(quoted), std::string::npos) << "docs/config.md does not list " << row.name;
    EXPECT_NE(keyDoc.find(row.name), std::string::npos) << "core.fetch_policy's doc lacks " << row.name;
    EXPECT_NE(typeOf("core.fetch_policy").find(row.name), std::string::npos);
  }
  for (const auto& row : threadChoiceTable()) {
    Config c;
    applyOverride(c, "core.rename_policy", row.name, "test");
    applyOverride(c, "core.retire_policy", row.name, "test");
    EXPECT_EQ(c.core.rename_policy, row.value);
    EXPECT_EQ(c.core.retire_policy, row.value);
    EXPECT_NE(makeThreadChoice(row.value), nullptr);
    EXPECT_NE(docOf("core.retire_policy").find(row.name), std::string::npos) << row.name;
    EXPECT_NE(model.find(fmt::format("`{}`", row.name)), std::string::npos) << row.name;
  }
  // A name not in the table is refused with the table's names.
  Config c;
  EXPECT_THROW(applyOverride(c, "core.fetch_policy", "fifo", "test"), ConfigError);
}

TEST(EnumTables, AllocationPoliciesParseBuildAndAreDocumented) {
  expectWellFormed(allocationPolicyTable());
  ASSERT_EQ(allocationPolicyTable().size(), 3u);  // static dcra hill_climbing (docs/model.md "Allocation policies")
  const std::string model = readDoc("model.md");
  const std::string config = readDoc("config.md");
  for (const auto& row : allocationPolicyTable()) {
    Config c;
    applyOverride(c, "core.allocation_policy", row.name, "test");
    EXPECT_EQ(c.core.allocation_policy, row.value) << row.name;
    const auto policy = makeAllocationPolicy(c.core);
    ASSERT_NE(policy, nullptr) << row.name;
    // Only an adaptive policy is called each cycle; static leaves the sharing modes' shares alone.
    EXPECT_EQ(policy->adaptive(), row.value != AllocationPolicy::Static) << row.name;
    const std::string quoted = fmt::format("`{}`", row.name);
    EXPECT_NE(model.find(quoted), std::string::npos) << "docs/model.md does not describe " << row.name;
    EXPECT_NE(config.find(quoted), std::string::npos) << "docs/config.md does not list " << row.name;
    EXPECT_NE(docOf("core.allocation_policy").find(row.name), std::string::npos) << row.name;
  }
  Config c;
  EXPECT_THROW(applyOverride(c, "core.allocation_policy", "hill", "test"), ConfigError);
}

TEST(EnumTables, UnitClassesParseAsPortsAndAreListedInTheKeyDoc) {
  expectWellFormed(kUnitClassTable);
  ASSERT_EQ(kUnitClasses, 10);  // the classes of docs/config.md "Issue ports"
  const std::string portsDoc = docOf("core.ports");
  for (const auto& row : kUnitClassTable) {
    PortConfig port;
    ASSERT_EQ(parsePort(fmt::format("{}:2", row.name), port), "") << row.name;
    for (int c = 0; c < kUnitClasses; ++c) EXPECT_EQ(port.rate[c], c == static_cast<int>(row.value) ? 2 : 0);
    EXPECT_EQ(portText(port), fmt::format("{}:2", row.name));
    EXPECT_EQ(unitClassName(row.value), row.name);
    EXPECT_NE(portsDoc.find(fmt::format(" {}", row.name)), std::string::npos) << "core.ports doc lacks " << row.name;
  }
  // Every class on one port prints in table order and parses back to the same port.
  PortConfig all;
  for (auto& r : all.rate) r = 1;
  PortConfig back;
  ASSERT_EQ(parsePort(portText(all), back), "");
  EXPECT_EQ(back, all);
}

TEST(EnumTables, FuKindsNameTheirConfigAndEnergyKeys) {
  expectWellFormed(kFuKindTable);
  ASSERT_EQ(kFuKinds, 8);  // int_alu int_mul int_div fp_add fp_mul fp_div load store: the core.fu.<kind> sections
  for (const auto& row : kFuKindTable) {
    // A distinct value per kind through the key named in the table must land in the member the table points at.
    const auto i = static_cast<std::uint32_t>(row.value);
    Config c;
    applyOverride(c, fmt::format("core.fu.{}.latency", row.name), std::to_string(100 + i), "test");
    applyOverride(c, fmt::format("core.fu.{}.uops", row.name), std::to_string(2 + i), "test");
    applyOverride(c, fmt::format("energy.{}_nj", row.name), fmt::format("{}.5", i), "test");
    EXPECT_EQ(fuConfig(c.core, row.value).latency, 100 + i) << row.name;
    EXPECT_EQ(fuConfig(c.core, row.value).uops, 2 + i) << row.name;
    EXPECT_EQ(c.energy.*row.energyNj, i + 0.5) << row.name;
    for (const auto& other : kFuKindTable) {
      if (other.value != row.value) {
        EXPECT_NE(fuConfig(c.core, other.value).latency, 100 + i) << other.name;
      }
    }
  }
}

TEST(EnumTables, ConfigChoiceTablesRoundTrip) {
  expectWellFormed(kSharingTable);
  expectWellFormed(kLongLatencyMissTable);
  expectWellFormed(kMemDependenceTable);
  for (const auto& row : kSharingTable) {
    Config c;
    applyOverride(c, "core.rob.sharing", row.name, "test");
    EXPECT_EQ(c.core.rob.sharing, row.value);
    EXPECT_EQ(sharingName(row.value), row.name);
  }
  for (const auto& row : kLongLatencyMissTable) {
    Config c;
    applyOverride(c, "core.long_latency_miss", row.name, "test");
    EXPECT_EQ(c.core.long_latency_miss, row.value);
  }
  for (const auto& row : kMemDependenceTable) {
    Config c;
    applyOverride(c, "core.lsu.memory_dependence", row.name, "test");
    EXPECT_EQ(c.core.lsu.memory_dependence, row.value);
    EXPECT_EQ(memDependenceName(row.value), row.name);
  }
}

}  // namespace
}  // namespace smtlab::test
