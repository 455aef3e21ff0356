"""The study driver: runs every section (these and the energy section when present), prints each table in the
published layout, and writes the report (study.md), one CSV per section, the figures and the shape-check summary."""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import pathlib
import re
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Iterator

from ..fileio import atomic_path, check_output_path, write_json, write_text
from ..workloads.kpaths import REAL_PATHS, REAL_PATHS_ENV, TCP_BATCHES, enable_real_paths
from ..workloads import compile_jobs, user_streams
from ..workers import WORKERS_PER_CPU
from .common import check_workers, kernel_cache_env, markdown_table, progress_step, text_table
from .fidelity import fidelity, fidelity_line
from .section import Section

ORDER = ["lmbench", "aim9", "chat", "dbench", "tbench", "two_package", "sysbench_energy"]


def _sections() -> tuple[dict[str, Callable[..., Section]], list[str]]:
    from .ht_linux import SECTIONS
    found: dict[str, Callable[..., Section]] = dict(SECTIONS)
    notes = []
    try:
        energy = importlib.import_module("smtlab.study.energy")
        found["sysbench_energy"] = energy.run_section
    except Exception as e:  # noqa: BLE001 - the colleague's module may be missing or mid-edit
        notes.append(f"sysbench_energy skipped: smtlab.study.energy is not importable ({type(e).__name__}: {e})")
    return found, notes


def real_kernel_paths_note(real_kernel: bool) -> str:
    """Switches the workloads' real kernel paths on (kpaths.enable_real_paths) unless ``real_kernel`` is False, and
    returns the report's one line saying which system calls ran real kpath: streams, or why none did."""
    if not real_kernel:
        os.environ[REAL_PATHS_ENV] = "0"
        return "kernel paths: estimated instruction counts for every system call (--no-kpath)"
    why = enable_real_paths()
    if why is not None:
        print(f"smtlab.study: {why}", file=sys.stderr)
        return f"kernel paths: {why}"
    # chat's batch recordings (one path per size) are named once, as a range.
    batches = {f"tcp_{d}_b{b}" for d in ("send", "recv") for b in TCP_BATCHES}
    real = ", ".join([f"{m} ({k})" if m != k else m for m, k in REAL_PATHS.items() if m not in batches] +
                     [f"chat's batches of {TCP_BATCHES[0]}..{TCP_BATCHES[-1]} messages (tcp_send_bN, tcp_recv_bN)"])
    return (f"kernel paths: real Linux 6.1 paths (kpath:, recorded under qemu-system) for {real}, the context "
            "switch (ctxsw), the timer interrupt (timer), the reschedule IPI (resched_ipi; of a halted CPU too under "
            "2.4.19 and 2.5.32) and, under today's kernel (idle_core_first), the wake-up IPI of a halted CPU "
            "(wake_ipi); every other path "
            "(workloads/kpaths.py) uses its estimated instruction count")


def real_user_programs_note(real_user: bool) -> str:
    """Switches the workloads' recorded user programs on (user_streams.enable_user_streams) unless ``real_user`` is
    False, and returns the report's one line naming the workloads whose user-mode work is real, or why none is."""
    os.environ.pop(compile_jobs.CC1_ENV, None)  # decided by the two_package section, unless turned off here
    if not real_user:
        os.environ[user_streams.USER_STREAMS_ENV] = "0"
        os.environ[compile_jobs.CC1_ENV] = "off"  # make_j2's compile jobs too (two_package)
        return "user programs: estimated instruction counts for every workload's user-mode work (--no-user-programs)"
    why = user_streams.enable_user_streams()
    if why is not None:
        print(f"smtlab.study: {why}", file=sys.stderr)
        return f"user programs: {why}"
    return user_streams.note()


#: The files each section writes (its table, then its figures), checked before the run; study.md and checks.json are
#: the report's. A published result set is exactly these names (REPORT_FILES and the run's sections').
SECTION_OUTPUTS = {"lmbench": ["lmbench.csv"], "aim9": ["aim9.csv"], "chat": ["chat.csv", "figure1_chat.png"],
                   "dbench": ["dbench.csv", "figure2_dbench.png"], "tbench": ["tbench.csv", "figure3_tbench.png"],
                   "two_package": ["two_package.csv"],
                   "sysbench_energy": ["sysbench_energy.csv", "sysbench_energy.png"]}
