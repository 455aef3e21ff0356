"""smtlab.sampling.replay: a sampled run's windows simulated again from its snapshots in this process, on a local
process pool and on a Dask cluster give the statistics of `smtlab run --from-snapshots DIR --json` (host times aside);
a failed or lost task raises one smtlab.Error naming its windows. The snapshots come from a small sampled run of two
generated threads (a dozen windows, a few seconds)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import smtlab
from smtlab import sampling

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "build" / "smtlab"
SAMPLE_ARGS = ["-c", "netburst", "--sample", "-n", "720k", "--sample-period", "60k", "--sample-window", "5k",
               "--sample-warmup", "5k", "-q", "gen:mix", "gen:branchy"]
HOST_KEYS = ("host_seconds", "instructions_per_host_second")


def without_host(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if k not in HOST_KEYS}


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory):
    """(folder, the program's --from-snapshots JSON, the sampled run's JSON)."""
    if not PROGRAM.exists():
        pytest.skip("the program is not built (make build)")
    base = tmp_path_factory.mktemp("snapshots")
    folder = base / "snaps"
    subprocess.run([str(PROGRAM), "run", *SAMPLE_ARGS, "--snapshots", str(folder), "--json", str(base / "run.json")],
                   check=True, timeout=300)
    subprocess.run([str(PROGRAM), "run", "--from-snapshots", str(folder), "-q", "--json", str(base / "serial.json")],
                   check=True, timeout=300)
    return folder, json.loads((base / "serial.json").read_text()), json.loads((base / "run.json").read_text())


def test_window_ranges_are_contiguous_nearly_equal_and_in_order():
    assert sampling.window_ranges(0, 9, 3) == [(0, 2), (3, 5), (6, 9)]
    assert sampling.window_ranges(4, 5, 8) == [(4, 4), (5, 5)]  # never more ranges than windows
    assert sampling.window_ranges(7, 7, 1) == [(7, 7)]


def test_one_process_and_a_pool_give_the_programs_result(snapshots):
    folder, serial, run = snapshots
    assert serial["sampling"]["windows"] >= 10
    one = sampling.replay(folder, workers=1)
    two = sampling.replay(folder, workers=2)
    three = sampling.replay(str(folder), workers=3)
    assert without_host(one) == without_host(serial)
    assert without_host(two) == without_host(serial)
    assert without_host(three) == without_host(serial)
    # the windows' IPCs in window order, as the sampled run measured them
    for cpu in range(2):
        assert two["logical_cpus"][cpu]["window_ipc"] == run["logical_cpus"][cpu]["window_ipc"]
    assert without_host({k: v for k, v in two.items() if k != "snapshots"}) == without_host(run)


def test_a_range_of_windows_in_parts_is_that_range_in_one_process(snapshots):
    folder, _, _ = snapshots
    alone = sampling.replay(folder, workers=1, windows="2-7")
    parts = sampling.replay(folder, workers=2, windows=(2, 7))
    assert without_host(parts) == without_host(alone)
    assert parts["snapshots"]["first_window"] == 2 and parts["snapshots"]["last_window"] == 7
    assert all(w[0] in range(2, 8) for w in parts["logical_cpus"][0]["window_ipc"])


def test_another_policy_runs_from_the_same_snapshots(snapshots):
    folder, serial, _ = snapshots
    icount = smtlab.Config.load(str(folder / "config.toml"), {"core.fetch_policy": "icount"})
    one = sampling.replay(folder, workers=1, config=icount)
    two = sampling.replay(folder, workers=2, config=icount)
    assert without_host(one) == without_host(two)
    assert one["config"]["core"]["fetch_policy"] == "icount"


def test_a_failed_task_names_its_windows(snapshots, tmp_path):
    folder, serial, _ = snapshots
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in folder.iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    last = serial["sampling"]["windows"] - 1
    (broken / f"window-{last:06}.snap").unlink()
    with pytest.raises(smtlab.Error, match=rf"^windows {(last + 1) // 2}-{last}: .*window-{last:06}\.snap: cannot open"):
        sampling.replay(broken, workers=2)


def test_bad_arguments_are_named(snapshots):
    folder, serial, _ = snapshots
    with pytest.raises(smtlab.UsageError, match="workers must be an integer of at least 1"):
        sampling.replay(folder, workers=0)
    with pytest.raises(smtlab.UsageError, match="not among them"):
        sampling.replay(folder, windows=serial["sampling"]["windows"])
    with pytest.raises(smtlab.UsageError, match="'A-B'"):
        sampling.replay(folder, windows="x-y")
    with pytest.raises(smtlab.Error, match="no snapshot manifest"):
        sampling.replay(folder / "nowhere", workers=2)


def _kill_self(folder, config, first, last):
    os._exit(3)


def test_a_lost_worker_names_its_windows(snapshots, monkeypatch):
    folder, _, _ = snapshots
    monkeypatch.setattr(sampling, "_simulate_range", _kill_self)
    with pytest.raises(smtlab.Error, match=r"^windows 0-\d+: the worker simulating them was lost \(BrokenProcessPool"):
        sampling.replay(folder, workers=2)


def test_dask_gives_the_same_result(snapshots, monkeypatch):
    distributed = pytest.importorskip("distributed")
    folder, serial, _ = snapshots
    # worker processes import the same smtlab as this process
    package_parent = str(Path(smtlab.__file__).absolute().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")]))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as lc, distributed.Client(lc) as client:
        on_client = sampling.replay(folder, executor=client)
        by_address = sampling.replay(folder, workers=3, scheduler=lc.scheduler_address)
    assert without_host(on_client) == without_host(serial)
    assert without_host(by_address) == without_host(serial)
