"""Measures what driving the machine from Python costs: ``python bench/os_overhead.py [--instructions N]`` (with
smtlab importable: the project's venv, or PYTHONPATH=python after ``make build``). A benchmark, never a test.

Scenario 1 (the headline figure): two CPU-bound tasks on a 1-core, 2-thread machine, HZ=1000 and 1 ms time slices,
against one uninterrupted C++ run of the same two traces (``run_traces``, what ``smtlab run`` does). Reported: host
seconds of each (best of ``--repeat``) and the overhead ``kernel / C++ - 1``, plus the share of the kernel run spent
in Python rather than inside Machine.run.

Scenario 2: four CPU-bound tasks on the same machine, so that every 1 ms tick preempts (a context switch per CPU per
millisecond); there is no uninterrupted equivalent, so only the Python share is reported. Scenario 3: the same with
20,000-cycle ticks and slices (150 times more often), to show the cost per scheduling event.
"""

from __future__ import annotations

import argparse
import time

from smtlab import load_config, run_traces
from smtlab.os import Compute, IdleCoreFirst, Kernel, Task


def _kernel_run(cfg, tasks: int, n: int, tick_cycles: int | None = None) -> Kernel:
    k = Kernel(cfg, IdleCoreFirst(), hz=1000, time_slice_ms=1.0, switch_cycles=0, tick_cycles=tick_cycles,
               time_slice_cycles=tick_cycles)
    for i in range(tasks):
        k.spawn(Task(f"t{i}", [Compute()], source=f"gen:mix,count={n},seed={i + 1}"))
    k.run()
    return k


def main(argv: list[str] | None = None) -> None:
    """Runs both scenarios and prints the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instructions", type=int, default=10_000_000, help="per task (default 10 M: 20 M in all)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, best time kept")
    args = parser.parse_args(argv)
    cfg = load_config(None, {"system.cores": 1, "core.threads": 2})
    n = args.instructions

    cpp = kern = float("inf")
    k = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        stats = run_traces(cfg, [f"gen:mix,count={n},seed=1", f"gen:mix,count={n},seed=2"])
        cpp = min(cpp, time.perf_counter() - t0)
        t0 = time.perf_counter()
        k = _kernel_run(cfg, 2, n)
        kern = min(kern, time.perf_counter() - t0)
    assert k is not None
    o = k.overhead()
    print(f"scenario 1: 2 tasks x {n} instructions, 1 core x 2 threads, HZ=1000, 1 ms slices")
    print(f"  C++ run_traces : {cpp:8.3f} s host, {stats['cycles']} cycles")
    print(f"  Python kernel  : {kern:8.3f} s host, {k.now} cycles, {o['machine_runs']} Machine.run calls")
    print(f"  overhead       : {100 * (kern / cpp - 1):+.2f} % wall; Python share of the kernel run "
          f"{100 * o['python_seconds'] / o['host_seconds']:.3f} %")

    k = _kernel_run(cfg, 4, n // 2)
    o = k.overhead()
    switches = sum(t.stats.dispatches for t in k.tasks)
    print(f"scenario 2: 4 tasks x {n // 2} instructions on the same machine, {switches} context switches")
    print(f"  Python kernel  : {o['host_seconds']:8.3f} s host, Python share {100 * o['overhead']:.3f} % of "
          f"Machine.run time")

    k = _kernel_run(cfg, 4, n // 10, tick_cycles=20_000)
    o = k.overhead()
    switches = sum(t.stats.dispatches for t in k.tasks)
    print(f"scenario 3: 4 tasks x {n // 10} instructions, 20000-cycle ticks and slices, {switches} context switches, "
          f"{o['machine_runs']} Machine.run calls")
    print(f"  Python kernel  : {o['host_seconds']:8.3f} s host, Python share {100 * o['overhead']:.2f} % of "
          f"Machine.run time, {1e6 * o['python_seconds'] / max(1, o['machine_runs']):.1f} us of Python per call")


if __name__ == "__main__":
    main()
