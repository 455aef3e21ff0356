// Sampled runs (sampling.hpp, docs/sampling.md): calibration, windows spaced in simulated time, functional warming
// between them at the co-run rates, and the confidence intervals of the windows.
#include "smtlab/sim/sampling.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>

#include <boost/json.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/output_file.hpp"
#include "smtlab/common/short_quote.hpp"
#include "smtlab/common/state_io.hpp"
#include "smtlab/common/version.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/sim/machine.hpp"
#include "smtlab/sim/run.hpp"
#include "smtlab/sim/snapshot.hpp"

namespace smtlab {

namespace json = boost::json;

MeanInterval meanInterval95(std::span<const double> samples) {
  MeanInterval r;
  r.n = samples.size();
  if (r.n == 0) {
    r.mean = std::numeric_limits<double>::quiet_NaN();
    r.halfWidth = r.mean;
    return r;
  }
  double sum = 0;
  for (const double x : samples) sum += x;
  r.mean = sum / static_cast<double>(r.n);
  if (r.n < 2) {
    r.halfWidth = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  double squares = 0;
  for (const double x : samples) squares += (x - r.mean) * (x - r.mean);
  const double sd = std::sqrt(squares / static_cast<double>(r.n - 1));
  const boost::math::students_t dist(static_cast<double>(r.n - 1));
  r.halfWidth = boost::math::quantile(dist, 0.975) * sd / std::sqrt(static_cast<double>(r.n));
  return r;
}

MeanInterval ratioInterval95(std::span<const double> y, std::span<const double> x) {
  MeanInterval r;
  r.n = std::min(y.size(), x.size());
  double sy = 0, sx = 0;
  for (std::size_t k = 0; k < r.n; ++k) sy += y[k], sx += x[k];
  if (r.n == 0 || sx <= 0) {
    r.mean = r.halfWidth = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  r.mean = sy / sx;
  if (r.n < 2) {
    r.halfWidth = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  // Cochran's variance of a ratio estimate: s^2 of the residuals y - R x over n x-bar^2.
  double squares = 0;
  for (std::size_t k = 0; k < r.n; ++k) squares += (y[k] - r.mean * x[k]) * (y[k] - r.mean * x[k]);
  const double n = static_cast<double>(r.n);
  const double xBar = sx / n;
  const double variance = squares / (n - 1) / (n * xBar * xBar);
  const boost::math::students_t dist(n - 1);
  r.halfWidth = boost::math::quantile(dist, 0.975) * std::sqrt(variance);
  return r;
}

namespace {

// Adds every integer counter of `x` into `acc`, recursively (ratios and names are left out): the detailed statistics
// of the windows, summed.
void addCounters(json::object& acc, const json::object& x) {
  for (const auto& [key, value] : x) {
    if (value.is_uint64() || value.is_int64()) {
      const std::uint64_t v = value.is_uint64() ? value.as_uint64() : static_cast<std::uint64_t>(value.as_int64());
      json::value& a = acc[key];
      a = (a.is_uint64() ? a.as_uint64() : 0) + v;
    } else if (value.is_object()) {
      json::value& a = acc[key];
      if (!a.is_object()) a = json::object{};
      addCounters(a.as_object(), value.as_object());
    }
  }
}

json::value orNull(double x) { return std::isfinite(x) ? json::value(x) : json::value(nullptr); }

std::uint64_t cyclesFor(std::uint64_t instructions, double ipc) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(static_cast<double>(instructions) / ipc)));
}

// One stretch of one thread (or core): the instructions y it retired and the cycles x it ran, from one window's
// warm-up to the next one's.
struct Stretches {
  std::vector<double> y, x;
};

// What functional warming did after one window, up to the next one: whether the lanes' rates were taken from the
// window (gapInstructions), and the instructions each thread executed. A run from snapshots reads it from the manifest.
struct Gap {
  bool ratesUpdated = false;
  std::vector<std::uint64_t> done;
};

// Where a sampled run writes its window snapshots (docs/sampling.md "Window snapshots").
struct SnapshotSink {
  std::filesystem::path dir;
  json::object binding;            // snapshotBinding, made once
  std::vector<std::string> files;  // this pass's, by window
};

// What one measured window adds to a run's estimates, per thread: its counts and IPC (when the thread was measured in
// it and ran), its halves (the cold-start check), and its stretch (instructions and cycles up to the next window). A
// run absorbs the windows' outcomes in window order (SampledPass::absorb), whether it simulated them itself or a
// worker of a parallel run from snapshots did and handed them back as window records.
struct ThreadOutcome {
  bool inWindow = false;  // counted in windows, window_ipc and window_totals
  double ipc = 0;
  json::object counters;  // the window's integer counters (the only ones window_totals sums)
  bool halves = false;
  double halfExcess = 0, cpi = 0;
  bool stretch = false;
  double y = 0, x = 0;
};
struct WindowOutcome {
  std::uint64_t number = 0;          // the window's, from 0 over the whole run
  std::uint64_t measuredCycles = 0;  // the window's measured cycles
  std::uint64_t detailed = 0;        // instructions retired in its warm-up and window
  std::vector<ThreadOutcome> threads;
};

// The integer counters of `x` and the objects that hold them, as addCounters reads them: a record keeps only what
// it sums.
json::object countersOf(const json::object& x) {
  json::object out;
  for (const auto& [key, value] : x) {
    if (value.is_uint64() || value.is_int64()) {
      out[key] = value;
    } else if (value.is_object()) {
      out[key] = countersOf(value.as_object());
    }
  }
  return out;
}

// A run that wrote snapshots, as its manifest records it: what the windows cannot give by themselves.
struct RecordedRun {
  std::uint32_t passes = 1;
  std::uint64_t period = 0, warmCycles = 0, windowCycles = 0, calibrationDetailed = 0, functional = 0,
                simulatedCycles = 0;
  double calibrationIpc = 1;
  std::vector<std::uint64_t> finalRetired;
  std::vector<Gap> gaps;
  std::vector<std::string> files;
};

std::string windowFileName(std::uint64_t k) { return fmt::format("window-{:06}.snap", k); }

// A double in a manifest: its bits as well as its value, since a JSON parser need not read a number back to the same
// bits (boost.json's default one does not), and a run from snapshots must use the run's own figures.
json::value exactDouble(double x) {
  return json::object{{"value", x}, {"bits", std::bit_cast<std::uint64_t>(x)}};
}
double readExactDouble(const json::value& v) {
  return std::bit_cast<double>(json::value_to<std::uint64_t>(v.as_object().at("bits")));
}

// One pass of a sampled run: a machine, its traces from their start, a window every `period` instructions.
class SampledPass {
 public:
  SampledPass(const Config& config, const std::vector<std::string>& traces, const RunOptions& options,
              SnapshotSink* snapshots = nullptr)
      : machine_(config), options_(options), sample_(*options.sample), snapshots_(snapshots) {
    const std::uint32_t first = options.firstCpu;
    if (first > 0 && (first >= machine_.logicalCpus() || traces.size() > machine_.logicalCpus() - first)) {
      throw UsageError(fmt::format("sampling: {} trace(s) from CPU {} do not fit the machine's {} logical CPUs",
                                   traces.size(), first, machine_.logicalCpus()));
    }
    cursors_ = openRunTraces(traces, options.maxInstructions, config, machine_.logicalCpus() - first);
    for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
      WarmLane lane;
      lane.cpu = LogicalCpu{first + i};
      lane.cursor = cursors_[i].get();
      lane.asid = Asid{first + i + 1};
      lane.restart = options.maxInstructions > 0;  // as a detailed run: keep the siblings company until all have N
      lanes_.push_back(lane);
    }
    threadStretches_.resize(cursors_.size());
    totals_.resize(cursors_.size());
    windowsOf_.assign(cursors_.size(), 0);
    windowIpc_.resize(cursors_.size());
    lastIpc_.assign(cursors_.size(), 0.0);
    gapDone_.assign(cursors_.size(), 0);
    half_.assign(cursors_.size(), {0, 0});
    halfExcess_.resize(cursors_.size());
    windowCpi_.resize(cursors_.size());
    rate_.assign(cursors_.size(), 1.0);
  }

  // The run's length in instructions per thread, if known: the count asked for, or the longest trace.
  std::optional<std::uint64_t> length() {
    if (options_.maxInstructions > 0) return options_.maxInstructions;
    std::uint64_t longest = 0;
    for (auto& c : cursors_) {
      const auto n = c->source().length();
      if (!n) return std::nullopt;
      longest = std::max(longest, *n);
    }
    return longest;
  }

  // Runs the pass with a window every `period` instructions per thread.
  void run(std::uint64_t period) {
    period_ = period;
    // The first half period is warmed functionally (at an assumed IPC of 1), so that the calibration window does not
    // measure the cold start. That window sets the cycles of every later warm-up and window from its mean IPC, so
    // that all windows last the same time; it is not a sample.
    gap(period / 2);
    if (allDone()) {
      throw UsageError(fmt::format("sampling: the run ended within the first half period ({} instructions per "
                                   "thread); give a shorter --sample-period or run it in detail",
                                   period / 2));
    }
    window(sample_.warmup, sample_.window, nullptr);
    calibrationDetailed_ = detailed_;
    double sum = 0;
    int n = 0;
    for (const double ipc : lastIpc_) {
      if (ipc > 0) sum += ipc, ++n;
    }
    calibrationIpc_ = n > 0 ? sum / n : 1.0;
    warmCycles_ = cyclesFor(sample_.warmup, calibrationIpc_);
    windowCycles_ = cyclesFor(sample_.window, calibrationIpc_);
    // Each window sits at a random point of its period (stratified sampling; a fixed seed, so a run repeats exactly):
    // a window every `period` instructions at a fixed offset would alias with a program whose phases repeat at a
    // multiple of the period and measure one phase only.
    std::mt19937_64 rng(kOffsetSeed);
    auto drawOffset = [&] {
      std::uint64_t live = 0;
      for (const WarmLane& lane : lanes_) live += lane.ended ? 0 : 1;
      const std::uint64_t w = sample_.warmup + sample_.window;
      const std::uint64_t room = period > w ? live * (period - w) : 0;
      return room > 0 ? std::uniform_int_distribution<std::uint64_t>(0, room)(rng) : 0;
    };
    std::uint64_t offset = drawOffset();
    gapInstructions(offset);
    while (!allDone()) {
      if (snapshots_ != nullptr) writeSnapshot();
      const Cycle start = machine_.now();
      std::vector<std::uint64_t> retiredAtStart(cursors_.size());
      std::vector<bool> measured(cursors_.size());
      for (std::size_t i = 0; i < cursors_.size(); ++i) {
        retiredAtStart[i] = cursors_[i]->retired();
        measured[i] = measuring(i);
      }
      std::fill(gapDone_.begin(), gapDone_.end(), 0);
      WindowOutcome outcome;
      window(warmCycles_, windowCycles_, &outcome);
      const Cycle windowEnd = machine_.now();
      // The rest of the period, and the next one up to its window, is warmed: together the live threads retire
      // `period` instructions each per period, split by their rates in the window (the co-phase).
      std::uint64_t live = 0;
      for (const WarmLane& lane : lanes_) live += lane.ended ? 0 : 1;
      const std::uint64_t done = retiredAll() - sumOf(retiredAtStart);
      const std::uint64_t next = drawOffset();
      Gap g;
      if (live * period + next > done + offset) {
        g.ratesUpdated = true;
        gapInstructions(live * period + next - done - offset);
      }
      g.done = gapDone_;
      gaps_.push_back(std::move(g));
      offset = next;
      std::vector<std::uint64_t> retiredNow(cursors_.size());
      for (std::size_t i = 0; i < cursors_.size(); ++i) retiredNow[i] = cursors_[i]->retired();
      record(start, windowEnd, retiredAtStart, measured, retiredNow, outcome);
      absorb(outcome);
      report();
    }
    for (std::size_t i = 0; i < cursors_.size(); ++i) {
      if (cursors_[i]->retired() == 0) {
        throw TraceError(fmt::format("trace '{}' on CPU {} has no instructions", cursors_[i]->describe(), i));
      }
    }
  }

  // The largest relative half-width of a measured thread's IPC (NaN when a thread has fewer than two stretches).
  double worstRelativeHalfWidth() const {
    double worst = 0;
    for (const Stretches& st : threadStretches_) {
      const MeanInterval r = ratioInterval95(st.y, st.x);
      const double rel = r.halfWidth / r.mean;
      if (!std::isfinite(rel)) return std::numeric_limits<double>::quiet_NaN();
      worst = std::max(worst, rel);
    }
    return worst;
  }
  std::uint64_t windows() const { return windows_; }

  // The cold-start check: how much slower than its second half a window's first half runs, relative to the windows'
  // mean CPI, with the 95 % interval of that mean. Phases inside windows fall in either half alike (the windows sit at
  // random points), so only a window that starts colder than the program is, a detailed warm-up too short, makes the
  // first half slower on average; `cold` says it is so beyond kColdExcess with 95 % confidence.
  struct WarmupCheck {
    double excess = std::numeric_limits<double>::quiet_NaN();
    double halfWidth = std::numeric_limits<double>::quiet_NaN();
    bool cold = false;
  };
  WarmupCheck warmupCheck(std::size_t i) const {
    WarmupCheck w;
    const MeanInterval d = meanInterval95(halfExcess_[i]);
    const MeanInterval cpi = meanInterval95(windowCpi_[i]);
    if (d.n < 2 || !(cpi.mean > 0)) return w;
    w.excess = d.mean / cpi.mean;
    w.halfWidth = d.halfWidth / cpi.mean;
    w.cold = w.excess - w.halfWidth > kColdExcess;
    return w;
  }

  json::object result(const std::vector<std::string>& traces, std::uint32_t passes, double hostSeconds,
                      const RunOptions& options) {
    const Config& config = machine_.config();
    json::object root;
    json::array cpus;
    std::uint64_t total = 0;
    std::uint64_t retired = 0;
    std::uint64_t longest = 0;  // the run's estimated cycles: its slowest thread's
    bool anyCold = false;
    for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
      const CpuInfo& info = machine_.cpu(lanes_[i].cpu);
      const MeanInterval r = ratioInterval95(threadStretches_[i].y, threadStretches_[i].x);
      const std::uint64_t retiredInAll = recorded_ != nullptr ? recorded_->finalRetired[i] : cursors_[i]->retired();
      const std::uint64_t insns = options.maxInstructions > 0 ? options.maxInstructions : retiredInAll;
      retired += retiredInAll;
      total += insns;
      json::object o;
      o["id"] = lanes_[i].cpu.value;
      o["core"] = info.core.value;
      o["thread"] = info.thread.value;
      o["trace"] = cursors_[i]->describe();
      o["instructions"] = insns;
      o["ipc"] = orNull(r.mean);
      o["ipc_ci95"] = orNull(r.halfWidth);
      const bool known = std::isfinite(r.mean) && r.mean > 0;
      const auto cycles = known ? static_cast<std::uint64_t>(std::llround(static_cast<double>(insns) / r.mean)) : 0;
      longest = std::max(longest, cycles);
      o["cycles"] = known ? json::value(cycles) : json::value(nullptr);
      o["windows"] = windowsOf_[i];
      o["window_ipc"] = windowIpc_[i];
      // The CPI stack of the windows together: their cycles by cause over their instructions.
      json::object stack;
      const json::object& t = totals_[i];
      const double winInsns = t.contains("instructions") ? static_cast<double>(t.at("instructions").as_uint64()) : 0;
      if (t.contains("cpi_stack_cycles")) {
        for (const auto& [k, v] : t.at("cpi_stack_cycles").as_object()) {
          stack[k] = winInsns > 0 ? static_cast<double>(v.as_uint64()) / winInsns : 0.0;
        }
      }
      o["cpi_stack"] = std::move(stack);
      o["window_totals"] = t;
      const WarmupCheck w = warmupCheck(i);
      o["warmup_check"] = json::object{{"first_half_excess", orNull(w.excess)}, {"ci95", orNull(w.halfWidth)},
                                       {"cold", w.cold}};
      anyCold = anyCold || w.cold;
      cpus.push_back(std::move(o));
    }
    // A core's throughput is the sum of its threads' IPCs (as STP sums them), its half-width the root of the sum
    // of their squares (the threads' errors taken as independent).
    json::array cores;
    for (std::uint32_t c = 0; c < machine_.cores(); ++c) {
      double sum = 0, squares = 0;
      std::uint64_t threads = 0;
      for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
        if (machine_.cpu(lanes_[i].cpu).core.value != c) continue;
        const MeanInterval r = ratioInterval95(threadStretches_[i].y, threadStretches_[i].x);
        sum += r.mean;
        squares += r.halfWidth * r.halfWidth;
        ++threads;
      }
      if (threads == 0) continue;
      cores.push_back(json::object{{"id", c}, {"throughput", orNull(sum)}, {"throughput_ci95", orNull(std::sqrt(squares))},
                                   {"threads", threads}});
    }
    root["smtlab_version"] = std::string(version());
    root["cycles"] = longest;
    root["seconds"] = static_cast<double>(longest) / (config.system.freq_ghz * 1e9);
    root["instructions"] = total;
    root["logical_cpus"] = std::move(cpus);
    root["cores"] = std::move(cores);
    const double worst = worstRelativeHalfWidth();
    root["sampling"] = json::object{
        {"windows", windows_},
        {"passes", passes},
        {"window_instructions", sample_.window},
        {"warmup_instructions", sample_.warmup},
        {"period_instructions", period_},
        {"calibration_ipc", calibrationIpc_},
        {"window_cycles", windows_ > 0 ? windowCyclesSum_ / windows_ : windowCycles_},
        {"warmup_cycles", warmCycles_},
        {"simulated_cycles", recorded_ != nullptr ? recorded_->simulatedCycles : machine_.now().value},
        {"detailed_instructions", recorded_ != nullptr ? recorded_->calibrationDetailed + detailed_ : detailed_},
        {"functional_instructions", recorded_ != nullptr ? recorded_->functional : functional_},
        {"max_relative_half_width", orNull(worst)},
        {"warmup_suspect", anyCold},
        {"target", sample_.target},
        {"target_met", sample_.target > 0 ? json::value(std::isfinite(worst) && worst <= sample_.target)
                                          : json::value(nullptr)}};
    root["host_seconds"] = hostSeconds;
    root["simulated_instructions"] = retired;
    root["instructions_per_host_second"] = hostSeconds > 0 ? static_cast<double>(retired) / hostSeconds : 0.0;
    root["max_instructions"] = options.maxInstructions;
    root["warmup"] = 0;
    json::array names;
    for (const auto& t : traces) names.push_back(json::value(t));
    root["traces"] = std::move(names);
    root["config"] = configToJson(config);
    return root;
  }

  // The manifest of the snapshots this pass wrote (snapshots_ set): the run's parameters, per window its file and
  // the functional warming after it, and the totals a run from the snapshots reports as this run's.
  json::object manifest(std::uint32_t passes) const {
    json::array windows;
    for (std::size_t k = 0; k < gaps_.size(); ++k) {
      json::array done;
      for (const std::uint64_t d : gaps_[k].done) done.push_back(d);
      windows.push_back(json::object{{"file", snapshots_->files[k]},
                                     {"rates_updated", gaps_[k].ratesUpdated},
                                     {"gap_instructions", std::move(done)}});
    }
    json::array retired;
    for (const auto& c : cursors_) retired.push_back(c->retired());
    return json::object{{"passes", passes},
                        {"period_instructions", period_},
                        {"calibration_ipc", exactDouble(calibrationIpc_)},
                        {"warmup_cycles", warmCycles_},
                        {"window_cycles", windowCycles_},
                        {"calibration_detailed_instructions", calibrationDetailed_},
                        {"functional_instructions", functional_},
                        {"simulated_cycles", machine_.now().value},
                        {"retired", std::move(retired)},
                        {"windows", std::move(windows)}};
  }

  // Takes the recorded run's parameters, for a run from its snapshots: before replaying windows or absorbing a
  // worker's outcomes.
  void useRecordedRun(const RecordedRun& run) {
    recorded_ = &run;
    period_ = run.period;
    calibrationIpc_ = run.calibrationIpc;
    warmCycles_ = run.warmCycles;
    windowCycles_ = run.windowCycles;
  }

  // Simulates windows [first, last] of a run from its snapshots in `dir`, as the run did: each window starts from its
  // snapshot, and the functional warming after it is the run's (the manifest's). Each window's outcome goes to `sink`
  // in window order: absorb() for a run in one process, a window record for a worker of a parallel one.
  void replay(const std::filesystem::path& dir, const RecordedRun& run, std::uint64_t first, std::uint64_t last,
              const Config& config, const std::vector<std::string>& traces,
              const std::function<void(WindowOutcome&&)>& sink) {
    useRecordedRun(run);
    for (std::uint64_t k = first; k <= last; ++k) {
      const std::filesystem::path path = dir / run.files[k];
      SnapshotFile file = readSnapshotFile(path);
      const json::value* binding = file.header.if_contains("binding");
      if (binding == nullptr || !binding->is_object()) throw Error(fmt::format("{}: no binding", path.string()));
      checkSnapshotBinding(path, binding->as_object(), config, traces);
      windowNumber_ = k;
      StateIo io(file.state, path.string());
      visitState(io);
      io.expectEnd();
      const Cycle start = machine_.now();
      std::vector<std::uint64_t> retiredAtStart(cursors_.size());
      std::vector<bool> measured(cursors_.size());
      for (std::size_t i = 0; i < cursors_.size(); ++i) {
        retiredAtStart[i] = cursors_[i]->retired();
        measured[i] = measuring(i);
      }
      std::fill(gapDone_.begin(), gapDone_.end(), 0);
      WindowOutcome outcome;
      window(warmCycles_, windowCycles_, &outcome);
      const Cycle windowEnd = machine_.now();
      const Gap& g = run.gaps[k];
      if (g.ratesUpdated) updateRates();
      std::vector<std::uint64_t> retiredNow(cursors_.size());
      for (std::size_t i = 0; i < cursors_.size(); ++i) {
        gapDone_[i] = g.done[i];
        retiredNow[i] = cursors_[i]->retired() + g.done[i];
      }
      record(start, windowEnd, retiredAtStart, measured, retiredNow, outcome);
      sink(std::move(outcome));
      report();
    }
  }

  // Adds one window's outcome to the estimates. Windows are absorbed in window order: the stretches' sums and the
  // window_ipc lists follow it, so the same windows give the same figures bit for bit however they were simulated.
  void absorb(const WindowOutcome& o) {
    if (o.threads.size() != cursors_.size()) {
      throw Error(fmt::format("window {}: the outcome lists {} threads, the run has {}", o.number, o.threads.size(),
                              cursors_.size()));
    }
    windowCyclesSum_ += o.measuredCycles;
    detailed_ += o.detailed;
    ++windows_;
    for (std::size_t i = 0; i < cursors_.size(); ++i) {
      const ThreadOutcome& t = o.threads[i];
      if (t.inWindow) {
        ++windowsOf_[i];
        windowIpc_[i].push_back(json::array{o.number, t.ipc});
        addCounters(totals_[i], t.counters);
      }
      if (t.halves) {
        halfExcess_[i].push_back(t.halfExcess);
        windowCpi_[i].push_back(t.cpi);
      }
      if (t.stretch) {
        threadStretches_[i].y.push_back(t.y);
        threadStretches_[i].x.push_back(t.x);
      }
    }
  }

 private:
  // The state a window starts from: the machine, the traces' positions and the sampler's rates (a snapshot).
  void visitState(StateIo& io) {
    machine_.visitState(io);
    for (auto& c : cursors_) c->visitState(io);
    io.mark("sampler");
    for (WarmLane& lane : lanes_) io(lane.asid, lane.ipc, lane.restart, lane.done, lane.ended, lane.endedAt, lane.credit);
    io(lastIpc_, rate_);
  }

  void writeSnapshot() {
    const std::uint64_t k = windows_;
    const std::string name = windowFileName(k);
    StateIo io;
    visitState(io);
    const json::object header{{"window", k},
                              {"cycle", machine_.now().value},
                              {"smtlab_version", std::string(version())},
                              {"binding", snapshots_->binding}};
    writeSnapshotFile(snapshots_->dir / name, header, io.bytes());
    if (snapshots_->files.size() <= k) snapshots_->files.resize(k + 1);
    snapshots_->files[k] = name;
  }

  // A thread is measured while it is within its first N instructions (or, without N, until its trace ends).
  bool measuring(std::size_t i) const {
    if (options_.maxInstructions > 0) return cursors_[i]->retired() < options_.maxInstructions;
    return !lanes_[i].ended;
  }
  bool allDone() const {
    for (std::size_t i = 0; i < cursors_.size(); ++i) {
      if (measuring(i)) return false;
    }
    return true;
  }

  static std::uint64_t sumOf(const std::vector<std::uint64_t>& v) {
    std::uint64_t n = 0;
    for (const std::uint64_t x : v) n += x;
    return n;
  }
  std::uint64_t retiredAll() const {
    std::uint64_t n = 0;
    for (const auto& c : cursors_) n += c->retired();
    return n;
  }

  // The stretch that began at `start`: per measured thread the instructions it retired (up to its N) over the cycles
  // it ran: the detailed part's (to its trace's end, if that came first) and its warmed instructions at its rate.
  // retiredNow: each thread's instructions retired in all at the stretch's end.
  void record(Cycle start, Cycle windowEnd, const std::vector<std::uint64_t>& retiredAtStart,
              const std::vector<bool>& measured, const std::vector<std::uint64_t>& retiredNow, WindowOutcome& out) {
    for (std::size_t i = 0; i < cursors_.size(); ++i) {
      if (!measured[i]) continue;
      const std::uint64_t retired = retiredNow[i] - retiredAtStart[i];
      double y = static_cast<double>(retired);
      const Cycle detailedEnd =
          lanes_[i].ended && lanes_[i].endedAt > start && lanes_[i].endedAt < windowEnd ? lanes_[i].endedAt : windowEnd;
      double x = static_cast<double>(detailedEnd.value - start.value) +
                 static_cast<double>(gapDone_[i]) / rate_[i];
      if (options_.maxInstructions > 0 && retiredAtStart[i] + retired > options_.maxInstructions) {
        // Past its N the thread only keeps its siblings company: the stretch counts up to N, at the stretch's rate.
        const double kept = static_cast<double>(options_.maxInstructions - retiredAtStart[i]);
        x *= kept / y;
        y = kept;
      }
      if (x <= 0) continue;
      out.threads[i].stretch = true;
      out.threads[i].y = y;
      out.threads[i].x = x;
    }
  }

  // Detailed simulation for `cycles`; a trace that ends starts again (with N) or leaves its CPU idle.
  void detailed(std::uint64_t cycles) {
    const Cycle until = machine_.now() + cycles;
    while (machine_.now() < until) {
      const Cycle bound = std::min(until, machine_.now() + (std::uint64_t{1} << 20));
      for (const Event& e : machine_.run(bound)) {
        if (e.kind != EventKind::SourceEnded) continue;
        WarmLane& lane = lanes_[e.cpu.value - lanes_.front().cpu.value];
        if (lane.cursor->retired() == 0) {
          throw TraceError(fmt::format("trace '{}' on CPU {} has no instructions", lane.cursor->describe(),
                                       e.cpu.value));
        }
        if (lane.restart) {
          machine_.restartTrace(e.cpu);
        } else {
          lane.ended = true;
          lane.endedAt = e.cycle;
        }
      }
      if (options_.stopRequested && options_.stopRequested()) throw RunInterrupted();
    }
  }

  // A detailed warm-up and measurement window: the traces are attached, run, measured and detached again (each
  // cursor rewinds to its oldest unretired instruction, which functional warming then goes on from). A measured
  // window fills `out` (its stretches come from record()); the calibration window (null) only sets the rates.
  void window(std::uint64_t warmCycles, std::uint64_t windowCycles, WindowOutcome* out) {
    const bool record = out != nullptr;
    if (record) {
      out->number = windowNumber_;
      out->threads.assign(cursors_.size(), ThreadOutcome{});
    }
    const std::uint64_t before = retiredAll();
    for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
      if (!lanes_[i].ended) machine_.attach(lanes_[i].cpu, cursors_[i], lanes_[i].asid);
    }
    detailed(warmCycles);
    machine_.resetStats();
    std::vector<bool> measured(cursors_.size());
    for (std::size_t i = 0; i < cursors_.size(); ++i) measured[i] = measuring(i);
    measureWindow(measured, windowCycles);
    if (record) out->measuredCycles = machine_.measuredCycles();
    for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
      const ThreadStats& st = machine_.threadStats(lanes_[i].cpu);
      lastIpc_[i] = st.cycles > 0 ? static_cast<double>(st.instructions) / static_cast<double>(st.cycles) : 0.0;
      if (!record || !measured[i] || st.cycles == 0) continue;
      ThreadOutcome& t = out->threads[i];
      t.inWindow = true;
      t.ipc = lastIpc_[i];
      t.counters = countersOf(machine_.cpuStatsJson(lanes_[i].cpu));
      const auto [n1, c1] = half_[i];
      if (n1 > 0 && st.instructions > n1 && st.cycles > c1) {
        const double first = static_cast<double>(c1) / static_cast<double>(n1);
        const double second = static_cast<double>(st.cycles - c1) / static_cast<double>(st.instructions - n1);
        t.halves = true;
        t.halfExcess = first - second;
        t.cpi = static_cast<double>(st.cycles) / static_cast<double>(st.instructions);
      }
    }
    if (record) ++windowNumber_;
    for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
      if (machine_.busy(lanes_[i].cpu)) machine_.detach(lanes_[i].cpu);
    }
    if (record) {
      out->detailed = retiredAll() - before;
    } else {
      detailed_ += retiredAll() - before;
    }
  }

  // The measurement window: until every measured thread still running has retired sample_.window instructions, at
  // most kWindowCap times `expectedCycles` (a starved thread does not hold it for ever). A window of a fixed count
  // makes its CPI, cycles / count, an unbiased sample of the CPI where it falls (SMARTS' unit); a window of fixed
  // cycles gives count / cycles, whose inverse overstates the CPI by the count's relative variance (9 % on bzip2's
  // 10 k-instruction windows).
  // Each measured thread's instructions and cycles when it passed half the window are kept in half_, for the cold-start
  // check (warmupExcess).
  void measureWindow(const std::vector<bool>& measured, std::uint64_t expectedCycles) {
    const std::uint64_t cap = kWindowCap * expectedCycles;
    const std::uint64_t start = machine_.measuredCycles();
    std::fill(half_.begin(), half_.end(), std::pair<std::uint64_t, std::uint64_t>{0, 0});
    for (;;) {
      bool short_ = false;
      for (std::uint32_t i = 0; i < cursors_.size(); ++i) {
        if (!measured[i] || lanes_[i].ended) continue;
        const ThreadStats& st = machine_.threadStats(lanes_[i].cpu);
        if (half_[i].first == 0 && 2 * st.instructions >= sample_.window) half_[i] = {st.instructions, st.cycles};
        if (st.instructions < sample_.window) short_ = true;
      }
      const std::uint64_t elapsed = machine_.measuredCycles() - start;
      if (!short_ || elapsed >= cap) break;
      detailed(std::min<std::uint64_t>(kWindowStep, cap - elapsed));
    }
  }

  // Functional warming until the live threads have retired about `instructions` together, each at its IPC of the
  // last window (a thread that retired nothing there keeps its earlier rate, at least kMinIpc, so that it is never
  // frozen): simulated time moves by instructions / the sum of the rates. Without coPhase each gets an equal share.
  void gapInstructions(std::uint64_t instructions) {
    const double rate = updateRates();
    if (rate > 0) gap(cyclesFor(instructions, rate));
  }
  // Each lane's rate from the last window; returns the live lanes' sum.
  double updateRates() {
    double rate = 0;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      if (lastIpc_[i] > 0) rate_[i] = lastIpc_[i];
      rate_[i] = std::max(rate_[i], kMinIpc);
      lanes_[i].ipc = sample_.coPhase ? rate_[i] : 1.0;
      if (!lanes_[i].ended) rate += lanes_[i].ipc;
    }
    return rate;
  }

  // Functional warming for `cycles` at the lanes' rates.
  void gap(std::uint64_t cycles) {
    if (cycles == 0) return;
    const std::uint64_t before = retiredAll();
    // In slices, so that a stop request and the progress report come now and then.
    constexpr std::uint64_t kSlice = std::uint64_t{1} << 22;
    for (std::uint64_t left = cycles; left > 0 && !allDone();) {
      const std::uint64_t step = std::min(left, kSlice);
      machine_.warm(lanes_, step);
      for (std::size_t i = 0; i < lanes_.size(); ++i) gapDone_[i] += lanes_[i].done;
      left -= step;
      if (options_.stopRequested && options_.stopRequested()) throw RunInterrupted();
      report();
    }
    functional_ += retiredAll() - before;
  }

  void report() {
    if (!options_.progress) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - lastReport_ < std::chrono::milliseconds(500)) return;
    lastReport_ = now;
    std::uint64_t done = 0;
    for (const auto& c : cursors_) {
      done += options_.maxInstructions > 0 ? std::min(c->retired(), options_.maxInstructions) : c->retired();
    }
    const auto n = length();
    options_.progress(done, n ? *n * cursors_.size() : 0);
  }

  static constexpr double kMinIpc = 1e-3;
  static constexpr double kColdExcess = 0.01;  // a first half 1 % slower: "cold" (chosen bound; docs/sampling.md)
  static constexpr std::uint64_t kWindowCap = 20;
  static constexpr std::uint64_t kWindowStep = 64;  // cycles between checks of a window's counts
  static constexpr std::uint64_t kOffsetSeed = 0x5eed5a3b1e;

  Machine machine_;
  const RunOptions& options_;
  const SampleOptions sample_;
  std::vector<std::shared_ptr<TraceCursor>> cursors_;
  std::vector<WarmLane> lanes_;
  std::vector<Stretches> threadStretches_;  // per thread
  std::vector<json::object> totals_;        // per thread, the windows' counters summed
  std::vector<std::uint64_t> windowsOf_;    // per thread, the windows it was measured in
  std::vector<json::array> windowIpc_;       // per thread, [window number, IPC] of each window it was measured in
  std::uint64_t windowNumber_ = 0;           // of the next window, counted over the whole run from 0
  std::vector<double> lastIpc_;             // per thread, in the last window (0: none retired)
  std::vector<std::uint64_t> gapDone_;      // per thread, instructions warmed since the stretch's window
  std::vector<std::pair<std::uint64_t, std::uint64_t>> half_;  // per thread: (instructions, cycles) at half a window
  std::vector<std::vector<double>> halfExcess_;  // per thread, per window: CPI of its first half - of its second
  std::vector<std::vector<double>> windowCpi_;   // per thread, per window: its CPI
  std::vector<double> rate_;                // per thread, the IPC that carries it between windows
  std::uint64_t windows_ = 0, detailed_ = 0, functional_ = 0, period_ = 0;
  std::uint64_t warmCycles_ = 0, windowCycles_ = 0, windowCyclesSum_ = 0;
  double calibrationIpc_ = 1;
  std::uint64_t calibrationDetailed_ = 0;
  SnapshotSink* snapshots_ = nullptr;
  std::vector<Gap> gaps_;                    // per window, the functional warming after it
  const RecordedRun* recorded_ = nullptr;   // a run from snapshots: the recorded run's totals
  std::chrono::steady_clock::time_point lastReport_{};
};

