"""Progress of a sweep on stderr: a tqdm bar on a terminal, plain lines every few seconds anywhere else.

A bar redraws itself with carriage returns, which a terminal overwrites in place but a file or a pipe (a CI log, ``2>
log``) keeps: hundreds of fragments of one line. So when the stream is not a terminal, the same counts are written
as whole lines, at most one per ``interval`` seconds plus one at the end, which a log reader can follow.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class Progress:
    """Counts finished runs out of ``total``; ``update`` after each one, ``close`` at the end."""

    #: Seconds between plain lines when the stream is not a terminal (chosen: often enough to see that a long sweep
    #: moves, rare enough that a sweep of an hour writes a few hundred lines at most).
    INTERVAL = 10.0

    def __init__(self, total: int, name: str, *, cached: int = 0, enabled: bool = True, stream: IO[str] | None = None,
                 interval: float | None = None) -> None:
        self.total = total
        self.name = name
        self.cached = cached
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

            self._bar = tqdm(total=total, desc=name, unit="run", file=self.stream, dynamic_ncols=True)
            self._bar.set_postfix(failed=0, remaining=total, cached=cached)
        else:
            self._plain = True
            self._line()

    def update(self, ok: bool) -> None:
        self.done += 1
        self.failed += not ok
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(failed=self.failed, remaining=self.total - self.done, cached=self.cached)
        elif self._plain and time.monotonic() - self._last >= self.interval:
            self._line()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._plain:
            self._line()
            self._plain = False

    def _line(self) -> None:
        now = time.monotonic()
        self._last = now
        self.stream.write(f"{self.name}: {self.done}/{self.total} runs done, {self.failed} failed, "
                          f"{self.total - self.done} remaining, {self.cached} cached, {now - self._start:.0f} s\n")
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
