"""What a sweep is: a base config, axes of overrides, workloads and seeds, expanded into runs with content keys.

Nothing here simulates. Expansion loads every config point (so a bad key fails before any run starts) and gives each
run and each single-thread baseline a key: a hash of everything the result depends on (the effective config, the
traces or scenario, the seed, the instruction budget), which is what makes results cacheable and resumable.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import smtlab

#: Bumped when the stored result of a run changes meaning, so an old store is not silently reused.
STORE_VERSION = 1

#: How single-thread baselines are run: "threads1" sets core.threads=1 (Hyper-Threading off, the program owns the
#: whole core); "alone" keeps the config and runs the program without a sibling (partitions recombine on halt).
BASELINE_MODES = ("threads1", "alone", "none")


class SweepError(smtlab.Error):
    """A sweep description that is wrong (not a config key: those raise :class:`smtlab.ConfigError`)."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: equal values give equal text, so equal hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=json_default)


def json_default(value: Any) -> Any:
    """``json.dumps(default=...)`` for what results and parameters hold besides plain JSON (numpy scalars, sets)."""
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return repr(value)


def digest(value: Any, length: int = 16) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def config_key(config: smtlab.Config) -> str:
    """A short hash of an effective config: two override sets that give the same machine share it."""
    return digest(config.to_dict())


def seeded_spec(spec: str, seed: int | None) -> str:
    """A generator spec with the run's seed, unless it names its own (``gen:mix`` -> ``gen:mix,seed=3``)."""
    if seed is None or not spec.startswith("gen:"):
        return spec
    params = spec.split(",")[1:]
    if any(p.strip().startswith("seed=") for p in params):
        return spec
    return f"{spec},seed={seed}"


def resolve_scenario(ref: Callable[..., Any] | str) -> Callable[..., Any]:
    """A scenario function from itself or from ``"package.module:function"``."""
    if callable(ref):
        return ref
    module, sep, name = ref.partition(":")
    if not sep or not module or not name:
        raise SweepError(f"scenario '{ref}': expected 'package.module:function'")
    try:
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise SweepError(f"scenario '{ref}': cannot import it ({e})") from None
    if not callable(obj):
        raise SweepError(f"scenario '{ref}' is not callable")
    return obj


def scenario_name(ref: Callable[..., Any] | str) -> str:
    """``module:qualname`` of a scenario: what identifies it in a run key."""
    if isinstance(ref, str):
        return ref
    return f"{getattr(ref, '__module__', '?')}:{getattr(ref, '__qualname__', repr(ref))}"


def check_scenario_call(ref: Callable[..., Any] | str, params: Mapping[str, Any], *, seed: int | None,
                        max_instructions: int) -> None:
    """Raises :class:`SweepError` if the scenario cannot be called with these parameters, before any run does.

    The call is bound to the function's signature (an unknown or missing parameter is an error naming it); then, if the
    function has a ``check_params`` attribute, that is called with every argument but the config (defaults filled
    in) and may raise ``ValueError`` or ``TypeError`` naming a bad value."""
    name = scenario_name(ref)
    fn = resolve_scenario(ref)
    for reserved in ("seed", "max_instructions"):
        if reserved in params:
            raise SweepError(f"scenario '{name}': params may not set '{reserved}' (the sweep passes its own)")
    args: dict[str, Any] = {"seed": seed, "max_instructions": max_instructions, **params}
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):  # e.g. a builtin without one: only its run can tell
        signature = None
    if signature is not None:
        try:
            bound = signature.bind(None, **args)
        except TypeError as e:
            raise SweepError(f"scenario '{name}' cannot be called as fn(config, seed=..., max_instructions=..., "
                             f"**params): {e}") from None
        bound.apply_defaults()
        args = dict(list(bound.arguments.items())[1:])  # the first one is the config
    check = getattr(fn, "check_params", None)
    if check is not None:
        try:
            check(args)
        except (ValueError, TypeError) as e:
            raise SweepError(str(e)) from None


