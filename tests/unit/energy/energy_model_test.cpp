// The energy model's arithmetic on fixed event counts: dynamic energy is each count times its per-event energy,
// static energy is each power times the cycles it applies to over the clock frequency. Every expected value below is
// worked out by hand from the coefficients and counts written in the test.
#include <iterator>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "smtlab/config/config.hpp"
#include "smtlab/energy/energy_model.hpp"

namespace smtlab {
namespace {

namespace json = boost::json;

// Equal up to rounding: the sums are taken in another order than the hand computation's.
#define EXPECT_ENERGY(actual, expected) EXPECT_NEAR(actual, expected, 1e-12 * (expected))

// Coefficients chosen for the test (not the defaults), so that a change of a default does not change what is checked.
Config energyConfig() {
  Config c;
  c.system.freq_ghz = 2.0;  // 2e9 cycles per second
  EnergyConfig& e = c.energy;
  e.fetch_nj = 0.1;
  e.rename_nj = 0.2;
  e.retire_nj = 0.05;
  e.int_alu_nj = 0.05;
  e.int_mul_nj = 0.2;
  e.int_div_nj = 0.8;
  e.fp_add_nj = 0.2;
  e.fp_mul_nj = 0.3;
  e.fp_div_nj = 1.0;
  e.load_nj = 0.1;
  e.store_nj = 0.1;
  e.l1i_nj = 0.05;
  e.l1d_nj = 0.08;
  e.l2_nj = 0.3;
  e.llc_nj = 1.0;
  e.dram_nj = 15.0;
  e.core_active_w = 2.0;
  e.core_halted_w = 0.5;
  e.uncore_w = 2.0;
  e.package_idle_w = 1.0;
  return c;
}

double field(const json::object& o, const char* key) { return o.at(key).to_number<double>(); }
double component(const json::object& o, const char* key) { return field(o.at("components").as_object(), key); }

// The events of one core running one program for 4000 busy cycles of a 6000-cycle measurement (2000 cycles with
// every logical CPU halted). Dynamic energy, in nJ:
//   fetch 1000 x 0.1 = 100, retire 800 x 0.05 = 40, rename 900 x 0.2 = 180,
//   units 500 x 0.05 + 10 x 0.2 + 200 x 0.1 + 90 x 0.1 + 100 x 0 (no unit) = 56,
//   l1i 250 x 0.05 = 12.5, l1d 290 x 0.08 = 23.2, l2 20 x 0.3 = 6, llc 5 x 1 = 5, dram 3 x 15 = 45:
//   467.7 nJ in all.
EnergyCounts::Core busyCore(std::vector<EnergyCounts::Thread> threads) {
  EnergyCounts::Core core;
  core.threads = std::move(threads);
  core.renamed = 900;
  core.issuedByUnit[static_cast<int>(FuKind::IntAlu)] = 500;
  core.issuedByUnit[static_cast<int>(FuKind::IntMul)] = 10;
  core.issuedByUnit[static_cast<int>(FuKind::Load)] = 200;
  core.issuedByUnit[static_cast<int>(FuKind::Store)] = 90;
  core.issuedByUnit[static_cast<int>(FuKind::None)] = 100;
  core.l1iAccesses = 250;
  core.l1dAccesses = 290;
  core.l2Accesses = 20;
  core.cyclesActive = 4000;
  return core;
}

EnergyCounts withUncore(std::vector<EnergyCounts::Core> cores) {
  EnergyCounts counts;
  counts.cores = std::move(cores);
  counts.llcAccesses = {5};
  counts.dramAccesses = 3;
  counts.busyCycles = 4000;
  counts.measuredCycles = 6000;
  return counts;
}

void expectDynamicOfBusyCore(const json::object& e) {
  EXPECT_ENERGY(component(e, "fetch"), 100e-9);
  EXPECT_ENERGY(component(e, "retire"), 40e-9);
  EXPECT_ENERGY(component(e, "rename"), 180e-9);
  EXPECT_ENERGY(component(e, "units"), 56e-9);
  EXPECT_ENERGY(component(e, "l1i"), 12.5e-9);
  EXPECT_ENERGY(component(e, "l1d"), 23.2e-9);
  EXPECT_ENERGY(component(e, "l2"), 6e-9);
  EXPECT_ENERGY(component(e, "llc"), 5e-9);
  EXPECT_ENERGY(component(e, "dram"), 45e-9);
  EXPECT_ENERGY(field(e, "dynamic_joules"), 467.7e-9);
}

TEST(EnergyModel, HtOffSumsEventEnergiesAndStaticPowerOverTime) {
  // Two single-thread cores: core 0 runs the program; core 1 runs for 1000 of the 4000 busy cycles and is halted for
  // the other 3000. Static, in J (cycles x W / 2e9):
  //   core 0: 4000 x 2 = 4e-6; core 1: 1000 x 2 + 3000 x 0.5 = 1.75e-6 (halted while another core runs);
  //   uncore 4000 x 2 = 4e-6 (while anything runs); package idle 2000 x 1 = 1e-6 (every CPU halted):
  //   10.75e-6 J in all. Over 6000 cycles = 3e-6 s.
  EnergyCounts::Core idleCore;
  idleCore.threads = {EnergyCounts::Thread{}};
  idleCore.cyclesActive = 1000;
  const EnergyCounts counts = withUncore({busyCore({{1000, 800}}), idleCore});
  const json::object e = energyJson(energyConfig(), counts);
  expectDynamicOfBusyCore(e);
  EXPECT_ENERGY(component(e, "core_static"), 5.75e-6);
  EXPECT_ENERGY(component(e, "uncore"), 4e-6);
  EXPECT_ENERGY(component(e, "package_idle"), 1e-6);
  EXPECT_ENERGY(field(e, "static_joules"), 10.75e-6);
  EXPECT_ENERGY(field(e, "joules"), 10.75e-6 + 467.7e-9);
  EXPECT_ENERGY(field(e, "seconds"), 3e-6);
  EXPECT_ENERGY(field(e, "busy_seconds"), 2e-6);
  EXPECT_ENERGY(field(e, "watts"), (10.75e-6 + 467.7e-9) / 3e-6);
}

TEST(EnergyModel, HtOnCountsEveryThreadsEventsAndTheCoresStaticPowerOnce) {
  // One core with two threads that share the program's events (fetched 600 + 400, retired 500 + 300): the same
  // dynamic energy as one thread doing all of it. Static: the one core, active 4000 cycles x 2 W = 4e-6, the
  // uncore 4e-6 and package idle 1e-6: 9e-6 J.
  const EnergyCounts counts = withUncore({busyCore({{600, 500}, {400, 300}})});
  const json::object e = energyJson(energyConfig(), counts);
  expectDynamicOfBusyCore(e);
  EXPECT_ENERGY(component(e, "core_static"), 4e-6);
  EXPECT_ENERGY(field(e, "static_joules"), 9e-6);
  EXPECT_ENERGY(field(e, "joules"), 9e-6 + 467.7e-9);
  EXPECT_ENERGY(field(e, "watts"), (9e-6 + 467.7e-9) / 3e-6);
}

TEST(EnergyModel, EachUnitClassIsChargedItsOwnEnergy) {
  // 1000 operations on one unit class at a time, with a different energy per class: 1000 x k nJ for the k-th.
  struct UnitCase {
    FuKind kind;
    double EnergyConfig::*energy;
  };
  const UnitCase cases[] = {
      {FuKind::IntAlu, &EnergyConfig::int_alu_nj}, {FuKind::IntMul, &EnergyConfig::int_mul_nj},
      {FuKind::IntDiv, &EnergyConfig::int_div_nj}, {FuKind::FpAdd, &EnergyConfig::fp_add_nj},
      {FuKind::FpMul, &EnergyConfig::fp_mul_nj},   {FuKind::FpDiv, &EnergyConfig::fp_div_nj},
      {FuKind::Load, &EnergyConfig::load_nj},      {FuKind::Store, &EnergyConfig::store_nj},
  };
  Config c = energyConfig();
  for (std::size_t k = 0; k < std::size(cases); ++k) c.energy.*cases[k].energy = double(k + 1);
  for (std::size_t k = 0; k < std::size(cases); ++k) {
    EnergyCounts::Core core;
    core.threads = {EnergyCounts::Thread{}};
    core.issuedByUnit[static_cast<int>(cases[k].kind)] = 1000;
    const json::object e = energyJson(c, withUncore({core}));
    EXPECT_ENERGY(component(e, "units"), 1000 * double(k + 1) * 1e-9) << "unit class " << k;
  }
}

TEST(EnergyModel, AHaltedMachineDrawsOnlyPackageIdlePower) {
  // Nothing runs for 3000 cycles: 3000 x 1 W / 2e9 = 1.5e-6 J, no dynamic energy, no core or uncore power.
  EnergyCounts counts;
  counts.cores.resize(2);
  counts.llcAccesses = {0};
  counts.measuredCycles = 3000;
  const json::object e = energyJson(energyConfig(), counts);
  EXPECT_ENERGY(field(e, "dynamic_joules"), 0.0);
  EXPECT_ENERGY(component(e, "core_static"), 0.0);
  EXPECT_ENERGY(component(e, "uncore"), 0.0);
  EXPECT_ENERGY(field(e, "joules"), 1.5e-6);
  EXPECT_ENERGY(field(e, "watts"), 1.0);
}

}  // namespace
}  // namespace smtlab
