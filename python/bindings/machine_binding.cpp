// smtlab._core.Machine: the simulated machine as a script drives it (attach/detach/halt/run), with every misuse turned
// into a UsageError instead of a crash: CPU ids are checked here, a closed machine refuses every call, and a machine
// running in another Python thread (run releases the GIL) refuses to be touched until it returns.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "binding.hpp"
#include "conversions.hpp"
#include "smtlab/common/error.hpp"
#include "smtlab/sim/machine.hpp"
#include "smtlab/sim/run.hpp"

namespace smtlab::python {

namespace {

// run_traces' `sample`: None or False (a detailed run), True (the defaults), or a dict of SampleOptions by name.
std::optional<SampleOptions> sampleOptionsArg(const py::handle& sample) {
  if (sample.is_none()) return std::nullopt;
  if (py::isinstance<py::bool_>(sample)) {
    if (!sample.cast<bool>()) return std::nullopt;
    return SampleOptions{};
  }
  if (!py::isinstance<py::dict>(sample)) {
    throw UsageError(fmt::format("run_traces: sample must be True, False, None or a dict of period, window, warmup "
                                 "and target, not {}",
                                 std::string(py::str(py::type::of(sample).attr("__name__")))));
  }
  SampleOptions s;
  for (const auto& [key, value] : sample.cast<py::dict>()) {
    const std::string name = py::str(key);
    if (name == "period") {
      s.period = unsignedArg(value, "run_traces", "sample['period']");
    } else if (name == "window") {
      s.window = unsignedArg(value, "run_traces", "sample['window']");
    } else if (name == "warmup") {
      s.warmup = unsignedArg(value, "run_traces", "sample['warmup']");
    } else if (name == "target") {
      if (!py::isinstance<py::float_>(value) && !py::isinstance<py::int_>(value)) {
        throw UsageError("run_traces: sample['target'] must be a number (0.02 = +-2 %)");
      }
      s.target = value.cast<double>();
    } else {
      throw UsageError(fmt::format("run_traces: sample has no key '{}' (known: period, window, warmup, target)", name));
    }
  }
  return s;
}

}  // namespace

namespace {

class PyMachine {
 public:
  explicit PyMachine(const Config& config)
      : machine_(std::make_unique<Machine>(config)), attached_(machine_->logicalCpus()) {}
  ~PyMachine() {
    try {
      close();
    } catch (...) {  // a destructor must not throw; close() only detaches
    }
  }
  PyMachine(const PyMachine&) = delete;
  PyMachine& operator=(const PyMachine&) = delete;

  Machine& get(const char* what) {
    if (!machine_) throw UsageError(fmt::format("{}: the machine is closed", what));
    if (running_.load()) throw UsageError(fmt::format("{}: the machine is running in another thread", what));
    return *machine_;
  }

  LogicalCpu cpuId(const py::handle& cpu, const char* what) {
    Machine& m = get(what);
    // Any integer (negative, or past 2^64) is taken here, so that the message names the CPU and the valid range
    // instead of pybind11's "incompatible function arguments"; a non-integer is still a TypeError.
    std::uint64_t id = 0;
    try {
      id = unsignedArg(cpu, what, "cpu");
    } catch (const UsageError&) {
      id = ~std::uint64_t{0};  // negative or past 2^64-1: no such CPU either
    }
    if (id >= m.logicalCpus()) {
      std::string text = py::str(cpu).cast<std::string>();
      if (text.size() > 24) text = text.substr(0, 20) + "...";
      throw UsageError(fmt::format("{}: logical CPU {} does not exist (this machine has CPUs 0..{})", what, text,
                                   m.logicalCpus() - 1));
    }
    return LogicalCpu{static_cast<std::uint32_t>(id)};
  }

  void attach(const py::handle& cpu, const std::shared_ptr<TraceCursor>& source, const py::handle& asid) {
    const LogicalCpu id = cpuId(cpu, "attach");
    if (!source) throw UsageError(fmt::format("attach: no source given for CPU {}", id.value));
    const std::uint64_t space = unsignedArg(asid, "attach", "asid", 0xffffffffULL);
    machine_->attach(id, source, Asid{static_cast<std::uint32_t>(space)});
    attached_[id.value] = source;
  }