@dataclass(frozen=True)
class Workload:
    """What runs on the machine: trace specs, one per logical CPU from CPU 0, or an OS scenario.

    A scenario is a picklable function (or ``"module:function"``) called as
    ``fn(config, seed=seed, max_instructions=n, **params)``; it returns a dict of results. Scalars become columns;
    a list ``"ipc"`` becomes per-thread columns, and with a list ``"ipc_alone"`` the speedup metrics are computed.
    """

    name: str
    traces: tuple[str, ...] = ()
    scenario: Callable[..., Any] | str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if bool(self.traces) == (self.scenario is not None):
            raise SweepError(f"workload '{self.name}': give either traces or a scenario")
        object.__setattr__(self, "traces", tuple(self.traces))
        object.__setattr__(self, "params", dict(self.params))

    @staticmethod
    def of(value: Workload | Sequence[str] | str | Callable[..., Any], name: str | None = None) -> Workload:
        """A workload from a tuple of trace specs, one spec, a scenario function or ``"module:function"``."""
        if isinstance(value, Workload):
            return value
        if isinstance(value, str):
            if ":" in value and not value.startswith(("gen:", "kernel:")) and "/" not in value:
                return Workload(name or value.rpartition(":")[2], scenario=value)
            return Workload(name or value, traces=(value,))
        if callable(value):
            return Workload(name or getattr(value, "__name__", "scenario"), scenario=value)
        traces = tuple(value)
        if not traces or not all(isinstance(t, str) for t in traces):
            raise SweepError(f"workload {value!r}: expected trace specs (strings)")
        return Workload(name or "+".join(traces), traces=traces)

    def identity(self) -> dict[str, Any]:
        """What a run's result depends on (the name is only a label)."""
        if self.scenario is not None:
            return {"scenario": scenario_name(self.scenario), "params": dict(self.params)}
        return {"traces": list(self.traces)}


@dataclass(frozen=True)
class RunSpec:
    """One simulation, as sent to a worker: a pure function of these fields."""

    key: str
    kind: str  # "run" or "baseline"
    config: smtlab.Config
    traces: tuple[str, ...] = ()
    scenario: Callable[..., Any] | str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    max_instructions: int = 0
    warmup: int = 0


@dataclass(frozen=True)
class Run:
    """One row of the result table: a point of the axes, a workload and a seed, and the baselines it needs."""

    index: int
    point: Mapping[str, Any]
    workload: Workload
    seed: int | None
    spec: RunSpec
    config_key: str
    baseline_keys: tuple[str, ...] = ()  # one per thread; empty for scenarios or baseline="none"
    baseline_config_key: str | None = None


def _flatten(table: Mapping[str, Any]) -> dict[str, Any]:
    """Nested TOML tables to dotted keys: {"core": {"rob": {"entries": [..]}}} -> {"core.rob.entries": [..]}.

    Iterative (a stack, not recursion), so tables nested thousands deep are an unknown key, not a RecursionError. A key
    given twice (``"core.rob.entries"`` quoted and ``core.rob.entries`` dotted, which TOML keeps apart) is an error:
    one of the two values would be dropped."""
    out: dict[str, Any] = {}
    stack = [("", iter(table.items()))]
    while stack:
        prefix, items = stack[-1]
        for k, v in items:
            key = f"{prefix}{k}"
            if isinstance(v, Mapping):
                stack.append((key + ".", iter(v.items())))
                break
            if key in out:
                raise SweepError(f"key '{short(key)}' is given twice (quoted and as dotted or nested keys)")
            out[key] = v
        else:
            stack.pop()
    return out


