"""`smtlab study` on bad options, bad output folders, a full disk and interrupts (the study's bad-input probe): usage
errors exit 2 before anything is created or simulated, every output name is checked before the run, a result set is
published only when complete (written into a staging folder, moved into place at the end), and Ctrl-C or SIGTERM
prints one line and leaves the output folder as it was. The sections are fakes: nothing is simulated."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

from smtlab.study import common, report
from smtlab.study.section import Section

ONE_LINE_INTERRUPT = "smtlab.study: interrupted; nothing written\n"


def _snapshot(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"<dir>") for p in folder.rglob("*")}


def _section(key: str, calls: list[str], figures: tuple[str, ...] = (), action=None):
    def run(out_dir, quick, workers, progress, **kw):
        calls.append(key)
        if action is not None:
            action(out_dir)
        figs = []
        for name in figures:
            (out_dir / name).write_bytes(b"\x89PNG fake")
            figs.append(out_dir / name)
        return Section(key, key, pd.DataFrame({"x": [1, 2]}), f"{key} text", figs, {"ok": True}, [])
    return run


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path):
    """Fake sections (each records its call; ``sections[key] = callable`` replaces one) and no kernel-path,
    user-program or fidelity work."""
    from smtlab.workloads import compile_jobs, user_streams
    from smtlab.workloads.kpaths import REAL_PATHS_ENV

    for var in ("SMTLAB_KERNEL_CACHE", compile_jobs.CC1_ENV, user_streams.USER_STREAMS_ENV, REAL_PATHS_ENV):
        old = os.environ.get(var)
        monkeypatch.setenv(var, old or "unset")  # restored (or removed) after the test, whatever the study sets
        if old is None:
            monkeypatch.delenv(var)
    calls: list[str] = []
    sections = {"lmbench": _section("lmbench", calls), "aim9": _section("aim9", calls),
                "chat": _section("chat", calls, ("figure1_chat.png",))}
    monkeypatch.setattr(report, "_sections", lambda: (dict(sections), []))
    monkeypatch.setattr(report, "real_kernel_paths_note", lambda real: "kernel paths: fake")
    monkeypatch.setattr(report, "real_user_programs_note", lambda real: "user programs: fake")
    monkeypatch.setattr(report, "fidelity", lambda tables: {"mad_pp": 1.0, "rows": 1})
    monkeypatch.setattr(report, "fidelity_line", lambda fid: "**Fidelity: fake**")
    return calls, sections


def _old_results(folder: pathlib.Path) -> dict[str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("lmbench.csv", "old lmbench\n"), ("aim9.csv", "old aim9\n"), ("study.md", "old report\n"),
                       ("checks.json", "{}\n"), ("notes.txt", "the user's\n")):
        (folder / name).write_text(text)
    return _snapshot(folder)


# --- finding 1: Ctrl-C and SIGTERM ------------------------------------------------------------------------------


@pytest.mark.parametrize("fresh", [False, True], ids=["old-results", "new-folder"])
def test_ctrl_c_midway_publishes_nothing_and_prints_one_line(fake, tmp_path, capsys, fresh):
    calls, sections = fake

    def interrupt(out_dir):
        raise KeyboardInterrupt

    sections["aim9"] = _section("aim9", calls, action=interrupt)
    out = tmp_path / "a" / "b" / "c" if fresh else tmp_path / "out"
    before = None if fresh else _old_results(out)
    assert report.main(["--quick", "-o", str(out), "--only", "lmbench,aim9,chat", "--no-progress"]) == 130
    assert calls == ["lmbench", "aim9"]
    assert capsys.readouterr().err == ONE_LINE_INTERRUPT
    if fresh:
        assert not (tmp_path / "a").exists()  # the folders the run created are gone again
    else:
        assert _snapshot(out) == before  # the earlier result set untouched, no staging folder left


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals go to the main thread")
def test_sigterm_midway_is_handled_as_ctrl_c(fake, tmp_path, capsys):
    calls, sections = fake
    sections["aim9"] = _section("aim9", calls, action=lambda out_dir: os.kill(os.getpid(), signal.SIGTERM))
    out = tmp_path / "out"
    before = _old_results(out)
    handler = signal.getsignal(signal.SIGTERM)
    assert report.main(["--quick", "-o", str(out), "--only", "lmbench,aim9,chat", "--no-progress"]) == 143
    assert capsys.readouterr().err == ONE_LINE_INTERRUPT
    assert _snapshot(out) == before
    assert signal.getsignal(signal.SIGTERM) is handler  # the command's handler is removed again
    assert "chat" not in calls


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_an_interrupt_stops_the_worker_processes_at_once():
    """The pool's workers are terminated, not waited for (a study job can run for minutes)."""
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with common.process_pool(2) as pool:
            for _ in range(2):
                pool.submit(time.sleep, 60)
            time.sleep(0.5)
            procs = list(pool._processes.values())
            raise KeyboardInterrupt
    assert time.monotonic() - t0 < 20
    assert len(procs) == 2
    while not all(_gone(p.pid) for p in procs) and time.monotonic() - t0 < 20:
        time.sleep(0.05)
    assert all(_gone(p.pid) for p in procs)


