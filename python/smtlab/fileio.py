"""Outputs written atomically: a temporary file in the target directory, renamed into place when complete.

An interrupted or failed run never leaves a half-written result (CSV, JSON, report, figure, Parquet) under its real
name. Use :func:`atomic_path` for writers that take a path (``DataFrame.to_parquet``, ``Figure.savefig``) and
:func:`write_text` / :func:`write_json` for text. Only regular files are replaced: an existing device, FIFO, socket
or directory under the target name is refused, and a replaced file keeps its permission bits. A target that is a
symbolic link is written where the link points (as a shell's ``>`` writes through it); the link stays.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterator

__all__ = ["atomic_path", "check_output_path", "write_text", "write_bytes", "write_json"]

#: Characters the temporary name adds to the target's (``.`` + name + ``.`` + 8 random + ``.tmp``), and the short
#: prefix used instead when a name that long would not fit in the directory's file-name limit.
_TMP_EXTRA = 14
_SHORT_PREFIX = ".smtlab-out."


def _name_max(directory: Path) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


_MAX_LINKS = 40  # Linux's MAXSYMLINKS


def _follow_links(p: Path, what: str) -> Path:
    """The file ``p`` names when it is a symbolic link (followed link by link; a dangling link's file is created where
    it points), else ``p``. Renaming onto the link would replace it with a regular file and leave its file as it was.
    The same rule as smtlab's C++ outputs (src/common/output_file.cpp)."""
    for _ in range(_MAX_LINKS):
        try:
            if not stat.S_ISLNK(os.lstat(p).st_mode):
                return p
        except OSError:  # missing, a name too long, a folder that is not one: the checks after this report it
            return p
        p = p.parent / os.readlink(p)  # an absolute link replaces the folder
    if p.is_symlink():
        raise ValueError(f"cannot write {what} '{p}': too many levels of symbolic links")
    return p


def _refuse_special(p: Path, what: str) -> None:
    """Raise ValueError when ``p`` exists and is not a regular file (a directory, device, FIFO or socket)."""
    try:
        mode = p.stat().st_mode
    except OSError:
        return  # absent (or a dangling link): a new file
    if stat.S_ISDIR(mode):
        raise ValueError(f"cannot write {what} '{p}': it is a directory")
    if not stat.S_ISREG(mode):
        raise ValueError(f"cannot write {what} '{p}': it is not a regular file (a device, FIFO or socket)")


def check_output_path(path: str | os.PathLike[str], what: str = "output") -> Path:
    """Raise ValueError naming ``path`` and the reason when it cannot be written; return the Path that will be written
    (``path``, or the file it names when it is a symbolic link).

    Call it before a long run so that a bad destination is reported at once, not after the work is done.
    """
    p = _follow_links(Path(path), what)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise ValueError(f"cannot write {what} '{p}': directory '{parent}' does not exist")
    if not parent.is_dir():
        raise ValueError(f"cannot write {what} '{p}': '{parent}' is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {what} '{p}': directory '{parent}' is not writable")
    limit = _name_max(parent)
    if len(os.fsencode(p.name)) > limit:
        raise ValueError(f"cannot write {what} '{p}': the file name is {len(os.fsencode(p.name))} bytes long, "
                         f"over the directory's limit of {limit}")
    _refuse_special(p, what)
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"cannot write {what} '{p}': permission denied")
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], what: str = "output") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on normal exit rename it onto ``path``, on an exception remove it.

    The file gets the permission bits of the file it replaces, or those of a new file (0666 less the umask). A ``path``
    that is a symbolic link is written where it points: the temporary file is made beside that file."""
    target = check_output_path(path, what)
    fits = len(os.fsencode(target.name)) + _TMP_EXTRA <= _name_max(target.parent)
    prefix = f".{target.name}." if fits else _SHORT_PREFIX
    fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        os.chmod(tmp, mode)
        yield tmp
        _refuse_special(target, what)  # it may have become a FIFO or a directory while the run went on
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
    """Write ``obj`` as JSON. NaN and infinity are refused (JSON has neither) unless ``allow_nan=True`` is passed."""
    dump_kwargs.setdefault("indent", 2)
    dump_kwargs.setdefault("allow_nan", False)
    try:
        text = json.dumps(obj, **dump_kwargs)
    except ValueError as err:
        where = _non_finite(obj, "")
        why = "" if where is None else (f" (at {where or 'the top level'}); JSON has no NaN or infinity (write None "
                                        f"for a missing value)")
        raise ValueError(f"cannot write {what} '{Path(path)}': {err}{why}") from None
    return write_text(path, text + "\n", what)


def _non_finite(obj: Any, where: str) -> str | None:
    """Where the first NaN or infinity in ``obj`` is (``key.key[index]``, "" for ``obj`` itself), or None."""
    if isinstance(obj, float):
        return where if obj != obj or obj in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        items = ((f"{where}.{k}" if where else str(k), v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        items = ((f"{where}[{i}]", v) for i, v in enumerate(obj))
    else:
        return None
    for w, v in items:
        found = _non_finite(v, w)
        if found is not None:
            return found
    return None
