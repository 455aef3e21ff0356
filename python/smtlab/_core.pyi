"""Type stub of smtlab._core, the pybind11 module over the C++ model (python/bindings/)."""

from __future__ import annotations

import enum
from typing import Any, Iterable, Mapping, Sequence

__version__: str
TRACER_REVISION: int

class Error(Exception):
    """Base of every error smtlab reports (bad input, misuse)."""

class UsageError(Error, ValueError):
    """A misuse of the API: a CPU out of range, attach to a busy CPU, a closed machine..."""

class ConfigError(Error):
    """A config file, key or value that is wrong; names the key."""

class TraceError(Error):
    """A trace file or generator spec that cannot be read."""

class DeadlockError(Error):
    """The model (or the OS layer) stopped making progress."""

ConfigValue = bool | int | float | str

class Config:
    """A machine configuration: defaults, a TOML file or preset, and key=value overrides."""

    def __init__(self) -> None:
        """The defaults."""
    @staticmethod
    def load(name_or_path: str | None = None, overrides: Mapping[str, ConfigValue] | None = None) -> Config:
        """Loads a preset or TOML file (None: defaults), applies the overrides and validates."""
    def set(self, key: str, value: ConfigValue) -> Config:
        """Sets one key as --set key=value does; returns self."""
    def update(self, overrides: Mapping[str, ConfigValue]) -> None:
        """Sets every key of a dict."""
    def get(self, key: str) -> Any:
        """The value of one key ('core.rob.entries')."""
    def validate(self) -> None:
        """Checks ranges and consistency; raises ConfigError."""
    def to_dict(self) -> dict[str, Any]:
        """The effective config as nested dicts."""
    def to_toml(self) -> str:
        """The effective config as TOML text."""
    def describe(self) -> list[dict[str, str]]:
        """Every key with type, value and doc."""
    def copy(self) -> Config:
        """An independent copy."""
    def __copy__(self) -> Config: ...
    def __deepcopy__(self, memo: Any) -> Config: ...
    @property
    def source(self) -> str:
        """Where the config came from."""
    @property
    def cores(self) -> int:
        """Physical cores of the machine: system.packages x system.cores."""
    @property
    def packages(self) -> int:
        """Physical packages (sockets), each with its own LLC."""
    @property
    def threads(self) -> int:
        """Hardware threads per core."""
    @property
    def logical_cpus(self) -> int:
        """packages x cores x threads."""
    @property
    def freq_ghz(self) -> float:
        """Core clock in GHz."""

def load_config(name_or_path: str | None = None, overrides: Mapping[str, ConfigValue] | None = None) -> Config:
    """Same as Config.load."""

class Instr:
    """One dynamic instruction record."""

    pc: int
    target: int
    taken: bool
    mark_id: int
    def __init__(
        self,
        pc: int = 0,
        op: str = "nop",
        *,
        src: Iterable[str | int] = (),
        dst: Iterable[str | int] = (),
        loads: Iterable[int | tuple[int, int]] = (),
        stores: Iterable[int | tuple[int, int]] = (),
        taken: bool = False,
        target: int = 0,
        mark_id: int = 0,
        branch: str | None = None,
    ) -> None:
        """Builds a record; registers as 'r1'/'f3' or ids, accesses as addresses or (address, size)."""
    @staticmethod
    def parse(line: str) -> Instr:
        """Parses one text-format line, without its line end (one record is one line). Raises TraceError."""
    @property
    def op(self) -> str:
        """Op class name."""
    @property
    def branch(self) -> str:
        """Branch kind name."""
    @property
    def src(self) -> list[str]:
        """Source registers."""
    @property
    def dst(self) -> list[str]:
        """Destination registers."""
    @property
    def loads(self) -> list[tuple[int, int]]:
        """(address, size) loads."""
    @property
    def stores(self) -> list[tuple[int, int]]:
        """(address, size) stores."""

class Source:
    """A trace source behind a cursor that counts retired instructions and rewinds on detach."""

    def __init__(self, spec: str) -> None:
        """Opens a trace file or a 'gen:'/'kernel:' spec."""
    @staticmethod
    def from_records(records: Iterable[Instr], name: str = "<python>") -> Source:
        """A source over Python-built records."""
    @staticmethod
    def from_text(text: str, name: str = "<text>") -> Source:
        """A source over a text-format trace in a string."""
    @property
    def name(self) -> str:
        """File name or spec."""
    @property
    def retired(self) -> int:
        """Instructions retired from this source."""
    @property
    def restarts(self) -> int:
        """Times the trace was restarted."""
    @property
    def attached(self) -> bool:
        """True while attached to a logical CPU."""
    @property
    def length(self) -> int | None:
        """Record count if known in advance."""
    def ended(self) -> bool:
        """True if every record has retired (detached sources only)."""
    def restart(self) -> None:
        """Starts an ended, detached source again."""

def open_trace(spec: str) -> Source:
    """Same as Source(spec)."""

def read_records(spec: str, max_records: int = 0) -> list[Instr]:
    """The records of a trace."""

def generator_names() -> list[str]:
    """Names of the built-in generators."""

class EventKind(enum.Enum):
    """Why Machine.run stopped."""

    SOURCE_ENDED = 0
    MARK = 1
    RETIRE_LIMIT = 2
    CYCLE_BOUND = 3

