"""sysbench cpu (``sysbench --test=cpu --cpu-max-prime=10000 --threads=N run``): N threads, each repeating one *event*
(count the primes below 10000 by trial division up to sqrt(c), sysbench's cpu_execute_event) for a fixed time; the
result is the number of events completed in 10 s.

What is modelled (docs/energy.md, "sysbench cpu" has the numbers):

- **Code**: the real compiled kernel ``kernel:sysbench_cpu`` (workloads/kernels/sysbench_cpu.c, gcc -O2, traced under
  QEMU). The trace is one whole program run: glibc start-up, ONE event, printf and exit. :func:`event_trace` cuts the
  event out of it (the records of main's loop, located by the hot ``div`` and checked against the number of
  divisions the algorithm must do) and writes it as its own trace, so that an event costs exactly what the loop
  costs and no start-up code is repeated per event. Without the tracer the kernel's look-alike generator stands in
  and an event is :data:`LOOKALIKE_EVENT_INSTRUCTIONS` instructions of it.
- **Threads**: N tasks of one process (one address space) on the OS layer with ``IdleCoreFirst`` (today's Linux
  scheduler: a new task goes to a fully idle core first, so 2 threads take both cores with HT on as with HT off).
  Every task runs the event trace in a loop; 5 and 6 threads on 4 logical CPUs are time-sliced by the kernel.
- **10 s**: simulating 10 s (31 G cycles) is out of reach, so a shorter window of ``window_ms`` simulated
  milliseconds is run and the count is scaled by 10 s / window. Events are counted fractionally (retired
  instructions / instructions per event), so a window of a few events per thread is enough; the first event of each
  thread starts with cold caches, which costs well under 1 % here (the loop touches a few KiB). Time slices are
  scaled with the window (1 ms at HZ=1000 instead of CFS's several ms) so 5 and 6 threads rotate several times per
  window; a switch costs 2000 cycles against a 3.1 M-cycle slice, so the scaling does not bias the counts.
- **Not modelled**: sysbench's own per-event bookkeeping (a few hundred instructions against ~1.4 M per event),
  turbo (the model runs at the 3.1 GHz base clock; the real chip turbos up to 3.4 GHz), and thermal limits.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import Machine, Source, load_config, read_records
from ..os import Compute, Kernel, Task, make_scheduler

KERNEL = "kernel:sysbench_cpu"
MAX_PRIME = 10000
PRESET = "broadwell"
SCHEDULER = "idle_core_first"

#: Instructions of one event in the traced kernel at the time of writing (gcc 12 -O2); the look-alike generator is
#: cut into events of this size when the tracer is unavailable.
LOOKALIKE_EVENT_INSTRUCTIONS = 1_390_132

#: main's loop lies within these byte offsets of the hot ``div`` in the gcc -O2 code of sysbench_cpu.c (the outer loop
#: starts 0x5c bytes before the div and ends 0x54 after it; printf's call is 0x6a after it). Any other layout fails
#: the division-count check in :func:`event_trace` and says so.
_LOOP_BEFORE = 0x80
_LOOP_AFTER = 0x60

#: Resolution of the division profile of an event (instructions per entry).
CUM_STEP = 1024


def trial_divisions(max_prime: int = MAX_PRIME) -> int:
    """How many times sysbench's loop evaluates ``c % l``: for c in 3..max_prime-1, l = 2, 3, ... while l <= sqrt(c),
    stopping at the first divisor."""
    n = 0
    for c in range(3, max_prime):
        t = math.sqrt(c)
        l = 2
        while l <= t:
            n += 1
            if c % l == 0:
                break
            l += 1
    return n


def compiled_divisions(max_prime: int = MAX_PRIME) -> int:
    """The ``div`` instructions of one event in gcc -O2 code: gcc tests ``c % 2`` with a bit test (``test $1,%bl``),
    so the l = 2 trial (made for every c >= 4) is not a division."""
    return trial_divisions(max_prime) - max(0, max_prime - 4)


@dataclass(frozen=True)
class EventTrace:
    """Where one sysbench event's instructions come from."""

    spec: str                  # a trace file (the event alone) or the look-alike generator spec
    instructions: int          # instructions per event
    divisions: int             # div instructions per event
    traced: bool               # True: cut from the real compiled kernel; False: the look-alike
    note: str
    cum_divisions: tuple[int, ...] = ()  # divisions done before instruction i * CUM_STEP of the event

    def progress(self, retired: int) -> float:
        """Events done after ``retired`` instructions of the event loop: whole events plus the fraction of the current
        one measured in divisions (the divider sets the pace, and the density of divisions grows along an event as c
        grows, so an instruction fraction would misjudge a partial event). Linear without a division profile."""
        full, rem = divmod(retired, self.instructions)
        if not self.cum_divisions or not self.divisions:
            return full + rem / self.instructions
        i, f = divmod(rem, CUM_STEP)
        a = self.cum_divisions[i]
        b = self.cum_divisions[i + 1] if i + 1 < len(self.cum_divisions) else self.divisions
        return full + (a + (b - a) * f / CUM_STEP) / self.divisions

    def divisions_done(self, retired: int) -> float:
        """Divisions retired after ``retired`` instructions of the event loop."""
        return self.progress(retired) * self.divisions if self.divisions else 0.0


