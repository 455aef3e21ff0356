"""Bad input to the OS layer (smtlab.os), refused where it is given with one message naming it, instead of a hang, a
silent success or a conversion error of Python's from inside Kernel.run:

- ``Compute()`` (no count, no mark, no loop) runs to its source's end: on an endless generator (``count=0``) that
  never comes, so the step is refused, as ``smtlab run`` and ``run_traces`` refuse such a generator without an
  instruction count;
- a source with no instructions (an empty file) is an error naming the task and the source, not a step "done" with 0
  instructions; an empty kernel path (switch, timer or wake-up path) is refused when the kernel is built;
- the frames of a kernel that ran no task are empty frames with the usual columns;
- times and rates (``Sleep``/``IO``, ``hz``, slices, ``stall_ms``, scheduler intervals, ``spawn(at=)``) must be
  finite numbers, refused when given; ``hz`` too high for the clock is a message about ``hz``; ``Kernel.run(until=)``
  refuses a bound in the past as ``Machine.run`` does.

The cases that could hang run in a child process with a timeout, so that a regression fails instead of hanging."""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import smtlab
from smtlab import TraceError, UsageError
from smtlab.os import IO, Compute, IdleCoreFirst, Kernel, Linux24, Linux25HT, Sleep, Task

ROOT = pathlib.Path(__file__).resolve().parents[2]

PRELUDE = """
import smtlab
from smtlab import TraceError, UsageError
from smtlab.os import Compute, Kernel, Linux25HT, Task
cfg = smtlab.load_config("netburst")
"""


def run_child(body: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH", "")]))
    code = PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)


def err_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    return next(line for line in proc.stdout.splitlines() if line.startswith("ERR"))


@pytest.fixture(scope="module")
def cfg():
    return smtlab.load_config("netburst")