class Event:
    """Something that stopped Machine.run."""

    @property
    def kind(self) -> EventKind:
        """The event kind."""
    @property
    def cpu(self) -> int:
        """Logical CPU."""
    @property
    def cycle(self) -> int:
        """Cycle of the event."""
    @property
    def mark_id(self) -> int:
        """Id of the retired mark (MARK only)."""

class Machine:
    """The simulated machine; logical CPUs numbered as Linux shows them."""

    def __init__(self, config: Config) -> None:
        """Builds the machine; raises ConfigError if invalid."""
    def attach(self, cpu: int, source: Source, asid: int = 1) -> None:
        """Puts a source on an idle logical CPU."""
    def detach(self, cpu: int) -> Source | None:
        """Takes the source off a CPU, rewound to its oldest unretired instruction."""
    def warm(
        self, lanes: Sequence[tuple[int, Source, float] | tuple[int, Source, float, int]], cycles: int
    ) -> list[dict[str, Any]]:
        """Functional warming of unattached sources at given rates (docs/sampling.md)."""
    def halt(self, cpu: int) -> None:
        """HLT an idle CPU: its partitions go to its siblings."""
    def busy(self, cpu: int) -> bool:
        """True if a source is attached."""
    def attached(self, cpu: int) -> Source | None:
        """The source attached to the CPU."""
    def set_retire_limit(self, cpu: int, count: int) -> None:
        """Stop retiring (RETIRE_LIMIT event) when retired(cpu) reaches count; count > retired(cpu)."""
    def clear_retire_limit(self, cpu: int) -> None:
        """Removes the retire limit."""
    def retired(self, cpu: int) -> int:
        """Instructions the CPU retired since the last reset_stats."""
    def restart_trace(self, cpu: int) -> None:
        """Starts the ended source on the CPU again (UsageError if none is attached or it has not ended)."""
    def run(self, until: int | None = None, *, cycles: int | None = None) -> list[Event]:
        """Simulates until a cycle bound or the first cycle with events; releases the GIL. Ctrl-C raises
        KeyboardInterrupt within a fraction of a second (the machine stays usable). UsageError (a ValueError) for a
        negative or too large count, or ``until`` before ``now``."""
    @property
    def now(self) -> int:
        """The next cycle to simulate."""
    @property
    def logical_cpus(self) -> int:
        """Number of logical CPUs."""
    @property
    def cores(self) -> int:
        """Number of physical cores (all packages)."""
    @property
    def packages(self) -> int:
        """Number of physical packages, each with its own LLC."""
    @property
    def threads(self) -> int:
        """Hardware threads per core."""
    def flush_tlb(self, cpu: int, asid: int) -> int:
        """Address-space switch away from ``asid`` on the CPU: drops its TLB entries (nothing if mem.tlb_tagged)."""
    def wake_cost(self, cpu: int) -> int:
        """Cycles (os.wake_cycles) before an idle CPU can run; 0 if it has a source attached."""
    def cpu(self, cpu: int) -> dict[str, Any]:
        """Topology of one CPU: id, core, thread, siblings, package."""
    @property
    def cpus(self) -> list[dict[str, Any]]:
        """Topology of every CPU."""
    @property
    def config(self) -> Config:
        """A copy of the machine's config."""
    def stats(self) -> dict[str, Any]:
        """All statistics (names of `smtlab run --json`)."""
    def cpu_stats(self, cpu: int) -> dict[str, Any]:
        """Statistics of one logical CPU."""
    def reset_stats(self) -> None:
        """Zeroes every statistic, keeping the state."""
    @property
    def measured_cycles(self) -> int:
        """Cycles since the last reset_stats."""
    def set_checking(self, on: bool) -> None:
        """Checks pipeline invariants every cycle (slow)."""
    def close(self) -> None:
        """Detaches everything and frees the machine."""
    @property
    def closed(self) -> bool:
        """True after close()."""
    def __enter__(self) -> Machine: ...
    def __exit__(self, *args: Any) -> None: ...

def run_traces(
    config: Config,
    traces: Sequence[str],
    max_instructions: int = 0,
    warmup: int = 0,
    sample: bool | dict[str, float] | None = None,
) -> dict[str, Any]:
    """What `smtlab run` does; returns the statistics dict."""

def snapshot_config(folder: str) -> Config:
    """The config a snapshot folder's windows were taken with."""
def snapshot_window_count(folder: str) -> int:
    """How many windows the snapshot folder's manifest lists."""
def run_from_snapshots(folder: str, config: Config, first: int = 0, last: int | None = None) -> dict[str, Any]:
    """`smtlab run --from-snapshots FOLDER --windows FIRST-LAST` in this process; the statistics dict."""
def simulate_snapshot_windows(folder: str, config: Config, first: int, last: int) -> bytes:
    """Windows first..last: their window records, for merge_snapshot_windows."""
def merge_snapshot_windows(
    folder: str,
    config: Config,
    records: Sequence[tuple[str, bytes]],
    first: int = 0,
    last: int | None = None,
    host_seconds: float = 0.0,
) -> dict[str, Any]:
    """The statistics dict of windows first..last from consecutive ranges' window records, in window order."""