def _cache_dir() -> pathlib.Path:
    d = os.environ.get("SMTLAB_STUDY_CACHE")
    if d:
        return pathlib.Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "smtlab"


def _find_cli(kernel_trace: pathlib.Path) -> str | None:
    """The smtlab program, to convert the cut trace to the (faster to read) native format: $SMTLAB_CLI, the build
    tree that holds the kernel cache, or PATH."""
    for cand in (os.environ.get("SMTLAB_CLI"), str(kernel_trace.parent.parent / "smtlab"), shutil.which("smtlab")):
        if cand and os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


#: Cut events cached under the old key, the kernel trace's size and modification time (sessions up to 44): every
#: fresh build traces the program again, which gives the same bytes a new time, so each build added an entry that no
#: later build would read (six identical ones accumulated on one machine in a day). Removed when a new entry is made.
_OLD_EVENT_ENTRY = re.compile(r"sysbench_cpu\.event\.[0-9]+-[0-9]+\.(trace|txt|meta)")
#: A cut's temporary files (``STEM.PID.tmp.EXT``) older than this were left by a process that was killed.
_STALE_TMP_SECONDS = 3600.0


def event_stem(path: pathlib.Path) -> str:
    """The cache name of the event cut from the kernel trace at ``path``: by its bytes (size and BLAKE2b digest), so
    that the same recording made again, or in another build tree, finds the same entry."""
    h = hashlib.blake2b(digest_size=10)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return f"sysbench_cpu.event.b2-{path.stat().st_size}-{h.hexdigest()}"


def prune_event_cache(cache: pathlib.Path, now: float | None = None) -> list[str]:
    """Removes from ``cache`` what no run will read again: entries under the old size-and-time key and temporary
    files of cuts older than an hour (a process killed while cutting). Returns the names removed; nothing else in the
    folder is touched, and a file that cannot be removed is left."""
    now = time.time() if now is None else now
    removed = []
    for p in cache.glob("sysbench_cpu.event.*"):
        try:
            st = p.lstat()
            old = _OLD_EVENT_ENTRY.fullmatch(p.name) is not None
            stale_tmp = ".tmp." in p.name and now - st.st_mtime > _STALE_TMP_SECONDS
            if (old or stale_tmp) and p.is_file() and not p.is_symlink():
                p.unlink()
                removed.append(p.name)
        except OSError:
            continue
    return sorted(removed)


