// smtlab demo: what Hyper-Threading does to pairs of programs on the netburst preset. HT off runs the two programs one
// after the other on a 1-thread core; HT on runs them together on the two threads of one core. By default the real
// programs that the bench traces at build time run whole, sampled (docs/sampling.md), each figure with its interval;
// with -n or --generators, or without those traces, pairs of generated programs run for a window each.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "count_arg.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/sim/run.hpp"

namespace smtlab::cli {

namespace po = boost::program_options;

// Below this many instructions per program the table means nothing: the demo measures from a cold start (no
// warm-up), so a short run times the pipeline filling, compulsory cache misses and untrained predictors, not the
// sharing. The width-bound alu pair, which gains nothing from HT (both threads want the same slots), shows it: on
// netburst it reads +27% at -n 1k, +5% at 10k, +0.5% at 100k and +0.2% at the default 300k. The chases are measured
// over n/20, so 100k still gives them 5000 loads.
constexpr std::uint64_t kMeaningfulDemoInstructions = 100000;

namespace {

// The programs `cmake --build build --target bench_traces` records (bench/programs.py), looked for in
// $SMTLAB_BENCH_TRACES or bench-traces/ beside this program; those found, by name.
std::vector<std::pair<std::string, std::string>> benchPrograms() {
  namespace fs = std::filesystem;
  fs::path dir;
  if (const char* env = std::getenv("SMTLAB_BENCH_TRACES"); env != nullptr && *env != '\0') {
    dir = env;
  } else {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    dir = exe.parent_path() / "bench-traces";
  }
  std::vector<std::pair<std::string, std::string>> found;
  for (const char* name : {"gzip", "bzip2", "cc1", "raytrace"}) {
    std::error_code ec;
    const fs::path trace = dir / (std::string(name) + ".a.trace");
    if (fs::is_regular_file(trace, ec)) found.emplace_back(name, trace.string());
  }
  return found;
}

struct Estimate {
  double value = 0;
  double halfWidth = 0;
};

// A thread's cycles over its whole run, from a sampled result: instructions / IPC, with the IPC's relative half-width.
Estimate cyclesOf(const boost::json::object& cpu) {
  const double insns = static_cast<double>(cpu.at("instructions").as_uint64());
  const double ipc = cpu.at("ipc").as_double();
  const double h = cpu.at("ipc_ci95").is_null() ? 0.0 : cpu.at("ipc_ci95").as_double();
  return {insns / ipc, insns / ipc * h / ipc};
}

// Whole programs, sampled: each alone, then each pair together; the speed-up is the time of the two one after the
// other over their time together, minus 1, with its interval from the cycles' (first order, errors independent).
int wholeProgramDemo(const std::string& configName, const std::vector<std::pair<std::string, std::string>>& progs) {
  Config htOff = loadConfig(configName);
  htOff.core.threads = 1;
  Config htOn = loadConfig(configName);
  htOn.core.threads = 2;
  fmt::print("Hyper-Threading off vs on, config '{}': real programs (traced by the bench) run whole, sampled\n",
             configName);
  fmt::print("HT off: one program after the other on a 1-thread core. HT on: both together on one core's two threads.\n");
  fmt::print("Speed-up = (time of A, then B) / (time of A and B together) - 1, +- its 95 % interval.\n\n");
  RunOptions options;
  options.sample = SampleOptions{};
  const bool tty = isatty(STDERR_FILENO) != 0;
  std::vector<Estimate> alone;
  fmt::print("{:<10} {:>12} {:>14}\n", "program", "instructions", "IPC alone");
  for (const auto& [name, trace] : progs) {
    if (tty) fmt::print(stderr, "\r  {} alone ...   ", name);
    const RunResult r = runTraces(htOff, {trace}, options);
    const auto& cpu = r.stats.at("logical_cpus").as_array()[0].as_object();
    alone.push_back(cyclesOf(cpu));
    if (tty) std::fputs("\r\033[K", stderr);
    fmt::print("{:<10} {:>12} {:>8.3f} +-{:.3f}\n", name, cpu.at("instructions").as_uint64(), cpu.at("ipc").as_double(),
               cpu.at("ipc_ci95").is_null() ? 0.0 : cpu.at("ipc_ci95").as_double());
  }
  fmt::print("\n{:<20} {:>14} {:>14} {:>18}\n", "pair (A + B)", "IPC A with B", "IPC B with A", "HT speed-up");
  double logSum = 0;
  int pairs = 0;
  for (std::size_t a = 0; a < progs.size(); ++a) {
    for (std::size_t b = a + 1; b < progs.size(); ++b) {
      const std::string label = progs[a].first + " + " + progs[b].first;
      if (tty) fmt::print(stderr, "\r  {} ...   ", label);
      const RunResult r = runTraces(htOn, {progs[a].second, progs[b].second}, options);
      if (tty) std::fputs("\r\033[K", stderr);
      const auto& cpus = r.stats.at("logical_cpus").as_array();
      const Estimate ta = cyclesOf(cpus[0].as_object()), tb = cyclesOf(cpus[1].as_object());
      // Together the pair takes as long as its slower thread; one after the other, the sum of their times alone.
      const Estimate together = ta.value >= tb.value ? ta : tb;
      const double serial = alone[a].value + alone[b].value;
      const double speedup = serial / together.value;
      const double rel = std::sqrt((alone[a].halfWidth * alone[a].halfWidth + alone[b].halfWidth * alone[b].halfWidth) /
                                       (serial * serial) +
                                   (together.halfWidth / together.value) * (together.halfWidth / together.value));
      logSum += std::log(speedup);
      ++pairs;
      fmt::print("{:<20} {:>14.3f} {:>14.3f} {:>+10.1f}% +-{:.1f}\n", label, cpus[0].at("ipc").as_double(),
                 cpus[1].at("ipc").as_double(), 100.0 * (speedup - 1.0), 100.0 * speedup * rel);
    }
  }
  if (pairs > 0) {
    fmt::print("\ngeometric mean speed-up: {:+.1f}% (Intel's summary for the Pentium 4 Xeon: up to 30 %)\n",
               100.0 * (std::exp(logSum / pairs) - 1.0));
  }
  return 0;
}

}  // namespace

int demoCommand(const std::vector<std::string>& args) {
  std::string configName = "netburst";
  std::string nText = "300000";
  bool generators = false;
  po::options_description opts("usage: smtlab demo [options]\noptions");
  opts.add_options()("help,h", "this help")("config,c", po::value(&configName), "config file or preset")(
      "generators", po::bool_switch(&generators),
      "pairs of generated programs for a window each, instead of the bench's real programs run whole")(
      "instructions,n", po::value(&nText),
      "with generated programs: instructions per program (300000, 50k, 2M); implies --generators");
  po::variables_map vm;
  // No positional arguments (an empty description): `smtlab demo extra` ran the full demo, the word ignored.
  const po::positional_options_description none;
  po::store(po::command_line_parser(args).options(opts).positional(none).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  if (!generators && vm.count("instructions") == 0) {
    const auto progs = benchPrograms();
    if (progs.size() >= 2) return wholeProgramDemo(configName, progs);
    fmt::print(stderr,
               "smtlab demo: the bench's traced programs are not built (cmake --build build --target bench_traces, "
               "or SMTLAB_BENCH_TRACES); showing generated pairs instead\n");
  }
  const std::uint64_t n = parseCount(nText, "--instructions/-n");
  if (n == 0) throw UsageError("option --instructions/-n: give at least 1 instruction per program");
  if (n < kMeaningfulDemoInstructions) {
    // A warning, not a refusal: a short run is still a quick check that the demo works.
    fmt::print(stderr,
               "smtlab demo: warning: option --instructions/-n: {} instructions per program is below {}k; measured "
               "from a cold start, the speed-ups below mostly show caches and predictors warming up, not "
               "Hyper-Threading (give -n {}k or more; default 300k)\n",
               n, kMeaningfulDemoInstructions / 1000, kMeaningfulDemoInstructions / 1000);
  }
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"gen:mix", "gen:mix,seed=2"},
      {"gen:alu", "gen:alu"},
      {"gen:chase,footprint=16m", "gen:alu"},
      {"gen:chase,footprint=16m", "gen:chase,footprint=16m,seed=2"},
      {"gen:fp", "gen:mix"},
      {"gen:branchy", "gen:mix"},
      {"gen:chain,op=fmul", "gen:chain,op=imul"},
  };
  Config htOff = loadConfig(configName);
  htOff.core.threads = 1;
  Config htOn = loadConfig(configName);
  htOn.core.threads = 2;
  fmt::print("Hyper-Threading off vs on, config '{}', each program measured over {} instructions ({} for chases)\n",
             configName, n, std::max<std::uint64_t>(1, n / 20));
  fmt::print("HT off: each program alone on a 1-thread core. HT on: both together on the two threads of one core.\n");
  fmt::print("Speed-up = weighted speedup - 1 = IPC_A(HT)/IPC_A(alone) + IPC_B(HT)/IPC_B(alone) - 1: the throughput\n"
             "gained over running the two programs one after the other.\n\n");
  fmt::print("{:<24} {:<30} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "program A", "program B", "A alone", "B alone",
             "A HT", "B HT", "speedup");
  auto ipc = [](const boost::json::object& cpu) { return cpu.at("ipc").as_double(); };
  double logSum = 0;
  for (const auto& [a, b] : pairs) {
    // A pointer chase retires one instruction per memory latency; measure it over fewer instructions so that its
    // sibling, which keeps running until the chase has its count, does not take minutes.
    RunOptions options;
    options.maxInstructions = a.starts_with("gen:chase") ? std::max<std::uint64_t>(1, n / 20) : n;
    const RunResult ra = runTraces(htOff, {a}, options);
    const RunResult rb = runTraces(htOff, {b}, options);
    const RunResult both = runTraces(htOn, {a, b}, options);
    const double aloneA = ipc(ra.stats.at("logical_cpus").as_array()[0].as_object());
    const double aloneB = ipc(rb.stats.at("logical_cpus").as_array()[0].as_object());
    const auto& cpus = both.stats.at("logical_cpus").as_array();
    const double htA = ipc(cpus[0].as_object());
    const double htB = ipc(cpus[1].as_object());
    const double stp = htA / aloneA + htB / aloneB;
    logSum += std::log(stp);
    fmt::print("{:<24} {:<30} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>+7.1f}%\n", a, b, aloneA, aloneB, htA, htB,
               100.0 * (stp - 1.0));
  }
  fmt::print("\ngeometric mean speed-up: {:+.1f}%\n", 100.0 * (std::exp(logSum / double(pairs.size())) - 1.0));
  fmt::print("Latency-bound pairs (pointer chases, dependent chains) gain most: one thread's stalls leave the\n"
             "pipeline to the other. Width-bound pairs (alu) gain little: both want the same execution slots.\n");
  return 0;
}

}  // namespace smtlab::cli
