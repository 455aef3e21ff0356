"""Argument checks shared by the OS layer. A time, a rate or a bound is checked where it is given (a step's
constructor, ``Kernel(...)``, ``Kernel.run``, a scheduler's parameters), so that a NaN, an infinity or a negative
value is refused there with one message naming the argument and the value, not later inside ``Kernel.run`` as a
conversion error of Python's (``cannot convert float NaN to integer``)."""

from __future__ import annotations

import math
import weakref
from numbers import Integral, Real
from typing import Any

from .._core import UsageError


def check_number(where: str, name: str, value: Any, *, positive: bool = False, kind: str = "number",
                 unit: str = "") -> Any:
    """Returns ``value`` if it is a real number (not a bool), finite, and >= 0 (> 0 with ``positive``); else raises
    ValueError ``"{where}: {name} must be a [finite ]non-negative|positive {kind}{unit}, not {value!r}"``
    (``finite`` when the value is a NaN or an infinity)."""
    sign = "positive" if positive else "non-negative"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{where}: {name} must be a {sign} {kind}{unit}, not {value!r}")
    if not isinstance(value, Integral) and not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a finite {sign} {kind}{unit}, not {value!r}")
    if value < 0 or (positive and value == 0):
        raise ValueError(f"{where}: {name} must be a {sign} {kind}{unit}, not {value!r}")
    return value


def check_finite(where: str, name: str, value: Any) -> Any:
    """Returns ``value`` if it is a finite real number (not a bool), of any sign; else raises ValueError
    ``"{where}: {name} must be a finite number, not {value!r}"``."""
    if isinstance(value, bool) or not isinstance(value, Real) or (
            not isinstance(value, Integral) and not math.isfinite(value)):
        raise ValueError(f"{where}: {name} must be a finite number, not {value!r}")
    return value


MAX_CYCLE = 2**64 - 2  # the machine's last cycle (Machine.run)


def tick_cycles(freq_ghz: float, hz: Any, tick_cycles: Any) -> int:
    """The kernel's tick in cycles: ``tick_cycles`` if given, else ``freq_ghz`` x 1e9 / ``hz``; a message naming the
    one given when it is not a finite positive number or the tick would not last 1..2^64-2 cycles."""
    if tick_cycles is None:
        check_number("Kernel", "hz", hz, positive=True, unit=" of ticks per second")
        exact = freq_ghz * 1e9 / hz
        if not exact <= MAX_CYCLE:
            raise ValueError(f"Kernel: hz={hz!r} is too low: a tick would last {exact:.3g} cycles, more than the "
                             "machine counts (2^64 - 2)")
        tick = round(exact)
        if tick < 1:
            raise ValueError(f"Kernel: hz={hz!r} is too high for the machine's {freq_ghz:g} GHz clock "
                             f"(system.freq_ghz): a tick would last {exact:.3g} cycles, less than one "
                             f"(hz={freq_ghz * 1e9:g} gives one-cycle ticks)")
        return tick
    check_number("Kernel", "tick_cycles", tick_cycles, positive=True, unit=" of cycles")
    tick = int(tick_cycles)
    if not 1 <= tick <= MAX_CYCLE:
        raise ValueError(f"Kernel: tick_cycles must be in 1..2^64-2, not {tick_cycles!r}")
    return tick


def time_slice(freq_ghz: float, time_slice_ms: Any, time_slice_cycles: Any) -> int:
    """The time slice in cycles: ``time_slice_cycles`` if given, else ``time_slice_ms`` at ``freq_ghz``; at least
    one cycle."""
    if time_slice_cycles is not None:
        check_number("Kernel", "time_slice_cycles", time_slice_cycles, positive=True, unit=" of cycles")
        cycles = int(time_slice_cycles)
    else:
        check_number("Kernel", "time_slice_ms", time_slice_ms, positive=True, unit=" of milliseconds")
        cycles = round(time_slice_ms * 1000.0 * (freq_ghz * 1000.0))  # as Kernel.ms_to_cycles, to the bit
    if cycles < 1:
        raise ValueError("Kernel: the time slice must be at least one cycle")
    return cycles


def check_until(until: Any, now: int) -> None:
    """``Kernel.run(until=)`` as ``Machine.run`` takes it: an int cycle (TypeError), not before ``now``
    (UsageError: a bound in the past would simulate nothing)."""
    if isinstance(until, bool) or not isinstance(until, Integral):
        raise TypeError(f"Kernel.run: until must be an int (a cycle), not {until!r}")
    if until < now:
        raise UsageError(f"Kernel.run: until={until} is in the past (now={now})")


# Machines that a kernel owns: a kernel attaches sources to its machine's CPUs and moves its clock, so a second
# kernel over the same machine would find its CPUs busy and its time moved under it. Weak, so that a machine is not
# kept alive by the record.
_OWNED_MACHINES: weakref.WeakSet[Any] = weakref.WeakSet()


def check_machine_free(machine: Any) -> None:
    """Refuses a machine that a kernel already owns (UsageError naming the cause)."""
    if machine in _OWNED_MACHINES:
        raise UsageError("Kernel: this Machine already belongs to another kernel, which owns its clock and CPUs; "
                         "give every kernel its own Machine (or pass a Config)")


def claim_machine(machine: Any) -> None:
    """Marks the machine as owned by the kernel being built (once its construction can no longer fail)."""
    _OWNED_MACHINES.add(machine)


def check_usable(failure: str | None, where: str) -> None:
    """Refuses to use a kernel whose run() raised: the exception stopped it in the middle of an event (a switch,
    a step, a tick), leaving CPUs, runqueues and timers out of step with each other, and the kernel cannot tell
    which event it cut short. A run that goes on from there can wait for an event that never comes."""
    if failure is not None:
        raise UsageError(f"{where}: an earlier run() raised {failure}; a kernel is not consistent after its run "
                         "raised, so build a new Kernel on a new Machine (its results stay readable)")
