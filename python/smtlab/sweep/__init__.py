"""smtlab.sweep: parameter sweeps on a local process pool or a Dask cluster, with a resumable result store.

A sweep is a base config (preset or file, plus overrides), axes of config overrides (a dict key -> values for the
cross product, or explicit points), workloads (trace tuples such as ``("gen:mix", "gen:chase")``, or OS scenarios:
picklable functions) and seeds. Each run is a pure function of (config, workload, seed), keyed by a hash of those;
finished runs are skipped on a rerun. Single-thread baselines are computed once per program and config point, and the
table has per-thread IPC, weighted speedup (STP), ANTT, harmonic mean of speedups, fairness and energy. See
docs/sweeps.md.

Example::

    from smtlab.sweep import Sweep

    sw = Sweep("netburst",
               axes={"core.fetch_policy": ["round_robin", "icount"], "core.rob.entries": [64, 126]},
               workloads=[("gen:mix", "gen:branchy"), ("gen:alu", "gen:chase")],
               max_instructions=200_000)
    df = sw.run("out/fetch-rob")                 # all cores; or executor=distributed.Client(...)
    print(df[["core.fetch_policy", "core.rob.entries", "workload", "stp", "antt"]])
"""

from .execute import Sweep, execute_run, run_sweep
from .store import MemoryStore, ResultStore
from .tables import SweepResult, build_result, load_cpi_stacks, load_results, write_result
from .file import load_sweep_file
from .spec import Run, RunSpec, SweepError, SweepSpec, Workload, expand_points, seeded_spec

__all__ = [
    "MemoryStore",
    "ResultStore",
    "Run",
    "RunSpec",
    "Sweep",
    "SweepError",
    "SweepResult",
    "SweepSpec",
    "Workload",
    "build_result",
    "execute_run",
    "expand_points",
    "load_cpi_stacks",
    "load_results",
    "load_sweep_file",
    "run_sweep",
    "seeded_spec",
    "write_result",
]
