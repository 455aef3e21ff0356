// Event skipping (sim.skip) is a speed-up, not a model: jumping over cycles in which no core can change anything must
// give exactly the statistics and events of ticking every core every cycle. These tests run the same work both ways
// and require identical JSON and identical event sequences: generators of every kind, a real traced program
// (kernel:aim9_call0, traced with QEMU), two threads per core, and OS-style detach / attach / idle sequences driven
// through the Machine API. The reference is the unskipped run, so nothing here is the model's own earlier output.
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "smtlab/tracer/recorder.hpp"

namespace smtlab::test {
namespace {

// The statistics without what legitimately differs: host time, and the effective config (it holds sim.skip).
json::object comparable(json::object stats) {
  stats.erase("host_seconds");
  stats.erase("instructions_per_host_second");
  stats.erase("config");
  return stats;
}

// The paths at which two statistics trees differ, with both values (for a readable failure).
void diffJson(const json::value& a, const json::value& b, const std::string& path, std::string& out) {
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.as_object()) {
      const auto* w = b.as_object().if_contains(k);
      if (w == nullptr) {
        out += fmt::format("{}.{} missing\n", path, std::string(k));
      } else {
        diffJson(v, *w, fmt::format("{}.{}", path, std::string(k)), out);
      }
    }
  } else if (a.is_array() && b.is_array() && a.as_array().size() == b.as_array().size()) {
    for (std::size_t i = 0; i < a.as_array().size(); ++i) {
      diffJson(a.as_array()[i], b.as_array()[i], fmt::format("{}[{}]", path, i), out);
    }
  } else if (a != b) {
    out += fmt::format("{}: {} vs {}\n", path, json::serialize(a), json::serialize(b));
  }
}
std::string differences(const json::object& a, const json::object& b) {
  std::string out;
  diffJson(a, b, "", out);
  return out;
}

Config withSkip(Config c, bool skip) {
  c.sim.skip = skip;
  return c;
}

// A real recorded program when the tracer is there; its generator look-alike otherwise (then this is said).
std::string realTrace() {
  if (auto why = tracerUnavailableReason()) {
    std::cerr << "note: tracer unavailable (" << *why << "): kernel:aim9_call0 is its look-alike\n";
  }
  return "kernel:aim9_call0";
}