  // Machine::warm for Python: lanes as (cpu, source, ipc) or (cpu, source, ipc, asid) tuples.
  py::list warm(const py::list& lanes, const py::handle& cycles) {
    Machine& m = get("warm");
    const std::uint64_t n = unsignedArg(cycles, "warm", "cycles");
    std::vector<WarmLane> v;
    std::vector<std::shared_ptr<TraceCursor>> keep;  // alive while the GIL is released
    for (const py::handle item : lanes) {
      if (!py::isinstance<py::tuple>(item) || (py::len(item) != 3 && py::len(item) != 4)) {
        throw UsageError("warm: each lane is a tuple (cpu, source, ipc) or (cpu, source, ipc, asid)");
      }
      const py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      WarmLane lane;
      lane.cpu = cpuId(t[0], "warm");
      if (!py::isinstance<TraceCursor>(t[1])) throw UsageError("warm: a lane's source must be a Source");
      keep.push_back(t[1].cast<std::shared_ptr<TraceCursor>>());
      lane.cursor = keep.back().get();
      if (!py::isinstance<py::float_>(t[2]) && !py::isinstance<py::int_>(t[2])) {
        throw UsageError("warm: a lane's ipc must be a number (instructions per cycle)");
      }
      lane.ipc = t[2].cast<double>();
      lane.asid = Asid{static_cast<std::uint32_t>(
          py::len(t) == 4 ? unsignedArg(t[3], "warm", "asid", 0xffffffffULL) : 1)};
      v.push_back(lane);
    }
    {
      py::gil_scoped_release release;
      m.warm(v, n);
    }
    py::list out;
    for (const WarmLane& lane : v) {
      py::dict d;
      d["instructions"] = lane.done;
      d["ended"] = lane.ended;
      out.append(d);
    }
    return out;
  }

  std::shared_ptr<TraceCursor> detach(const py::handle& cpu) {
    const LogicalCpu id = cpuId(cpu, "detach");
    auto cursor = machine_->detach(id);
    attached_[id.value].reset();
    return cursor;
  }

  // Simulates in slices of host time so that Ctrl-C is honoured during a long run: between slices the GIL is taken
  // back briefly and PyErr_CheckSignals runs the Python signal handlers (KeyboardInterrupt for SIGINT). Machine::run
  // keeps no state of its own between calls (every bit lives in the machine), so stopping at a slice bound and going
  // on gives exactly the cycles of one call: slicing changes no statistic, and an interrupted run resumes correctly
  // (tests/python/test_binding_misuse.py checks both).
  std::vector<Event> run(const py::object& until, const py::object& cycles) {
    Machine& m = get("run");
    if (until.is_none() == cycles.is_none()) throw UsageError("run: give exactly one of until= or cycles=");
    const std::uint64_t now = m.now().value;
    // Cycle::never() (2^64-1) stays out of reach: it marks "no wake-up" inside the model.
    const std::uint64_t last = Cycle::never().value - 1;
    std::uint64_t bound = 0;
    if (!until.is_none()) {
      bound = unsignedArg(until, "run", "until", last);
      // Chosen: a bound in the past is refused rather than ignored. It simulates nothing, so it is almost always an
      // absolute cycle computed from a stale `now` (or meant as a count: cycles=); returning silently hides that.
      if (bound < now) {
        throw UsageError(fmt::format("run: until={} is in the past (now={}); give a later cycle, or cycles=N to run "
                                     "N more cycles",
                                     bound, now));
      }
    } else {
      const std::uint64_t count = unsignedArg(cycles, "run", "cycles", last - now);
      bound = now + count;
    }
    std::vector<Event> events;
    running_.store(true);
    struct Reset {
      std::atomic<bool>& flag;
      ~Reset() { flag.store(false); }
    } reset{running_};
    using Clock = std::chrono::steady_clock;
    std::uint64_t slice = kFirstSlice;
    for (;;) {
      const std::uint64_t sliceEnd = m.now().value + std::min(slice, bound - m.now().value);
      const Clock::time_point t0 = Clock::now();
      {
        py::gil_scoped_release release;
        events = m.run(Cycle{sliceEnd});
      }
      const bool boundOnly = events.size() == 1 && events.front().kind == EventKind::CycleBound;
      if (!boundOnly || m.now().value >= bound) return events;
      if (m.quiescent()) {
        // Nothing can happen before the bound (an idle machine, every trace ended): one jump instead of up to 2^44
        // slices of kMaxSlice cycles (a machine with nothing attached run to until=2^64-2 took weeks before).
        py::gil_scoped_release release;
        return m.run(Cycle{bound});
      }
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // KeyboardInterrupt; the machine stays usable
      // Aim each slice at kSliceTarget of host time: grow at most 2x (a cheap event-skipping stretch must not make
      // the next, dense one long), shrink at once in proportion.
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      const double scale = seconds <= 0.0 ? 2.0 : std::min(2.0, kSliceTarget / seconds);
      slice = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(static_cast<double>(slice) * scale), kMinSlice,
                                        kMaxSlice);
    }
  }

