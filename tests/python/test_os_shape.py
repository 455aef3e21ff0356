"""The OS layer's shape: the kernel keeps its own per-task records, pids belong to a kernel, results are
functions over a finished kernel, CpuState has its own module, the schedulers share one parameter set, make_kernel
takes scheduler parameters, and task_frame says where each task ran; no module past ~600 lines (the kernel split by
idea), no private name used across modules, spec.py pure data, the overhead benchmark in bench/."""

from __future__ import annotations

import ast
import pathlib
import types

import pytest

import smtlab
from smtlab import UsageError
from smtlab.os import (SCHEDULERS, Block, Channel, Compute, IdleCoreFirst, Kernel, Linux24, Linux25HT, SchedulerParams,
                       Send, Task, TaskState, make_scheduler, results)
from smtlab.os.cpu import CpuState
from smtlab.workloads.base import make_kernel

OS_DIR = pathlib.Path(__file__).resolve().parents[2] / "python" / "smtlab" / "os"
PUBLIC_TASK_FIELDS = {"name", "program", "source", "asid", "priority", "affinity", "daemon", "_record"}


def _two_tasks(packages: int, threads: int, n: int = 30_000) -> tuple[Kernel, list[Task]]:
    cfg = smtlab.load_config(None, {"system.packages": packages, "core.threads": threads})
    k = Kernel(cfg, IdleCoreFirst(), tick_cycles=20_000, time_slice_cycles=10**9, switch_cycles=0)
    ts = [k.spawn(Task(f"t{i}", [Compute(n)], source=f"gen:mix,count=0,seed={i + 1}")) for i in range(2)]
    k.run()
    return k, ts


def test_the_kernel_writes_nothing_into_a_task_but_its_record_link():
    k, ts = _two_tasks(1, 2)
    for t in ts:
        assert set(vars(t)) == PUBLIC_TASK_FIELDS
        assert t.asid is None and t.space is not None  # the kernel's choice is in its record, not in the task
        assert k.record(t).task is t and t.kernel is k
        assert t.state is TaskState.EXITED and t.stats.instructions == 30_000
    with pytest.raises(AttributeError):
        ts[0].state = TaskState.NEW  # a read-only view
    with pytest.raises(UsageError, match="not spawned on this kernel"):
        _two_tasks(1, 2)[0].record(ts[0])


def test_pids_belong_to_a_kernel():
    a = Task("a", [Compute(10)], source="gen:alu,count=0")
    assert a.pid is None  # no kernel yet
    k1, t1 = _two_tasks(1, 2, 1000)
    k2, t2 = _two_tasks(1, 2, 1000)
    assert [t.pid for t in t1] == [1, 2] and [t.pid for t in t2] == [1, 2]
    assert list(k1.task_frame().index) == [1, 2]


def test_results_are_functions_over_a_finished_kernel():
    k, _ = _two_tasks(1, 2, 1000)
    k.machine.close()
    assert results.task_records(k) == k.task_records()
    assert results.cpu_frame(k).equals(k.cpu_frame())
    assert results.timeline_records(k) == k.timeline_records()
    assert Kernel.__mro__ == (Kernel, object)  # no results mixin