void checkSampleOptions(const SampleOptions& s, const RunOptions& options) {
  if (options.warmup > 0) {
    throw UsageError("--warmup does not go with a sampled run: each window has its detailed warm-up (--sample-warmup)");
  }
  if (s.window == 0) throw UsageError("--sample-window: must be at least 1 instruction");
  if (!(s.target >= 0) || s.target >= 1) {
    throw UsageError(fmt::format("--sample-target: {} is not a relative half-width in [0, 1) (0.02 = +-2 %)",
                                 s.target));
  }
  if (s.maxPasses == 0) throw UsageError("sampling: at least one pass");
  if (s.period > 0 && s.period < s.warmup + s.window) {
    throw UsageError(fmt::format("--sample-period {} is shorter than a window with its warm-up ({} + {}): windows "
                                 "would overlap",
                                 s.period, s.warmup, s.window));
  }
}

}  // namespace

namespace {

constexpr std::string_view kManifestName = "manifest.json";
constexpr std::string_view kManifestFormat = "smtlab window snapshots";
constexpr std::string_view kSnapshotConfigName = "config.toml";

RunResult resultOf(json::object stats, double host) {
  RunResult result;
  result.stats = std::move(stats);
  result.hostSeconds = host;
  result.instructions = result.stats["instructions"].as_uint64();
  result.cycles = result.stats["cycles"].as_uint64();
  result.simulatedInstructions = result.stats["simulated_instructions"].as_uint64();
  return result;
}

// Makes the snapshot folder (or checks that it can be written) before the run, so that a bad destination costs no
// simulation.
SnapshotSink openSnapshotSink(const std::string& dir, const Config& config, const std::vector<std::string>& traces) {
  SnapshotSink sink;
  sink.dir = dir;
  std::error_code ec;
  std::filesystem::create_directories(sink.dir, ec);
  if (ec || !std::filesystem::is_directory(sink.dir)) {
    throw Error(fmt::format("--snapshots {}: cannot make the folder: {}", shortQuote(dir),
                            ec ? ec.message() : "a file of that name is in the way"));
  }
  checkOutputPath(sink.dir / kManifestName, "snapshot manifest");
  sink.binding = snapshotBinding(config, traces);
  return sink;
}

// The manifest last, so that its presence says the set is complete; window files of an earlier run in the same
// folder that this run did not write are removed.
void finishSnapshots(const SnapshotSink& sink, const json::object& run, const Config& config,
                     const std::vector<std::string>& traces, const RunOptions& options) {
  writeFileAtomically(sink.dir / kSnapshotConfigName, configToToml(config), "snapshot config");
  json::array names;
  for (const auto& t : traces) names.push_back(json::value(t));
  const SampleOptions& s = *options.sample;
  const json::object manifest{{"format", kManifestFormat},
                              {"version", kSnapshotVersion},
                              {"smtlab_version", std::string(version())},
                              {"traces", std::move(names)},
                              {"max_instructions", options.maxInstructions},
                              {"sample",
                               json::object{{"window", s.window},
                                            {"warmup", s.warmup},
                                            {"period", s.period},
                                            {"target", exactDouble(s.target)},
                                            {"co_phase", s.coPhase}}},
                              {"config", kSnapshotConfigName},
                              {"run", run}};
  writeFileAtomically(sink.dir / kManifestName, json::serialize(manifest) + "\n", "snapshot manifest");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(sink.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("window-", 0) != 0 || entry.path().extension() != ".snap") continue;
    if (std::find(sink.files.begin(), sink.files.end(), name) == sink.files.end()) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

}  // namespace

RunResult runSampled(const Config& config, const std::vector<std::string>& traces, const RunOptions& options) {
  const SampleOptions& sample = *options.sample;
  checkSampleOptions(sample, options);
  const auto start = std::chrono::steady_clock::now();
  std::optional<SnapshotSink> sink;
  if (!options.snapshotDir.empty()) sink = openSnapshotSink(options.snapshotDir, config, traces);
  SnapshotSink* snapshots = sink ? &*sink : nullptr;
  std::unique_ptr<SampledPass> pass = std::make_unique<SampledPass>(config, traces, options, snapshots);
  std::uint64_t period = sample.period;
  if (period == 0) {
    const auto length = pass->length();
    period = length ? std::max(*length / SampleOptions::kDefaultWindows, sample.warmup + sample.window)
                    : SampleOptions::kDefaultPeriod;
  }
  const std::uint64_t shortest = sample.warmup + sample.window;
  std::uint32_t passes = 1;
  pass->run(period);
  // SMARTS' rule for the windows a target needs: n' = n (h / target)^2 (the half-width shrinks as 1 / sqrt(n)).
  while (sample.target > 0 && passes < sample.maxPasses && period > shortest) {
    const double worst = pass->worstRelativeHalfWidth();
    if (std::isfinite(worst) && worst <= sample.target) break;
    const double n = static_cast<double>(std::max<std::uint64_t>(pass->windows(), 1));
    const double needed = std::isfinite(worst) ? n * (worst / sample.target) * (worst / sample.target) * 1.1 : n * 4;
    period = std::max(shortest, static_cast<std::uint64_t>(static_cast<double>(period) * n / needed));
    if (sink) sink->files.clear();  // the next pass writes its own windows over these
    pass = std::make_unique<SampledPass>(config, traces, options, snapshots);
    pass->run(period);
    ++passes;
  }
  if (sink) {
    sink->files.resize(pass->windows());
    finishSnapshots(*sink, pass->manifest(passes), config, traces, options);
  }
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return resultOf(pass->result(traces, passes, host, options), host);
}

namespace {

// FNV-1a, 64 bits: a stable digest (std::hash need not be) for telling one manifest or config from another.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3;
  }
  return h;
}

