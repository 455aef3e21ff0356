#include "smtlab/energy/energy_model.hpp"

#include <boost/json.hpp>

#include "smtlab/sim/machine.hpp"

namespace smtlab {

boost::json::object energyJson(Machine& m) {
  const Config& cfg = m.config();
  const EnergyConfig& e = cfg.energy;
  const double hz = cfg.system.freq_ghz * 1e9;
  constexpr double kNj = 1e-9;
  const MemorySystem& mem = m.memory();

  double fetch = 0, rename = 0, retire = 0, units = 0, l1i = 0, l1d = 0, l2 = 0, coreStatic = 0;
  double unitNj[kFuKinds + 1] = {};  // the last slot: uops that use no unit (nop, store data) cost nothing here
  for (const FuKindInfo& k : kFuKindTable) unitNj[static_cast<int>(k.value)] = e.*k.energyNj;
  const double busy = double(m.busyCycles());
  for (std::uint32_t c = 0; c < m.cores(); ++c) {
    Core& core = m.core(CoreId{c});
    core.flushAccounting(m.now());
    for (std::uint32_t t = 0; t < core.threads(); ++t) {
      const ThreadStats& s = core.thread(t).stats;
      // Squashed instructions and wrong-path uops were fetched too.
      fetch += double(s.fetched + s.squashed + s.wrongPathFetched) * e.fetch_nj * kNj;
      retire += double(s.instructions) * e.retire_nj * kNj;
    }
    rename += double(core.renamed()) * e.rename_nj * kNj;
    for (int u = 0; u <= kFuKinds; ++u) units += double(core.issuedByUnit()[u]) * unitNj[u] * kNj;
    l1i += double(mem.l1iStats(CoreId{c}).accesses) * e.l1i_nj * kNj;
    l1d += double(mem.l1dStats(CoreId{c}).accesses) * e.l1d_nj * kNj;
    l2 += double(mem.l2Stats(CoreId{c}).accesses) * e.l2_nj * kNj;
    const double active = double(core.cyclesActive());
    coreStatic += (active * e.core_active_w + std::max(0.0, busy - active) * e.core_halted_w) / hz;
  }
  double llc = 0.0;  // every package's LLC
  for (std::uint32_t p = 0; p < mem.packages(); ++p) llc += double(mem.llcStats(p).accesses) * e.llc_nj * kNj;
  const DramStats& d = mem.dramStats();
  const double dram = double(d.reads + d.writes) * e.dram_nj * kNj;
  const double uncore = busy * e.uncore_w / hz;
  const double idle = std::max(0.0, double(m.measuredCycles()) - busy) * e.package_idle_w / hz;

  const double dynamic = fetch + rename + retire + units + l1i + l1d + l2 + llc + dram;
  const double stat = coreStatic + uncore + idle;
  const double seconds = double(m.measuredCycles()) / hz;
  boost::json::object components{{"fetch", fetch},         {"rename", rename}, {"retire", retire},
                                  {"units", units},         {"l1i", l1i},       {"l1d", l1d},
                                  {"l2", l2},               {"llc", llc},       {"dram", dram},
                                  {"core_static", coreStatic}, {"uncore", uncore}, {"package_idle", idle}};
  return boost::json::object{{"joules", dynamic + stat},
                             {"watts", seconds > 0 ? (dynamic + stat) / seconds : 0.0},
                             {"seconds", seconds},
                             {"dynamic_joules", dynamic},
                             {"static_joules", stat},
                             {"busy_seconds", busy / hz},
                             {"components", std::move(components)}};
}

}  // namespace smtlab
