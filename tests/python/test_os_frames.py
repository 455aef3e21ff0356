"""A whole task_frame and cpu_frame of one deterministic Kernel run, every cell derived on paper from the scenario.

The only numbers the model decides are how long each task's computing takes (its IPC); they enter as the four
tasks' ``finished`` cycles, and every other cell follows from the kernel's rules (docs/python.md, "The kernel"):
a switch costs ``S`` idle cycles, a sleep ``D``, a Send wakes the oldest waiter, a task pinned to one CPU stays
there, a time slice of 10^9 cycles never expires. It pins the kernel's behaviour as a whole, whatever the split
into kernel.py / steps.py / timer.py."""

from __future__ import annotations

import pandas as pd
import pytest

import smtlab
from smtlab.os import Block, Channel, Compute, IdleCoreFirst, Kernel, Send, Sleep, Task

S = 1_000  # switch_cycles
D = 30_000  # B's sleep, cycles
NA, NB, NC, ND = 60_000, 30_000, 20_000, 10_000  # instructions of each task's compute


@pytest.fixture(scope="module")
def run():
    cfg = smtlab.load_config(None, {"system.packages": 2, "core.threads": 2})
    k = Kernel(cfg, IdleCoreFirst(), tick_cycles=20_000, time_slice_cycles=10**9, switch_cycles=S, seed=1)
    # a and b: the two logical CPUs of one core; c and d: the two of a core on the other package.
    a = 0
    (b,) = k.cpus[a].siblings
    c = next(x.id for x in k.cpus if x.package != k.cpus[a].package)
    (d,) = k.cpus[c].siblings
    ch = Channel("ch")
    # Spawn order = pid order: D first, so it runs first on c and blocks before C starts there.
    td = k.spawn(Task("D", [Block(ch), Compute(ND)], source="gen:alu,count=0,seed=4", affinity=[c]))
    tc = k.spawn(Task("C", [Compute(NC), Send(ch)], source="gen:mix,count=0,seed=3", affinity=[c]))
    ta = k.spawn(Task("A", [Compute(NA)], source="gen:mix,count=0,seed=1", affinity=[a]))
    tb = k.spawn(Task("B", [Sleep(cycles=D), Compute(NB)], source="gen:mix,count=0,seed=2", affinity=[b]))
    k.run()
    yield k, (a, b, c, d), {t.name: t.stats.finished for t in (ta, tb, tc, td)}
    k.machine.close()


def _overlap(x0: int, x1: int, y0: int, y1: int) -> int:
    return max(0, min(x1, y1) - max(x0, y0))


def test_task_frame_cell_by_cell(run):
    k, (a, b, c, d), fin = run
    pa, pc = k.cpus[a].package, k.cpus[c].package
    # Every CPU starts halted and idle; at cycle 0 each kick switches in its CPU's first task (S idle cycles).
    # D: in at S, blocks at once; woken at C's exit by C's Send, switched straight in again: S more, then ND.
    # C: queued behind D (runnable S), in at S + S, computes to its finish.
    # A: in at S, computes to its finish. B: in at S, sleeps D, woken at S + D, in again at 2S + D.
    b_on = 2 * S + D
    rows = {
        1: dict(name="D", asid=1, instructions=ND, running=fin["D"] - fin["C"] - S, runnable=0, switching=2 * S,
                sleeping=0, blocked=fin["C"] - S, started=S, dispatches=2, cpus=(c,), packages=(pc,),
                doubled_up=0),
        2: dict(name="C", asid=2, instructions=NC, running=fin["C"] - 2 * S, runnable=S, switching=S, sleeping=0,
                blocked=0, started=2 * S, dispatches=1, cpus=(c,), packages=(pc,), doubled_up=0),
        3: dict(name="A", asid=3, instructions=NA, running=fin["A"] - S, runnable=0, switching=S, sleeping=0,
                blocked=0, started=S, dispatches=1, cpus=(a,), packages=(pa,),
                doubled_up=_overlap(S, fin["A"], b_on, fin["B"])),
        4: dict(name="B", asid=4, instructions=NB, running=fin["B"] - b_on, runnable=0, switching=2 * S, sleeping=D,
                blocked=0, started=S, dispatches=2, cpus=(b,), packages=(pa,),
                doubled_up=_overlap(S, fin["A"], b_on, fin["B"])),
    }
    for pid, r in rows.items():
        name = r["name"]
        r.update(priority=0, state="exited", io_wait=0, created=0, finished=fin[name], turnaround=fin[name],
                 preemptions=0, migrations=0, core_migrations=0, ipc=r["instructions"] / r["running"])
    f = k.task_frame()
    expected = pd.DataFrame.from_dict(rows, orient="index")[list(f.columns)]
    expected.index.name = "pid"
    pd.testing.assert_frame_equal(f, expected, check_dtype=False)
    # The model's part, bounded both ways: the default core retires at most 4 instructions a cycle
    # (core.retire_width), and these cache-resident mixes run far faster than one instruction per 20 cycles.
    for r in rows.values():
        assert r["instructions"] / 4 <= r["running"] <= r["instructions"] * 20
    assert rows[3]["doubled_up"] > 0  # A and B did share the core: the overlap case is exercised


def test_cpu_frame_cell_by_cell(run):
    k, (a, b, c, d), fin = run
    end = max(fin.values())  # the run ends when the last task exits
    assert k.now == end
    run_c = (fin["C"] - 2 * S) + (fin["D"] - fin["C"] - S)
    cells = {  # busy, switch, dispatches, instructions
        a: (fin["A"] - S, S, 1, NA),
        b: (fin["B"] - 2 * S - D, 2 * S, 2, NB),
        c: (run_c, 3 * S, 3, NC + ND),
        d: (0, 0, 0, 0),
    }
    f = k.cpu_frame()
    assert sorted(f.index) == [0, 1, 2, 3]
    for cpu, (busy, switch, dispatches, instructions) in cells.items():
        row = f.loc[cpu]
        got = (row.busy, row.switch, row.idle, row.dispatches, row.instructions)
        assert got == (busy, switch, end - busy - switch, dispatches, instructions), f"CPU {cpu}"
        assert (row.core, row.thread, row.package) == (k.cpus[cpu].core, k.cpus[cpu].thread, k.cpus[cpu].package)
        assert (row.kernel_instructions, row.tlb_flushes, row.wakes, row.timer_interrupts) == (0, 0, 0, 0)


def test_timeline_cell_by_cell(run):
    k, (a, b, c, d), fin = run
    rows = sorted((r["cpu"], r["task"], r["start"], r["end"], r["why"]) for r in k.timeline_records())
    assert rows == sorted([
        (a, "A", S, fin["A"], "exit"),
        (b, "B", S, S, "sleep"), (b, "B", 2 * S + D, fin["B"], "exit"),
        (c, "D", S, S, "block"), (c, "C", 2 * S, fin["C"], "exit"), (c, "D", fin["C"] + S, fin["D"], "exit"),
    ])
