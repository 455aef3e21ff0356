// smtlab demo: what Hyper-Threading does to pairs of generated programs on the netburst preset. HT off runs the two
// programs one after the other on a 1-thread core; HT on runs them together on the two threads of one core.
#include <iostream>

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/sim/run.hpp"

namespace smtlab::cli {

namespace po = boost::program_options;

int demoCommand(const std::vector<std::string>& args) {
  std::string configName = "netburst";
  std::uint64_t n = 1000000;
  po::options_description opts("usage: smtlab demo [options]\noptions");
  opts.add_options()("help,h", "this help")("config,c", po::value(&configName), "config file or preset")(
      "instructions,n", po::value(&n), "instructions per program");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  const std::string count = fmt::format(",count={}", n);
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
  fmt::print("Hyper-Threading off vs on, {} instructions per program, config '{}'\n", n, configName);
  fmt::print("HT off: the two programs run one after the other; HT on: together on the two threads of one core.\n\n");
  fmt::print("{:<26} {:<30} {:>7} {:>7} {:>12} {:>12} {:>8}\n", "program A", "program B", "IPC A", "IPC B",
             "HT-off cyc", "HT-on cyc", "speedup");
  double logSum = 0;
  for (const auto& [a, b] : pairs) {
    const RunResult ra = runTraces(htOff, {a + count}, {});
    const RunResult rb = runTraces(htOff, {b + count}, {});
    const RunResult both = runTraces(htOn, {a + count, b + count}, {});
    const double off = double(ra.cycles + rb.cycles);
    const double on = double(both.cycles);
    const double speedup = off / on;
    logSum += std::log(speedup);
    fmt::print("{:<26} {:<30} {:>7.3f} {:>7.3f} {:>12.0f} {:>12.0f} {:>+7.1f}%\n", a, b,
               double(ra.instructions) / double(ra.cycles), double(rb.instructions) / double(rb.cycles), off, on,
               100.0 * (speedup - 1.0));
  }
  fmt::print("\ngeometric mean speed-up: {:+.1f}%\n", 100.0 * (std::exp(logSum / double(pairs.size())) - 1.0));
  fmt::print("Latency-bound pairs (pointer chases, dependent chains) gain most: one thread's stalls leave the\n"
             "pipeline to the other. Width-bound pairs (alu) gain little: both want the same execution slots.\n");
  return 0;
}

}  // namespace smtlab::cli
