"""A sweep whose surroundings fail under it (a full disk, its result folder removed, a Dask scheduler that cannot be
reached) ends with one line naming what failed and exit status 1: no traceback, no wait beyond the stated connect
timeout, no temporary file and no empty folder left behind, and the records stored before the failure kept."""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import smtlab
from smtlab.sweep.__main__ import main as sweep_main
from smtlab.sweep.backend import CONNECT_TIMEOUT_SECONDS

PYTHON_DIR = str(Path(smtlab.__file__).resolve().parent.parent)

SMALL = """config = "netburst"
max_instructions = 5000
baseline = "none"
seeds = [1, 2, 3]
[workloads]
a = ["gen:alu"]
"""


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    lines = captured.err.strip().splitlines()
    errors = [line for line in lines if line.startswith("smtlab sweep: error: ")]
    assert len(errors) == 1 and "Traceback" not in captured.err, captured.err
    return errors[0]


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


def test_a_full_disk_while_storing_a_run_is_one_line_naming_the_record(tmp_path, capsys, monkeypatch):
    """The write of the second record fails as a full disk fails (ENOSPC from the write): the first record stays,
    the failed record's temporary file is removed."""
    f = tmp_path / "small.toml"
    f.write_text(SMALL)
    writes = []
    real_write_text = pathlib.Path.write_text

    def filling(self, text, *args, **kwargs):
        if self.parent.name == "runs":
            writes.append(self)
            if len(writes) >= 2:
                real_write_text(self, text[: len(text) // 2], *args, **kwargs)  # part of it reached the disk
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_write_text(self, text, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", filling)
    out = tmp_path / "out"
    assert sweep_main([str(f), "-o", str(out), "--workers", "1", "-q"]) == 1
    line = one_error(capsys)
    assert "cannot write sweep run record" in line and str(out / "runs") in line, line
    assert "No space left on device" in line, line
    assert len(list((out / "runs").glob("*.json"))) == 1  # the record stored before the disk filled
    assert temporaries(out) == []


def test_a_full_disk_while_writing_the_tables_is_one_line_and_keeps_the_records(tmp_path, capsys, monkeypatch):
    import pandas as pd

    f = tmp_path / "small.toml"
    f.write_text(SMALL)

    def full(self, path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pd.DataFrame, "to_parquet", full)
    out = tmp_path / "out"
    assert sweep_main([str(f), "-o", str(out), "--workers", "1", "-q"]) == 1
    line = one_error(capsys)
    assert "cannot write the sweep's tables" in line and str(out) in line and "No space left on device" in line
    assert len(list((out / "runs").glob("*.json"))) == 3  # a rerun writes the tables from these
    assert not (out / "results.parquet").exists() and temporaries(out) == []


def test_a_result_folder_removed_during_the_run_is_one_line_and_ends_the_workers(tmp_path):
    """The sweep runs in its own session: once it has stored a record, its folder is removed; the next record's
    write fails, and the command ends with one line, status 1, and no process of its session left."""
    (tmp_path / "long.toml").write_text(SMALL.replace("5000", "3000000").replace("[1, 2, 3]", "[1, 2, 3, 4, 5, 6]"))
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "smtlab.sweep", "long.toml", "-o", str(out), "--workers", "2"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list((out / "runs").glob("*.json")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert list((out / "runs").glob("*.json")), "no run was stored within 60 s"
        shutil.rmtree(out)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=10)
    assert proc.returncode == 1, err
    errors = [line for line in err.splitlines() if line.startswith("smtlab sweep: error: ")]
    assert "Traceback" not in err and len(errors) == 1, err
    assert str(out / "runs") in errors[0], errors[0]
    assert "does not exist" in errors[0] or "No such file or directory" in errors[0], errors[0]
    assert not out.exists()  # not made again by the failing sweep


def test_an_unreachable_dask_scheduler_is_one_line_within_the_connect_timeout(tmp_path):
    """Port 1 on the loopback refuses every connection; Dask retries until its timeout, which the sweep sets to
    CONNECT_TIMEOUT_SECONDS (Dask's own default is 30 s). Nothing is left in the folder the sweep was to write."""
    assert 1 <= CONNECT_TIMEOUT_SECONDS <= 10
    (tmp_path / "small.toml").write_text(SMALL)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "smtlab.sweep", "small.toml", "-o", "out", "--scheduler",
                           "tcp://127.0.0.1:1"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("smtlab sweep: error: cannot reach the Dask scheduler at tcp://127.0.0.1:1"), lines
    assert f"after {CONNECT_TIMEOUT_SECONDS} s" in lines[0], lines
    # the timeout plus the interpreter's and Dask's start-up (a few seconds on a loaded 2-core VM), not Dask's 30 s
    assert elapsed < CONNECT_TIMEOUT_SECONDS + 15, elapsed
    assert not (tmp_path / "out").exists()