// The manifest of a snapshot folder, checked: its format, version and the fields a run from it needs.
struct Manifest {
  std::uint64_t digest = 0;  // of the manifest's text: window records name the folder they came from by it
  std::vector<std::string> traces;
  RunOptions options;
  RecordedRun run;
};

Manifest readManifest(const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / kManifestName;
  const std::string name = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(fmt::format("{}: no snapshot manifest here ({}); write one with smtlab run --sample --snapshots DIR",
                            name, std::strerror(errno)));
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) throw Error(fmt::format("{}: not a JSON object ({})", name, ec.message()));
  const json::object& o = v.as_object();
  try {
    if (o.at("format") != json::value(kManifestFormat)) throw Error("not a snapshot manifest");
    const std::uint64_t version = json::value_to<std::uint64_t>(o.at("version"));
    if (version > kSnapshotVersion) {
      throw Error(fmt::format("snapshot format version {} is newer than this smtlab reads ({})", version,
                              kSnapshotVersion));
    }
    if (version < kSnapshotVersion) {
      throw Error(fmt::format("snapshot format version {} is older than this smtlab reads ({}); take the snapshots "
                              "again",
                              version, kSnapshotVersion));
    }
    Manifest m;
    m.digest = fnv1a(text);
    for (const auto& t : o.at("traces").as_array()) m.traces.emplace_back(t.as_string());
    m.options.maxInstructions = json::value_to<std::uint64_t>(o.at("max_instructions"));
    const json::object& s = o.at("sample").as_object();
    SampleOptions sample;
    sample.window = json::value_to<std::uint64_t>(s.at("window"));
    sample.warmup = json::value_to<std::uint64_t>(s.at("warmup"));
    sample.period = json::value_to<std::uint64_t>(s.at("period"));
    sample.target = readExactDouble(s.at("target"));
    sample.coPhase = s.at("co_phase").as_bool();
    m.options.sample = sample;
    const json::object& r = o.at("run").as_object();
    RecordedRun& run = m.run;
    run.passes = json::value_to<std::uint32_t>(r.at("passes"));
    run.period = json::value_to<std::uint64_t>(r.at("period_instructions"));
    run.calibrationIpc = readExactDouble(r.at("calibration_ipc"));
    run.warmCycles = json::value_to<std::uint64_t>(r.at("warmup_cycles"));
    run.windowCycles = json::value_to<std::uint64_t>(r.at("window_cycles"));
    run.calibrationDetailed = json::value_to<std::uint64_t>(r.at("calibration_detailed_instructions"));
    run.functional = json::value_to<std::uint64_t>(r.at("functional_instructions"));
    run.simulatedCycles = json::value_to<std::uint64_t>(r.at("simulated_cycles"));
    for (const auto& x : r.at("retired").as_array()) run.finalRetired.push_back(json::value_to<std::uint64_t>(x));
    for (const auto& w : r.at("windows").as_array()) {
      const json::object& wo = w.as_object();
      Gap g;
      g.ratesUpdated = wo.at("rates_updated").as_bool();
      for (const auto& d : wo.at("gap_instructions").as_array()) g.done.push_back(json::value_to<std::uint64_t>(d));
      const std::string file(wo.at("file").as_string());
      if (file.find('/') != std::string::npos || file.find("..") != std::string::npos) {
        throw Error(fmt::format("window file {} is not a plain name", shortQuote(file)));
      }
      if (g.done.size() != m.traces.size()) throw Error("a window's gap does not list every trace");
      run.files.push_back(file);
      run.gaps.push_back(std::move(g));
    }
    if (run.finalRetired.size() != m.traces.size()) throw Error("'retired' does not list every trace");
    return m;
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", name, e.what()));
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: a field is missing or of the wrong type ({})", name, e.what()));
  }
}

}  // namespace

