#include "smtlab/sim/machine.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "smtlab/common/error.hpp"
#include "smtlab/common/state_io.hpp"
#include "smtlab/config/loader.hpp"

namespace smtlab {

Machine::Machine(const Config& config) : config_(config), skip_(config.sim.skip) {
  validateConfig(config_);
  const std::uint32_t threads = config_.core.threads;
  const std::uint32_t coreCount = config_.system.packages * config_.system.cores;
  memory_ = std::make_unique<MemorySystem>(config_.mem, coreCount, threads, config_.system.packages);
  // Logical CPU numbering (docs/model.md "Topology"): Linux 2.4/2.5 booted CPUs in APIC-ID order, and a package's
  // APIC IDs put the thread in the low bits, so siblings are adjacent; modern kernels number in ACPI MADT order,
  // which lists the first thread of every core before the second ones, so cpu N and N + cores are siblings.
  const bool adjacent = config_.system.siblings_adjacent;
  auto numberOf = [&](std::uint32_t c, std::uint32_t t) {
    return LogicalCpu{adjacent ? c * threads + t : t * coreCount + c};
  };
  cpus_.resize(std::size_t{coreCount} * threads);
  cpuOf_.resize(cpus_.size());
  for (std::uint32_t c = 0; c < coreCount; ++c) {
    cores_.push_back(std::make_unique<Core>(CoreId{c}, config_, *memory_));
    for (std::uint32_t t = 0; t < threads; ++t) {
      CpuInfo info{numberOf(c, t), CoreId{c}, ThreadId{t}, {}, c / config_.system.cores};
      for (std::uint32_t s = 0; s < threads; ++s) {
        if (s != t) info.siblings.push_back(numberOf(c, s));
      }
      cpuOf_[c * threads + t] = info.id;
      cpus_[info.id.value] = std::move(info);
    }
  }
  if (const char* check = std::getenv("SMTLAB_CHECK"); check != nullptr && std::string_view(check) == "1") {
    setChecking(true);
  }
}

Machine::~Machine() = default;

void Machine::setChecking(bool on) {
  for (auto& core : cores_) core->setChecking(on);
}

void Machine::checkCpu(LogicalCpu cpu, const char* what) const {
  if (cpu.value >= cpus_.size()) {
    throw UsageError(fmt::format("{}: logical CPU {} does not exist (this machine has CPUs 0..{})", what, cpu.value,
                                 cpus_.size() - 1));
  }
}

const CpuInfo& Machine::cpu(LogicalCpu cpu) const {
  checkCpu(cpu, "cpu");
  return cpus_[cpu.value];
}

void Machine::attach(LogicalCpu cpu, std::shared_ptr<TraceCursor> cursor, Asid asid) {
  checkCpu(cpu, "attach");
  if (!cursor) throw UsageError(fmt::format("attach: no trace given for CPU {}", cpu.value));
  const CpuInfo& info = cpus_[cpu.value];
  Core& core = *cores_[info.core.value];
  if (core.thread(info.thread.value).cursor != nullptr) {
    throw UsageError(fmt::format("attach: CPU {} is busy with '{}'; detach it first", cpu.value,
                                 core.thread(info.thread.value).cursor->describe()));
  }
  if (cursor->attached) {
    throw UsageError(fmt::format("attach: trace '{}' is already attached to another CPU", cursor->describe()));
  }
  cursor->attached = true;
  core.attach(info.thread.value, std::move(cursor), config_.mem.threads_share_address_space ? Asid{0} : asid, now_);
}

std::shared_ptr<TraceCursor> Machine::detach(LogicalCpu cpu) {
  checkCpu(cpu, "detach");
  const CpuInfo& info = cpus_[cpu.value];
  auto cursor = cores_[info.core.value]->detach(info.thread.value, now_);
  if (cursor) {
    cursor->attached = false;
    cursor->releaseIfDrained();
  }
  return cursor;
}

void Machine::halt(LogicalCpu cpu) {
  checkCpu(cpu, "halt");
  const CpuInfo& info = cpus_[cpu.value];
  const ThreadContext& th = cores_[info.core.value]->thread(info.thread.value);
  if (th.cursor != nullptr) {
    throw UsageError(
        fmt::format("halt: CPU {} still runs '{}'; detach it first", cpu.value, th.cursor->describe()));
  }
  // An idle logical CPU is halted already: nothing runs there and its partitions went to its siblings.
}

bool Machine::busy(LogicalCpu cpu) const {
  checkCpu(cpu, "busy");
  const CpuInfo& info = cpus_[cpu.value];
  return cores_[info.core.value]->thread(info.thread.value).cursor != nullptr;
}

const TraceCursor* Machine::attached(LogicalCpu cpu) const {
  checkCpu(cpu, "attached");
  const CpuInfo& info = cpus_[cpu.value];
  return cores_[info.core.value]->thread(info.thread.value).cursor;
}

void Machine::setRetireLimit(LogicalCpu cpu, std::uint64_t count) {
  checkCpu(cpu, "setRetireLimit");
  const CpuInfo& info = cpus_[cpu.value];
  cores_[info.core.value]->thread(info.thread.value).retireLimit = count;
}

void Machine::clearRetireLimit(LogicalCpu cpu) { setRetireLimit(cpu, ~std::uint64_t{0}); }

void Machine::restartTrace(LogicalCpu cpu) {
  checkCpu(cpu, "restartTrace");
  const CpuInfo& info = cpus_[cpu.value];
  Core& core = *cores_[info.core.value];
  const ThreadContext& th = core.thread(info.thread.value);
  if (th.state != ThreadState::Finished) {
    throw UsageError(fmt::format("restartTrace: the trace on CPU {} has not finished", cpu.value));
  }
  core.restartFinished(info.thread.value, now_);
}

std::vector<Event> Machine::run(Cycle until) {
  std::vector<Event> out;
  while (now_ < until) {
    const Cycle cycle = now_;
    // One pass over the cores (this loop runs every ticked cycle): a core's tick touches only its own events and work,
    // so taking each core's events and work right after its tick gives what separate passes after all ticks gave.
    Cycle next = Cycle::never();
    bool work = false;
    for (auto& core : cores_) {
      // Without event skipping every core ticks every cycle: the reference the skipping is checked against.
      if (!skip_ || core->nextWake() <= cycle) core->tick(cycle);
      std::vector<CoreEvent>& events = core->events();
      if (!events.empty()) {
        for (const CoreEvent& e : events) {
          const LogicalCpu cpu = cpuOf_[core->id().value * config_.core.threads + e.thread];
          out.push_back({e.kind, cpu, e.cycle, e.markId});
        }
        events.clear();
      }
      next = std::min(next, core->nextWake());
      work = work || core->hasWork();
    }
    if (!out.empty()) {
      if (work) ++busyCycles_;
      now_ = cycle + 1;
      return out;
    }
    if (next == Cycle::never()) next = until;  // every core is idle
    const Cycle to = skip_ ? std::max(cycle + 1, std::min(next, until)) : cycle + 1;
    if (work) busyCycles_ += to - cycle;
    now_ = to;
  }
  out.push_back({EventKind::CycleBound, LogicalCpu{0}, now_, 0});
  return out;
}

void Machine::warm(std::span<WarmLane> lanes, std::uint64_t cycles) {
  for (const WarmLane& lane : lanes) {
    checkCpu(lane.cpu, "warm");
    if (lane.cursor == nullptr) throw UsageError(fmt::format("warm: no trace given for CPU {}", lane.cpu.value));
    if (busy(lane.cpu) || lane.cursor->attached) {
      throw UsageError(fmt::format("warm: CPU {} or its trace '{}' is attached; detach it first", lane.cpu.value,
                                   lane.cursor->describe()));
    }
    if (!(lane.ipc >= 0) || lane.ipc > 1e6) {
      throw UsageError(fmt::format("warm: CPU {}: rate {} is not a number of instructions per cycle", lane.cpu.value,
                                   lane.ipc));
    }
  }
  for (WarmLane& lane : lanes) lane.done = 0;
  struct Functional {  // the memory system leaves functional mode however this ends
    MemorySystem& memory;
    explicit Functional(MemorySystem& m) : memory(m) { memory.setFunctional(true); }
    ~Functional() { memory.setFunctional(false); }
  } functional(*memory_);
  const bool sharedSpace = config_.mem.threads_share_address_space;
  for (std::uint64_t left = cycles; left > 0;) {
    const std::uint64_t step = std::min(left, kWarmSliceCycles);
    left -= step;
    for (WarmLane& lane : lanes) {
      if (lane.ended) continue;
      lane.credit += lane.ipc * static_cast<double>(step);
      auto n = static_cast<std::uint64_t>(lane.credit);
      lane.credit -= static_cast<double>(n);
      const CpuInfo& info = cpus_[lane.cpu.value];
      Core& core = *cores_[info.core.value];
      const Asid asid = sharedSpace ? Asid{0} : lane.asid;
      TraceCursor& cursor = *lane.cursor;
      for (; n > 0; --n) {
        const Instr* in = cursor.peek();
        if (in == nullptr) [[unlikely]] {
          if (!lane.restart) {
            lane.ended = true;
            lane.endedAt = now_;
            break;
          }
          if (cursor.retired() == 0) {
            throw TraceError(fmt::format("trace '{}' on CPU {} has no instructions", cursor.describe(),
                                         lane.cpu.value));
          }
          cursor.restart();
          in = cursor.peek();
          if (in == nullptr) {
            throw TraceError(fmt::format("trace '{}' on CPU {} has no instructions after a restart",
                                         cursor.describe(), lane.cpu.value));
          }
        }
        core.warm(info.thread.value, asid, *in, now_);
        cursor.advanceFetch();
        cursor.retireOne();
        ++lane.done;
      }
    }
    now_ = now_ + step;
  }
}

std::uint32_t Machine::flushTlb(LogicalCpu cpu, Asid asid) {
  checkCpu(cpu, "flushTlb");
  if (config_.mem.tlb_tagged) return 0;
  const CpuInfo& info = cpus_[cpu.value];
  return memory_->flushTlb(info.core, info.thread, config_.mem.threads_share_address_space ? Asid{0} : asid);
}

std::uint32_t Machine::wakeCost(LogicalCpu cpu) const {
  checkCpu(cpu, "wakeCost");
  return busy(cpu) ? 0 : config_.os.wake_cycles;
}

void Machine::flushAll() {
  for (auto& core : cores_) core->flushAccounting(now_);
}

bool Machine::quiescent() const {
  return skip_ && std::all_of(cores_.begin(), cores_.end(),
                              [](const auto& c) { return c->nextWake() == Cycle::never() && !c->hasWork(); });
}

bool Machine::anyWork() const {
  return std::any_of(cores_.begin(), cores_.end(), [](const auto& c) { return c->hasWork(); });
}

void Machine::visitState(StateIo& io) {
  for (std::uint32_t i = 0; i < cpus_.size(); ++i) {
    if (busy(LogicalCpu{i})) {
      throw UsageError(fmt::format("machine state: CPU {} runs '{}'; a snapshot is taken with no trace attached", i,
                                   attached(LogicalCpu{i})->describe()));
    }
  }
  io.mark("machine");
  io(now_, statsBase_, busyCycles_);
  memory_->visitState(io);
  for (auto& core : cores_) core->visitState(io);
  io.mark("end of machine");
}

void Machine::resetStats() {
  flushAll();
  busyCycles_ = 0;
  for (auto& core : cores_) core->resetStats();
  memory_->resetStats();
  statsBase_ = now_;
}

const ThreadStats& Machine::threadStats(LogicalCpu cpu) {
  checkCpu(cpu, "threadStats");
  flushAll();
  const CpuInfo& info = cpus_[cpu.value];
  return cores_[info.core.value]->thread(info.thread.value).stats;
}

}  // namespace smtlab
