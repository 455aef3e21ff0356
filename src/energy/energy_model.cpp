#include "smtlab/energy/energy_model.hpp"

#include <algorithm>

#include <boost/json.hpp>

namespace smtlab {

boost::json::object energyJson(const Config& cfg, const EnergyCounts& counts) {
  const EnergyConfig& e = cfg.energy;
  const double hz = cfg.system.freq_ghz * 1e9;
  constexpr double kNj = 1e-9;

  double fetch = 0, rename = 0, retire = 0, units = 0, l1i = 0, l1d = 0, l2 = 0, coreStatic = 0;
  double unitNj[kFuKinds + 1] = {};  // the last slot: uops that use no unit (nop, store data) cost nothing here
  for (const FuKindInfo& k : kFuKindTable) unitNj[static_cast<int>(k.value)] = e.*k.energyNj;
  const double busy = double(counts.busyCycles);
  for (const EnergyCounts::Core& core : counts.cores) {
    for (const EnergyCounts::Thread& s : core.threads) {
      fetch += double(s.fetched) * e.fetch_nj * kNj;
      retire += double(s.retired) * e.retire_nj * kNj;
    }
    rename += double(core.renamed) * e.rename_nj * kNj;
    for (int u = 0; u <= kFuKinds; ++u) units += double(core.issuedByUnit[u]) * unitNj[u] * kNj;
    l1i += double(core.l1iAccesses) * e.l1i_nj * kNj;
    l1d += double(core.l1dAccesses) * e.l1d_nj * kNj;
    l2 += double(core.l2Accesses) * e.l2_nj * kNj;
    const double active = double(core.cyclesActive);
    coreStatic += (active * e.core_active_w + std::max(0.0, busy - active) * e.core_halted_w) / hz;
  }
  double llc = 0.0;  // every package's LLC
  for (std::uint64_t accesses : counts.llcAccesses) llc += double(accesses) * e.llc_nj * kNj;
  const double dram = double(counts.dramAccesses) * e.dram_nj * kNj;
  const double uncore = busy * e.uncore_w / hz;
  const double idle = std::max(0.0, double(counts.measuredCycles) - busy) * e.package_idle_w / hz;

  const double dynamic = fetch + rename + retire + units + l1i + l1d + l2 + llc + dram;
  const double stat = coreStatic + uncore + idle;
  const double seconds = double(counts.measuredCycles) / hz;
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