Config snapshotConfig(const std::string& dir) {
  readManifest(dir);  // a folder that is not a snapshot set is said so first
  const std::filesystem::path path = std::filesystem::path(dir) / kSnapshotConfigName;
  if (!std::filesystem::exists(path)) {
    throw Error(fmt::format("{}: the snapshots' config is missing; give one with -c", path.string()));
  }
  return loadConfig(path.string());
}

namespace {

// The windows [first, last] a run from the snapshots covers, checked against the manifest's count.
std::pair<std::uint64_t, std::uint64_t> windowRange(const std::string& dir, const Manifest& m,
                                                    const SnapshotRunOptions& options) {
  const std::uint64_t count = m.run.files.size();
  if (count == 0) throw Error(fmt::format("{}: the manifest lists no window", dir));
  const std::uint64_t first = options.firstWindow;
  const std::uint64_t last = std::min(options.lastWindow, count - 1);
  if (first > last) {
    throw UsageError(fmt::format("--windows: the snapshots hold windows 0-{}; {} is not among them", count - 1, first));
  }
  return {first, last};
}

RunResult replayResult(SampledPass& pass, const std::string& dir, const Manifest& m, std::uint64_t first,
                       std::uint64_t last, double host) {
  json::object stats = pass.result(m.traces, m.run.passes, host, m.options);
  stats["snapshots"] = json::object{
      {"folder", dir}, {"first_window", first}, {"last_window", last}, {"windows", m.run.files.size()}};
  return resultOf(std::move(stats), host);
}

// A double as its bits: a record hands back the worker's figures exactly.
json::value bitsOf(double x) { return std::bit_cast<std::uint64_t>(x); }
double doubleOf(const json::value& v) { return std::bit_cast<double>(json::value_to<std::uint64_t>(v)); }

json::object outcomeJson(const WindowOutcome& o) {
  json::array threads;
  for (const ThreadOutcome& t : o.threads) {
    json::object j{{"in_window", t.inWindow}};
    if (t.inWindow) {
      j["ipc"] = bitsOf(t.ipc);
      j["counters"] = t.counters;
    }
    if (t.halves) j["halves"] = json::array{bitsOf(t.halfExcess), bitsOf(t.cpi)};
    if (t.stretch) j["stretch"] = json::array{bitsOf(t.y), bitsOf(t.x)};
    threads.push_back(std::move(j));
  }
  return json::object{{"window", o.number},
                      {"measured_cycles", o.measuredCycles},
                      {"detailed_instructions", o.detailed},
                      {"threads", std::move(threads)}};
}

WindowOutcome outcomeOf(const json::object& j) {
  WindowOutcome o;
  o.number = json::value_to<std::uint64_t>(j.at("window"));
  o.measuredCycles = json::value_to<std::uint64_t>(j.at("measured_cycles"));
  o.detailed = json::value_to<std::uint64_t>(j.at("detailed_instructions"));
  for (const json::value& v : j.at("threads").as_array()) {
    const json::object& tj = v.as_object();
    ThreadOutcome t;
    t.inWindow = tj.at("in_window").as_bool();
    if (t.inWindow) {
      t.ipc = doubleOf(tj.at("ipc"));
      t.counters = tj.at("counters").as_object();
    }
    if (const json::value* h = tj.if_contains("halves")) {
      t.halves = true;
      t.halfExcess = doubleOf(h->as_array().at(0));
      t.cpi = doubleOf(h->as_array().at(1));
    }
    if (const json::value* st = tj.if_contains("stretch")) {
      t.stretch = true;
      t.y = doubleOf(st->as_array().at(0));
      t.x = doubleOf(st->as_array().at(1));
    }
    o.threads.push_back(std::move(t));
  }
  return o;
}

constexpr std::string_view kRecordsFormat = "smtlab window records";

// The digest of the config the windows are simulated under: a worker's records are merged only under the same one.
std::uint64_t configDigest(const Config& config) { return fnv1a(configToToml(config)); }

}  // namespace