  void close() {
    if (!machine_) return;
    if (running_.load()) throw UsageError("close: the machine is running in another thread");
    // Detach everything so that the sources can be attached to another machine afterwards.
    for (std::uint32_t c = 0; c < machine_->logicalCpus(); ++c) {
      machine_->detach(LogicalCpu{c});
      attached_[c].reset();
    }
    machine_.reset();
  }
  bool closed() const { return !machine_; }
  std::shared_ptr<TraceCursor> attached(const py::handle& cpu) { return attached_[cpuId(cpu, "attached").value]; }

 private:
  std::unique_ptr<Machine> machine_;
  std::vector<std::shared_ptr<TraceCursor>> attached_;  // the Python-visible owners, so attached() returns them
  std::atomic<bool> running_{false};

  // Slices of Machine::run, in simulated cycles. A slice is aimed at kSliceTarget seconds of host time: short enough
  // that Ctrl-C stops a run within a fraction of a second, long enough that the pause between slices (taking the GIL,
  // checking signals) costs nothing measurable. kMaxSlice bounds a slice after a cheap, event-skipping stretch.
  static constexpr std::uint64_t kFirstSlice = 4096;
  static constexpr std::uint64_t kMinSlice = 256;
  static constexpr std::uint64_t kMaxSlice = std::uint64_t{1} << 20;
  static constexpr double kSliceTarget = 0.02;
};

py::dict cpuInfoDict(const CpuInfo& info) {
  std::vector<std::uint32_t> siblings;
  for (LogicalCpu s : info.siblings) siblings.push_back(s.value);
  return py::dict(py::arg("id") = info.id.value, py::arg("core") = info.core.value,
                  py::arg("thread") = info.thread.value, py::arg("siblings") = siblings,
                  py::arg("package") = info.package);
}

}  // namespace

