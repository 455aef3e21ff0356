#include "smtlab/core/issue_ports.hpp"

#include <algorithm>

namespace smtlab {

namespace {
const FuConfig& unitOf(const FuSetConfig& fu, UnitClass c) {
  switch (c) {
    case UnitClass::IntAlu:
    case UnitClass::Branch:
      return fu.int_alu;  // branches execute on the integer ALUs (their latency is an ALU op's)
    case UnitClass::IntMul:
      return fu.int_mul;
    case UnitClass::IntDiv:
      return fu.int_div;
    case UnitClass::FpAdd:
      return fu.fp_add;
    case UnitClass::FpMul:
      return fu.fp_mul;
    case UnitClass::FpDiv:
      return fu.fp_div;
    case UnitClass::Load:
      return fu.load;
    default:
      return fu.store;  // store address and store data
  }
}
}  // namespace

IssuePorts::IssuePorts(const CoreConfig& core) {
  ports_.resize(core.ports.size());
  for (std::size_t i = 0; i < core.ports.size(); ++i) {
    const PortConfig& pc = core.ports[i];
    Port& p = ports_[i];
    p.slots = std::max<std::uint8_t>(1, *std::max_element(pc.rate.begin(), pc.rate.end()));
    for (int c = 0; c < kUnitClasses; ++c) {
      if (pc.rate[c] == 0) continue;
      p.cost[c] = static_cast<std::uint8_t>(p.slots / pc.rate[c]);  // validateConfig: the rate divides slots
      ClassState& cs = classes_[c];
      if (cs.portCount < kMaxPorts) cs.ports[cs.portCount++] = static_cast<std::uint8_t>(i);
    }
  }
  for (int c = 0; c < kUnitClasses; ++c) {
    const FuConfig& f = unitOf(core.fu, static_cast<UnitClass>(c));
    classes_[c].interval = f.interval != 0 ? f.interval : (f.pipelined ? 1 : std::max(1u, f.latency));
    classes_[c].threadInterval = f.thread_interval;
    classes_[c].timed = classes_[c].interval > 1 || classes_[c].threadInterval > 0;
  }
}

bool IssuePorts::takeTimed(UnitClass cls, std::uint32_t thread, Cycle now) {
  ClassState& c = classes_[static_cast<int>(cls)];
  if (c.threadInterval > 0 && c.threadNext[thread] > now) return false;
  for (std::uint32_t k = 0; k < c.portCount; ++k) {
    Port& p = ports_[c.ports[k]];
    const std::uint8_t cost = p.cost[static_cast<int>(cls)];
    std::uint8_t& used = used_[c.ports[k]];
    if (used + cost > p.slots) continue;
    Cycle& busy = p.busyUntil[static_cast<int>(cls)];
    if (c.interval > 1 && busy > now) continue;
    used = static_cast<std::uint8_t>(used + cost);
    if (c.interval > 1) busy = now + c.interval;
    if (c.threadInterval > 0) c.threadNext[thread] = now + c.threadInterval;
    ++p.issued;
    lastPort_ = c.ports[k];
    return true;
  }
  return false;
}

}  // namespace smtlab