def _gone(pid: int) -> bool:
    """The process has ended (exited, or a zombie waiting for the pool's thread to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:  # no such file, or the process went between the open and the read (ESRCH)
        return True


def test_a_complete_run_publishes_everything_and_leaves_no_staging_folder(fake, tmp_path, capsys):
    out = tmp_path / "out"
    res = report.run_study(out, quick=True, workers=1, only=["lmbench", "chat"], progress=False, echo=False)
    assert sorted(p.name for p in out.iterdir()) == ["chat.csv", "checks.json", "figure1_chat.png", "lmbench.csv",
                                                     "study.md"]
    assert res["sections"][1].figures == [out / "figure1_chat.png"]
    assert "![figure1_chat](figure1_chat.png)" in (out / "study.md").read_text()
    assert json.loads((out / "checks.json").read_text())["checks"] == {"lmbench.ok": True, "chat.ok": True}


def _progress_job(x: int) -> dict[str, int]:
    return {"x": x}


def test_progress_bars_say_which_section_of_how_many_is_running(fake, tmp_path, capsys):
    """A default study runs 7 sections for 10-15 minutes on 2 cores; each section's bar counts only its own jobs. The
    bars now start with the section's place in the run ("[2/3] aim9"), so a reader knows how far the whole run is."""
    calls, sections = fake

    def section(key: str):
        def run(out_dir, quick, workers, progress, **kw):
            assert common.run_jobs(_progress_job, [{"x": 1}, {"x": 2}], workers, progress, key) == [{"x": 1}, {"x": 2}]
            return Section(key, key, pd.DataFrame({"x": [1]}), key, [], {"ok": True}, [])
        return run

    for key in ("lmbench", "aim9", "chat"):
        sections[key] = section(key)
    report.run_study(tmp_path / "out", quick=True, workers=1, only=["lmbench", "aim9", "chat"], progress=True,
                     echo=False)
    err = capsys.readouterr().err
    for label in ("[1/3] lmbench", "[2/3] aim9", "[3/3] chat"):
        assert label in err, err
    assert common.progress_label("x") == "x"  # no counter outside a study's sections