struct Scenario {
  std::string name;
  Config config;
  std::vector<std::string> specs;
  std::uint64_t instructions;
};

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  const Config one = baseConfig(1);
  const Config two = baseConfig(2);
  out.push_back({"mix_1t", one, {"gen:mix,count=0"}, 30000});
  out.push_back({"chase_1t", one, {"gen:chase,footprint=64m,work=3,count=0"}, 3000});
  out.push_back({"real_1t", one, {realTrace()}, 40000});
  out.push_back({"mix_chase", two, {"gen:mix,count=0,seed=2", "gen:chase,footprint=16m,count=0"}, 8000});
  out.push_back({"branchy_stream", two, {"gen:branchy,count=0", "gen:stream,footprint=32m,count=0"}, 15000});
  out.push_back({"spin_real", two, {"gen:spin,pause=1,count=0", realTrace()}, 15000});
  Config replay = two;  // wrong path (on by default) and NetBurst replay together
  replay.core.replay = true;
  out.push_back({"replay_branchy_chase", replay, {"gen:branchy,count=0", "gen:chase,footprint=16m,work=3,count=0"}, 8000});
  Config flush = two;
  flush.core.fetch_policy = FetchPolicy::Flush;
  out.push_back({"flush_chase_mix", flush, {"gen:chase,footprint=64m,count=0", "gen:mix,count=0"}, 3000});
  Config stall = two;
  stall.core.fetch_policy = FetchPolicy::Stall;
  stall.core.rob.sharing = Sharing::Shared;
  out.push_back({"stall_shared", stall, {"gen:chase,footprint=64m,work=2,count=0", "gen:fp,count=0"}, 4000});
  // MLP-aware fetch: a gated thread may still fetch up to its limit, so whether it is gated changes with its fetch
  // position as well as with time (a stream's overlapping misses, shared queues).
  Config mlp = stall;
  mlp.core.fetch_policy = FetchPolicy::Mlp;
  out.push_back({"mlp_stream_shared", mlp, {"gen:stream,footprint=64m,count=0", "gen:chase,footprint=16m,count=0"},
                 8000});
  Config miss = two;
  miss.core.fetch_policy = FetchPolicy::MissCount;
  miss.system.cores = 2;
  out.push_back({"misscount_2cores", miss,
                 {"gen:mix,footprint=64m,hot=0.5,count=0", "gen:branchy,count=0", realTrace(), "gen:chase,count=0"},
                 3000});
  // The load/store unit's mechanisms (core.lsu): retired stores drain at the L1D's store rate; the drain's
  // completions are wake-up points. A store-heavy stream beside a store-bound spin of the mix.
  Config lsu = two;
  lsu.core.lsu.store_buffer = true;
  lsu.core.sq.entries = 8;
  out.push_back({"lsu_store_buffer", lsu, {"gen:stream,footprint=32m,count=0", "gen:mix,count=0,seed=3"}, 8000});
  // Every load/store-unit mechanism on: forwarding, the memory-dependence predictor (its flushes), 4K and 64K
  // aliasing; and the always-speculate mode, whose flushes are more frequent.
  Config all = lsu;
  all.core.lsu.forwarding = true;
  all.core.lsu.memory_dependence = MemDependence::Predictor;
  all.core.lsu.alias_4k = true;
  all.core.lsu.alias_64k = true;
  out.push_back({"lsu_all", all, {"gen:mix,count=0,seed=5", realTrace()}, 8000});
  Config speculate = all;
  speculate.core.lsu.memory_dependence = MemDependence::Speculate;
  speculate.core.lsu.store_buffer = false;
  out.push_back({"lsu_speculate", speculate, {realTrace(), "gen:mix,count=0,seed=9"}, 8000});
  // Memory-ordering machine clears between the siblings: two mixes in one address space share their hot lines, so
  // a drained store now and then clears the sibling (core.lsu.sibling_order_clears).
  Config clears = all;
  clears.core.lsu.sibling_order_clears = true;
  clears.mem.threads_share_address_space = true;
  out.push_back({"lsu_sibling_clears", clears, {"gen:mix,count=0,seed=5", "gen:mix,count=0,seed=6"}, 8000});
  return out;
}

TEST(SkipSwitch, RunsGiveIdenticalStatisticsWithAndWithoutSkipping) {
  for (const Scenario& s : scenarios()) {
    const auto skipped = comparable(runCounted(withSkip(s.config, true), s.specs, s.instructions, 500));
    const auto ticked = comparable(runCounted(withSkip(s.config, false), s.specs, s.instructions, 500));
    EXPECT_EQ(differences(skipped, ticked), "") << s.name;
    EXPECT_EQ(u64(skipped.at("instructions")), s.instructions * s.specs.size()) << s.name;
    // The mechanism each of these scenarios is about was exercised, not just switched on.
    const char* exercised = s.name == "lsu_all" ? "loads_forwarded"
                            : s.name == "lsu_sibling_clears" ? "sibling_order_clears"
                                                              : nullptr;
    if (exercised != nullptr) {
      std::uint64_t count = 0;
      for (std::size_t cpu = 0; cpu < s.specs.size(); ++cpu) {
        count += u64(cpuStats(skipped, cpu).at("lsu").as_object().at(exercised));
      }
      EXPECT_GT(count, 0u) << s.name;
    }
  }
}

TEST(SkipSwitch, SkippingHasIdleCyclesToSkip) {
  // The comparison above means something only if the skipped runs jump: a DRAM pointer chase waits about the memory
  // latency (200 cycles + LLC 40) per dependent load, so its cycles far exceed its instructions (work=3: 4 per load).
  const auto s = runCounted(baseConfig(1), {"gen:chase,footprint=64m,work=3,count=0"}, 3000, 500);
  EXPECT_GT(u64(cpuStats(s, 0).at("cycles")), 20u * 3000u);
}

