"""The result store of a sweep: one JSON record per run key, which is what makes a sweep resumable.

Only the driver writes it, each record atomically (:func:`smtlab.fileio.write_text`: a temporary file beside the
target, renamed when complete), so a sweep killed at any moment leaves only whole records; an unreadable record is
treated as missing and run again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from smtlab import fileio

from .spec import SweepError, json_default

#: One run's outcome as stored: key, kind, traces, seed, status ("ok" / "failed"), error, result, wall_seconds.
Record = dict[str, Any]


class ResultStore:
    """One JSON file per run key under ``<dir>/runs/``."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory) / "runs"
        # The folders made here, deepest first: a sweep that fails before storing anything removes them again.
        self.created = [d for d in (self.dir, *self.dir.parents) if not d.exists()]
        # Checked before any run starts, so a bad folder is one message now, not a traceback after the first run.
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SweepError(f"cannot use '{directory}' as the sweep's result folder: {e.strerror or e}") from None
        if not os.access(self.dir, os.W_OK | os.X_OK):
            raise SweepError(f"cannot use '{directory}' as the sweep's result folder: '{self.dir}' is not writable")

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def get(self, key: str) -> Record | None:
        """The stored record, or None if there is none or it cannot be read (then the run is simply done again)."""
        try:
            return json.loads(self.path(key).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None

    def put(self, record: Record) -> None:
        """Stores a record, or raises one :class:`SweepError` naming the file and the reason (a full disk, the
        folder removed while the sweep ran); the records stored before stay."""
        path = self.path(record["key"])
        try:
            fileio.write_text(path, json.dumps(record, default=json_default), "sweep run record")
        except ValueError as e:  # fileio's checks: the folder is gone, or is no longer one
            raise SweepError(str(e)) from None
        except OSError as e:
            raise SweepError(f"cannot write sweep run record '{path}': {e.strerror or e}") from None

    def remove_if_unused(self) -> None:
        """Removes the folders this store made if they are still empty (nothing stored)."""
        for d in self.created:
            try:
                d.rmdir()
            except OSError:
                return  # not empty (or gone): it and its parents stay


class MemoryStore:
    """The same interface in memory, for a sweep without an output folder (nothing is resumable)."""

    def __init__(self) -> None:
        self.records: dict[str, Record] = {}

    def get(self, key: str) -> Record | None:
        return self.records.get(key)

    def put(self, record: Record) -> None:
        self.records[record["key"]] = record

    def remove_if_unused(self) -> None:
        """Nothing to remove in memory."""