def _runtime_imports(path: pathlib.Path) -> set[str]:
    """Modules a file imports at run time (imports under `if TYPE_CHECKING:` are for annotations only)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            out.add(node.module or "")
        if isinstance(node, ast.ImportFrom) and node.level and node.module is None:
            out.update(a.name for a in node.names)
    return out


def test_kernel_scheduler_results_do_not_import_each_other():
    assert CpuState.__module__ == "smtlab.os.cpu"
    assert "kernel" not in _runtime_imports(OS_DIR / "results.py")
    assert "kernel" not in _runtime_imports(OS_DIR / "scheduler.py")
    assert "results" not in _runtime_imports(OS_DIR / "scheduler.py")
    assert not {"kernel", "results", "scheduler"} & _runtime_imports(OS_DIR / "cpu.py")


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_schedulers_share_one_parameter_set(name):
    cls = SCHEDULERS[name]
    assert set(cls.uses) <= set(SchedulerParams.__dataclass_fields__)
    s = make_scheduler(name, cache_hot_ms=1.5, idle_interval_ms=3.0)
    assert s.cache_hot_ms == 1.5 and s.describe()["idle_interval_ms"] == 3.0
    assert set(s.describe()) == {"scheduler", *cls.uses}
    with pytest.raises(ValueError, match="unknown scheduler parameter 'slice'"):
        cls(slice=3)
    with pytest.raises(ValueError, match="must be a non-negative float"):
        cls(cache_hot_ms=-1.0)
    unused = next(p for p in SchedulerParams.__dataclass_fields__ if p not in cls.uses)
    with pytest.raises(ValueError, match=f"does not use the parameter '{unused}'"):
        cls(**{unused: SchedulerParams.__dataclass_fields__[unused].default})


def test_scheduler_defaults_are_each_policys_own():
    assert Linux24().busy_interval_ms == 200.0 and Linux25HT().busy_interval_ms == 250.0
    assert IdleCoreFirst().cache_hot_ms == 0.5 and Linux24().cache_hot_ms == 2.5
    with pytest.raises(ValueError, match="wake_idle must be True or False"):
        Linux24(wake_idle=1)


def test_make_kernel_takes_scheduler_parameters():
    k = make_kernel(True, "linux24", scheduler_params={"wake_idle": False, "busy_interval_ms": 50.0})
    assert k.scheduler.wake_idle is False and k.scheduler.describe()["busy_interval_ms"] == 50.0
    with pytest.raises(ValueError, match="linux25ht: does not use the parameter 'wake_idle'"):
        make_kernel(True, "linux25ht", scheduler_params={"wake_idle": False})
    k.machine.close()


def test_make_kernel_gives_each_reference_kernel_its_own_tick_and_slice():
    # On paper, from the kernels' sources. 2.4.19 i386: HZ = 100 and NICE_TO_TICKS(0) = TICK_SCALE(20 - 0) + 1 with
    # TICK_SCALE(x) = x >> 2 (HZ < 200): 6 ticks = 60 ms. 2.5.32: HZ = 1000 and task_timeslice() at nice 0
    # (static_prio 120) = MIN_TIMESLICE + (MAX_TIMESLICE - MIN_TIMESLICE) * (MAX_PRIO - 1 - 120) / (MAX_USER_PRIO - 1)
    # = 10 + 290 * 19 // 39 = 151 ticks of 1 ms. idle_core_first: the chosen 1000 and 10 ms.
    expected = {"linux24": (100, (20 >> 2) + 1), "linux25ht": (1000, 10 + 290 * 19 // 39),
                "idle_core_first": (1000, 10)}
    for name, (hz, slice_ticks) in expected.items():
        k = make_kernel(False, name)
        assert k.tick_cycles == round(k.freq_ghz * 1e9 / hz), name
        assert k.time_slice == slice_ticks * k.tick_cycles, name
        k.machine.close()
    k = make_kernel(False, "linux24", hz=1000.0, time_slice_ms=10.0)  # told otherwise
    assert k.tick_cycles == round(k.freq_ghz * 1e6) and k.time_slice == 10 * k.tick_cycles
    k.machine.close()


def test_placement_worked_on_paper():
    """CPU 0 and 1 are siblings of core 0, CPU 2 alone on core 1. CPU 0 ran pid 1 over [0, 100) and pid 3 over
    [150, 300); CPU 1 ran pid 2 over [50, 200); CPU 2 ran pid 1 over [300, 400). Doubled up: pid 1 over [50, 100)
    = 50 (on CPU 2 it has no sibling), pid 3 over [150, 200) = 50, pid 2 over [50, 100) and [150, 200) = 100."""
    cpus = [types.SimpleNamespace(id=0, core=0, package=0, siblings=[1], current=None),
            types.SimpleNamespace(id=1, core=0, package=0, siblings=[0], current=None),
            types.SimpleNamespace(id=2, core=1, package=1, siblings=[], current=None)]
    k = types.SimpleNamespace(cpus=cpus, now=400, records=[types.SimpleNamespace(pid=p) for p in (1, 2, 3)],
                              segments=[(0, 1, 0, 100, "block"), (1, 2, 50, 200, "exit"), (0, 3, 150, 300, "exit"),
                                        (2, 1, 300, 400, "exit")])
    p = results.placement(k)
    assert p[1] == {"cpus": {0, 2}, "packages": {0, 1}, "doubled_up": 50}
    assert p[2] == {"cpus": {1}, "packages": {0}, "doubled_up": 100}
    assert p[3] == {"cpus": {0}, "packages": {0}, "doubled_up": 50}


def test_task_frame_says_where_tasks_ran():
    # Two CPU-bound tasks on one core's two siblings run side by side: each ran doubled up exactly while both ran,
    # the same cycles for both (the overlap is symmetric), and never more than its own running time.
    k, ts = _two_tasks(1, 2)
    f = k.task_frame()
    assert sorted(f.cpus) == [(0,), (1,)]
    assert list(f.packages) == [(0,), (0,)]
    both = min(t.stats.finished for t in ts) - max(t.stats.started for t in ts)
    assert list(f.doubled_up) == [both, both] and 0 < both <= f.running.min()
    # Two packages of one thread each: no siblings, never doubled up; the tasks sit on different packages.
    k, ts = _two_tasks(2, 1)
    f = k.task_frame()
    assert list(f.doubled_up) == [0, 0] and sorted(p for ps in f.packages for p in ps) == [0, 1]


def test_channel_and_task_fields_unchanged_by_a_blocking_run():
    ch = Channel("c")
    k = Kernel(smtlab.load_config(None, {"core.threads": 2}), Linux24(), tick_cycles=20_000)
    a = k.spawn(Task("a", [Block(ch)], source="gen:alu,count=0"))
    b = k.spawn(Task("b", [Compute(100), Send(ch)], source="gen:alu,count=0"))
    k.run()
    assert a.done and b.done and set(vars(a)) == PUBLIC_TASK_FIELDS


# --- the kernel split along its ideas; private names; the benchmark's place -----------------------------------------
PY_DIR = OS_DIR.parent
SWEEP_DIR = PY_DIR / "sweep"


def test_no_os_module_is_two_ideas():
    """A file past about 600 lines is usually two ideas, to be split along the idea (CONTRIBUTING.md): the
    kernel's parts (timers, steps, switching, accounting, ...) have modules of their own beside kernel.py."""
    for path in sorted(OS_DIR.glob("*.py")):
        assert len(path.read_text().splitlines()) <= 600, f"{path.name} is past 600 lines"


