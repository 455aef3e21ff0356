"""The study driver: runs every section (these and the energy section when present), prints each table in the
published layout, and writes the report (study.md), one CSV per section, the figures and the shape-check summary."""

from __future__ import annotations

import argparse
import importlib
import os
import pathlib
import sys
import time
from typing import Any, Callable

from ..fileio import atomic_path, check_output_path, write_json, write_text
from ..workloads.kpaths import REAL_PATHS, REAL_PATHS_ENV, TCP_BATCHES, enable_real_paths
from ..workloads import compile_jobs, user_streams
from .common import kernel_cache_env, markdown_table, text_table
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


def run_study(out_dir: pathlib.Path, quick: bool = False, workers: int | None = None, only: list[str] | None = None,
              progress: bool = True, echo: bool = True, real_kernel: bool = True,
              real_user: bool = True, steady_chat: bool = False, chat_whole_run: bool = False) -> dict[str, Any]:
    """Runs the study; returns {'sections': [Section...], 'checks': {...}, 'notes': [...], 'seconds': {...}}.
    ``real_kernel``: run the system calls that have a kpath: recording on it (False: the estimates everywhere).
    ``real_user``: run chat's, dbench's and tbench's user-mode work on their recorded programs (user_streams).
    ``steady_chat``: chat's windows span whole cycles of the model's run (chat.steady_window_ms; many times longer).
    ``chat_whole_run``: chat runs as its source is written, whole (chat_source; also many times longer)."""
    if steady_chat and chat_whole_run:
        raise ValueError("--steady-chat and --chat-whole-run exclude each other: choose one way to run chat")
    kernel_cache_env()
    kpath_note = real_kernel_paths_note(real_kernel)
    user_note = real_user_programs_note(real_user)
    workers = workers or os.cpu_count() or 1
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"cannot write the study into '{out_dir}': it is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create the study's output folder '{out_dir}': {e.strerror}") from None
    # Checked before the long run, so that an unwritable folder is reported at once, not after minutes of work.
    check_output_path(out_dir / "study.md", "study report")
    available, notes = _sections()
    notes.insert(0, kpath_note)
    notes.insert(1, user_note)
    keys = [k for k in ORDER if k in available and (not only or k in only)]
    if only:
        unknown = [k for k in only if k not in ORDER]
        if unknown:
            raise SystemExit(f"smtlab.study: unknown section(s) {', '.join(unknown)}; known: {', '.join(ORDER)}")
        missing = [k for k in only if k in ORDER and k not in available]
        notes += [f"{k}: requested but not available" for k in missing]
    sections: list[Section] = []
    seconds: dict[str, float] = {}
    t_all = time.perf_counter()
    for key in keys:
        t0 = time.perf_counter()
        try:
            extra = {}
            if key == "chat" and steady_chat:
                extra = {"steady": True}
            elif key == "chat" and chat_whole_run:
                extra = {"whole_run": True}
            sec = available[key](out_dir, quick, workers, progress, **extra)
        except Exception as e:  # noqa: BLE001 - one broken section must not hide the others
            if key == "sysbench_energy":
                notes.append(f"sysbench_energy failed: {type(e).__name__}: {e}")
                continue
            raise
        seconds[key] = time.perf_counter() - t0
        sections.append(sec)
        with atomic_path(out_dir / f"{sec.key}.csv", f"{sec.key} table") as tmp:
            sec.table.to_csv(tmp, index=sec.table.index.name is not None)  # a named index (threads) is a column
        if echo:
            print(f"\n== {sec.title}  ({seconds[key]:.1f} s)")
            print(text_table(sec.table))
            for name, ok in sec.checks.items():
                print(f"   check {name}: {'PASS' if ok else 'MISS'}")
    seconds["total"] = time.perf_counter() - t_all
    checks = {f"{s.key}.{n}": bool(ok) for s in sections for n, ok in s.checks.items()}
    all_notes = notes + [n for s in sections for n in s.notes]
    fid = fidelity({s.key: s.table for s in sections})
    chat_mode = "steady" if steady_chat else "whole_run" if chat_whole_run else "window"
    _write_report(out_dir, sections, checks, all_notes, seconds, quick, workers, fid, chat_mode)
    write_json(out_dir / "checks.json", {"fidelity": _json_safe(fid), "checks": checks, "seconds": seconds,
                                         "quick": quick, "steady_chat": steady_chat, "chat_whole_run": chat_whole_run,
                                         "notes": all_notes},
               "study checks")
    if echo:
        print("\n" + fidelity_line(fid).replace("**", ""))
        print("\n== Shape checks (issue 5 section 4)")
        for n, ok in checks.items():
            print(f"   {'PASS' if ok else 'MISS'}  {n}")
        for n in all_notes:
            print(f"   note: {n}")
        print(f"\nwrote {out_dir / 'study.md'}, {len(sections)} CSV files, "
              f"{sum(len(s.figures) for s in sections)} figures; {seconds['total']:.1f} s")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m smtlab.study",
                                 description="Rerun 'Hyper-Threading speeds Linux' and the SMT energy study on the "
                                             "model: tables (published | model), report, CSV and figures.")
    ap.add_argument("--quick", action="store_true", help="short runs (under a minute; what the tests use)")
    ap.add_argument("-o", "--out", default="out", help="output folder (default out/)")
    ap.add_argument("--workers", type=int, default=None, help="parallel simulations (default: all cores)")
    ap.add_argument("--only", default="", help=f"comma-separated sections: {','.join(ORDER)}")
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
    only = [x.strip() for x in a.only.split(",") if x.strip()] or None
    try:
        res = run_study(pathlib.Path(a.out), a.quick, a.workers, only, progress=not a.no_progress,
                        real_kernel=not a.no_kpath, real_user=not a.no_user_programs, steady_chat=a.steady_chat,
                        chat_whole_run=a.chat_whole_run)
    except ValueError as e:  # a bad output folder, found before any simulation
        print(f"smtlab.study: {e}", file=sys.stderr)
        return 2
    return 0 if res["sections"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
