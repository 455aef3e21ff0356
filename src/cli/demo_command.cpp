// smtlab demo: what Hyper-Threading does to pairs of generated programs on the netburst preset. HT off runs the two
// programs one after the other on a 1-thread core; HT on runs them together on the two threads of one core.
#include <cstdio>
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

int demoCommand(const std::vector<std::string>& args) {
  std::string configName = "netburst";
  std::string nText = "300000";
  po::options_description opts("usage: smtlab demo [options]\noptions");
  opts.add_options()("help,h", "this help")("config,c", po::value(&configName), "config file or preset")(
      "instructions,n", po::value(&nText), "instructions per program (300000, 50k, 2M)");
  po::variables_map vm;
  // No positional arguments (an empty description): `smtlab demo extra` ran the full demo, the word ignored.
  const po::positional_options_description none;
  po::store(po::command_line_parser(args).options(opts).positional(none).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
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
