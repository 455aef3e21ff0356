"""Helpers shared by the study's sections: parallel jobs, published data, speed-ups, geometric means, markdown."""

from __future__ import annotations

import contextlib
import math
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Iterable, Iterator, Sequence

import pandas as pd

from ..resources import installed, resource_path
from ..sweep.progress import Progress
from ..workers import host_cpus, workers_problem

#: data/reference/ (of the installed package, or of the source tree): the published tables, each file's header naming
#: its article and setup.
REFERENCE_DIR = resource_path("data/reference")


def read_reference(name: str) -> pd.DataFrame:
    """A published table (CSV with '#' source comments) from data/reference/. Raises FileNotFoundError naming the file
    when it is missing (an installation without its data)."""
    path = REFERENCE_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"the published table {path} is missing (reinstall smtlab, or run from its source tree)")
    return pd.read_csv(path, comment="#")


def kernel_cache_env() -> None:
    """Points SMTLAB_KERNEL_CACHE at a build tree's traced kernels when it is unset and the compiled default has
    none (the kernel:aim9_* traces; without them the tracer's look-alikes stand in, and the report says so)."""
    if os.environ.get("SMTLAB_KERNEL_CACHE") or installed():
        return  # an installed package's program keeps its own cache (~/.cache/smtlab/kernels)
    root = REFERENCE_DIR.parents[1]
    found = sorted((p.parent for p in root.glob("build*/kernels/aim9_add_int.trace")),
                   key=lambda p: (p.parent.name != "build", -p.stat().st_mtime))
    if found:
        os.environ["SMTLAB_KERNEL_CACHE"] = str(found[0])


def check_workers(workers: int | None, what: str = "--workers") -> int:
    """The number of worker processes to use: ``workers``, or every CPU of the host when it is None. Raises ValueError
    unless it is an integer from 1 to WORKERS_PER_CPU x the host's CPUs (smtlab/workers.py, as ``smtlab sweep``)."""
    if workers is None:
        return host_cpus()
    if (problem := workers_problem(workers, what)) is not None:
        raise ValueError(problem)
    return workers


#: Put before every progress bar's label while a study runs its sections ("[3/7] "), so that a reader of the bars knows
#: how far the whole run is, not only the section (:func:`progress_step`).
_progress_step = ""


@contextlib.contextmanager
def progress_step(index: int, count: int) -> Iterator[None]:
    """While the block runs, progress bars are labelled as section ``index`` of ``count`` (both from 1)."""
    global _progress_step
    before = _progress_step
    _progress_step = f"[{index}/{count}] "
    try:
        yield
    finally:
        _progress_step = before


def progress_label(desc: str) -> str:
    """A progress bar's label: ``desc`` after the study's section counter, if one is set (:func:`progress_step`)."""
    return _progress_step + desc


def _worker_signals() -> None:
    """A worker process leaves Ctrl-C (sent to the whole process group) to the study, which stops the workers itself
    (process_pool), and dies at once on SIGTERM instead of running the study's handler inherited by fork: so an
    interrupt prints one line, not one traceback per worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A ProcessPoolExecutor of ``workers`` processes that ignore Ctrl-C; when the block ends with an exception
    (KeyboardInterrupt, SIGTERM, a failed job) the workers are terminated at once instead of finishing their jobs."""
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_signals)
    try:
        yield pool
    except BaseException:
        for p in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                p.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _call(job: tuple[Callable[..., dict[str, Any]], dict[str, Any]]) -> tuple[dict[str, Any], float]:
    """A job's result and the host seconds it took in its worker."""
    fn, kwargs = job
    start = time.perf_counter()
    result = fn(**kwargs)
    return result, time.perf_counter() - start


class JobResults(list):  # type: ignore[type-arg]
    """run_jobs's results (a list of dicts in the order of the parameters) with what they cost: ``host_seconds``
    (summed over the jobs, each timed in its worker), ``wall_seconds`` (from the first job's start to the last
    one's end, the pool's start included) and ``workers``."""

    def __init__(self, results: list[dict[str, Any]], host_seconds: float, wall_seconds: float, workers: int) -> None:
        super().__init__(results)
        self.host_seconds = host_seconds
        self.wall_seconds = wall_seconds
        self.workers = workers


