// Issue ports: each port feeds the unit classes core.ports lists and accepts, per cycle, as many uops as
// its rate for the class (a NetBurst double-speed ALU takes 2 simple integer uops per cycle; a single-speed class on
// the same port takes the whole cycle). A uop goes to the first listed port that feeds its class and has room;
// an unpipelined unit (a divider) stays busy for its interval on its port.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "smtlab/common/types.hpp"
#include "smtlab/config/config.hpp"
#include "smtlab/core/capacity.hpp"

namespace smtlab {

class IssuePorts {
 public:
  explicit IssuePorts(const CoreConfig& core);
  // Busy times and this cycle's slots (a snapshot: common/state_io.hpp).
  void visitState(StateIo& io) { io(ports_, used_, classes_, cycle_, lastPort_); }

  // Takes a slot of a port feeding `cls` for one uop of `thread` at `now`; false if every such port is full or busy.
  bool take(UnitClass cls, std::uint32_t thread, Cycle now) {
    if (now != cycle_) startCycle(now);
    const ClassState& c = classes_[static_cast<int>(cls)];
    if (!c.timed) {
      // A pipelined unit without a per-thread interval (ALUs, loads, stores, most FP): only the ports' room matters.
      for (std::uint32_t k = 0; k < c.portCount; ++k) {
        Port& p = ports_[c.ports[k]];
        const std::uint8_t cost = p.cost[static_cast<int>(cls)];
        std::uint8_t& used = used_[c.ports[k]];
        if (used + cost > p.slots) continue;
        used = static_cast<std::uint8_t>(used + cost);
        ++p.issued;
        lastPort_ = c.ports[k];
        return true;
      }
      return false;
    }
    return takeTimed(cls, thread, now);
  }
  // The port the last successful take() used (NetBurst replay books its later attempts on that port).
  std::uint32_t lastPort() const { return lastPort_; }
  // NetBurst replay (replay.hpp): a uop coming round the replay loop re-enters `port` at `now` whatever the port holds
  // (the loop cannot stall; the scheduler is stopped for that slot), so it is taken without the room and busy checks
  // of take(); it is booked first in its cycle, so the slots it takes are the ones it held a period earlier.
  void reserve(std::uint32_t port, UnitClass cls, std::uint32_t thread, Cycle now) {
    if (now != cycle_) startCycle(now);
    Port& p = ports_[port];
    ClassState& c = classes_[static_cast<int>(cls)];
    used_[port] = static_cast<std::uint8_t>(used_[port] + p.cost[static_cast<int>(cls)]);
    if (c.interval > 1) p.busyUntil[static_cast<int>(cls)] = now + c.interval;
    if (c.threadInterval > 0) c.threadNext[thread] = now + c.threadInterval;
    ++p.issued;
  }
  // `count` replay attempts on `port` in cycles already past, the last at `last`, counted at once (a core that skipped
  // those cycles issued nothing else in them). Only what outlives them is kept: the issue count, and the unit's busy
  // time and the thread's next slot after the last attempt. Every port operation comes in cycle order and each of
  // these is a class's fixed interval after its cycle, so the latest is the largest: max() gives what reserve()
  // applied attempt by attempt would leave. The slots taken within those cycles are never asked again.
  void reservePast(std::uint32_t port, UnitClass cls, std::uint32_t thread, Cycle last, std::uint64_t count) {
    Port& p = ports_[port];
    ClassState& c = classes_[static_cast<int>(cls)];
    if (c.interval > 1) {
      Cycle& busy = p.busyUntil[static_cast<int>(cls)];
      busy = std::max(busy, last + c.interval);
    }
    if (c.threadInterval > 0) c.threadNext[thread] = std::max(c.threadNext[thread], last + c.threadInterval);
    p.issued += count;
  }

  std::uint32_t portCount() const { return static_cast<std::uint32_t>(ports_.size()); }
  // Uops issued through port i since construction (tests, and a per-port view of utilisation).
  std::uint64_t issuedOn(std::uint32_t port) const { return ports_[port].issued; }

 private:
  struct Port {
    std::uint8_t slots = 1;                       // the port's fastest rate: slots per cycle
    std::array<std::uint8_t, kUnitClasses> cost{};  // slots one uop of a class takes (slots / rate)
    std::array<Cycle, kUnitClasses> busyUntil{};    // unpipelined units on this port
    std::uint64_t issued = 0;
  };
  struct ClassState {
    std::array<std::uint8_t, kMaxPorts> ports{};  // ports feeding the class, in listed order
    std::uint32_t portCount = 0;
    std::uint32_t interval = 1;        // cycles its unit is busy per uop
    std::uint32_t threadInterval = 0;  // cycles between two uops of one thread (0 = no limit)
    bool timed = false;                // interval > 1 or threadInterval > 0: take() keeps busy times
    std::array<Cycle, kMaxThreads> threadNext{};
  };

  // take() for a class with busy times (an unpipelined unit or a per-thread interval): out of line, so that the
  // common case inlines into the scheduler without its registers.
  bool takeTimed(UnitClass cls, std::uint32_t thread, Cycle now);
  void startCycle(Cycle now) {
    used_.fill(0);
    cycle_ = now;
  }

  std::vector<Port> ports_;
  // Slots taken this cycle, per port: apart from the ports, so that a new cycle clears them with a few wide stores
  // instead of a loop over the ports (once per ticked cycle).
  std::array<std::uint8_t, kMaxPorts> used_{};
  std::array<ClassState, kUnitClasses> classes_{};
  Cycle cycle_ = Cycle::never();
  std::uint32_t lastPort_ = 0;  // replay (reserve)
};

}  // namespace smtlab
