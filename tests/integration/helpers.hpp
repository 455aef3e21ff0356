// Helpers for the validation suite: configs whose every timing parameter a test sets itself, runs of traces to an
// instruction count, for a number of cycles or to their end, and readers for the statistics JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "smtlab/common/error.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/config/loader.hpp"
#include "smtlab/sim/machine.hpp"
#include "smtlab/sim/open_trace.hpp"
#include "smtlab/sim/run.hpp"
#include "smtlab/trace/cursor.hpp"
#include "smtlab/trace/source.hpp"
#include "smtlab/trace/vector_source.hpp"

// A check that fails today because of a model bug reported to the lead: the test is skipped with the numbers until
// the model is fixed. Remove the guard after the fix so that the check fails again if the bug comes back.
#define SMTLAB_MODEL_BUG_IF(condition, message) \
  if (condition) GTEST_SKIP() << "MODEL BUG: " << message

namespace smtlab::test {

namespace json = boost::json;

inline std::string dataPath(const std::string& name) { return std::string(SMTLAB_SOURCE_DIR) + "/tests/data/" + name; }

// The defaults with the memory path the expectations below are written against, set explicitly so that a change of a
// default does not silently change what a test checks.
inline Config baseConfig(std::uint32_t threads = 1) {
  Config c;
  c.source = "validation";
  c.core.threads = threads;
  c.mem.l1i.latency = 1;
  c.mem.l1d.latency = 4;
  c.mem.l2.latency = 12;
  c.mem.llc.latency = 40;
  c.mem.dram.latency = 200;
  c.mem.itlb.miss_latency = 30;
  c.mem.dtlb.miss_latency = 30;
  c.mem.next_line_prefetch = false;
  return c;
}

// The clog machine of the sharing tests: two threads, every queue shared, 4-wide fetch and rename (rename in turn),
// 3 single-cycle ALUs, the given fetch policy.
inline Config everyQueueSharedConfig(FetchPolicy policy) {
  Config c = baseConfig(2);
  c.core.fetch_policy = policy;
  c.core.rename_policy = ThreadChoice::RoundRobin;
  c.core.fetch_width = 4;
  c.core.rename_width = 4;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 3);
  for (QueueConfig* q : {&c.core.uop_queue, &c.core.rob, &c.core.iq, &c.core.lq, &c.core.sq}) {
    q->sharing = Sharing::Shared;
  }
  return c;
}

// A scalar machine: one instruction per cycle at every stage, one unit of each kind.
inline Config widthOneConfig() {
  Config c = baseConfig(1);
  c.core.fetch_width = 1;
  c.core.rename_width = 1;
  c.core.issue_width = 1;
  c.core.retire_width = 1;
  c.core.frontend_depth = 3;
  c.core.fu.int_alu = {1, true};
  setUnitCount(c.core, UnitClass::IntAlu, 1);
  c.core.fu.int_mul = {3, true};
  setUnitCount(c.core, UnitClass::IntMul, 1);
  c.core.fu.int_div = {10, false};
  setUnitCount(c.core, UnitClass::IntDiv, 1);
  c.core.fu.load = {1, true};
  setUnitCount(c.core, UnitClass::Load, 1);
  c.core.fu.store = {1, true};
  setUnitCount(c.core, UnitClass::StoreAddress, 1);
  return c;
}

inline const json::object& cpuStats(const json::object& stats, std::size_t cpu) {
  return stats.at("logical_cpus").as_array().at(cpu).as_object();
}
inline double num(const json::value& v) { return v.to_number<double>(); }
inline double ipcOf(const json::object& stats, std::size_t cpu) { return num(cpuStats(stats, cpu).at("ipc")); }
inline std::uint64_t u64(const json::value& v) { return v.to_number<std::uint64_t>(); }

// runTraces (the `smtlab run` path): each thread measured over its first `instructions` after `warmup`.
inline json::object runCounted(const Config& config, const std::vector<std::string>& specs,
                               std::uint64_t instructions, std::uint64_t warmup = 0) {
  RunOptions options;
  options.maxInstructions = instructions;
  options.warmup = warmup;
  return runTraces(config, specs, options).stats;
}