def short(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a message (a key from a file can be megabytes long)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


#: The most runs (points x workloads x seeds) a sweep may have unless raised (``max_runs=``, ``--max-runs``). Expanding
#: a sweep loads two configs per run, about 4 ms and 4 KB per run on a 2-core VM of 2026 (10,000 runs: 40 s), so
#: 100,000 runs take minutes and 0.4 GB before the first one starts; a grid far beyond that (five keys of 100 values,
#: 10^10 points) is a mistake that would fill the memory without a word.
MAX_RUNS = 100_000


class Grid:
    """Axes and explicit points, checked and counted: :attr:`count` points, known before any is built."""

    def __init__(self, axes: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None,
                 points: Sequence[Mapping[str, Any]] | None = None) -> None:
        if axes is not None and not isinstance(axes, Mapping):  # a list of explicit points given as `axes`
            points = list(points or []) + list(axes)
            axes = None
        self.axes: dict[str, list[Any]] = {}
        for key, values in _flatten(axes or {}).items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise SweepError(f"axis '{key}': expected a list of values, got {values!r}")
            self.axes[key] = list(values)
            if not self.axes[key]:
                raise SweepError(f"axis '{key}': no values")
        self.explicit: list[dict[str, Any]] = [{}]
        if points:
            self.explicit = []
            for i, p in enumerate(points):
                if not isinstance(p, Mapping):
                    raise SweepError(f"points[{i}]: expected a table of config keys, got {short(repr(p))}")
                self.explicit.append(_flatten(p))
                both = [k for k in self.explicit[-1] if k in self.axes]
                if both:  # the axis value would replace the point's, which would then never run
                    raise SweepError(f"key '{short(both[0])}' is set both by the axes and by points[{i}]: set it in "
                                     f"one place (the axis values would replace the point's)")
        self.count = len(self.explicit) * math.prod(len(v) for v in self.axes.values())

    def points(self) -> list[dict[str, Any]]:
        """Each explicit point (or one empty point) times the cross product of the axes."""
        keys = list(self.axes)
        grid = [dict(zip(keys, combo)) for combo in itertools.product(*self.axes.values())]
        return [{**p, **g} for p in self.explicit for g in grid]


def expand_points(
    axes: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None,
    points: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The config points: each explicit point (or one empty point) times the cross product of the axes."""
    return Grid(axes, points).points()


class SweepSpec:
    """What a parameter sweep is: base config x axes x workloads x seeds (data only: nothing here runs;
    :class:`smtlab.sweep.Sweep` is this with ``run()``).

    ``axes`` is a dict key -> values (cross product) or a list of explicit points (dicts); ``points`` adds explicit
    points that the axes grid is crossed with. ``overrides`` apply to every point first. ``seeds``: each seed sets the
    config's ``seed`` and the ``seed`` of every generator spec that does not name its own; ``None`` changes nothing;
    an empty list is an error (a sweep without runs). ``origin``: the file the sweep was read from, named first in the
    errors of :meth:`expand`. ``max_runs``: the most runs (points x workloads x seeds) accepted, counted before the
    points are built (:data:`MAX_RUNS` by default); more is a :class:`SweepError` naming the count.
    """

    def __init__(
        self,
        config: str | None = None,
        axes: Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]] | None = None,
        workloads: Iterable[Any] | Mapping[str, Any] = (),
        *,
        points: Sequence[Mapping[str, Any]] | None = None,
        overrides: Mapping[str, Any] | None = None,
        seeds: Sequence[int | None] | int | None = None,
        max_instructions: int = 0,
        warmup: int = 0,
        baseline: str = "threads1",
        name: str = "sweep",
        origin: str | None = None,
        max_runs: int = MAX_RUNS,
    ) -> None:
        if baseline not in BASELINE_MODES:
            raise SweepError(f"baseline '{baseline}': expected one of {', '.join(BASELINE_MODES)}")
        if isinstance(max_instructions, bool) or not isinstance(max_instructions, int) or max_instructions < 0:
            raise SweepError(f"max_instructions must be a non-negative integer, got {max_instructions!r}")
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
            raise SweepError(f"warmup must be a non-negative integer, got {warmup!r}")
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            raise SweepError(f"max_runs must be a positive integer, got {max_runs!r}")
        self.config = config
        self.overrides = _flatten(overrides or {})
        grid = Grid(axes, points)
        if isinstance(workloads, Mapping):
            self.workloads = [Workload.of(v, name=k) for k, v in workloads.items()]
        else:
            self.workloads = [Workload.of(w) for w in workloads]
        if not self.workloads:
            raise SweepError("a sweep needs at least one workload")
        names = [w.name for w in self.workloads]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise SweepError(f"workload names must be unique: {', '.join(dup)} given twice")
        if seeds is None or isinstance(seeds, int):
            seeds = [seeds]
        self.seeds = list(seeds)
        if not self.seeds:
            raise SweepError("seeds is empty: no runs (leave seeds out to run each point once with the config's seed)")
        repeated = sorted({s for s in self.seeds if self.seeds.count(s) > 1}, key=str)
        if repeated:  # the same seed twice is the same run twice: identical statistics, counted as two samples
            raise SweepError(f"seeds: {', '.join(map(str, repeated))} given more than once (a seed gives the same "
                             "statistics every time, so a repeat adds a copy, not a sample)")
        runs = grid.count * len(self.workloads) * len(self.seeds)
        if runs > max_runs:
            raise SweepError(f"{runs:,} runs ({grid.count:,} points x {len(self.workloads):,} workloads x "
                             f"{len(self.seeds):,} seeds) is more than the bound of {max_runs:,}: raise it "
                             "(max_runs= in Python, --max-runs on the command line) if you mean it, or give fewer "
                             "axis values")
        self.points = grid.points()
        self.max_instructions = max_instructions
        self.warmup = warmup
        self.baseline = baseline
        self.name = name
        self.origin = origin

    @property
    def axis_keys(self) -> list[str]:
        """Every key that varies over the points, in first-seen order: the axis columns of the table."""
        keys: dict[str, None] = {}
        for p in self.points:
            keys.update(dict.fromkeys(p))
        return list(keys)

    def _named(self) -> str:
        """The sweep as its messages name it: ``sweep 'x'``, after its file if it was read from one."""
        return f"{self.origin}: sweep '{self.name}'" if self.origin else f"sweep '{self.name}'"

    def _load(self, where: str, overrides: Mapping[str, Any]) -> smtlab.Config:
        try:
            return smtlab.load_config(self.config, overrides)
        except smtlab.ConfigError as e:
            raise smtlab.ConfigError(f"{self._named()} {where}: {e}") from None

    def expand(self) -> tuple[list[Run], dict[str, RunSpec]]:
        """Every run and every distinct baseline. Loads and validates each config point and trace spec first, so a
        bad axis key or value raises (naming the key) before anything is simulated. Scenario parameters are checked
        against the scenario's signature and its ``check_params`` (:func:`check_scenario_call`); a generator without
        a count needs ``max_instructions``; a sweep without runs is an error, never an empty success."""
        runs: list[Run] = []
        baselines: dict[str, RunSpec] = {}
        opened: set[str] = set()
        for wl in self.workloads:
            if wl.scenario is not None:  # fails now, not in every worker
                try:
                    check_scenario_call(wl.scenario, wl.params, seed=self.seeds[0],
                                        max_instructions=self.max_instructions)
                except SweepError as e:
                    raise SweepError(f"{self._named()} workload '{wl.name}': {e}") from None
        common = {"v": STORE_VERSION, "smtlab": smtlab.__version__}
        for pi, point in enumerate(self.points):
            label = ", ".join(f"{k}={v!r}" for k, v in point.items()) or "base config"
            for seed in self.seeds:
                overrides = dict(self.overrides)
                overrides.update(point)
                if seed is not None:
                    overrides["seed"] = seed
                cfg = self._load(f"point {pi} ({label})", overrides)
                ckey = config_key(cfg)
                base_cfg: smtlab.Config | None = None
                base_ckey: str | None = None
                if self.baseline != "none":
                    base_over = dict(overrides)
                    if self.baseline == "threads1":
                        base_over["core.threads"] = 1
                    base_cfg = self._load(f"point {pi} ({label}) single-thread baseline", base_over)
                    base_ckey = config_key(base_cfg)
                for wl in self.workloads:
                    traces = tuple(seeded_spec(t, seed) for t in wl.traces)
                    for t in traces:
                        if t not in opened:
                            try:
                                source = smtlab.Source(t)
                            except smtlab.Error as e:
                                raise SweepError(f"{self._named()} workload '{wl.name}': {e}") from None
                            # as `smtlab run` refuses it: without a count the run would last until the trace ends
                            if self.max_instructions == 0 and t.startswith("gen:") and source.length is None:
                                raise SweepError(
                                    f"{self._named()} workload '{wl.name}': trace '{short(t)}' is endless (count=0) "
                                    f"and max_instructions is 0: set max_instructions (instructions per thread)"
                                )
                            opened.add(t)
                    if traces and len(traces) > cfg.logical_cpus:
                        raise SweepError(
                            f"{self._named()} workload '{wl.name}' at point {pi} ({label}): {len(traces)} traces "
                            f"but the machine has {cfg.logical_cpus} logical CPUs"
                        )
                    ident = {**common, "kind": "run", "config": ckey, "workload": wl.identity(), "traces": traces,
                             "seed": seed, "max_instructions": self.max_instructions, "warmup": self.warmup}
                    spec = RunSpec(digest(ident), "run", cfg, traces, wl.scenario, dict(wl.params), seed,
                                   self.max_instructions, self.warmup)
                    bkeys: list[str] = []
                    if traces and base_cfg is not None:
                        for t in traces:
                            bident = {**common, "kind": "baseline", "config": base_ckey, "traces": [t],
                                      "max_instructions": self.max_instructions, "warmup": self.warmup}
                            bkey = digest(bident)
                            baselines.setdefault(bkey, RunSpec(bkey, "baseline", base_cfg, (t,), None, {}, seed,
                                                               self.max_instructions, self.warmup))
                            bkeys.append(bkey)
                    runs.append(Run(len(runs), dict(point), wl, seed, spec, ckey, tuple(bkeys), base_ckey))
        if not runs:
            raise SweepError(f"{self._named()} has no runs")
        return runs, baselines

    def validate(self) -> int:
        """Checks every point, baseline config and trace spec; returns the number of runs."""
        return len(self.expand()[0])

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}, config={self.config!r}, {len(self.points)} points x "
                f"{len(self.workloads)} workloads x {len(self.seeds)} seeds)")
