// smtlab run: simulate traces on logical CPUs; a human summary on stdout, the full statistics as JSON on request.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "count_arg.hpp"
#include "replay_workers.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/core/core_stats.hpp"
#include "smtlab/sim/run.hpp"

namespace smtlab::cli {

namespace po = boost::program_options;
namespace json = boost::json;

namespace {

// Figures in the table keep four significant digits whatever their size: a pointer chase's IPC of 0.0037 must not
// print as 0.004 (or 0.000), nor a microsecond run as 0.000000 s.
std::string significant(double x) { return fmt::format("{:#.4g}", x); }

// A simulated time in the SI unit that puts it between 1 and 1000 (s, ms, µs, ns), four significant digits.
std::string siSeconds(double seconds) {
  if (seconds >= 1 || seconds <= 0) return fmt::format("{} s", significant(seconds));
  if (seconds >= 1e-3) return fmt::format("{} ms", significant(seconds * 1e3));
  if (seconds >= 1e-6) return fmt::format("{} µs", significant(seconds * 1e6));
  return fmt::format("{} ns", significant(seconds * 1e9));
}

// The four largest parts of a CPI stack, "name cycles-per-instruction" each.
std::string topCpiComponents(const json::object& stack) {
  std::vector<std::pair<double, std::string>> parts;
  for (const auto& [k, val] : stack) {
    if (val.as_double() > 0.005) parts.emplace_back(val.as_double(), std::string(k));
  }
  std::sort(parts.rbegin(), parts.rend());
  std::string top;
  for (std::size_t i = 0; i < parts.size() && i < 4; ++i) top += fmt::format("{} {:.2f}  ", parts[i].second, parts[i].first);
  return top;
}

// --baselines: each thread's IPC alone and its speedup, then the metrics (docs/metrics.md); a sampled run's with
// their 95 % intervals.
void printMultiprogram(std::FILE* out, const json::object& mp) {
  const auto withCi = [&](const json::object& o, const char* key, const char* format) {
    const std::string ci = std::string(key) + "_ci95";
    std::string text = fmt::format(fmt::runtime(format), o.at(key).as_double());
    if (o.contains(ci)) text += fmt::format(" +-{:.3f}", o.at(ci).as_double());
    return text;
  };
  std::vector<std::string> parts;
  for (const auto& v : mp.at("threads").as_array()) {
    const json::object& t = v.as_object();
    std::string alone = significant(t.at("ipc_alone").as_double());
    if (t.contains("ipc_alone_ci95")) alone += " +-" + significant(t.at("ipc_alone_ci95").as_double());
    parts.push_back(fmt::format("cpu {} IPC {} (speedup {})", t.at("cpu").as_uint64(), alone,
                                withCi(t, "speedup", "{:.3f}")));
  }
  fmt::print(out, "alone: {}\n", fmt::join(parts, ", "));
  fmt::print(out, "multiprogram: STP {}  ANTT {}  hmean {}  fairness {}\n", withCi(mp, "stp", "{:.3f}"),
             withCi(mp, "antt", "{:.3f}"), withCi(mp, "hmean", "{:.3f}"), withCi(mp, "fairness", "{:.3f}"));
}

// A sampled run: each thread's IPC with its 95 % interval, and how the run was sampled.
void printSampledSummary(std::FILE* out, const RunResult& r) {
  const json::object& s = r.stats;
  fmt::print(out, "{:>4} {:>5} {:>14} {:>9} {:>9} {:>8}  {}\n", "cpu", "core", "instructions", "IPC", "+- (95%)", "windows",
             "top CPI components in the windows");
  for (const auto& v : s.at("logical_cpus").as_array()) {
    const json::object& c = v.as_object();
    const std::string top = topCpiComponents(c.at("cpi_stack").as_object());
    auto num = [](const json::value& x) { return x.is_null() ? std::string("n/a") : significant(x.as_double()); };
    fmt::print(out, "{:>4} {:>5} {:>14} {:>9} {:>9} {:>8}  {}\n", c.at("id").as_uint64(), c.at("core").as_uint64(),
               c.at("instructions").as_uint64(), num(c.at("ipc")), num(c.at("ipc_ci95")), c.at("windows").as_uint64(),
               top);
  }
  const json::object& sm = s.at("sampling").as_object();
  const std::uint64_t detailed = sm.at("detailed_instructions").as_uint64();
  const std::uint64_t functional = sm.at("functional_instructions").as_uint64();
  fmt::print(out, "sampled: {} windows of {} instructions per thread ({} cycles on average), one every {} instructions per "
             "thread; {:.1f} % of instructions in detail; {} pass(es)\n",
             sm.at("windows").as_uint64(), sm.at("window_instructions").as_uint64(), sm.at("window_cycles").as_uint64(),
             sm.at("period_instructions").as_uint64(),
             detailed + functional > 0 ? 100.0 * double(detailed) / double(detailed + functional) : 0.0,
             sm.at("passes").as_uint64());
  if (!sm.at("target_met").is_null()) {
    const json::value& worst = sm.at("max_relative_half_width");
    fmt::print(out, "target +-{:.2f} %: {} (widest interval +-{})\n", 100 * sm.at("target").as_double(),
               sm.at("target_met").as_bool() ? "met" : "NOT met",
               worst.is_null() ? std::string("unknown") : fmt::format("{:.2f} %", 100 * worst.as_double()));
  }
  if (sm.at("warmup_suspect").as_bool()) {
    fmt::print(out, "warning: the windows start cold: their first halves run more than 1 % slower than their second halves "
               "(warmup_check in the JSON); give a longer --sample-warmup\n");
  }
  fmt::print(out, "total: {} instructions in {} simulated cycles ({} simulated)\n", r.instructions, r.cycles,
             siSeconds(s.at("seconds").as_double()));
  if (s.contains("multiprogram")) printMultiprogram(out, s.at("multiprogram").as_object());
  fmt::print(out, "speed: {} instructions in {:.2f} host s = {:.2f} M instructions per host second (effective)\n",
             r.simulatedInstructions, r.hostSeconds,
             r.hostSeconds > 0 ? double(r.simulatedInstructions) / r.hostSeconds / 1e6 : 0.0);
}

// With -n N and several threads, a thread that reaches N first keeps running (its trace restarting whenever it
// ends) so that the slower ones are measured beside a busy sibling to the end, as docs/model.md describes: say which
// threads did, from when, and how much was simulated beyond the measured instructions, so that a run that simulates
// millions of instructions for a small N is not a surprise.
void printRanPast(std::FILE* out, const RunResult& r) {
  const json::object& s = r.stats;
  const std::uint64_t n = s.at("max_instructions").as_uint64();
  if (n == 0) return;
  std::vector<std::string> early;
  std::size_t measured = 0;
  for (const auto& v : s.at("logical_cpus").as_array()) {
    const json::object& c = v.as_object();
    if (c.at("trace").is_null()) continue;
    ++measured;
    // Said when the thread ran on for more than a tenth of the run: threads finishing a few cycles apart are not news.
    if (c.at("cycles").as_uint64() * 10 < r.cycles * 9) {
      early.push_back(fmt::format("cpu {} reached {} instructions at cycle {}", c.at("id").as_uint64(), n,
                                  c.at("cycles").as_uint64()));
    }
  }
  if (measured < 2 || early.empty()) return;
  fmt::print(out,
             "note: {} and ran on to cycle {} (its trace restarting whenever it ended) until every thread had {}; "
             "{} instructions were simulated in all for the {} measured\n",
             fmt::join(early, ", "), r.cycles, n, r.simulatedInstructions, r.instructions);
}

void printSummary(std::FILE* out, const RunResult& r) {
  const json::object& s = r.stats;
  if (s.contains("sampling")) {
    printSampledSummary(out, r);
    return;
  }
  fmt::print(out, "{:>4} {:>5} {:>12} {:>12} {:>9}  {}\n", "cpu", "core", "instructions", "cycles", "IPC",
             "top CPI components (cycles per instruction)");
  for (const auto& v : s.at("logical_cpus").as_array()) {
    const json::object& c = v.as_object();
    if (c.at("instructions").as_uint64() == 0 && c.at("trace").is_null()) continue;
    const std::string top = topCpiComponents(c.at("cpi_stack").as_object());
    fmt::print(out, "{:>4} {:>5} {:>12} {:>12} {:>9}  {}\n", c.at("id").as_uint64(), c.at("core").as_uint64(),
               c.at("instructions").as_uint64(), c.at("cycles").as_uint64(), significant(c.at("ipc").as_double()), top);
  }
  fmt::print(out, "total: {} instructions measured in {} cycles ({} simulated)\n", r.instructions, r.cycles,
             siSeconds(s.at("seconds").as_double()));
  printRanPast(out, r);
  if (s.contains("multiprogram")) printMultiprogram(out, s.at("multiprogram").as_object());
  fmt::print(out, "speed: {} instructions simulated in {:.2f} host s = {:.2f} M simulated instructions per host second\n",
             r.simulatedInstructions, r.hostSeconds,
             r.hostSeconds > 0 ? double(r.simulatedInstructions) / r.hostSeconds / 1e6 : 0.0);
}

// "A-B" or "K" (window numbers from 0).
std::pair<std::uint64_t, std::uint64_t> parseWindows(const std::string& text) {
  const auto dash = text.find('-');
  try {
    if (dash == std::string::npos) {
      const std::uint64_t k = parseCount(text, "--windows");
      return {k, k};
    }
    const std::uint64_t a = parseCount(text.substr(0, dash), "--windows");
    const std::uint64_t b = parseCount(text.substr(dash + 1), "--windows");
    if (a > b) throw UsageError("");
    return {a, b};
  } catch (const UsageError&) {
    throw UsageError(fmt::format("--windows {}: give A-B with A <= B, or one window K (numbered from 0)",
                                 shortQuote(text)));
  }
}

int runFromSnapshotsCommand(const po::variables_map& vm, const std::string& dir, const std::string& configName,
                            const std::vector<std::string>& sets, const std::string& windowsText,
                            const std::string& jsonFile, bool quiet, const std::vector<std::string>& traces,
                            const std::string& workersText) {
  if (!traces.empty()) {
    throw UsageError("--from-snapshots takes no TRACE: the snapshots' manifest names the traces");
  }
  for (const char* option : {"sample", "sample-period", "sample-window", "sample-warmup", "sample-target", "snapshots",
                             "max-instructions", "warmup"}) {
    if (vm.count(option) && !(std::string(option) == "sample" && !vm["sample"].as<bool>())) {
      throw UsageError(fmt::format("--{} does not go with --from-snapshots: the snapshots' manifest holds the run's "
                                   "parameters",
                                   option));
    }
  }
  const std::uint64_t workers = workersText.empty() ? 1 : parseCount(workersText, "--workers");
  checkWorkers(workers);
  const bool writeJson = vm.count("json") > 0;
  if (writeJson) checkOutputPath(jsonFile, "JSON output");
  Config config = configName.empty() ? snapshotConfig(dir) : loadConfig(configName);
  for (const auto& s : sets) applyOverride(config, s, "--set");
  validateConfig(config);
  SnapshotRunOptions options;
  if (!windowsText.empty()) std::tie(options.firstWindow, options.lastWindow) = parseWindows(windowsText);
  if (!quiet && workers == 1 && isatty(STDERR_FILENO) != 0) {
    options.progress = [](std::uint64_t done, std::uint64_t) {
      std::fprintf(stderr, "\r  %.1f M instructions   ", done / 1e6);
      std::fflush(stderr);
    };
  }
  RunResult result =
      workers > 1 ? runFromSnapshotsInWorkers(dir, config, options, workers) : runFromSnapshots(dir, config, options);
  if (options.progress) std::fputs("\r\033[K", stderr);
  printSummary(writeJson && isStandardOutput(jsonFile) ? stderr : stdout, result);
  if (writeJson) writeFileAtomically(jsonFile, json::serialize(result.stats) + "\n", "JSON output");
  return 0;
}

}  // namespace

int runCommand(const std::vector<std::string>& args) {
  std::string configName;
  std::vector<std::string> sets;
  std::vector<std::string> traces;
  std::string jsonFile;
  // Counts are taken as text and parsed by the one count parser: program_options would wrap "-5" to about 2^64.
  std::string maxInstructionsText = "0";
  std::string warmupText = "0";
  bool quiet = false;
  bool sample = false;
  bool baselines = false;
  std::string samplePeriodText = "0", sampleWindowText, sampleWarmupText;
  double sampleTarget = 0;
  std::string snapshotDir, fromSnapshots, windowsText, workersText;
  po::options_description opts(
      "usage: smtlab run [options] TRACE...\n"
      "Runs trace i on logical CPU i (numbered as Linux does: see system.siblings_adjacent, docs/model.md).\n"
      "TRACE: a trace file (native, text) or a generator spec such as gen:mix or gen:chase,footprint=64m.\n"
      "options");
  opts.add_options()("help,h", "this help")("config,c", po::value(&configName), "config file or preset name")(
      "set", po::value(&sets)->composing(), "override a config key: --set core.rob.entries=64 (repeatable)")(
      "max-instructions,n", po::value(&maxInstructionsText),
      "measure each thread over its first N instructions (5000, 10k, 2M, 1G); threads that finish early keep "
      "running (their trace restarting) until all have N; 0 = run every trace to its end")(
      "warmup", po::value(&warmupText), "simulate N instructions per thread before statistics start")(
      "json", po::value(&jsonFile), "write all statistics and the effective config to this JSON file ('-': standard output, and the table goes "
      "to standard error)")(
      "quiet,q", po::bool_switch(&quiet), "no progress indication")(
      "baselines", po::bool_switch(&baselines),
      "also run each trace alone (its own logical CPU, the others idle, same config, -n and --warmup) and report "
      "the multiprogram metrics: each thread's speedup, STP, ANTT, hmean and fairness (docs/metrics.md); with "
      "--sample, each alone run is sampled too and every metric has its 95 % interval")(
      "sample", po::bool_switch(&sample),
      "sampled simulation (docs/sampling.md): functional warming between short detailed windows spaced in time; "
      "each IPC with its 95 % confidence interval")(
      "sample-period", po::value(&samplePeriodText),
      "instructions per thread from one window to the next (default: the run's length / 100, or 1M if unknown)")(
      "sample-window", po::value(&sampleWindowText), "detailed instructions per thread measured in each window (10k)")(
      "sample-warmup", po::value(&sampleWarmupText), "detailed instructions per thread before each window (20k)")(
      "sample-target", po::value(&sampleTarget),
      "wanted relative half-width of every thread's IPC interval (0.02 = +-2 %); windows are added until met")(
      "snapshots", po::value(&snapshotDir),
      "with --sample: write the machine's state at the start of every window into this folder (window-NNNNNN.snap, "
      "manifest.json, config.toml; docs/sampling.md \"Window snapshots\")")(
      "from-snapshots", po::value(&fromSnapshots),
      "simulate the windows of a sampled run again from its --snapshots folder, without the functional warming "
      "(no TRACE: the manifest names them; config: the folder's, or -c / --set, which may change only policies, "
      "latencies and energy)")(
      "windows", po::value(&windowsText),
      "with --from-snapshots: only windows A-B (or one window K), numbered from 0; default all")(
      "workers", po::value(&workersText),
      "with --from-snapshots: simulate the windows in N processes, each a contiguous range of them, their results "
      "merged in window order: the same result as 1, the default (one process, window after window)");
  po::options_description hidden;
  hidden.add_options()("trace", po::value(&traces)->composing());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("trace", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return 0;
  }
  po::notify(vm);
  if (vm.count("from-snapshots")) {
    return runFromSnapshotsCommand(vm, fromSnapshots, configName, sets, windowsText, jsonFile, quiet, traces,
                                   workersText);
  }
  if (vm.count("windows")) throw UsageError("--windows goes with --from-snapshots");
  if (vm.count("workers")) throw UsageError("--workers goes with --from-snapshots");
  if (vm.count("snapshots") && !sample) throw UsageError("--snapshots goes with --sample");
  if (traces.empty()) throw UsageError("no trace given (see smtlab run --help)");
  const std::uint64_t maxInstructions = parseCount(maxInstructionsText, "--max-instructions/-n");
  const std::uint64_t warmup = parseCount(warmupText, "--warmup");
  const bool writeJson = vm.count("json") > 0;
  if (writeJson) {
    // Checked before the simulation, not after it: a bad destination costs nothing, and the run is not lost.
    checkOutputPath(jsonFile, "JSON output");
    for (const auto& t : traces) refuseOverwritingInput(t, jsonFile);
    // A preset name stands for its file in configs/: `-c netburst --json configs/netburst.toml` is refused too.
    if (!configName.empty()) refuseOverwritingInput(findConfigFile(configName), jsonFile);
  }

  Config config = loadConfig(configName);
  for (const auto& s : sets) applyOverride(config, s, "--set");
  validateConfig(config);

  RunOptions options;
  options.maxInstructions = maxInstructions;
  options.warmup = warmup;
  options.baselines = baselines;
  const bool sampleOption = vm.count("sample-period") || vm.count("sample-window") || vm.count("sample-warmup") ||
                            vm.count("sample-target");
  if (sampleOption && !sample) throw UsageError("--sample-period, --sample-window, --sample-warmup and --sample-target go with --sample");
  if (sample) {
    SampleOptions s;
    s.period = parseCount(samplePeriodText, "--sample-period");
    if (!sampleWindowText.empty()) s.window = parseCount(sampleWindowText, "--sample-window");
    if (!sampleWarmupText.empty()) s.warmup = parseCount(sampleWarmupText, "--sample-warmup");
    s.target = sampleTarget;
    options.sample = s;
    if (vm.count("snapshots")) {
      if (snapshotDir.empty()) throw UsageError("--snapshots: give a folder");
      options.snapshotDir = snapshotDir;
    }
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (!quiet && tty) {
    // With a known total, the time left at the rate so far (detailed and sampled runs alike).
    const auto started = std::chrono::steady_clock::now();
    options.progress = [started](std::uint64_t done, std::uint64_t expected) {
      if (expected > 0) {
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        const double left = done > 0 ? seconds * double(expected - std::min(done, expected)) / double(done) : 0.0;
        std::fprintf(stderr, "\r  %.1f M / %.1f M instructions (%.0f%%), about %.0f s left   ", done / 1e6,
                     expected / 1e6, 100.0 * double(done) / double(expected), left);
      } else {
        std::fprintf(stderr, "\r  %.1f M instructions   ", done / 1e6);
      }
      std::fflush(stderr);
    };
  }
  RunResult result = runTraces(config, traces, options);
  if (options.progress) std::fputs("\r\033[K", stderr);
  // With the JSON on standard output the table goes to standard error, so that the output stays one JSON document.
  printSummary(writeJson && isStandardOutput(jsonFile) ? stderr : stdout, result);
  if (writeJson) writeFileAtomically(jsonFile, json::serialize(result.stats) + "\n", "JSON output");
  return 0;
}

}  // namespace smtlab::cli
