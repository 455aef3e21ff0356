"""smtlab.sweep's modules and outputs: the module split (store, tables, backend, progress), atomic
outputs, progress on a non-terminal as plain lines, and a Dask scheduler that cannot import smtlab named as the cause
with the fix."""

from __future__ import annotations

import ast
import io
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import smtlab
from smtlab.sweep import MemoryStore, ResultStore, Sweep, SweepError, run_sweep
from smtlab.sweep.progress import Progress

ROOT = Path(__file__).resolve().parents[2]
SWEEP_DIR = ROOT / "python" / "smtlab" / "sweep"
PYTHON_DIR = str(Path(smtlab.__file__).resolve().parent.parent)


def tiny_sweep() -> Sweep:
    return Sweep("netburst", axes={"core.rob.entries": [64, 126]}, workloads=[("gen:alu", "gen:branchy")],
                 max_instructions=5_000, name="tiny")


# --- shape ---------------------------------------------------------------------------------------------------------
def test_no_module_imports_a_private_name_from_another():
    """The modules talk through public names only (a leading underscore stays in its module)."""
    offenders = []
    for path in sorted(SWEEP_DIR.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                offenders += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert offenders == []


def test_spec_is_pure_data_and_the_store_and_tables_have_their_own_modules():
    spec_imports = {n.module for n in ast.parse((SWEEP_DIR / "spec.py").read_text()).body  # module level only
                    if isinstance(n, ast.ImportFrom) and n.level > 0}
    assert spec_imports == set()  # spec.py needs no other part of the sweep (Sweep.run imports the driver lazily)
    execute = (SWEEP_DIR / "execute.py").read_text()
    for gone in ("class ResultStore", "def build_result", "to_parquet", "def write_result", "as_completed"):
        assert gone not in execute, f"execute.py still holds {gone!r}"


# --- store ---------------------------------------------------------------------------------------------------------
def test_store_round_trip_and_no_temporary_left(tmp_path):
    store = ResultStore(tmp_path)
    rec = {"key": "k1", "kind": "run", "status": "ok", "result": {"ipc": 1.5}}
    store.put(rec)
    assert store.get("k1") == rec and store.get("missing") is None
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["k1.json"]
    (tmp_path / "runs" / "k2.json").write_text('{"key": "k2", "sta')  # a torn file from elsewhere: run again
    assert store.get("k2") is None
    mem = MemoryStore()
    mem.put(rec)
    assert mem.get("k1") is rec


def test_a_result_folder_that_cannot_be_used_is_one_error_before_any_run(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(SweepError, match=r"cannot use '.*afile' as the sweep's result folder: Not a directory"):
        run_sweep(tiny_sweep(), afile, workers=1, progress=False)
    assert afile.read_text() == "x"


def test_tables_are_written_atomically(tmp_path, monkeypatch):
    """A writer that fails half-way leaves no results file under the real name and no temporary beside it."""
    import pandas as pd

    out = tmp_path / "out"
    run_sweep(tiny_sweep(), out, workers=1, progress=False, fmt="csv")
    before = (out / "results.csv").read_text()

    def broken(self, path, *a, **kw):
        Path(path).write_text("half")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    with pytest.raises(SweepError, match=r"cannot write the sweep's tables into '.*out': disk full"):
        run_sweep(tiny_sweep(), out, workers=1, progress=False, fmt="csv")  # every run cached: only the tables
    assert (out / "results.csv").read_text() == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


# --- progress ------------------------------------------------------------------------------------------------------
def test_progress_to_a_non_terminal_is_plain_lines_at_most_one_per_interval():
    stream = io.StringIO()
    interval = 0.05
    bar = Progress(400, "s", cached=3, stream=stream, interval=interval)
    start = time.monotonic()
    for i in range(400):
        bar.update(ok=i % 100 != 0)
        time.sleep(0.001)
    bar.close()
    elapsed = time.monotonic() - start
    text = stream.getvalue()
    lines = text.splitlines()
    assert "\r" not in text
    # one line at the start, at most one per interval, one at the end
    assert 3 <= len(lines) <= 2 + elapsed / interval + 1, (len(lines), elapsed)
    assert lines[-1].startswith("s: 400/400 runs done, 4 failed, 0 remaining, 3 cached")


def test_sweep_command_with_stderr_in_a_file_writes_no_carriage_returns(tmp_path):
    f = tmp_path / "tiny.toml"
    f.write_text('name = "tiny"\nconfig = "netburst"\nmax_instructions = 5_000\nformat = "csv"\n'
                 '[axes]\ncore.rob.entries = [64, 96, 126]\n[workloads]\npair = ["gen:alu", "gen:branchy"]\n')
    err = tmp_path / "stderr.log"
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    start = time.monotonic()
    with err.open("w") as e:
        r = subprocess.run([sys.executable, "-m", "smtlab.sweep", str(f), "-o", str(tmp_path / "out"),
                            "--workers", "1"], stdout=subprocess.PIPE, stderr=e, text=True, env=env, timeout=300)
    elapsed = time.monotonic() - start
    assert r.returncode == 0, err.read_text()
    text = err.read_text()
    assert "\r" not in text
    lines = text.splitlines()
    # 9 runs (3 + 6 baselines): a bar would redraw at least once per run; plain lines are 2 + one per 10 s
    assert 2 <= len(lines) <= 2 + elapsed / Progress.INTERVAL + 1, text
    assert lines[-1].startswith("tiny: 9/9 runs done, 0 failed, 0 remaining, 0 cached")


# --- Dask -----------------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_dask_scheduler_without_smtlab_is_named_with_the_fix(tmp_path):
    """A `dask scheduler` started where smtlab is not importable: one SweepError naming the scheduler, the cause
    (it unpickles the task graph) and the fix, before any run is submitted; nothing is stored as failed."""
    pytest.importorskip("distributed")
    from distributed import Client

    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # the scheduler runs in an empty folder with no PYTHONPATH: smtlab cannot be imported there
    sched = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                              "--port", str(port), "--no-dashboard"], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", f"tcp://127.0.0.1:{port}",
                               "--nthreads", "1", "--no-nanny", "--no-dashboard"], cwd=tmp_path,
                              env=dict(env, PYTHONPATH=PYTHON_DIR), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        with Client(f"tcp://127.0.0.1:{port}", timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
            with pytest.raises(SweepError) as info:
                run_sweep(tiny_sweep(), tmp_path / "out", executor=client, progress=False)
        message = str(info.value)
        assert f"the scheduler (tcp://127.0.0.1:{port}): ModuleNotFoundError" in message
        assert "smtlab" in message and "unpickles the task graph" in message and "PYTHONPATH" in message
        assert "worker" not in message.split("Fix:")[0].replace("the scheduler", "")  # the worker is fine
        assert list((tmp_path / "out" / "runs").glob("*.json")) == []
    finally:
        for p in (worker, sched):
            p.terminate()
        for p in (worker, sched):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
