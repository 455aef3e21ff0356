"""Machine topology and OS costs in the Python layer: Machine exposes packages / cores / threads and the
package of each logical CPU; the kernel reads the machine's mapping; with ``charge_os_costs=True`` it charges the
wake-up of a halted CPU, a TLB flush on an address-space switch and the timer interrupt. Expected values are derived
in each test's docstring."""

from __future__ import annotations

import pytest

import smtlab
from smtlab.os import Compute, IdleCoreFirst, Kernel, Linux24, Task


def _cfg(**overrides):
    base = {"system.packages": 2, "system.cores": 2, "core.threads": 2}
    base.update(overrides)
    return smtlab.load_config("netburst", base)


def test_machine_exposes_packages_cores_threads_and_the_package_of_each_cpu():
    """2 packages x 2 cores x 2 threads, cores first: cpu i is thread i // 4 of core i % 4, in package (i % 4) // 2;
    its sibling is cpu (i + 4) % 8 (docs/model.md "Topology")."""
    cfg = _cfg(**{"system.siblings_adjacent": False})
    assert (cfg.packages, cfg.cores, cfg.threads, cfg.logical_cpus) == (2, 4, 2, 8)
    with smtlab.Machine(cfg) as m:
        assert (m.packages, m.cores, m.threads, m.logical_cpus) == (2, 4, 2, 8)
        assert [c["package"] for c in m.cpus] == [0, 0, 1, 1, 0, 0, 1, 1]
        assert [c["core"] for c in m.cpus] == [0, 1, 2, 3, 0, 1, 2, 3]
        assert [c["thread"] for c in m.cpus] == [0, 0, 0, 0, 1, 1, 1, 1]
        assert [c["siblings"] for c in m.cpus] == [[4], [5], [6], [7], [0], [1], [2], [3]]
        assert len(m.stats()["packages"]) == 2


def test_system_cores_alone_keeps_its_old_machine():
    """``system.cores = 2`` without ``system.packages`` is what it always simulated: two cores sharing one LLC (one
    package); two LLCs need ``system.packages = 2``."""
    with smtlab.Machine(smtlab.load_config("netburst", {"system.cores": 2})) as m:
        assert (m.packages, m.cores) == (1, 2)
        assert len(m.stats()["packages"]) == 1
    with smtlab.Machine(smtlab.load_config("netburst", {"system.packages": 2})) as m:
        assert (m.packages, m.cores) == (2, 2)
        assert [p["cores"] for p in m.stats()["packages"]] == [[0], [1]]


def test_task_frame_packages_follow_the_machine_mapping():
    """Four CPU-bound tasks on 4 cores under IdleCoreFirst (a fully idle core first): each task's ``packages`` is the
    set of packages of the CPUs it ran on, as the machine maps them, and with one task per core both packages are
    used. Cores-first numbering, so a kernel that assumed siblings adjacent would get the packages wrong."""
    cfg = _cfg(**{"system.siblings_adjacent": False})
    k = Kernel(cfg, IdleCoreFirst(), tick_cycles=20_000, time_slice_cycles=10**9, switch_cycles=0)
    for i in range(4):
        k.spawn(Task(f"t{i}", [Compute(20_000)], source=f"gen:mix,count=0,seed={i + 1}"))
    k.run()
    package_of = {c["id"]: c["package"] for c in k.machine.cpus}
    f = k.task_frame()
    for cpus, packages in zip(f.cpus, f.packages):
        assert set(packages) == {package_of[c] for c in cpus}
    assert sorted({p for ps in f.packages for p in ps}) == [0, 1]
    assert [c.package for c in k.cpus] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert k.packages == [[0, 1, 4, 5], [2, 3, 6, 7]]
    k.machine.close()


def _one_task(wake: int, timer: int = 0, *, charge: bool = True, n: int = 20_000, tick: int = 1_000_000,
              kernel_path: str | None = None):
    cfg = smtlab.load_config("netburst", {"core.threads": 1, "os.wake_cycles": wake, "os.timer_cycles": timer})
    k = Kernel(cfg, Linux24(), tick_cycles=tick, time_slice_cycles=10**9, switch_cycles=500,
               kernel_path=kernel_path, switch_instructions=800, charge_os_costs=charge)
    t = k.spawn(Task("t", [Compute(n)], source="gen:mix,count=0,seed=5"))
    k.run()
    return k, t


@pytest.mark.parametrize("kernel_path", [None, "gen:mix,count=0,seed=7"])
def test_wake_cost_delays_the_first_instruction_by_exactly_the_configured_cycles(kernel_path):
    """The only CPU is halted at the start: the task's switch-in (idle cycles, or the kernel path's instructions)
    waits os.wake_cycles first. Nothing else differs (same trace, cold machine, no other task), so start and finish
    move by exactly W. Without charge_os_costs the configured value is not charged."""
    w = 7777
    k0, t0 = _one_task(0, kernel_path=kernel_path)
    kw, tw = _one_task(w, kernel_path=kernel_path)
    assert tw.stats.started - t0.stats.started == w
    assert tw.stats.finished - t0.stats.finished == w
    assert tw.stats.instructions == t0.stats.instructions == 20_000
    assert kw.cpu_records()[0]["wakes"] == 1 and k0.cpu_records()[0]["wakes"] == 0
    _, off = _one_task(w, charge=False, kernel_path=kernel_path)
    assert off.stats.finished == t0.stats.finished
    with smtlab.Machine(smtlab.load_config("netburst", {"os.wake_cycles": w})) as m:
        assert m.wake_cost(0) == w  # idle
        m.attach(0, smtlab.Source("gen:mix,count=0"))
        assert m.wake_cost(0) == 0  # running: nothing to wake