def _all_imports(path: pathlib.Path) -> set[str]:
    """Modules of the package a file imports, at run time or for annotations (under `if TYPE_CHECKING:`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.add(node.module or "")
            if node.module is None:
                out.update(a.name for a in node.names)
    return out


def test_the_kernel_composes_parts_that_own_their_state():
    """The kernel is one class that composes parts, each owning its state (accounting its counters, the timers their
    queue and tick, liveness its counts, the context switch its costs and kernel paths, the timer interrupt its
    handler's sources): no function of another module is bound into the class (the results, functions over a
    finished kernel, excepted), and no part imports the kernel, even for annotations. The schedulers and the results
    are given a kernel to read (the policy API) and name its type for annotations only."""
    from smtlab.os import kernel
    from smtlab.os.accounting import Accounting
    from smtlab.os.halt import HaltWake
    from smtlab.os.liveness import Liveness
    from smtlab.os.steps import StepInterpreter
    from smtlab.os.switch import ContextSwitch
    from smtlab.os.timer import Timers
    from smtlab.os.timer_interrupt import TimerInterrupts

    assert Kernel.__mro__ == (Kernel, object) and kernel.Kernel is Kernel
    for name, value in vars(Kernel).items():
        if isinstance(value, types.FunctionType):
            assert value.__module__ in ("smtlab.os.kernel", "smtlab.os.results"), name
    k, _ = _two_tasks(1, 2, 1000)
    parts = {"accounting": Accounting, "timers": Timers, "liveness": Liveness, "steps": StepInterpreter,
             "switch": ContextSwitch, "irq": TimerInterrupts, "halt": HaltWake}
    for attr, cls in parts.items():
        assert type(getattr(k, attr)) is cls, attr
    readers = {"scheduler.py", "linux24.py", "linux25ht.py", "idle_core_first.py", "results.py"}
    for path in sorted(OS_DIR.glob("*.py")):
        if path.name in readers:
            assert "kernel" not in _runtime_imports(path), path.name
        elif path.name not in ("kernel.py", "__init__.py"):
            assert "kernel" not in _all_imports(path), path.name


def _private_uses(paths):
    """Imports of a leading-underscore name from another module, and attribute reads of ``x._name`` where x is not
    self/cls (a private member of an object from elsewhere), per file."""
    out = []
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                out += [f"{path.name}: from {node.module} import {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__") and a.name != "_core"]
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls")):
                out.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    return out


def test_no_private_name_crosses_a_module_outside_the_kernel():
    """Modules talk through public names. kernel.py (which sets it) and tasks.py (which defines it) read
    ``task._record``, the task's link to the kernel's record, and the kernel hands its parts a function that reads
    it; nothing else reaches into another object's private members (as workloads.base calling
    ``k._flush_accounting()`` would)."""
    own = {"kernel.py", "tasks.py"}
    paths = [p for p in PY_DIR.rglob("*.py") if not (p.parent == OS_DIR and p.name in own)]
    assert _private_uses(paths) == []
    kernel_files = [OS_DIR / n for n in sorted(own)]
    assert {u.split(": ")[1] for u in _private_uses(kernel_files)} <= {
        "task._record", "child._record", "prev._record"}


def test_flush_accounting_is_public_and_brings_the_counters_to_now():
    cfg = smtlab.load_config(None, {"core.threads": 2})
    k = Kernel(cfg, IdleCoreFirst(), tick_cycles=20_000, switch_cycles=500)
    t = k.spawn(Task("t", [Compute(500_000)], source="gen:mix,count=0,seed=1"))
    k.run(until=10_000)
    k.machine.run(k.machine.now + 3_000)  # the machine ran on without the kernel looking
    k.flush_accounting()
    assert k.now == k.machine.now
    # Every CPU's busy + switch + idle cycles cover the run exactly, and the task's buckets cover its life.
    for c in k.cpus:
        assert c.busy_cycles + c.switch_cycles + c.idle_cycles == k.now
    st = t.stats
    assert st.running + st.runnable + st.switching == k.now  # created at 0, never slept or blocked
    assert st.instructions == k.machine.retired(t.cpu)
    k.machine.close()


def test_spec_py_is_pure_data():
    """spec.py describes a sweep and expands it; running it is execute.py's (Sweep = SweepSpec + run())."""
    from smtlab.sweep import Sweep, SweepSpec
    from smtlab.sweep import execute, spec

    tree = ast.parse((SWEEP_DIR / "spec.py").read_text())
    lazy = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0]
    assert lazy == []  # not even inside a function (a method's lazy import of the driver is one too)
    assert not hasattr(SweepSpec, "run") and not hasattr(spec, "run_sweep")
    assert Sweep is execute.Sweep and issubclass(Sweep, SweepSpec)
    sw = Sweep(None, workloads=[("gen:alu",)], max_instructions=1000, baseline="none")
    assert sw.result is None and not hasattr(SweepSpec(None, workloads=[("gen:alu",)]), "result")
    assert repr(sw).startswith("Sweep('sweep'")


def test_cpu_bound_scenario_takes_scheduler_parameters():
    from smtlab.sweep.scenarios import cpu_bound

    cfg = smtlab.load_config(None, {"core.threads": 2})
    r = cpu_bound(cfg, seed=1, max_instructions=2000, scheduler="linux24", scheduler_params={"wake_idle": False})
    assert len(r["ipc"]) == 2 and r["makespan_cycles"] > 0
    with pytest.raises(ValueError, match="linux25ht: does not use the parameter 'wake_idle'"):
        cpu_bound(cfg, seed=1, max_instructions=2000, scheduler="linux25ht", scheduler_params={"wake_idle": False})


def test_the_overhead_benchmark_lives_in_bench():
    """os/overhead.py is a benchmark, so it belongs in bench/ (never run as a test)."""
    assert not (OS_DIR / "overhead.py").exists()
    assert (PY_DIR.parents[1] / "bench" / "os_overhead.py").is_file()