RunResult runFromSnapshots(const std::string& dir, const Config& config, const SnapshotRunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Manifest m = readManifest(dir);
  const auto [first, last] = windowRange(dir, m, options);
  m.options.progress = options.progress;
  m.options.stopRequested = options.stopRequested;
  SampledPass pass(config, m.traces, m.options);
  pass.replay(dir, m.run, first, last, config, m.traces, [&pass](WindowOutcome&& o) { pass.absorb(o); });
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return replayResult(pass, dir, m, first, last, host);
}

std::uint64_t snapshotWindowCount(const std::string& dir) { return readManifest(dir).run.files.size(); }

std::string simulateSnapshotWindows(const std::string& dir, const Config& config, const SnapshotRunOptions& options) {
  Manifest m = readManifest(dir);
  const auto [first, last] = windowRange(dir, m, options);
  m.options.progress = options.progress;
  m.options.stopRequested = options.stopRequested;
  SampledPass pass(config, m.traces, m.options);
  json::array windows;
  pass.replay(dir, m.run, first, last, config, m.traces,
              [&windows](WindowOutcome&& o) { windows.push_back(outcomeJson(o)); });
  const json::object header{{"format", kRecordsFormat},
                            {"smtlab_version", std::string(version())},
                            {"manifest_digest", m.digest},
                            {"config_digest", configDigest(config)},
                            {"first_window", first},
                            {"last_window", last},
                            {"threads", m.traces.size()}};
  return packWindowRecords(header, json::serialize(windows));
}