def test_timer_interrupt_takes_its_cycles_at_every_tick_of_a_running_cpu():
    """Ticks every 20 000 cycles, each taking T = 3000 cycles from the running task. Every tick that falls inside
    the task's run is charged once: the count is the number of tick times strictly between its start and its end.
    The CPU runs nothing for T, but misses already sent on keep going meanwhile (the memory system completes them),
    so an interrupt hides at most one memory round trip of the task's stall: each costs at least T - 500 (netburst:
    a cold load is 32 + 208 = 240 cycles, plus waiting for the channel or an MSHR) and at most T plus refilling the
    squashed window, bounded here by 2000 cycles (8 front-end stages, a 126-entry ROB refilled at 3 uops per cycle
    is 42 cycles, plus cache misses the squashed loads had already paid once)."""
    tick, cost = 20_000, 3000
    _, base = _one_task(0, 0, n=200_000, tick=tick)
    k, t = _one_task(0, cost, n=200_000, tick=tick)
    n = k.cpu_records()[0]["timer_interrupts"]
    ticks_inside = sum(1 for j in range(1, t.stats.finished // tick + 1) if t.stats.started < j * tick < t.stats.finished)
    assert n == ticks_inside and n >= 5
    extra = t.stats.finished - base.stats.finished
    assert n * (cost - 500) <= extra <= n * (cost + 2000)
    assert t.stats.instructions == 200_000


def _two_processes(tagged: bool) -> tuple[int, int, int]:
    cfg = smtlab.load_config("netburst", {"core.threads": 1, "mem.tlb_tagged": tagged})
    k = Kernel(cfg, Linux24(), tick_cycles=10_000, time_slice_cycles=30_000, switch_cycles=500, charge_os_costs=True)
    for i in range(2):
        k.spawn(Task(f"p{i}", [Compute(150_000)], source=f"gen:mix,footprint=128k,count=0,seed={i + 1}"))
    k.run()
    pids = [pid for cpu, pid, *_ in sorted(k.segments, key=lambda s: s[2]) if cpu == 0]
    switches = sum(1 for a, b in zip(pids, pids[1:]) if a != b)
    flushes = k.cpu_records()[0]["tlb_flushes"]
    misses = k.machine.stats()["cores"][0]["dtlb"]["misses"]
    k.machine.close()
    return switches, flushes, misses


def test_tlb_flush_on_every_switch_between_address_spaces():
    """Two processes (own address spaces) share one logical CPU with 30 000-cycle slices. Each dispatch of the other
    process than the one the CPU last ran is a CR3 switch: without tagged TLBs it flushes, so the flush count is the
    number of such alternations in the CPU's run segments; with tagged TLBs there are none. Each task's 128 KB
    footprint (32 pages) fits the 64-entry DTLB beside the other's, so with tagged TLBs the misses are the cold ones,
    and every flush adds at least one refill miss."""
    switches, flushes, misses = _two_processes(False)
    t_switches, t_flushes, t_misses = _two_processes(True)
    assert switches >= 4 and t_switches >= 4
    assert flushes == switches
    assert t_flushes == 0
    assert misses >= t_misses + switches


def test_charge_os_costs_must_be_a_bool():
    with pytest.raises(TypeError, match="charge_os_costs must be a bool"):
        Kernel(smtlab.load_config("netburst"), Linux24(), charge_os_costs=1)  # type: ignore[arg-type]


def test_bad_topology_and_os_cost_input_gets_one_clear_error():
    with pytest.raises(smtlab.ConfigError, match="system.packages"):
        smtlab.load_config("netburst", {"system.packages": 0})
    with pytest.raises(smtlab.ConfigError, match=r"system.packages x system.cores x core.threads = 64 x 64 x 2"):
        smtlab.Machine(smtlab.load_config("netburst", {"system.packages": 64, "system.cores": 64}))
    with pytest.raises(smtlab.ConfigError, match="mem.page_walk.levels"):
        smtlab.load_config("netburst", {"mem.page_walk.levels": 5})
    with smtlab.Machine(smtlab.load_config("netburst")) as m:
        with pytest.raises(smtlab.UsageError, match="flush_tlb.*CPU 7"):
            m.flush_tlb(7, 1)
        with pytest.raises(smtlab.UsageError, match="flush_tlb.*asid"):
            m.flush_tlb(0, -1)
        with pytest.raises(smtlab.UsageError, match="wake_cost"):
            m.wake_cost(2)
