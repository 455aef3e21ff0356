#include "smtlab/sim/run.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <tuple>

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

// One thread of a multiprogram run: its IPC beside the others and alone, each with its 95 % half-width (0 for a
// detailed run), and the alone run's cycles and instructions.
struct ThreadPair {
  double shared = 0, sharedCi = 0, alone = 0, aloneCi = 0;
  json::value cyclesAlone, instructionsAlone;
};

// The multiprogram metrics of a run from its threads' IPCs beside each other and alone (docs/metrics.md): speedup_i =
// IPC shared / IPC alone; STP = sum of speedups (Eyerman and Eeckhout, IEEE Micro 2008, "weighted speedup" of
// Snavely and Tullsen 2000); ANTT = mean of 1 / speedup (Eyerman and Eeckhout 2008); hmean = n / sum of 1 / speedup
// (Luo, Gummaraju and Franklin, ISPASS 2001); fairness = min / max speedup (Gabor, Weiss and Mendelson, MICRO 2006).
// Sampled (`sampled`), each metric also gets its 95 % half-width by first-order error propagation, the estimates
// taken as independent (as a sampled core's throughput takes its threads'): a ratio's relative half-width is the
// root of the sum of its parts' squared relative half-widths, a sum's half-width the root of its terms' squares.
json::object multiprogramMetrics(const std::vector<std::string>& traces, const std::vector<ThreadPair>& pairs,
                                 double host, bool sampled) {
  json::array rows;
  double stp = 0, stpVar = 0, slowdowns = 0, slowdownVar = 0;
  std::size_t lo = 0, hi = 0;
  std::vector<double> speedup(pairs.size()), speedupCi(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const ThreadPair& p = pairs[i];
    if (!(p.shared > 0) || !(p.alone > 0)) {
      throw Error(fmt::format("--baselines: trace {} on CPU {} retired nothing {} (IPC {} beside the others, {} "
                              "alone): no speedup to compute",
                              shortQuote(traces[i]), i, p.shared > 0 ? "alone" : "beside the others", p.shared,
                              p.alone));
    }
    const double s = p.shared / p.alone;
    const double h = s * std::hypot(p.sharedCi / p.shared, p.aloneCi / p.alone);
    speedup[i] = s;
    speedupCi[i] = h;
    stp += s;
    stpVar += h * h;
    slowdowns += 1 / s;
    slowdownVar += (h / (s * s)) * (h / (s * s));  // d(1/s) = ds / s^2
    if (s < speedup[lo]) lo = i;
    if (s > speedup[hi]) hi = i;
    json::object row{{"cpu", i},
                     {"trace", traces[i]},
                     {"ipc", p.shared},
                     {"ipc_alone", p.alone},
                     {"cycles_alone", p.cyclesAlone},
                     {"instructions_alone", p.instructionsAlone},
                     {"speedup", s}};
    if (sampled) {
      row["ipc_ci95"] = p.sharedCi;
      row["ipc_alone_ci95"] = p.aloneCi;
      row["speedup_ci95"] = h;
    }
    rows.push_back(std::move(row));
  }
  const double n = static_cast<double>(pairs.size());
  const double antt = slowdowns / n, anttCi = std::sqrt(slowdownVar) / n;
  const double fairness = speedup[lo] / speedup[hi];
  json::object out{{"threads", rows},
                   {"stp", stp},
                   {"antt", antt},
                   {"hmean", 1 / antt},
                   {"fairness", fairness},
                   {"baseline_host_seconds", host}};
  if (sampled) {
    out["stp_ci95"] = std::sqrt(stpVar);
    out["antt_ci95"] = anttCi;
    out["hmean_ci95"] = anttCi / (antt * antt);
    out["fairness_ci95"] =
        lo == hi ? 0.0 : fairness * std::hypot(speedupCi[lo] / speedup[lo], speedupCi[hi] / speedup[hi]);
  }
  return out;
}

// --baselines of a detailed run: each trace alone (runAlone), beside the shared run's `cpus`.
json::object detailedBaselines(const Config& config, const std::vector<std::string>& traces, const json::array& cpus,
                               const RunOptions& options) {
  std::vector<ThreadPair> pairs(traces.size());
  double host = 0;
  for (std::uint32_t i = 0; i < traces.size(); ++i) {
    auto [alone, seconds] = runAlone(config, traces, i, options);
    host += seconds;
    pairs[i].shared = cpus[i].as_object().at("ipc").to_number<double>();
    pairs[i].alone = alone.at("ipc").to_number<double>();
    pairs[i].cyclesAlone = alone.at("cycles");
    pairs[i].instructionsAlone = alone.at("instructions");
  }
  return multiprogramMetrics(traces, pairs, host, false);
}

// A sampled IPC and its half-width from a `logical_cpus` entry; NaN for the null of an IPC the windows never measured.
std::pair<double, double> sampledIpc(const json::object& cpu) {
  const auto number = [](const json::value& v) {
    return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.to_number<double>();
  };
  return {number(cpu.at("ipc")), number(cpu.at("ipc_ci95"))};
}

// --baselines of a sampled run: each trace alone, sampled with the same options, on the CPU it had.
json::object sampledBaselines(const Config& config, const std::vector<std::string>& traces, const json::array& cpus,
                              const RunOptions& options) {
  std::vector<ThreadPair> pairs(traces.size());
  double host = 0;
  for (std::uint32_t i = 0; i < traces.size(); ++i) {
    RunOptions alone = options;
    alone.baselines = false;
    alone.firstCpu = i;
    const RunResult r = runSampled(config, {traces[i]}, alone);
    host += r.hostSeconds;
    const json::object& a = r.stats.at("logical_cpus").as_array().at(0).as_object();
    std::tie(pairs[i].shared, pairs[i].sharedCi) = sampledIpc(cpus[i].as_object());
    std::tie(pairs[i].alone, pairs[i].aloneCi) = sampledIpc(a);
    pairs[i].cyclesAlone = a.at("cycles");
    pairs[i].instructionsAlone = a.at("instructions");
  }
  return multiprogramMetrics(traces, pairs, host, true);
}

}  // namespace

RunResult runTraces(const Config& config, const std::vector<std::string>& traces, const RunOptions& options) {
  if (options.baselines) {
    if (traces.size() < 2) throw UsageError("--baselines needs two or more traces: the metrics compare threads run together with each alone");
    if (options.sample && !options.snapshotDir.empty()) {
      throw UsageError("--baselines: not with --snapshots (the snapshots hold the run beside the others; each alone run is a sampled run of its own)");
    }
  }
  if (options.sample) {
    RunResult result = runSampled(config, traces, options);
    if (options.baselines) {
      result.stats["multiprogram"] =
          sampledBaselines(config, traces, result.stats["logical_cpus"].as_array(), options);
    }
    return result;
  }
  if (options.firstCpu != 0) throw UsageError("firstCpu: sampled runs only");
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
    result.stats["multiprogram"] = detailedBaselines(config, traces, result.stats["logical_cpus"].as_array(), options);
  }
  return result;
}

}  // namespace smtlab