inline std::shared_ptr<TraceCursor> cursorFor(const std::string& spec) {
  return std::make_shared<TraceCursor>(openTrace(spec));
}
inline std::shared_ptr<TraceCursor> cursorFor(std::vector<Instr> records, std::string name = "<vector>") {
  return std::make_shared<TraceCursor>(std::make_unique<VectorSource>(std::move(records), std::move(name)));
}

// Runs endless traces (spec i on logical CPU i): `warmupCycles` unmeasured, then `cycles` measured.
inline json::object runCycles(const Config& config, const std::vector<std::string>& specs, std::uint64_t warmupCycles,
                              std::uint64_t cycles) {
  Machine m(config);
  for (std::uint32_t i = 0; i < specs.size(); ++i) m.attach(LogicalCpu{i}, cursorFor(specs[i]), Asid{i + 1});
  auto runTo = [&](std::uint64_t until) {
    while (m.now().value < until) {
      for (const Event& e : m.run(Cycle{until})) {
        if (e.kind == EventKind::SourceEnded) ADD_FAILURE() << "runCycles needs endless traces (count=0)";
      }
    }
  };
  runTo(warmupCycles);
  m.resetStats();
  runTo(warmupCycles + cycles);
  return m.statsJson();
}

// The cycle in which each logical CPU's trace ended (all of it retired), running until every attached one has.
struct Completion {
  std::vector<std::uint64_t> endCycle;  // per logical CPU; 0 if nothing ran there
  std::vector<Event> events;            // every event but CycleBound, in order
};
inline Completion runToEnd(Machine& m, std::uint64_t maxCycles = 100'000'000) {
  Completion out;
  out.endCycle.assign(m.logicalCpus(), 0);
  std::uint32_t left = 0;
  for (std::uint32_t c = 0; c < m.logicalCpus(); ++c) left += m.busy(LogicalCpu{c}) ? 1 : 0;
  while (left > 0 && m.now().value < maxCycles) {
    for (const Event& e : m.run(Cycle{maxCycles})) {
      if (e.kind == EventKind::CycleBound) continue;
      out.events.push_back(e);
      if (e.kind == EventKind::SourceEnded) {
        out.endCycle[e.cpu.value] = e.cycle.value;
        --left;
      }
    }
  }
  EXPECT_EQ(left, 0u) << "traces did not end within " << maxCycles << " cycles";
  return out;
}

// One trace alone on logical CPU 0, run to its end: the cycle its last instruction retired.
inline std::uint64_t endCycleAlone(const Config& config, std::vector<Instr> records) {
  Machine m(config);
  m.setChecking(true);
  m.attach(LogicalCpu{0}, cursorFor(std::move(records)), Asid{1});
  return runToEnd(m).endCycle[0];
}

inline std::vector<Instr> readTextFile(const std::string& name) {
  auto source = openTrace(dataPath(name));
  return readAll(*source);
}

// Instruction builders for traces made in a test.
// One instruction at `pc` with at most one integer destination and source (-1: none); branches take the op's kind.
inline Instr opAt(Addr pc, OpClass cls, int dst, int src) {
  Instr in;
  in.pc = pc;
  in.op = cls;
  in.branch = defaultBranchKind(cls);
  in.dst[0] = dst < 0 ? kNoReg : intReg(dst);
  in.src[0] = src < 0 ? kNoReg : intReg(src);
  return in;
}

inline Instr op(OpClass opClass, Addr pc, std::vector<int> dst, std::vector<int> src) {
  Instr in;
  in.op = opClass;
  in.pc = pc;
  in.branch = defaultBranchKind(opClass);
  for (std::size_t k = 0; k < dst.size(); ++k) in.dst[k] = static_cast<RegId>(dst[k]);
  for (std::size_t k = 0; k < src.size(); ++k) in.src[k] = static_cast<RegId>(src[k]);
  return in;
}
inline Instr load(Addr pc, int dst, std::vector<int> src, Addr addr) {
  Instr in = op(OpClass::Load, pc, {dst}, std::move(src));
  in.loads[0] = MemRef{addr, 8};
  return in;
}

}  // namespace smtlab::test
