// NetBurst replay's booked attempts (sim.replay_deferred) are a speed-up, not a model: counting a uop's replay attempts
// when the core next wakes must give exactly the statistics and events of waking the core at every attempt (the
// reference, sim.replay_deferred = false), and of ticking every core every cycle (sim.skip = false). These tests run
// the same work all three ways on the netburst preset with replay on: generators (a compute mix, a DRAM pointer
// chase), a real traced program (kernel:aim9_call0), two threads per core, and OS-style detach / attach sequences
// that squash uops in the middle of their replay loop. The references are the slower runs, never an earlier output.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "helpers.hpp"

namespace smtlab::test {
namespace {

json::object comparable(json::object stats) {
  stats.erase("host_seconds");
  stats.erase("instructions_per_host_second");
  stats.erase("config");  // holds the switches themselves
  return stats;
}

// The paths at which two statistics trees differ (for a readable failure).
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

enum class Mode { Deferred, WakeEachAttempt, TickEveryCycle };

Config netburstReplay(std::uint32_t threads, Mode mode) {
  Config c = loadConfig("netburst");
  c.core.threads = threads;
  c.core.replay = true;  // explicit: the test does not depend on the preset's choice
  c.sim.replay_deferred = mode == Mode::Deferred;
  c.sim.skip = mode != Mode::TickEveryCycle;
  return c;
}

std::uint64_t replayedOf(const json::object& stats) {
  std::uint64_t n = 0;
  for (const auto& cpu : stats.at("logical_cpus").as_array()) n += u64(cpu.as_object().at("replayed"));
  return n;
}

struct Scenario {
  std::string name;
  std::uint32_t threads;
  std::vector<std::string> specs;
  std::uint64_t instructions;
};

TEST(ReplayDeferred, BookedAttemptsGiveTheStatisticsOfWakingAtEachAttempt) {
  const std::vector<Scenario> scenarios = {
      {"mix_1t", 1, {"gen:mix,count=0"}, 30000},
      {"chase_1t", 1, {"gen:chase,footprint=64m,work=3,count=0"}, 3000},
      {"real_1t", 1, {"kernel:aim9_call0"}, 30000},
      {"mix_chase_2t", 2, {"gen:mix,count=0,seed=2", "gen:chase,footprint=16m,work=3,count=0"}, 8000},
      {"real_chase_2t", 2, {"kernel:aim9_call0", "gen:chase,footprint=64m,count=0"}, 6000},
      {"mix_mix_2t", 2, {"gen:mix,count=0,footprint=64m,hot=0.5", "gen:mix,count=0,seed=4"}, 15000},
  };
  for (const Scenario& s : scenarios) {
    const auto deferred = comparable(runCounted(netburstReplay(s.threads, Mode::Deferred), s.specs, s.instructions, 500));
    const auto woken =
        comparable(runCounted(netburstReplay(s.threads, Mode::WakeEachAttempt), s.specs, s.instructions, 500));
    const auto ticked =
        comparable(runCounted(netburstReplay(s.threads, Mode::TickEveryCycle), s.specs, s.instructions, 500));
    EXPECT_EQ(differences(deferred, woken), "") << s.name;
    EXPECT_EQ(differences(deferred, ticked), "") << s.name;
    EXPECT_EQ(u64(deferred.at("instructions")), s.instructions * s.specs.size()) << s.name;
    // The comparison means something only if replays happened (every scenario has loads that miss the 8 KB L1D).
    EXPECT_GT(replayedOf(deferred), 0u) << s.name;
  }
}

// What an OS layer does, with replay on: tasks switched on four logical CPUs of two cores every few hundred cycles
// (a detach squashes uops whose replay attempts are booked), a CPU left idle for a while, statistics reset once.
struct OsRun {
  std::vector<std::string> events;
  json::object stats;
};

OsRun runOsSequence(Mode mode) {
  Config c = netburstReplay(2, mode);
  c.system.cores = 2;
  Machine m(c);
  std::vector<std::shared_ptr<TraceCursor>> runnable = {
      cursorFor("gen:chase,footprint=16m,work=2,count=0"), cursorFor("gen:mix,count=0,seed=7,footprint=64m,hot=0.5"),
      cursorFor("kernel:aim9_call0"),                     cursorFor("gen:chase,footprint=64m,count=0"),
      cursorFor("gen:stream,footprint=8m,count=0"),       cursorFor("gen:branchy,count=0"),
  };
  OsRun out;
  auto record = [&](const std::vector<Event>& events) {
    for (const Event& e : events) {
      out.events.push_back(fmt::format("{} cpu{} @{} #{}", eventKindName(e.kind), e.cpu.value, e.cycle.value, e.markId));
    }
  };
  for (std::uint32_t cpu = 0; cpu < 3; ++cpu) {
    m.attach(LogicalCpu{cpu}, runnable.front(), Asid{cpu + 1});
    runnable.erase(runnable.begin());
  }
  std::uint32_t asid = 10;
  for (std::uint32_t round = 0; round < 100; ++round) {
    // Odd, varying run lengths, so that switches fall inside replay loops (period 7, misses of ~200+ cycles).
    const Cycle until{m.now().value + 37 + (round * 131) % 457};
    while (m.now() < until) record(m.run(until));
    if (round == 20) m.resetStats();
    const LogicalCpu cpu{round % 4};
    if (round % 9 == 4) {
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
  }
  out.stats = comparable(m.statsJson());
  return out;
}

TEST(ReplayDeferred, OsStyleSwitchingInsideReplayLoopsGivesIdenticalEventsAndStatistics) {
  const OsRun deferred = runOsSequence(Mode::Deferred);
  const OsRun woken = runOsSequence(Mode::WakeEachAttempt);
  const OsRun ticked = runOsSequence(Mode::TickEveryCycle);
  EXPECT_EQ(deferred.events, woken.events);
  EXPECT_EQ(deferred.events, ticked.events);
  EXPECT_EQ(differences(deferred.stats, woken.stats), "");
  EXPECT_EQ(differences(deferred.stats, ticked.stats), "");
  EXPECT_GT(replayedOf(deferred.stats), 0u);
}

}  // namespace
}  // namespace smtlab::test