REPORT_FILES = ["study.md", "checks.json"]
#: The folder, inside the output folder, where a run writes its result set before publishing it:
#: ``.smtlab-study.PID@HOST.RANDOM``, so that a later run can tell the folder of a run that was killed (SIGKILL cannot
#: be caught, so that run could not remove it) from one still running.
STAGING_PREFIX = ".smtlab-study."
_STAGING_NAME = re.compile(re.escape(STAGING_PREFIX) + r"(?P<pid>[1-9][0-9]*)@(?P<host>.+)\.[^.]+")
#: Errors that mean "the output could not be written" when a section's writer raises them without a file name.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


def _what(name: str) -> str:
    """How messages name an output file: "study report", "study checks", "lmbench table", "chat figure"."""
    if name in REPORT_FILES:
        return "study report" if name == "study.md" else "study checks"
    key = next((k for k, names in SECTION_OUTPUTS.items() if name in names), None)
    if key is None:
        return "study output"
    return f"{key} table" if name.endswith(".csv") else f"{key} figure"


class OutputError(Exception):
    """An output of the study could not be written (a full disk, a folder made read-only during the run); the message
    names the file and the reason. Nothing of the run is published."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the command's handler so that it ends the run as Ctrl-C does."""


def check_only(only: list[str] | None) -> list[str]:
    """The sections to run, in the study's order: every one when ``only`` is None, else the ones it names. Raises
    ValueError for an unknown name or for a list that names no section (``--only ,``)."""
    if only is None:
        return list(ORDER)
    names = [k.strip() for k in only if k.strip()]
    if not names:
        raise ValueError(f"--only names no section: give one or more of {','.join(ORDER)}")
    unknown = [k for k in names if k not in ORDER]
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(ORDER)}")
    return [k for k in ORDER if k in names]


def _make_folder(out_dir: pathlib.Path) -> list[pathlib.Path]:
    """Creates ``out_dir`` and its missing parents; returns the folders created, deepest last (removed again when the
    run publishes nothing)."""
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise ValueError(f"cannot write the study into '{out_dir}': it is not a directory")
    missing = []
    p = out_dir
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    created: list[pathlib.Path] = []
    try:
        for d in reversed(missing):
            d.mkdir()
            created.append(d)
    except OSError as e:
        _remove_folders(created)
        raise ValueError(f"cannot create the study's output folder '{out_dir}': {e.strerror}") from None
    return created


def _staging_prefix() -> str:
    return f"{STAGING_PREFIX}{os.getpid()}@{socket.gethostname()}."


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove_stale_staging(out_dir: pathlib.Path) -> None:
    """Removes the staging folders in ``out_dir`` of runs on this host whose process no longer exists (killed by
    SIGKILL or a power cut: nothing of theirs was published), one line on stderr each. A folder of a live process, of
    another host (its pids mean nothing here) or in an older run's name without a pid is left alone."""
    host = socket.gethostname()
    try:
        entries = list(out_dir.iterdir())
    except OSError:
        return
    for d in entries:
        m = _STAGING_NAME.fullmatch(d.name)
        if m is None or m["host"] != host or d.is_symlink() or not d.is_dir() or _process_alive(int(m["pid"])):
            continue
        try:
            shutil.rmtree(d)
        except OSError as e:
            print(f"smtlab.study: cannot remove '{d}', the staging folder of run {m['pid']}, which is no longer "
                  f"running: {e.strerror or e}", file=sys.stderr)
        else:
            print(f"smtlab.study: removed '{d}', the staging folder of run {m['pid']}, which is no longer running "
                  "(killed before it could clean up)", file=sys.stderr)


def _remove_folders(created: list[pathlib.Path]) -> None:
    for d in reversed(created):
        with contextlib.suppress(OSError):
            d.rmdir()  # only if still empty: never anything the user put there meanwhile


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back while the result set is published (or a failed run cleaned up), so that neither
    leaves half of it in place; a signal that came meanwhile is delivered when the block ends."""
    held = {signal.SIGINT, signal.SIGTERM}
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _write_error(final: pathlib.Path, what: str, e: OSError) -> OutputError:
    return OutputError(f"cannot write {what} '{final}': {e.strerror or e}")


def _stage(staging: pathlib.Path, out_dir: pathlib.Path, name: str, what: str,
           write: Callable[[pathlib.Path], None]) -> None:
    """Writes ``name`` into the staging folder (atomically, fileio); a failed write names the file's final path."""
    try:
        with atomic_path(staging / name, what) as tmp:
            write(tmp)
    except OSError as e:
        raise _write_error(out_dir / name, what, e) from None