def test_a_killed_runs_staging_folder_is_removed_by_the_next_run_and_a_live_runs_is_not(fake, tmp_path, capsys):
    """SIGKILL cannot be caught, so a killed run leaves its staging folder; the next run removes it (its name holds the
    pid, and no process has that pid any more) in one line, and leaves alone the folder of a live run, of another host
    and one named without a pid."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    dead = int(done.stdout)  # ended and reaped: no process has this pid (unless the system reused it meanwhile)
    host = socket.gethostname()
    out = tmp_path / "out"
    out.mkdir()
    stale = out / f".smtlab-study.{dead}@{host}.k1ll3d_x"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "lmbench.csv").write_text("half of a killed run\n")
    kept = [out / f".smtlab-study.{os.getpid()}@{host}.l1ve", out / f".smtlab-study.{dead}@elsewhere.example.0ther",
            out / ".smtlab-study.n0p1d"]
    for d in kept:
        d.mkdir()
    report.run_study(out, quick=True, workers=1, only=["lmbench"], progress=False, echo=False)
    assert not stale.exists()
    assert all(d.is_dir() for d in kept)
    assert capsys.readouterr().err == (f"smtlab.study: removed '{stale}', the staging folder of run {dead}, which is "
                                       "no longer running (killed before it could clean up)\n")
    assert (out / "lmbench.csv").is_file()


def test_an_output_that_is_a_symbolic_link_is_written_where_it_points(fake, tmp_path):
    """The result set is published as fileio writes: the link stays and the file it names gets the new report."""
    out = tmp_path / "out"
    out.mkdir()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "study.md").write_text("old report\n")
    (out / "study.md").symlink_to(kept / "study.md")
    report.run_study(out, quick=True, workers=1, only=["lmbench"], progress=False, echo=False)
    assert (out / "study.md").is_symlink()
    assert (kept / "study.md").read_text().startswith("#")
    assert sorted(p.name for p in kept.iterdir()) == ["study.md"]


# --- finding 2: a full disk -------------------------------------------------------------------------------------


def test_a_full_disk_names_the_file_and_publishes_nothing(fake, tmp_path, capsys, monkeypatch):
    def full(path, obj, what="output", **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(report, "write_json", full)
    out = tmp_path / "out"
    before = _old_results(out)
    assert report.main(["--quick", "-o", str(out), "--only", "lmbench", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err == (f"smtlab.study: cannot write study checks '{out / 'checks.json'}': No space left on device; "
                   "nothing written\n")
    assert _snapshot(out) == before


def test_a_figure_that_does_not_fit_names_the_section(fake, tmp_path, capsys):
    calls, sections = fake

    def full(out_dir):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    sections["chat"] = _section("chat", calls, action=full)
    out = tmp_path / "new"
    assert report.main(["--quick", "-o", str(out), "--only", "lmbench,chat", "--no-progress"]) == 1
    assert capsys.readouterr().err == (f"smtlab.study: cannot write the chat section's outputs (chat.csv, "
                                       f"figure1_chat.png) in '{out}': No space left on device; nothing written\n")
    assert not out.exists()


# --- finding 3: every output name checked before the run ---------------------------------------------------------


@pytest.mark.parametrize("name,only,what", [("checks.json", "lmbench", "study checks"),
                                            ("lmbench.csv", "lmbench", "lmbench table"),
                                            ("figure1_chat.png", "chat", "chat figure")])
def test_a_directory_under_an_output_name_is_refused_before_the_run(fake, tmp_path, capsys, name, only, what):
    calls, _ = fake
    out = tmp_path / "d"
    (out / name).mkdir(parents=True)
    assert report.main(["--quick", "-o", str(out), "--only", only, "--no-progress"]) == 2
    assert capsys.readouterr().err == f"smtlab.study: cannot write {what} '{out / name}': it is a directory\n"
    assert calls == []
    assert sorted(p.name for p in out.iterdir()) == [name]


# --- finding 4: options ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args,message", [
    (["--only", "bogus"], "unknown section(s) bogus; known: lmbench, aim9, chat, dbench, tbench, two_package, "
                          "sysbench_energy"),
    (["--only", ","], "--only names no section"),
    (["--only", " "], "--only names no section"),
    (["--only", ""], "--only names no section"),
    (["--workers", "-1"], "--workers must be an integer of at least 1, got -1"),
    (["--workers", "0"], "--workers must be an integer of at least 1, got 0"),
    (["--workers", "1000"], "--workers 1000 is too many for this host: at most 4 per CPU"),
])
def test_bad_options_exit_2_before_anything_is_created(fake, tmp_path, capsys, args, message):
    calls, _ = fake
    out = tmp_path / "a" / "b" / "c"
    assert report.main(["--quick", "-o", str(out), "--no-progress", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"smtlab.study: {message}") and err.count("\n") == 1
    assert not (tmp_path / "a").exists()
    assert calls == []


def test_an_empty_output_folder_name_is_refused(fake, tmp_path, capsys, monkeypatch):
    calls, _ = fake
    monkeypatch.chdir(tmp_path)
    assert report.main(["--quick", "-o", "", "--only", "lmbench", "--no-progress"]) == 2
    assert "-o/--out names no folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [] and calls == []


def test_the_api_refuses_the_same_options(tmp_path):
    with pytest.raises(ValueError, match="names no section"):
        report.run_study(tmp_path / "x", only=[])
    with pytest.raises(ValueError, match="at least 1"):
        report.run_study(tmp_path / "x", workers=0)
    assert not (tmp_path / "x").exists()


def test_an_earlier_runs_files_that_remain_are_named(fake, tmp_path, capsys):
    out = tmp_path / "out"
    _old_results(out)
    assert report.main(["--quick", "-o", str(out), "--only", "aim9", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"files of an earlier run remain in '{out}', not written by this run: lmbench.csv" in err
    assert "not written by this run: lmbench.csv" in (out / "study.md").read_text()
    assert (out / "lmbench.csv").read_text() == "old lmbench\n"  # never deleted
    assert (out / "notes.txt").read_text() == "the user's\n"  # not one of the study's names: not mentioned
    assert "notes.txt" not in err
    assert (out / "aim9.csv").read_text() != "old aim9\n"


def _sleep_job(seconds: float) -> dict[str, float]:
    time.sleep(seconds)
    return {"slept": seconds}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sections_jobs_say_what_they_cost(workers):
    """Each section's notes give its simulations' host seconds against its wall time, so a reader of a slow run sees
    whether the workers were busy. Three jobs sleeping 0.05, 0.10 and 0.15 s: the jobs' own seconds add up to at least
    0.30 s (each is timed in its worker around the call), and the wall time is at least the longest job and at least
    the jobs' sum over the workers; the results keep the parameters' order whatever order the jobs ran in."""
    res = common.run_jobs(_sleep_job, [{"seconds": s} for s in (0.05, 0.10, 0.15)], workers, False, "sleep",
                          cost=lambda p: p["seconds"])
    assert [r["slept"] for r in res] == [0.05, 0.10, 0.15]
    assert 0.30 <= res.host_seconds < 0.30 + 1.0
    assert res.wall_seconds >= max(0.15, 0.30 / workers) and res.workers == workers
    sentence = common.cost_sentence(len(res), res.host_seconds, res.workers, res.wall_seconds)
    assert sentence.startswith(f"3 simulations, {res.host_seconds:.1f} s of simulation on {workers} worker(s)")