// What an OS layer does: tasks on two logical CPUs of one core (and a second core), switched every few hundred cycles
// at varying points, a CPU left idle (halted) for a while, a retire limit, marks and trace ends reported as events.
struct OsRun {
  std::vector<std::string> events;  // kind, cpu, cycle, mark id
  json::object stats;
};

OsRun runOsSequence(bool skip, bool lsu = false) {
  Config c = withSkip(baseConfig(2), skip);
  c.system.cores = 2;
  if (lsu) {
    // Every load/store-unit mechanism (core.lsu): buffered stores keep draining across detach and attach.
    c.core.lsu.store_buffer = true;
    c.core.lsu.forwarding = true;
    c.core.lsu.memory_dependence = MemDependence::Predictor;
    c.core.lsu.alias_4k = true;
    c.core.lsu.alias_64k = true;
    c.core.lsu.sibling_order_clears = true;
  }
  Machine m(c);
  std::vector<std::shared_ptr<TraceCursor>> tasks = {
      cursorFor("gen:mix,count=0,seed=7"),      cursorFor("gen:chase,footprint=16m,work=2,count=0"),
      cursorFor(realTrace()),                   cursorFor("gen:branchy,count=0"),
      cursorFor("gen:stream,footprint=8m,count=0"), cursorFor("gen:spin,pause=1,count=0"),
      cursorFor(dataPath("marks.txt")),
  };
  std::vector<std::shared_ptr<TraceCursor>> runnable = tasks;
  OsRun out;
  auto record = [&](const std::vector<Event>& events) {
    for (const Event& e : events) {
      out.events.push_back(
          fmt::format("{} cpu{} @{} #{}", eventKindName(e.kind), e.cpu.value, e.cycle.value, e.markId));
    }
  };
  // Start: CPUs 0, 1, 2 busy, CPU 3 halted.
  for (std::uint32_t cpu = 0; cpu < 3; ++cpu) {
    m.attach(LogicalCpu{cpu}, runnable.front(), Asid{cpu + 1});
    runnable.erase(runnable.begin());
  }
  m.setRetireLimit(LogicalCpu{1}, 700);
  std::uint32_t asid = 10;
  for (std::uint32_t round = 0; round < 120; ++round) {
    const Cycle until{m.now().value + 90 + (round * 131) % 500};
    while (m.now() < until) record(m.run(until));
    const LogicalCpu cpu{round % 4};
    if (round % 11 == 5) {
      // Leave the CPU idle for a while (HLT): its sibling gets the recombined partitions.
      if (auto t = m.detach(cpu)) runnable.push_back(std::move(t));
      continue;
    }
    if (m.attached(cpu) != nullptr) {
      auto t = m.detach(cpu);
      if (t->finished()) t->restart();
      runnable.push_back(std::move(t));
    }
    m.attach(cpu, runnable.front(), Asid{asid++ % 5 + 1});
    runnable.erase(runnable.begin());
    if (round == 40) m.clearRetireLimit(LogicalCpu{1});
  }
  out.stats = comparable(m.statsJson());
  return out;
}

TEST(SkipSwitch, OsStyleSwitchingGivesIdenticalEventsAndStatistics) {
  const OsRun skipped = runOsSequence(true);
  const OsRun ticked = runOsSequence(false);
  EXPECT_EQ(skipped.events, ticked.events);
  EXPECT_EQ(differences(skipped.stats, ticked.stats), "");
  EXPECT_FALSE(skipped.events.empty()) << "the sequence should raise marks / retire-limit / cycle-bound events";
}

TEST(SkipSwitch, OsStyleSwitchingWithEveryLoadStoreUnitMechanism) {
  const OsRun skipped = runOsSequence(true, true);
  const OsRun ticked = runOsSequence(false, true);
  EXPECT_EQ(skipped.events, ticked.events);
  EXPECT_EQ(differences(skipped.stats, ticked.stats), "");
  EXPECT_FALSE(skipped.events.empty());
}

}  // namespace
}  // namespace smtlab::test
