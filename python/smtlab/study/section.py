"""The contract between the study's sections and the driver: one Section per table of the reference study."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass


@dataclass
class Section:
    key: str                      # "lmbench", "aim9", "chat", "dbench", "tbench", "two_package", "sysbench_energy"
    title: str
    table: "pandas.DataFrame"     # rows in the published table's layout: published noht/ht/speedup | model noht/ht/speedup
    markdown: str                 # the table as markdown + the explanation drawn from the model's statistics
    figures: list[pathlib.Path]   # PNGs written under out_dir
    checks: dict[str, bool]       # named shape checks of the published table ("single_thread_rows_flat": True, ...)
    notes: list[str]              # honest misses and why