def _publish(staging: pathlib.Path, out_dir: pathlib.Path, names: list[str]) -> None:
    """Moves the staged files into ``out_dir`` (renames within one file system), the report last. A file replaced
    keeps its permission bits, and a name that is a symbolic link is written where it points (copied, as the file may
    be on another file system), as fileio's writers do."""
    for name in names:
        check_output_path(out_dir / name, _what(name))  # it may have become a directory or a FIFO meanwhile
    for name in sorted(names, key=lambda n: n in REPORT_FILES):
        src, dst = staging / name, out_dir / name
        try:
            if dst.is_symlink():
                with atomic_path(dst, _what(name)) as tmp:
                    shutil.copyfile(src, tmp)
                continue
            with contextlib.suppress(OSError):
                os.chmod(src, stat.S_IMODE(dst.stat().st_mode))
            os.replace(src, dst)
        except OSError as e:
            raise _write_error(dst, _what(name), e) from None


def run_study(out_dir: pathlib.Path, quick: bool = False, workers: int | None = None, only: list[str] | None = None,
              progress: bool = True, echo: bool = True, real_kernel: bool = True,
              real_user: bool = True, steady_chat: bool = False, chat_whole_run: bool = False) -> dict[str, Any]:
    """Runs the study; returns {'sections': [Section...], 'checks': {...}, 'notes': [...], 'seconds': {...}}.
    ``real_kernel``: run the system calls that have a kpath: recording on it (False: the estimates everywhere).
    ``real_user``: run chat's, dbench's and tbench's user-mode work on their recorded programs (user_streams).
    ``steady_chat``: chat's windows span whole cycles of the model's run (chat.steady_window_ms; many times longer).
    ``chat_whole_run``: chat runs as its source is written, whole (chat_source; also many times longer).

    The options and every output name (study.md, checks.json, each section's CSV and figures) are checked before
    anything is simulated (ValueError). The result set is written into a hidden folder inside ``out_dir`` and moved
    into place only when complete: a failed write (OutputError), an exception or an interrupt (KeyboardInterrupt,
    Terminated) leaves ``out_dir`` as it was, and removes it again when the run created it. Files of an earlier run
    that this one did not write (another --only) are left in place and named in study.md and on stderr."""
    if steady_chat and chat_whole_run:
        raise ValueError("--steady-chat and --chat-whole-run exclude each other: choose one way to run chat")
    requested = check_only(only)
    workers = check_workers(workers)
    out_dir = pathlib.Path(out_dir)
    planned = REPORT_FILES + [n for k in requested for n in SECTION_OUTPUTS[k]]
    created = _make_folder(out_dir)
    staging: pathlib.Path | None = None
    try:
        # Checked before the long run, so that an unwritable folder or a directory named checks.json is reported at
        # once, not after minutes of work.
        for name in planned:
            check_output_path(out_dir / name, _what(name))
        _remove_stale_staging(out_dir)
        try:
            staging = pathlib.Path(tempfile.mkdtemp(prefix=_staging_prefix(), dir=out_dir))
        except OSError as e:
            raise ValueError(f"cannot write the study into '{out_dir}': {e.strerror}") from None
        res = _run(out_dir, staging, quick, workers, only is not None, requested, progress, echo, real_kernel,
                   real_user, steady_chat, chat_whole_run)
    except BaseException:
        with _signals_held():
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            _remove_folders(created)
        raise
    return res