void bindMachine(py::module_& m) {
  py::enum_<EventKind> eventKind(m, "EventKind", "Why Machine.run stopped.");
  for (const auto& row : kEventKindTable) {  // the one list of kinds (core_event.hpp); Python names upper-cased
    std::string name(row.name);
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    eventKind.value(name.c_str(), row.value, std::string(row.doc).c_str());
  }

  py::class_<Event>(m, "Event", "Something that stopped Machine.run, at the end of the cycle it happened in.")
      .def_readonly("kind", &Event::kind, "An EventKind.")
      .def_property_readonly("cpu", [](const Event& e) { return e.cpu.value; }, "Logical CPU (0 for CYCLE_BOUND).")
      .def_property_readonly("cycle", [](const Event& e) { return e.cycle.value; }, "Cycle of the event.")
      .def_readonly("mark_id", &Event::markId, "The id of the retired mark (MARK only).")
      .def("__repr__", [](const Event& e) {
        return fmt::format("<Event {} cpu={} cycle={}{}>", eventKindName(e.kind), e.cpu.value, e.cycle.value,
                           e.kind == EventKind::Mark ? fmt::format(" mark_id={}", e.markId) : "");
      });

  py::class_<PyMachine>(m, "Machine",
                        "The simulated machine: system.packages packages of system.cores cores of core.threads "
                        "hardware threads each. Logical CPUs are numbered as Linux shows them (system."
                        "siblings_adjacent; see cpus for the mapping). Attach sources to "
                        "logical CPUs, run until a cycle bound or an event, read statistics. Use close() (or a with "
                        "block) to release it; a closed machine raises UsageError.")
      .def(py::init<const Config&>(), py::arg("config"), "Builds the machine; raises ConfigError if invalid.")
      .def("attach", &PyMachine::attach, py::arg("cpu"), py::arg("source"), py::arg("asid") = 1,
           "Puts a source on an idle logical CPU with an address-space id (tasks of one process share one). Raises "
           "UsageError if the CPU is busy or out of range, or the source is attached elsewhere.")
      .def("warm", &PyMachine::warm, py::arg("lanes"), py::arg("cycles"),
           "Functional warming (docs/sampling.md): simulated time moves by `cycles` while each lane, a tuple (cpu, "
           "source, ipc[, asid]) of a source attached nowhere, executes ipc x cycles instructions through its CPU's "
           "caches, TLBs, branch predictor and prefetchers without pipeline timing. Returns per lane a dict of "
           "`instructions` executed and `ended` (its source ran out). Releases the GIL.")
      .def("detach", &PyMachine::detach, py::arg("cpu"),
           "Takes the source off a CPU and returns it (None if idle): in-flight work is squashed and the source "
           "rewinds to its oldest unretired instruction.")
      .def(
          "halt", [](PyMachine& self, const py::handle& cpu) { self.get("halt").halt(self.cpuId(cpu, "halt")); },
          py::arg("cpu"),
          "HLT: the CPU (which must have nothing attached) idles, and its partitioned queues go to its siblings.")
      .def(
          "busy", [](PyMachine& self, const py::handle& cpu) { return self.get("busy").busy(self.cpuId(cpu, "busy")); },
          py::arg("cpu"), "True if a source is attached to the CPU (even one that has ended).")
      .def("attached", &PyMachine::attached, py::arg("cpu"), "The source attached to the CPU, or None.")
      .def(
          "set_retire_limit",
          [](PyMachine& self, const py::handle& cpu, const py::handle& count) {
            Machine& m = self.get("set_retire_limit");
            const LogicalCpu id = self.cpuId(cpu, "set_retire_limit");
            const std::uint64_t limit = unsignedArg(count, "set_retire_limit", "count");
            // The limit event is raised by a cycle that retires up to it; at or below the count already retired
            // nothing more retires, no event comes and the pipeline would only stop at the deadlock watchdog.
            const std::uint64_t retired = m.threadStats(id).instructions;
            if (limit <= retired) {
              throw UsageError(fmt::format("set_retire_limit: count={} is not above the {} instructions CPU {} has "
                                           "retired already (retired(cpu), since the last reset_stats); give a "
                                           "count > {}",
                                           limit, retired, id.value, retired));
            }
            m.setRetireLimit(id, limit);
          },
          py::arg("cpu"), py::arg("count"),
          "When the CPU's retired count (retired(cpu), since the last reset_stats) reaches count, it stops retiring "
          "and run() reports RETIRE_LIMIT. count must be above retired(cpu) (else UsageError).")
      .def(
          "clear_retire_limit",
          [](PyMachine& self, const py::handle& cpu) {
            self.get("clear_retire_limit").clearRetireLimit(self.cpuId(cpu, "clear_retire_limit"));
          },
          py::arg("cpu"), "Removes the CPU's retire limit.")
      .def(
          "retired",
          [](PyMachine& self, const py::handle& cpu) {
            return self.get("retired").threadStats(self.cpuId(cpu, "retired")).instructions;
          },
          py::arg("cpu"), "Instructions the CPU retired since the last reset_stats (the retire limit's count).")
      .def(
          "restart_trace",
          [](PyMachine& self, const py::handle& cpu) {
            Machine& m = self.get("restart_trace");
            const LogicalCpu id = self.cpuId(cpu, "restart_trace");
            const TraceCursor* cursor = m.attached(id);
            if (cursor == nullptr) {
              throw UsageError(fmt::format("restart_trace: CPU {} has no source attached; attach one first", id.value));
            }
            const CpuInfo& info = m.cpu(id);
            if (m.core(info.core).thread(info.thread.value).state != ThreadState::Finished) {
              throw UsageError(fmt::format("restart_trace: the source '{}' on CPU {} has not finished (wait for "
                                           "its SOURCE_ENDED event)",
                                           cursor->describe(), id.value));
            }
            m.restartTrace(id);
          },
          py::arg("cpu"),
          "Starts the ended source on the CPU again from its first record (UsageError if the CPU has no source or "
          "it has not ended).")
      .def("run", &PyMachine::run, py::arg("until") = py::none(), py::kw_only(), py::arg("cycles") = py::none(),
           "Simulates until cycle `until` (or for `cycles` more) or the end of the first cycle with an event; "
           "returns the events (one CYCLE_BOUND if none). Releases the GIL; Ctrl-C raises KeyboardInterrupt within "
           "a fraction of a second and leaves the machine usable. Raises UsageError for a negative or too large "
           "count or an `until` before now, DeadlockError if the model stops making progress.")
      .def_property_readonly(
          "now", [](PyMachine& self) { return self.get("now").now().value; }, "The next cycle to simulate.")
      .def_property_readonly(
          "logical_cpus", [](PyMachine& self) { return self.get("logical_cpus").logicalCpus(); },
          "Number of logical CPUs.")
      .def_property_readonly(
          "cores", [](PyMachine& self) { return self.get("cores").cores(); },
          "Number of physical cores of the machine (all packages).")
      .def_property_readonly(
          "packages", [](PyMachine& self) { return self.get("packages").packages(); },
          "Number of physical packages (sockets), each with its own LLC.")
      .def_property_readonly(
          "threads", [](PyMachine& self) { return self.get("threads").config().core.threads; },
          "Hardware threads per core.")
      .def(
          "flush_tlb",
          [](PyMachine& self, const py::handle& cpu, const py::handle& asid) {
            Machine& m = self.get("flush_tlb");
            const LogicalCpu id = self.cpuId(cpu, "flush_tlb");
            const std::uint64_t a = unsignedArg(asid, "flush_tlb", "asid", 0xffffffffULL);
            return m.flushTlb(id, Asid{static_cast<std::uint32_t>(a)});
          },
          py::arg("cpu"), py::arg("asid"),
          "An address-space switch on the CPU away from `asid` (a CR3 write): drops that asid's entries from the "
          "CPU's ITLB, its core's shared DTLB and page-walk cache, so the next access to each of its pages misses. "
          "Does nothing with mem.tlb_tagged = true. Returns the TLB entries dropped.")
      .def(
          "wake_cost",
          [](PyMachine& self, const py::handle& cpu) {
            return self.get("wake_cost").wakeCost(self.cpuId(cpu, "wake_cost"));
          },
          py::arg("cpu"),
          "Cycles (os.wake_cycles: IPI delivery + HLT exit) before the idle CPU can run what it is woken for; 0 if "
          "the CPU has a source attached.")
      .def(
          "cpu",
          [](PyMachine& self, const py::handle& cpu) { return cpuInfoDict(self.get("cpu").cpu(self.cpuId(cpu, "cpu"))); },
          py::arg("cpu"), "Topology of one logical CPU: {'id', 'core', 'thread', 'siblings', 'package'}.")
      .def_property_readonly(
          "cpus",
          [](PyMachine& self) {
            Machine& m = self.get("cpus");
            py::list out;
            for (std::uint32_t c = 0; c < m.logicalCpus(); ++c) out.append(cpuInfoDict(m.cpu(LogicalCpu{c})));
            return out;
          },
          "Topology of every logical CPU, as Linux numbers them.")
      .def_property_readonly(
          "config", [](PyMachine& self) { return self.get("config").config(); }, "A copy of the machine's config.")
      .def(
          "stats", [](PyMachine& self) { return jsonToPython(self.get("stats").statsJson()); },
          "All statistics as nested dicts, with the names of `smtlab run --json` (cycles, logical_cpus, cores, "
          "llc, dram, energy).")
      .def(
          "cpu_stats",
          [](PyMachine& self, const py::handle& cpu) {
            return jsonToPython(self.get("cpu_stats").cpuStatsJson(self.cpuId(cpu, "cpu_stats")));
          },
          py::arg("cpu"), "Statistics of one logical CPU (instructions, cycles, ipc, cpi_stack, ...).")
      .def(
          "reset_stats", [](PyMachine& self) { self.get("reset_stats").resetStats(); },
          "Zeroes every statistic (and retired counts) while keeping the machine's state: ends a warm-up.")
      .def_property_readonly(
          "measured_cycles", [](PyMachine& self) { return self.get("measured_cycles").measuredCycles(); },
          "Cycles since the statistics were last reset.")
      .def(
          "set_checking", [](PyMachine& self, bool on) { self.get("set_checking").setChecking(on); }, py::arg("on"),
          "Checks pipeline invariants every cycle (slow; for tests).")
      .def("close", &PyMachine::close, "Detaches every source and frees the machine; later calls raise UsageError.")
      .def_property_readonly("closed", &PyMachine::closed, "True after close().")
      .def("__enter__", [](PyMachine& self) -> PyMachine& { return self; }, py::return_value_policy::reference)
      .def(
          "__exit__", [](PyMachine& self, const py::args&) { self.close(); }, "Closes the machine.")
      .def("__repr__", [](PyMachine& self) {
        if (self.closed()) return std::string("<smtlab.Machine closed>");
        Machine& m = self.get("repr");
        return fmt::format("<smtlab.Machine {} packages x {} cores x {} threads, now={}>", m.packages(),
                           m.config().system.cores, m.config().core.threads, m.now().value);
      });

  m.def(
      "run_traces",
      [](const Config& config, const std::vector<std::string>& traces, const py::handle& maxInstructions,
         const py::handle& warmup, const py::handle& sample, bool baselines) {
        RunOptions options;
        options.baselines = baselines;
        options.maxInstructions = unsignedArg(maxInstructions, "run_traces", "max_instructions");
        options.warmup = unsignedArg(warmup, "run_traces", "warmup");
        options.sample = sampleOptionsArg(sample);
        // Ctrl-C: between chunks the run takes the GIL back briefly and runs the Python signal handlers; a
        // KeyboardInterrupt they raise stops the run and reaches the caller (no statistics: the run is incomplete).
        options.stopRequested = [] {
          py::gil_scoped_acquire acquire;
          return PyErr_CheckSignals() != 0;
        };
        RunResult result;
        try {
          py::gil_scoped_release release;
          result = runTraces(config, traces, options);
        } catch (const RunInterrupted&) {
          throw py::error_already_set();
        }
        return jsonToPython(result.stats);
      },
      py::arg("config"), py::arg("traces"), py::arg("max_instructions") = 0, py::arg("warmup") = 0,
      py::arg("sample") = py::none(), py::arg("baselines") = false,
      "What `smtlab run` does: trace i on logical CPU i, each measured over max_instructions (0: to its end) after "
      "warmup; returns the statistics dict of `smtlab run --json`. sample=True (or a dict with any of period, "
      "window, warmup, target) makes it a sampled run, as `smtlab run --sample` (docs/sampling.md). baselines=True "
      "also runs each trace alone and adds `multiprogram` (STP, ANTT, hmean, fairness; docs/metrics.md), as "
      "`smtlab run --baselines`; with sample, the alone runs are sampled too and each metric has its *_ci95. Releases the GIL; Ctrl-C stops it with KeyboardInterrupt.");
}

}  // namespace smtlab::python
