#include "smtlab/sim/run.hpp"

#include <chrono>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/sim/machine.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/trace/source.hpp"

namespace smtlab {

namespace json = boost::json;

namespace {

// Runs until every CPU in `pending` has retired `target` instructions (restarting ended traces) or, with target 0,
// until every trace has ended. Calls `onDone(cpu)` when a CPU gets there.
void runPhase(Machine& m, std::vector<bool> pending, std::uint64_t target, const RunOptions& options,
              const std::function<void(LogicalCpu)>& onDone) {
  std::size_t left = 0;
  for (std::uint32_t c = 0; c < pending.size(); ++c) {
    if (!pending[c]) continue;
    ++left;
    if (target > 0) m.setRetireLimit(LogicalCpu{c}, m.threadStats(LogicalCpu{c}).instructions + target);
  }
  const std::uint64_t expected = target * left;
  std::uint64_t base = 0;
  for (std::uint32_t c = 0; c < pending.size(); ++c) base += m.threadStats(LogicalCpu{c}).instructions;
  auto lastReport = std::chrono::steady_clock::now();
  constexpr std::uint64_t kChunk = 1 << 20;
  while (left > 0) {
    for (const Event& e : m.run(m.now() + kChunk)) {
      const std::uint32_t c = e.cpu.value;
      switch (e.kind) {
        case EventKind::RetireLimit:
          if (c < pending.size() && pending[c]) {
            pending[c] = false;
            --left;
            onDone(e.cpu);
          }
          m.clearRetireLimit(e.cpu);
          break;
        case EventKind::SourceEnded:
          // A trace that ended without one instruction ever retired from it (over every restart, warm-up included) is
          // an empty input, never an empty success: with or without an instruction count.
          if (m.attached(e.cpu)->retired() == 0) {
            throw TraceError(fmt::format("trace '{}' on CPU {} has no instructions", m.attached(e.cpu)->describe(), c));
          }
          if (target > 0) {
            m.restartTrace(e.cpu);  // keep the sibling under contention until every thread has its N
          } else if (c < pending.size() && pending[c]) {
            pending[c] = false;
            --left;
            onDone(e.cpu);
          }
          break;
        case EventKind::Mark:
        case EventKind::CycleBound:
          break;
      }
    }
    if (options.stopRequested && options.stopRequested()) throw RunInterrupted();
    if (options.progress) {
      const auto now = std::chrono::steady_clock::now();
      if (now - lastReport > std::chrono::milliseconds(500) || left == 0) {
        lastReport = now;
        std::uint64_t done = 0;
        for (std::uint32_t c = 0; c < pending.size(); ++c) done += m.threadStats(LogicalCpu{c}).instructions;
        options.progress(done - base, expected);
      }
    }
  }
}

}  // namespace

std::vector<std::shared_ptr<TraceCursor>> openRunTraces(const std::vector<std::string>& traces,
                                                        std::uint64_t maxInstructions, const Config& config,
                                                        std::uint32_t logicalCpus) {
  if (traces.empty()) throw UsageError("no trace given");
  if (traces.size() > logicalCpus) {
    throw UsageError(fmt::format("{} traces given but the machine has {} logical CPUs (system.packages = {} x "
                                 "system.cores = {} x core.threads = {})",
                                 traces.size(), logicalCpus, config.system.packages, config.system.cores,
                                 config.core.threads));
  }
  std::vector<std::shared_ptr<TraceCursor>> cursors;
  for (std::uint32_t i = 0; i < traces.size(); ++i) {
    std::unique_ptr<TraceSource> source = openTrace(traces[i]);
    // Without an instruction count the run lasts until every trace ends; an endless generator (count=0) never does.
    // `smtlab trace gen` refuses the same spec without -n, and so does a run.
    if (maxInstructions == 0 && !source->length() && traces[i].rfind("gen:", 0) == 0) {
      throw UsageError(fmt::format("trace {} on CPU {} is endless (count=0): give an instruction count "
                                   "(smtlab run -n N, or max_instructions)",
                                   shortQuote(traces[i]), i));
    }
    cursors.push_back(std::make_shared<TraceCursor>(std::move(source)));
  }
  return cursors;
}

namespace {

// Trace `cpu` alone on its logical CPU with its address space, the others idle: warm-up, then the measured phase, as
// runTraces runs it beside its siblings. Its statistics object (cpuStatsJson) and the host time.
std::pair<json::object, double> runAlone(const Config& config, const std::vector<std::string>& traces,
                                         std::uint32_t cpu, const RunOptions& options) {
  Machine m(config);
  std::vector<std::shared_ptr<TraceCursor>> cursors =
      openRunTraces({traces[cpu]}, options.maxInstructions, config, m.logicalCpus());
  m.attach(LogicalCpu{cpu}, cursors[0], Asid{cpu + 1});
  std::vector<bool> only(cpu + 1, false);
  only[cpu] = true;
  if (options.warmup > 0) {
    runPhase(m, only, options.warmup, {}, [](LogicalCpu) {});
    m.resetStats();
  }
  const auto start = std::chrono::steady_clock::now();
  json::object stats;
  runPhase(m, only, options.maxInstructions, options, [&](LogicalCpu c) { stats = m.cpuStatsJson(c); });
  return {std::move(stats), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// The multiprogram metrics of a run from its threads' IPCs beside each other and alone (docs/metrics.md): speedup_i =
// IPC shared / IPC alone; STP = sum of speedups (Eyerman and Eeckhout, IEEE Micro 2008, "weighted speedup" of
// Snavely and Tullsen 2000); ANTT = mean of 1 / speedup (Eyerman and Eeckhout 2008); hmean = n / sum of 1 / speedup
// (Luo, Gummaraju and Franklin, ISPASS 2001); fairness = min / max speedup (Gabor, Weiss and Mendelson, MICRO 2006).
json::object multiprogramMetrics(const Config& config, const std::vector<std::string>& traces,
                                 const json::array& cpus, const RunOptions& options) {
  json::array rows;
  double stp = 0, slowdowns = 0, minSpeedup = 0, maxSpeedup = 0, host = 0;
  for (std::uint32_t i = 0; i < traces.size(); ++i) {
    auto [alone, seconds] = runAlone(config, traces, i, options);
    host += seconds;
    const double shared = cpus[i].as_object().at("ipc").to_number<double>();
    const double ipcAlone = alone.at("ipc").to_number<double>();
    if (!(shared > 0) || !(ipcAlone > 0)) {
      throw Error(fmt::format("--baselines: trace {} on CPU {} retired nothing {} (IPC {} beside the others, {} "
                              "alone): no speedup to compute",
                              shortQuote(traces[i]), i, shared > 0 ? "alone" : "beside the others", shared, ipcAlone));
    }
    const double speedup = shared / ipcAlone;
    stp += speedup;
    slowdowns += 1 / speedup;
    minSpeedup = i == 0 ? speedup : std::min(minSpeedup, speedup);
    maxSpeedup = i == 0 ? speedup : std::max(maxSpeedup, speedup);
    rows.push_back(json::object{{"cpu", i},
                                {"trace", traces[i]},
                                {"ipc", shared},
                                {"ipc_alone", ipcAlone},
                                {"cycles_alone", alone.at("cycles")},
                                {"instructions_alone", alone.at("instructions")},
                                {"speedup", speedup}});
  }
  const double n = static_cast<double>(traces.size());
  return json::object{{"threads", rows},
                      {"stp", stp},
                      {"antt", slowdowns / n},
                      {"hmean", n / slowdowns},
                      {"fairness", minSpeedup / maxSpeedup},
                      {"baseline_host_seconds", host}};
}

}  // namespace

RunResult runTraces(const Config& config, const std::vector<std::string>& traces, const RunOptions& options) {
  if (options.baselines) {
    if (options.sample) throw UsageError("--baselines: detailed runs only (not with --sample)");
    if (traces.size() < 2) throw UsageError("--baselines needs two or more traces: the metrics compare threads run together with each alone");
  }
  if (options.sample) return runSampled(config, traces, options);
  if (traces.empty()) throw UsageError("no trace given");
  Machine m(config);
  std::vector<std::shared_ptr<TraceCursor>> cursors =
      openRunTraces(traces, options.maxInstructions, config, m.logicalCpus());
  for (std::uint32_t i = 0; i < cursors.size(); ++i) m.attach(LogicalCpu{i}, cursors[i], Asid{i + 1});
  std::vector<bool> all(traces.size(), true);
  if (options.warmup > 0) {
    runPhase(m, all, options.warmup, {}, [](LogicalCpu) {});
    m.resetStats();
  }
  // Timed from here: host_seconds and simulated_instructions are both the measured phase's (the warm-up's time over
  // the measured instructions made instructions_per_host_second too low).
  const auto start = std::chrono::steady_clock::now();
  std::vector<json::object> snapshots(traces.size());
  runPhase(m, all, options.maxInstructions, options,
           [&](LogicalCpu cpu) { snapshots[cpu.value] = m.cpuStatsJson(cpu); });
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  RunResult result;
  result.stats = m.statsJson();
  json::array& cpus = result.stats["logical_cpus"].as_array();
  // Everything retired, including what threads ran past their N to keep their siblings company: the simulation speed.
  std::uint64_t simulated = 0;
  for (std::uint32_t i = 0; i < traces.size(); ++i) simulated += m.threadStats(LogicalCpu{i}).instructions;
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < traces.size(); ++i) {
    cpus[i] = snapshots[i];
    total += snapshots[i]["instructions"].as_uint64();
  }
  result.hostSeconds = host;
  result.instructions = total;
  result.simulatedInstructions = simulated;
  result.cycles = result.stats["cycles"].as_uint64();
  result.stats["instructions"] = total;
  result.stats["host_seconds"] = host;
  result.stats["simulated_instructions"] = simulated;
  result.stats["instructions_per_host_second"] = host > 0 ? double(simulated) / host : 0.0;
  result.stats["max_instructions"] = options.maxInstructions;
  result.stats["warmup"] = options.warmup;
  json::array names;
  for (const auto& t : traces) names.push_back(json::value(t));
  result.stats["traces"] = std::move(names);
  result.stats["config"] = configToJson(config);
  if (options.baselines) {
    result.stats["multiprogram"] = multiprogramMetrics(config, traces, result.stats["logical_cpus"].as_array(), options);
  }
  return result;
}

}  // namespace smtlab