def _run(out_dir: pathlib.Path, staging: pathlib.Path, quick: bool, workers: int, filtered: bool,
         requested: list[str], progress: bool, echo: bool, real_kernel: bool, real_user: bool, steady_chat: bool,
         chat_whole_run: bool) -> dict[str, Any]:
    """run_study's work once the options and the output folder are checked: the sections write into ``staging``,
    which is published into ``out_dir`` at the end."""
    kernel_cache_env()
    kpath_note = real_kernel_paths_note(real_kernel)
    user_note = real_user_programs_note(real_user)
    available, notes = _sections()
    notes.insert(0, kpath_note)
    notes.insert(1, user_note)
    keys = [k for k in requested if k in available]
    if filtered:
        notes += [f"{k}: requested but not available" for k in requested if k not in available]
    sections: list[Section] = []
    seconds: dict[str, float] = {}
    written: list[str] = []
    t_all = time.perf_counter()
    for index, key in enumerate(keys, 1):
        t0 = time.perf_counter()
        try:
            extra = {}
            if key == "chat" and steady_chat:
                extra = {"steady": True}
            elif key == "chat" and chat_whole_run:
                extra = {"whole_run": True}
            with progress_step(index, len(keys)):
                sec = available[key](staging, quick, workers, progress, **extra)
        except OSError as e:
            # A figure the section could not write (into the staging folder, or with no file named: a full disk).
            if (str(e.filename).startswith(str(staging)) if e.filename is not None else e.errno in _WRITE_ERRNOS):
                raise OutputError(f"cannot write the {key} section's outputs ({', '.join(SECTION_OUTPUTS[key])}) "
                                  f"in '{out_dir}': {e.strerror or e}") from None
            if key == "sysbench_energy":
                notes.append(f"sysbench_energy failed: {type(e).__name__}: {e}")
                continue
            raise
        except Exception as e:  # noqa: BLE001 - one broken section must not hide the others
            if key == "sysbench_energy":
                notes.append(f"sysbench_energy failed: {type(e).__name__}: {e}")
                continue
            raise
        seconds[key] = time.perf_counter() - t0
        sections.append(sec)
        table = sec.table
        _stage(staging, out_dir, f"{sec.key}.csv", f"{sec.key} table",
               lambda tmp: table.to_csv(tmp, index=table.index.name is not None))  # a named index is a column
        written.append(f"{sec.key}.csv")
        written += [f.name for f in sec.figures if f.parent == staging]
        if echo:
            print(f"\n== {sec.title}  ({seconds[key]:.1f} s)")
            print(text_table(sec.table))
            for name, ok in sec.checks.items():
                print(f"   check {name}: {'PASS' if ok else 'MISS'}")
    seconds["total"] = time.perf_counter() - t_all
    # An earlier run's files that this one does not replace (another --only) stay, and the report says so.
    known = REPORT_FILES + [n for names in SECTION_OUTPUTS.values() for n in names]
    earlier = [n for n in known if n not in written and n not in REPORT_FILES and (out_dir / n).is_file()]
    checks = {f"{s.key}.{n}": bool(ok) for s in sections for n, ok in s.checks.items()}
    all_notes = notes + [n for s in sections for n in s.notes]
    if earlier:
        all_notes.append(f"files of an earlier run remain in the output folder beside this run's, not written by "
                         f"this run: {', '.join(earlier)}")
    fid = fidelity({s.key: s.table for s in sections})
    chat_mode = "steady" if steady_chat else "whole_run" if chat_whole_run else "window"
    meta = {"fidelity": _json_safe(fid), "checks": checks, "seconds": seconds, "quick": quick,
            "steady_chat": steady_chat, "chat_whole_run": chat_whole_run, "notes": all_notes}
    for name, write in (("study.md", lambda: _write_report(staging, sections, checks, all_notes, seconds, quick,
                                                           workers, fid, chat_mode)),
                        ("checks.json", lambda: write_json(staging / "checks.json", meta, "study checks"))):
        try:
            write()
        except OSError as e:
            raise _write_error(out_dir / name, _what(name), e) from None
        except ValueError as e:  # fileio's refusals name the file by its final path, not the staging folder's
            raise ValueError(str(e).replace(str(staging), str(out_dir))) from None
    written += REPORT_FILES
    late: KeyboardInterrupt | None = None
    published = False
    try:
        with _signals_held():
            _publish(staging, out_dir, written)
            published = True
            shutil.rmtree(staging, ignore_errors=True)
            for s in sections:
                s.figures = [out_dir / f.name if f.parent == staging else f for f in s.figures]
    except KeyboardInterrupt as e:  # delivered as the signals are let through again
        if not published:
            raise
        late = e  # the result set is in place: say so after the summary
    if earlier:
        print(f"smtlab.study: files of an earlier run remain in '{out_dir}', not written by this run: "
              f"{', '.join(earlier)}", file=sys.stderr)
    if echo:
        print("\n" + fidelity_line(fid).replace("**", ""))
        print("\n== Shape checks")
        for n, ok in checks.items():
            print(f"   {'PASS' if ok else 'MISS'}  {n}")
        for n in all_notes:
            print(f"   note: {n}")
        print(f"\nwrote {out_dir / 'study.md'}, {len(sections)} CSV files, "
              f"{sum(len(s.figures) for s in sections)} figures; {seconds['total']:.1f} s")
    if late is not None:
        late.published = out_dir  # type: ignore[attr-defined]
        raise late
    return {"sections": sections, "checks": checks, "notes": all_notes, "seconds": seconds, "fidelity": fid}