RunResult mergeSnapshotWindows(const std::string& dir, const Config& config, const std::vector<WindowRecords>& records,
                               const SnapshotRunOptions& options, double hostSeconds) {
  const auto start = std::chrono::steady_clock::now();
  Manifest m = readManifest(dir);
  const auto [first, last] = windowRange(dir, m, options);
  SampledPass pass(config, m.traces, m.options);
  pass.useRecordedRun(m.run);
  const std::uint64_t digest = configDigest(config);
  std::uint64_t next = first;  // the window the next record must start with
  for (const WindowRecords& r : records) {
    const SnapshotFile f = unpackWindowRecords(r.bytes, r.name);
    try {
      const json::object& h = f.header;
      if (h.at("format") != json::value(kRecordsFormat)) throw Error("not window records");
      if (json::value_to<std::uint64_t>(h.at("manifest_digest")) != m.digest) {
        throw Error(fmt::format("simulated from another snapshot folder than {} (or from an earlier manifest)", dir));
      }
      if (json::value_to<std::uint64_t>(h.at("config_digest")) != digest) {
        throw Error("simulated under another config than this run's");
      }
      boost::system::error_code ec;
      const json::value windows = json::parse(f.state, ec);
      if (ec || !windows.is_array()) throw Error("its windows are not a JSON array");
      const std::uint64_t a = json::value_to<std::uint64_t>(h.at("first_window"));
      const std::uint64_t b = json::value_to<std::uint64_t>(h.at("last_window"));
      if (a != next || b < a || b > last || windows.as_array().size() != b - a + 1) {
        throw Error(fmt::format("holds windows {}-{} ({} of them), but window {} comes next (windows {}-{} in order)",
                                a, b, windows.as_array().size(), next, first, last));
      }
      for (const json::value& w : windows.as_array()) {
        const WindowOutcome o = outcomeOf(w.as_object());
        if (o.number != next) throw Error(fmt::format("window {} where window {} comes next", o.number, next));
        pass.absorb(o);
        ++next;
      }
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", r.name, e.what()));
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}: a field is missing or of the wrong type ({})", r.name, e.what()));
    }
  }
  if (next != last + 1) {
    throw Error(fmt::format("the window records end before window {} (windows {}-{} wanted)", next, first, last));
  }
  const double host = hostSeconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return replayResult(pass, dir, m, first, last, host);
}

}  // namespace smtlab
