"""Outputs written atomically: a temporary file in the target directory, renamed into place when complete.

An interrupted or failed run never leaves a half-written result (CSV, JSON, report, figure, Parquet) under its real
name. Use :func:`atomic_path` for writers that take a path (``DataFrame.to_parquet``, ``Figure.savefig``) and
:func:`write_text` / :func:`write_json` for text.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

__all__ = ["atomic_path", "check_output_path", "write_text", "write_bytes", "write_json"]


def check_output_path(path: str | os.PathLike[str], what: str = "output") -> Path:
    """Raise ValueError naming ``path`` and the reason when it cannot be written; return it as a Path.

    Call it before a long run so that a bad destination is reported at once, not after the work is done.
    """
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise ValueError(f"cannot write {what} '{p}': directory '{parent}' does not exist")
    if not parent.is_dir():
        raise ValueError(f"cannot write {what} '{p}': '{parent}' is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {what} '{p}': directory '{parent}' is not writable")
    if p.is_dir():
        raise ValueError(f"cannot write {what} '{p}': it is a directory")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"cannot write {what} '{p}': permission denied")
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], what: str = "output") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on normal exit rename it onto ``path``, on an exception remove it."""
    target = check_output_path(path, what)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_text(path: str | os.PathLike[str], text: str, what: str = "output") -> Path:
    with atomic_path(path, what) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes(path: str | os.PathLike[str], data: bytes, what: str = "output") -> Path:
    with atomic_path(path, what) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_json(path: str | os.PathLike[str], obj: Any, what: str = "output", **dump_kwargs: Any) -> Path:
    dump_kwargs.setdefault("indent", 2)
    return write_text(path, json.dumps(obj, **dump_kwargs) + "\n", what)
