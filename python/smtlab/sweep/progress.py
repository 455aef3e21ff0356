"""Progress of a sweep's runs or a study's simulations on stderr: a tqdm bar on a terminal, plain lines every few
seconds anywhere else. The study (smtlab/study/common.py, energy.py) and the sweep both use this one class.

A bar redraws itself with carriage returns, which a terminal overwrites in place but a file or a pipe (a CI log, ``2>
log``) keeps: hundreds of fragments of one line. So when the stream is not a terminal, the same counts are written
as whole lines, at most one per ``interval`` seconds plus one at the end, which a log reader can follow.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class Progress:
    """Counts finished runs out of ``total``; ``update`` after each one, ``close`` at the end. ``cached``: runs found
    done already, shown when given; ``failures``: whether failed runs are counted and shown (a study's simulation
    that fails stops the study instead); ``leave``: whether a terminal's bar stays once closed."""

    #: Seconds between plain lines when the stream is not a terminal (chosen: often enough to see that a long sweep
    #: moves, rare enough that a sweep of an hour writes a few hundred lines at most).
    INTERVAL = 10.0

    def __init__(self, total: int, name: str, *, cached: int | None = None, failures: bool = True, leave: bool = True,
                 enabled: bool = True, stream: IO[str] | None = None, interval: float | None = None) -> None:
        self.total = total
        self.name = name
        self.cached = cached
        self.failures = failures
        self.done = 0
        self.failed = 0
        self.stream = stream if stream is not None else sys.stderr
        self.interval = self.INTERVAL if interval is None else interval
        self._bar: Any = None
        self._plain = False
        self._start = self._last = time.monotonic()
        if not enabled:
            return
        if _is_terminal(self.stream) or _in_notebook():
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, desc=name, unit="run", file=self.stream, dynamic_ncols=True, leave=leave)
            self._bar.set_postfix(self._counts())
        else:
            self._plain = True
            self._line()

    def update(self, ok: bool = True) -> None:
        self.done += 1
        self.failed += not ok
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(self._counts())
        elif self._plain and time.monotonic() - self._last >= self.interval:
            self._line()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._plain:
            self._line()
            self._plain = False

    def _counts(self) -> dict[str, int]:
        """What the bar and the lines show besides done/total: failed (if counted), remaining, cached (if given)."""
        counts = {"failed": self.failed} if self.failures else {}
        counts["remaining"] = self.total - self.done
        if self.cached is not None:
            counts["cached"] = self.cached
        return counts

    def _line(self) -> None:
        now = time.monotonic()
        self._last = now
        counts = "".join(f", {n} {what}" for what, n in self._counts().items())
        self.stream.write(f"{self.name}: {self.done}/{self.total} runs done{counts}, {now - self._start:.0f} s\n")
        self.stream.flush()


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def _in_notebook() -> bool:
    """True inside a Jupyter kernel, where tqdm.auto draws a widget instead of writing carriage returns."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return type(shell).__name__ == "ZMQInteractiveShell"