def cost_sentence(jobs: int, host_seconds: float, workers: int, wall_seconds: float) -> str:
    """The line a section's notes give about what its simulations cost (every section says it the same way)."""
    return (f"{jobs} simulations, {host_seconds:.1f} s of simulation on {workers} worker(s), section wall time "
            f"{wall_seconds:.1f} s.")


def run_jobs(fn: Callable[..., dict[str, Any]], params: Sequence[dict[str, Any]], workers: int, progress: bool,
             desc: str, cost: Callable[[dict[str, Any]], Any] | None = None) -> JobResults:
    """``fn(**p)`` for every ``p``, on ``workers`` processes (each job a pure function returning a plain dict); the
    results in the order of ``params``. ``cost``: a sort key of a job's parameters, larger for longer jobs; the jobs
    then start longest first, so that the pool's last jobs are short and no worker waits long for the others at the
    end (the results keep the order of ``params``). The results also say what the jobs cost (JobResults)."""
    order = list(range(len(params)))
    if cost is not None:
        order.sort(key=lambda i: cost(params[i]), reverse=True)
    jobs = [(fn, params[i]) for i in order]
    bar = Progress(len(jobs), progress_label(desc), failures=False, leave=False, enabled=progress)
    done: list[tuple[dict[str, Any], float]] = []
    start = time.perf_counter()
    try:
        if workers <= 1:
            for j in jobs:
                done.append(_call(j))
                bar.update()
        else:
            with process_pool(workers) as pool:
                for r in pool.map(_call, jobs):
                    done.append(r)
                    bar.update()
    finally:
        bar.close()
    wall = time.perf_counter() - start
    results: list[dict[str, Any]] = [{}] * len(params)
    for i, (r, _) in zip(order, done):
        results[i] = r
    return JobResults(results, sum(s for _, s in done), wall, max(1, min(workers, len(jobs))))


def speedup_pct(noht: float, ht: float, lower_is_better: bool = False) -> float:
    """HT speed-up in percent: ht/noht - 1 for rates, noht/ht - 1 for latencies (the article's convention)."""
    if noht <= 0 or ht <= 0:
        return float("nan")
    return 100.0 * ((noht / ht) if lower_is_better else (ht / noht)) - 100.0


def geomean(values: Iterable[float]) -> float:
    """The geometric mean; nan when a value is missing (nan) or not positive: a mean over fewer rows than the
    table's is not the article's geomean, and a 0 is no measurement."""
    v = list(values)
    if not v or not all(math.isfinite(x) and x > 0 for x in v):
        return float("nan")
    return math.exp(sum(math.log(x) for x in v) / len(v))


def fmt(x: Any, digits: int = 2) -> str:
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.{digits}f}"
    return str(x)


def markdown_table(df: pd.DataFrame, digits: int = 2) -> str:
    """A DataFrame as a GitHub markdown table (pandas' to_markdown needs tabulate, which is not a dependency)."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(fmt(row[c], digits) for c in cols) + " |")
    return "\n".join(lines)


def text_table(df: pd.DataFrame, digits: int = 2) -> str:
    """A DataFrame as aligned text for the terminal."""
    cells = [[str(c) for c in df.columns]] + [[fmt(row[c], digits) for c in df.columns] for _, row in df.iterrows()]
    widths = [max(len(r[i]) for r in cells) for i in range(len(df.columns))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells)


def stack_line(stack: dict[str, float]) -> str:
    """The largest CPI-stack parts as text."""
    parts = sorted(((v, k) for k, v in stack.items() if v >= 0.01), reverse=True)
    return ", ".join(f"{k} {v:.2f}" for v, k in parts[:5])


def generated_line(results: Iterable[dict[str, Any]], what: str) -> str:
    """How much of the instructions that ``results`` (workload results with machine_summary's keys) measured came
    from generated streams (``gen:`` sources, the estimates that stand for work without a recording), and what those
    are in this section (``what``)."""
    rs = list(results)
    gen = sum(r.get("generated_instructions", 0) for r in rs)
    total = sum(r.get("code_instructions", 0) for r in rs)
    if total <= 0:
        return "Generated streams: no instructions were measured."
    return (f"Generated streams: {100.0 * gen / total:.1f} % of the {total:,} instructions measured here "
            f"({gen:,}) ran `gen:` sources, estimates that stand for {what}; the rest ran recorded code (kpath:, "
            "kernel: traces).")