@pytest.fixture()
def empty_file(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")  # a 0-byte text trace
    return str(p)


# --- 1. Compute() on an endless source ----------------------------------------------------------------------------

def test_compute_to_the_end_of_an_endless_generator_is_refused():
    proc = run_child("""
        k = Kernel(cfg, Linux25HT())
        k.spawn(Task("t", [Compute()], source="gen:alu,count=0"))
        try:
            k.run()
        except UsageError as e:
            print("ERR", e)
    """)
    err = err_line(proc)
    assert "task 't'" in err and "'gen:alu,count=0'" in err and "endless" in err


def test_compute_until_a_mark_on_an_endless_generator_is_refused():
    # No generator emits a mark (docs/traces.md), and an endless one never ends: the step could never end.
    proc = run_child("""
        k = Kernel(cfg, Linux25HT())
        k.spawn(Task("m", [Compute(until_mark=7)], source="gen:alu,count=0"))
        try:
            k.run()
        except UsageError as e:
            print("ERR", e)
    """)
    err = err_line(proc)
    assert "task 'm'" in err and "until_mark=7" in err and "'gen:alu,count=0'" in err and "endless" in err


def test_compute_naming_an_endless_source_in_a_generator_program_is_refused():
    # The step's own source= and a program that is a generator function: refused when the step starts.
    proc = run_child("""
        def prog():
            yield Compute(1000)
            yield Compute(source="gen:mix,count=0,seed=4")
        k = Kernel(cfg, Linux25HT())
        k.spawn(Task("g", prog, source="gen:alu,count=0"))
        try:
            k.run()
        except UsageError as e:
            print("ERR", e)
    """)
    err = err_line(proc)
    assert "task 'g'" in err and "'gen:mix,count=0,seed=4'" in err and "endless" in err


def test_compute_to_the_end_of_a_finite_source_and_bounded_endless_computes_still_run(cfg):
    # Compute() means "to the source's end": a generator of 5000 instructions gives exactly 5000; a count, or
    # loop=True (a daemon computing for ever), on an endless generator stays allowed.
    k = Kernel(cfg, Linux25HT())
    t = k.spawn(Task("finite", [Compute()], source="gen:alu,count=5000"))
    u = k.spawn(Task("counted", [Compute(3000)], source="gen:alu,count=0"))
    k.spawn(Task("hog", [Compute(loop=True)], source="gen:alu,count=0,seed=2", daemon=True))
    k.run()
    assert t.done and u.done
    assert t.stats.instructions == 5000 and u.stats.instructions == 3000


# --- 4. sources with no instructions -----------------------------------------------------------------------------

@pytest.mark.parametrize("step", [Compute(100), Compute()], ids=["count", "to-the-end"])
def test_compute_on_an_empty_file_is_an_error_naming_task_and_source(cfg, empty_file, step):
    k = Kernel(cfg, Linux25HT())
    k.spawn(Task("t", [step], source=empty_file))
    with pytest.raises(TraceError, match=rf"task 't': source '.*empty\.txt' has no instructions"):
        k.run()


def test_compute_on_an_empty_python_source_is_an_error(cfg):
    k = Kernel(cfg, Linux25HT())
    k.spawn(Task("p", [Compute(10)], source=smtlab.Source.from_records([], name="nothing")))
    with pytest.raises(TraceError, match="task 'p': source 'nothing' has no instructions"):
        k.run()


@pytest.mark.parametrize("arg", ["kernel_path", "timer_path", "wake_path"])
def test_an_empty_kernel_path_is_refused_when_the_kernel_is_built(empty_file, arg):
    # Each would be restarted for ever at its end, retiring nothing (kernel_path hung run()).
    counts = {"kernel_path": "", "timer_path": ", timer_instructions=100", "wake_path": ", wake_instructions=100"}
    proc = run_child(f"""
        try:
            k = Kernel(cfg, Linux25HT(), charge_os_costs=True, {arg}={empty_file!r}{counts[arg]})
            k.spawn(Task("t", [Compute(20_000)], source="gen:alu"))
            k.run()
            print("RAN")
        except TraceError as e:
            print("ERR", e)
    """)
    err = err_line(proc)
    assert f"Kernel: {arg} '{empty_file}' has no instructions" in err


# --- 2. frames of a kernel that ran no task ----------------------------------------------------------------------

def test_frames_of_a_kernel_without_tasks_are_empty_with_the_usual_columns(cfg):
    ran = Kernel(cfg, Linux25HT(), log=True)
    ran.spawn(Task("t", [Compute(1000)], source="gen:alu"))
    ran.run()
    idle = Kernel(cfg, Linux25HT(), log=True)
    idle.run()
    for name in ("task_frame", "timeline_frame", "decision_frame", "cpu_frame"):
        full, empty = getattr(ran, name)(), getattr(idle, name)()
        assert list(empty.columns) == list(full.columns), name
        assert empty.index.name == full.index.name, name
    assert len(idle.task_frame()) == 0 and len(idle.timeline_frame()) == 0
    assert list(idle.task_frame()[["instructions", "running"]].columns) == ["instructions", "running"]
    assert idle.task_records() == []


# --- 3. times and rates: finite, refused when given --------------------------------------------------------------

@pytest.mark.parametrize("step", [Sleep, IO])
@pytest.mark.parametrize("unit, word", [("ms", "milliseconds"), ("us", "microseconds")])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_sleep_and_io_refuse_nan_and_infinite_times(step, unit, word, value):
    with pytest.raises(ValueError, match=rf"^{step.__name__}: {unit} must be a finite non-negative number of {word}, "
                                         rf"not {value!r}$"):
        step(**{unit: value})


def test_sleep_refuses_nan_cycles_and_still_takes_finite_times(cfg):
    with pytest.raises(ValueError, match="Sleep: cycles must be a finite non-negative number of cycles, not nan"):
        Sleep(cycles=math.nan)
    with pytest.raises(ValueError, match="Sleep: ms must be a non-negative number of milliseconds, not -1"):
        Sleep(ms=-1)
    k = Kernel(cfg, Linux25HT(), switch_cycles=0)
    t = k.spawn(Task("s", [Sleep(us=2.5)], source="gen:alu"))
    k.run()
    assert t.stats.sleeping == round(2.5 * cfg.freq_ghz * 1000)


@pytest.mark.parametrize("arg, value, message", [
    ("hz", math.nan, "Kernel: hz must be a finite positive number of ticks per second, not nan"),
    ("hz", math.inf, "Kernel: hz must be a finite positive number of ticks per second, not inf"),
    ("hz", 0, "Kernel: hz must be a positive number of ticks per second, not 0"),
    ("time_slice_ms", math.nan, "Kernel: time_slice_ms must be a finite positive number of milliseconds, not nan"),
    ("time_slice_ms", math.inf, "Kernel: time_slice_ms must be a finite positive number of milliseconds, not inf"),
    ("stall_ms", math.inf, "Kernel: stall_ms must be a finite positive number of milliseconds, not inf"),
    ("tick_cycles", math.nan, "Kernel: tick_cycles must be a finite positive number of cycles, not nan"),
    ("time_slice_cycles", math.inf, "Kernel: time_slice_cycles must be a finite positive number of cycles, not inf"),
])
def test_kernel_refuses_nan_and_infinite_times_naming_the_argument(cfg, arg, value, message):
    sched = Linux25HT()
    with pytest.raises(ValueError) as info:
        Kernel(cfg, sched, **{arg: value})
    assert str(info.value) == message
    Kernel(cfg, sched)  # refused before the kernel took the scheduler: it can go to another kernel


def test_hz_too_high_for_the_clock_is_a_message_about_hz(cfg):
    with pytest.raises(ValueError) as info:
        Kernel(cfg, Linux25HT(), hz=1e12)
    msg = str(info.value)
    assert msg.startswith("Kernel: hz=1000000000000.0 is too high") and "tick_cycles" not in msg
    # one tick per cycle is the highest rate: hz = the clock's frequency
    k = Kernel(cfg, Linux25HT(), hz=cfg.freq_ghz * 1e9)
    assert k.tick_cycles == 1


def test_hz_too_low_for_the_cycle_counter_is_a_message_about_hz(cfg):
    with pytest.raises(ValueError, match=r"^Kernel: hz=1e-300 is too low"):
        Kernel(cfg, Linux25HT(), hz=1e-300)


@pytest.mark.parametrize("sched, param", [(Linux24, "cache_hot_ms"), (Linux25HT, "idle_interval_ms"),
                                          (IdleCoreFirst, "smt_interval_ms"), (IdleCoreFirst, "smt_gain")])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_scheduler_parameters_must_be_finite(sched, param, value):
    with pytest.raises(ValueError, match=rf"^{sched.name}: {param} must be a finite non-negative float, "
                                         rf"not {value!r}$"):
        sched(**{param: value})


def test_run_until_a_cycle_in_the_past_is_refused_as_machine_run_does(cfg):
    k = Kernel(cfg, Linux25HT())
    with pytest.raises(UsageError, match=r"^Kernel.run: until=-1 is in the past \(now=0\)$"):
        k.run(until=-1)
    k.spawn(Task("t", [Compute(10**9)], source="gen:alu,count=0", daemon=True))
    k.run(until=5000)
    assert k.now == 5000
    with pytest.raises(UsageError, match=r"^Kernel.run: until=4999 is in the past \(now=5000\)$"):
        k.run(until=4999)
    k.run(until=5000)  # now itself: nothing to simulate, not an error (as Machine.run)
    assert k.now == 5000
    with pytest.raises(TypeError, match=r"^Kernel.run: until must be an int \(a cycle\), not nan$"):
        k.run(until=math.nan)


@pytest.mark.parametrize("value, message", [
    (math.inf, "Kernel.spawn: at must be a finite non-negative number (a cycle), not inf"),
    (math.nan, "Kernel.spawn: at must be a finite non-negative number (a cycle), not nan"),
    (-1, "Kernel.spawn: at must be a non-negative number (a cycle), not -1"),
])
def test_spawn_at_must_be_a_finite_cycle(cfg, value, message):
    k = Kernel(cfg, Linux25HT())
    t = Task("t", [Compute(10)], source="gen:alu")
    with pytest.raises(ValueError) as info:
        k.spawn(t, at=value)
    assert str(info.value) == message
    assert t.pid is None and k.tasks == []  # not admitted: it can be spawned again


def test_ms_to_cycles_refuses_nan(cfg):
    k = Kernel(cfg, Linux25HT())
    with pytest.raises(ValueError, match=r"^Kernel.ms_to_cycles: ms must be a finite number, not nan$"):
        k.ms_to_cycles(math.nan)
    assert k.ms_to_cycles(1.0) == round(cfg.freq_ghz * 1e6)