def _json_safe(x: Any) -> Any:
    """NaN (no row compared) as null: JSON has no NaN."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, float) and x != x:
        return None
    return x


#: How the report's mode line names the way chat ran.
_CHAT_MODES = {"window": "", "steady": " with steady-state chat windows",
               "whole_run": " with whole chat runs as the benchmark's source is written"}


def _write_report(out_dir: pathlib.Path, sections: list[Section], checks: dict[str, bool], notes: list[str],
                  seconds: dict[str, float], quick: bool, workers: int, fid: dict[str, Any],
                  chat_mode: str = "window") -> None:
    import pandas as pd
    lines = ["# smtlab: the Hyper-Threading studies rerun on the model", "", fidelity_line(fid)
             + (" Quick mode runs fewer rows: compare the figure only with another quick run." if quick else ""), "",
             f"Mode: {'quick' if quick else 'default'}{_CHAT_MODES[chat_mode]}; "
             f"{workers} worker processes; {seconds['total']:.0f} s. "
             "Published numbers: data/reference/ (from the articles named in each CSV's header). Every model "
             "number is a simulation of the netburst (or broadwell) preset; nothing is fitted per row.", "",
             "## Shape checks", "",
             markdown_table(pd.DataFrame([{"check": n, "status": "pass" if ok else "MISS"}
                                          for n, ok in checks.items()])), ""]
    if notes:
        lines += ["## Honest misses and notes", ""] + [f"- {n}" for n in notes] + [""]
    for s in sections:
        lines += [f"## {s.title}", "", s.markdown, ""]
        for f in s.figures:
            lines += [f"![{f.stem}]({os.path.relpath(f, out_dir)})", ""]
    write_text(out_dir / "study.md", "\n".join(lines), "study report")


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m smtlab.study",
                                 description="Rerun 'Hyper-Threading speeds Linux' and the SMT energy study on the "
                                             "model: tables (published | model), report, CSV and figures.")
    ap.add_argument("--quick", action="store_true", help="short runs, fewer rows (about 100 s on 2 idle cores once the caches are filled; what the tests use)")
    ap.add_argument("-o", "--out", default="out", help="output folder (default out/)")
    ap.add_argument("--workers", type=int, default=None,
                    help=f"parallel simulations (default: all cores; at most {WORKERS_PER_CPU} per CPU)")
    ap.add_argument("--only", default=None, help=f"comma-separated sections: {','.join(ORDER)}")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    ap.add_argument("--no-kpath", action="store_true",
                    help="estimated instruction counts for every system call, no recorded kernel paths")
    ap.add_argument("--no-user-programs", action="store_true",
                    help="estimated user-mode work for chat, dbench, tbench and make_j2, not their recorded programs")
    ap.add_argument("--steady-chat", action="store_true",
                    help="chat windows of whole cycles of the model's run (12.5 simulated ms per room) instead of its "
                         "senders' phase; the chat section then takes about half an hour on 2 cores (docs/study.md)")
    ap.add_argument("--chat-whole-run", action="store_true",
                    help="chat as its source is written (chat_source.py), run whole with 2 messages per user and "
                         "measured as the benchmark's client measures; about half an hour for chat on 2 cores "
                         "(docs/study.md)")
    a = ap.parse_args(argv)
    # Usage errors, found before anything is created or simulated: exit status 2.
    try:
        if not a.out:
            raise ValueError("-o/--out names no folder: give the output folder (default out/)")
        only = None if a.only is None else check_only(a.only.split(","))
        check_workers(a.workers)
    except ValueError as e:
        print(f"smtlab.study: {e}", file=sys.stderr)
        return 2
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        res = run_study(pathlib.Path(a.out), a.quick, a.workers, only, progress=not a.no_progress,
                        real_kernel=not a.no_kpath, real_user=not a.no_user_programs, steady_chat=a.steady_chat,
                        chat_whole_run=a.chat_whole_run)
    except ValueError as e:  # a bad option or output folder, found before any simulation
        print(f"smtlab.study: {e}", file=sys.stderr)
        return 2
    except OutputError as e:
        print(f"smtlab.study: {e}; nothing written", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        code = 128 + (signal.SIGTERM if isinstance(e, Terminated) else signal.SIGINT)
        done = getattr(e, "published", None)
        print(f"smtlab.study: interrupted; the results were complete and are in '{done}'" if done is not None else
              "smtlab.study: interrupted; nothing written", file=sys.stderr)
        return code
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0 if res["sections"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