def event_trace(cache_dir: pathlib.Path | None = None) -> EventTrace:
    """Cuts one event out of ``kernel:sysbench_cpu`` (once; cached by the kernel trace's bytes: :func:`event_stem`) and
    returns where it is. The event is every record from the first to the last one inside main's loop code (the
    bytes around the hottest ``div``); it must hold exactly :func:`compiled_divisions` divisions at that pc and no
    other ``div``, or the trace is not the expected program and a RuntimeError says what was found."""
    src = Source(KERNEL)
    name = src.name
    if name.startswith("gen:"):
        return EventTrace(name, LOOKALIKE_EVENT_INSTRUCTIONS, 0, False,
                          f"kernel:sysbench_cpu is untraced here; its look-alike ({name}) stands in, one event = "
                          f"{LOOKALIKE_EVENT_INSTRUCTIONS} of its instructions")
    path = pathlib.Path(name)
    cache = cache_dir or _cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    stem = event_stem(path)
    meta = cache / f"{stem}.meta"
    for ext in (".trace", ".txt"):
        out = cache / f"{stem}{ext}"
        if out.exists() and meta.exists():
            m = json.loads(meta.read_text())
            return EventTrace(str(out), m["instructions"], m["divisions"], True, m["note"], tuple(m["cum_divisions"]))

    recs = read_records(KERNEL)
    divs = Counter(r.pc for r in recs if r.op == "idiv")
    if not divs:
        raise RuntimeError(f"{path}: no div instruction; not the sysbench cpu kernel")
    hot, hot_count = divs.most_common(1)[0]
    lo, hi = hot - _LOOP_BEFORE, hot + _LOOP_AFTER
    inside = [i for i, r in enumerate(recs) if lo <= r.pc < hi]
    first, last = inside[0], inside[-1]
    body = recs[first:last + 1]
    n_div = sum(1 for r in body if r.op == "idiv")
    want = compiled_divisions()
    if hot_count != want or n_div != want:
        raise RuntimeError(f"{path}: expected one event with {want} divisions at the hot div, found {hot_count} at "
                           f"{hot:#x} and {n_div} divisions in records {first}..{last}; the compiled layout changed "
                           f"(see _LOOP_BEFORE/_LOOP_AFTER in {__file__})")
    tmp = cache / f"{stem}.{os.getpid()}.tmp.txt"
    tmp.write_text("# one sysbench cpu event cut from " + str(path) + "\n" + "\n".join(map(str, body)) + "\n")
    out = cache / f"{stem}.txt"
    cli = _find_cli(path)
    if cli:
        native = cache / f"{stem}.{os.getpid()}.tmp.trace"
        r = subprocess.run([cli, "trace", "convert", str(tmp), str(native), "--format", "native"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            out = cache / f"{stem}.trace"
            os.replace(native, out)
            tmp.unlink()
    if out.suffix == ".txt":
        os.replace(tmp, out)
    cum, done = [], 0
    for i, r in enumerate(body):
        if i % CUM_STEP == 0:
            cum.append(done)
        done += r.op == "idiv"
    note = (f"one event cut from {path.name}: {len(body)} instructions (records {first}..{last} of "
            f"{len(recs)}), {n_div} divisions")
    meta_tmp = cache / f"{stem}.{os.getpid()}.tmp.meta"
    meta_tmp.write_text(json.dumps({"instructions": len(body), "divisions": n_div, "note": note, "cum_divisions": cum}))
    os.replace(meta_tmp, meta)
    prune_event_cache(cache)
    return EventTrace(str(out), len(body), n_div, True, note, tuple(cum))


def make_config(ht: bool, overrides: dict[str, Any] | None = None) -> Any:
    """The broadwell preset with HT off (2 cores x 1 thread) or on (2 x 2)."""
    return load_config(PRESET, {"system.cores": 2, "core.threads": 2 if ht else 1, **(overrides or {})})


def divider_interval(cfg: Any) -> int:
    """Cycles one division keeps a divider busy: ``core.fu.int_div.interval``, or when that is 0 the old rule (1 if
    pipelined, else the latency)."""
    interval = cfg.get("core.fu.int_div.interval")
    if interval:
        return int(interval)
    return 1 if cfg.get("core.fu.int_div.pipelined") else max(1, int(cfg.get("core.fu.int_div.latency")))


def divider_count(cfg: Any) -> int:
    """Integer dividers per core: the issue ports that feed ``int_div`` (``core.ports``, one divider each)."""
    return sum(1 for port in cfg.get("core.ports") if any(w.split(":")[0] == "int_div" for w in port.split()))


def run_sysbench(threads: int, ht: bool, *, event: EventTrace, window_ms: float, seed: int = 1,
                 overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Runs ``threads`` sysbench threads (0: the idle machine) for ``window_ms`` simulated ms and returns plain data:
    events in the window and per 10 s, the machine's energy (and per 10 s), per-CPU CPI stacks and occupancy, the
    divider's busy fraction, host time."""
    t0 = time.perf_counter()
    cfg = make_config(ht, overrides)
    cycles = int(round(window_ms * 1e6 * cfg.freq_ghz))
    scale = 10_000.0 / window_ms
    if threads == 0:
        with Machine(cfg) as m:
            for c in range(m.logical_cpus):
                m.halt(c)
            m.run(until=cycles)
            st = m.stats()
        task_instr: list[int] = []
        cpus: list[dict[str, Any]] = []
    else:
        k = Kernel(cfg, make_scheduler(SCHEDULER), hz=1000, time_slice_ms=1.0, seed=seed)
        for i in range(threads):
            # one process: every thread shares address space 1; each has its own cursor over the event trace
            prog = [Compute(instructions=10**15, source=event.spec, loop=True)]
            k.spawn(Task(f"sysbench{i}", prog, asid=1, daemon=True))
        k.run(until=cycles)
        st = k.machine.stats()
        task_instr = [int(r["instructions"]) for r in k.task_records()]
        cpus = [{"id": c["id"], "core": c["core"], "instructions": c["instructions"], "cycles": c["cycles"],
                 "ipc": c["ipc"], "cpi_stack_cycles": dict(c["cpi_stack_cycles"]),
                 "occupancy": {q: v["mean"] for q, v in c["occupancy"].items()}}
                for c in st["logical_cpus"]]
        k.machine.close()
    task_events = [event.progress(x) for x in task_instr]
    events = sum(task_events)
    e = st["energy"]
    div_count = divider_count(cfg)
    divisions = sum(event.divisions_done(x) for x in task_instr)
    # busy cycles of the dividers: each division holds a unit for its busy interval (docs/model.md)
    div_busy = divisions * divider_interval(cfg) / (div_count * cfg.get("system.cores") * cycles) if threads else 0.0
    return {
        "threads": threads, "ht": ht, "window_ms": window_ms, "cycles": st["cycles"],
        "events": events, "events_10s": events * scale, "task_events": task_events,
        "joules": e["joules"], "joules_10s": e["joules"] * scale, "watts": e["watts"],
        "dynamic_joules": e["dynamic_joules"], "static_joules": e["static_joules"],
        "components": dict(e["components"]), "cpus": cpus, "divider_busy": div_busy, "divisions": divisions,
        "instructions": st["instructions"], "host_seconds": time.perf_counter() - t0, "overrides": overrides or {},
    }
