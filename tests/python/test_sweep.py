"""smtlab.sweep: expansion and validation, identical results on a process pool and on Dask, resume after a killed
worker, failed runs reported, sweep files and the command line. Tiny runs (20k instructions) keep it fast."""

from __future__ import annotations

import concurrent.futures as cf
import os
from pathlib import Path

import pandas as pd
import pytest

import smtlab
from smtlab.sweep import Sweep, SweepError, Workload, execute_run, expand_points, load_results, load_sweep_file
from smtlab.sweep import run_sweep, seeded_spec
from smtlab.sweep.__main__ import main as sweep_main

ROOT = Path(__file__).resolve().parents[2]
N = 20_000
# Columns that depend on the host (time), not on the simulation.
HOST_COLUMNS = ["host_seconds"]


def small_sweep(**kw) -> Sweep:
    """2 fetch policies x 2 ROB sizes, one thread pair: 4 runs and 8 single-thread baselines."""
    args = dict(
        config="netburst",
        axes={"core.fetch_policy": ["round_robin", "icount"], "core.rob.entries": [64, 126]},
        workloads={"mix_branchy": ("gen:mix", "gen:branchy")},
        max_instructions=N,
        name="small",
    )
    args.update(kw)
    return Sweep(**args)


def comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=HOST_COLUMNS).reset_index(drop=True)


class NoRunExecutor(cf.Executor):
    """An executor that fails the test if anything is submitted."""

    def submit(self, fn, /, *args, **kwargs):  # noqa: D102
        raise AssertionError("a run was submitted")


# --- runners used in worker processes (module level, so they pickle by reference)


def crash_once_runner(spec):
    """Kills its worker process the first time it sees the ROB-64 icount run, then behaves."""
    marker = Path(os.environ["SMTLAB_TEST_CRASH_MARKER"])
    if (spec.kind == "run" and spec.config.get("core.rob.entries") == 64
            and spec.config.get("core.fetch_policy") == "icount" and not marker.exists()):
        marker.touch()
        os._exit(3)
    return execute_run(spec)


def counting_runner(spec):
    """Records which runs were executed (to prove a resume skips finished ones)."""
    with open(os.environ["SMTLAB_TEST_RUN_LOG"], "a") as f:
        f.write(spec.key + "\n")
    return execute_run(spec)


def failing_scenario(config, *, seed=None, max_instructions=0, fail_rob=64):
    """A scenario that fails on one config point, to check that failures are reported, not dropped."""
    if config.get("core.rob.entries") == fail_rob:
        raise RuntimeError(f"deliberate failure at rob {fail_rob}")
    r = smtlab.run_traces(config, ["gen:alu"], max_instructions)
    return {"ipc": [r["logical_cpus"][0]["ipc"]], "cycles": r["cycles"]}


# --- expansion and validation


def test_expand_points_is_the_cross_product_of_axes_times_explicit_points():
    pts = expand_points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert len(pts) == 6 and pts[0] == {"a": 1, "b": "x"} and pts[-1] == {"a": 2, "b": "z"}
    pts = expand_points({"b": [1, 2]}, points=[{"a": 1}, {"a": 2, "c": 0}])
    assert pts == [{"a": 1, "b": 1}, {"a": 1, "b": 2}, {"a": 2, "c": 0, "b": 1}, {"a": 2, "c": 0, "b": 2}]
    assert expand_points([{"a": 1}, {"a": 2}]) == [{"a": 1}, {"a": 2}]  # explicit points given as axes
    assert expand_points({"core": {"rob": {"entries": [1, 2]}}}) == [{"core.rob.entries": 1}, {"core.rob.entries": 2}]
    with pytest.raises(SweepError, match="axis 'a'"):
        expand_points({"a": 5})


def test_seed_goes_into_generator_specs_that_name_none():
    assert seeded_spec("gen:mix", 7) == "gen:mix,seed=7"
    assert seeded_spec("gen:mix,seed=2", 7) == "gen:mix,seed=2"
    assert seeded_spec("trace.smt", 7) == "trace.smt"
    assert seeded_spec("gen:alu", None) == "gen:alu"


def test_run_keys_depend_on_config_workload_and_seed_only():
    runs, baselines = small_sweep(seeds=[1, 2]).expand()
    assert len(runs) == 8 and len({r.spec.key for r in runs}) == 8
    # the same sweep expanded again gives the same keys (pure function of its inputs)
    assert [r.spec.key for r in runs] == [r.spec.key for r in small_sweep(seeds=[1, 2]).expand()[0]]
    # 4 points x 2 seeds x 2 programs, each baseline with core.threads=1
    assert len(baselines) == 16 and all(b.config.get("core.threads") == 1 for b in baselines.values())
    # two override sets that give the same machine share their key (126 is netburst's ROB size)
    a = Sweep("netburst", axes={"core.rob.entries": [126]}, workloads=[("gen:alu",)], max_instructions=N)
    b = Sweep("netburst", workloads=[("gen:alu",)], max_instructions=N)
    assert a.expand()[0][0].spec.key == b.expand()[0][0].spec.key


def test_bad_axis_key_fails_before_any_run_naming_the_key():
    sw = small_sweep(axes={"core.fetch_policy": ["icount"], "core.rob.entires": [64, 126]})
    with pytest.raises(smtlab.ConfigError, match="core.rob.entires"):
        sw.run(None, executor=NoRunExecutor(), progress=False)
    # a bad value in the last point also fails before the first run
    sw = small_sweep(axes={"core.rob.entries": [64, 126, "big"]})
    with pytest.raises(smtlab.ConfigError, match="core.rob.entries"):
        sw.run(None, executor=NoRunExecutor(), progress=False)
    # a bad trace spec and too many traces for the machine, too
    with pytest.raises(SweepError, match="unknown generator"):
        small_sweep(workloads=[("gen:mix", "gen:nosuch")]).run(None, executor=NoRunExecutor(), progress=False)
    with pytest.raises(SweepError, match="3 traces"):
        small_sweep(workloads=[("gen:mix",) * 3]).run(None, executor=NoRunExecutor(), progress=False)


# --- results


def test_table_has_axes_per_thread_ipc_metrics_and_energy(tmp_path):
    res = run_sweep(small_sweep(), tmp_path, workers=2, progress=False)
    df = res.table
    assert len(df) == 4 and (df["status"] == "ok").all(), df[["status", "error"]]
    assert list(df["core.fetch_policy"]) == ["round_robin", "round_robin", "icount", "icount"]
    assert list(df["core.rob.entries"]) == [64, 126, 64, 126]
    for col in ("ipc_t0", "ipc_t1", "ipc_alone_t0", "speedup_t1", "stp", "antt", "hmean_speedup", "energy_j"):
        assert df[col].notna().all(), col
    # the metrics combine the run with its baselines as defined in smtlab.metrics
    r = df.iloc[0]
    s0, s1 = r.ipc_t0 / r.ipc_alone_t0, r.ipc_t1 / r.ipc_alone_t1
    assert r.stp == pytest.approx(s0 + s1) and r.antt == pytest.approx((1 / s0 + 1 / s1) / 2)
    assert r.hmean_speedup == pytest.approx(2 / (1 / s0 + 1 / s1))
    # the baseline is the program alone with core.threads = 1
    alone = smtlab.run_traces(smtlab.load_config("netburst", {"core.threads": 1, "core.rob.entries": 64}),
                              ["gen:mix"], N)
    assert r.ipc_alone_t0 == pytest.approx(alone["logical_cpus"][0]["ipc"])
    # files: the table, the CPI stacks and every effective config, loadable as they were
    assert (tmp_path / "results.parquet").exists() and (tmp_path / "cpi_stacks.parquet").exists()
    written = {p.stem for p in (tmp_path / "configs").glob("*.toml")}
    assert written == set(df["config_key"]) | set(df["baseline_config_key"]) and len(written) == 8
    run0 = smtlab.load_config(str(tmp_path / "configs" / f"{r.config_key}.toml"))
    assert run0.get("core.rob.entries") == 64 and run0.get("core.fetch_policy") == "round_robin"
    assert run0.to_dict() == smtlab.load_config("netburst", {"core.rob.entries": 64}).to_dict()
    pd.testing.assert_frame_equal(comparable(load_results(tmp_path)), comparable(df), check_dtype=False)
    assert set(res.cpi_stacks["component"]) >= {"base", "mem_dram"} and set(res.cpi_stacks["thread"]) == {0, 1}


def test_a_program_alone_on_a_ht_core_has_speedup_one():
    # With one trace on a 2-thread core the sibling halts and the partitions recombine: the program owns the core as
    # with core.threads = 1, so its speedup over the single-thread baseline is exactly 1. The physical register files
    # are left unlimited here: a halted sibling keeps its architectural registers in them (docs/model.md), which a
    # core.threads = 1 baseline does not have, so with the preset's files the lone program has fewer to rename with.
    df = Sweep("netburst", workloads=[("gen:mix",), ("gen:alu",)], max_instructions=N,
               overrides={"core.int_prf.entries": 0, "core.fp_prf.entries": 0}).run(
        None, executor=cf.ThreadPoolExecutor(2), progress=False)
    assert list(df["stp"]) == [1.0, 1.0] and list(df["antt"]) == [1.0, 1.0]


def test_process_pool_and_dask_give_identical_tables(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    # worker processes import the same smtlab as this process
    package_parent = str(Path(smtlab.__file__).absolute().parent.parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")]))
    local = run_sweep(small_sweep(), tmp_path / "pool", workers=2, progress=False).table
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            distributed.Client(lc) as client:
        dask = run_sweep(small_sweep(), tmp_path / "dask", executor=client, progress=False).table
        # a scheduler address works as well (the client is opened and closed by the sweep); all runs are cached now
        again = run_sweep(small_sweep(), tmp_path / "dask", scheduler=lc.scheduler_address, progress=False).table
    assert (local["status"] == "ok").all()
    pd.testing.assert_frame_equal(comparable(local), comparable(dask))
    pd.testing.assert_frame_equal(comparable(dask), comparable(again))


def test_resume_after_a_killed_worker_loses_no_run(tmp_path, monkeypatch):
    monkeypatch.setenv("SMTLAB_TEST_CRASH_MARKER", str(tmp_path / "crashed"))
    monkeypatch.setenv("SMTLAB_TEST_RUN_LOG", str(tmp_path / "runs.log"))
    out = tmp_path / "out"
    first = run_sweep(small_sweep(), out, workers=2, progress=False, runner=crash_once_runner).table
    assert (tmp_path / "crashed").exists()
    lost = first[first["status"] != "ok"]
    assert len(lost) >= 1 and lost["error"].str.contains("worker lost").all()  # reported, not dropped
    assert len(first) == 4
    stored_ok = {p.stem for p in (out / "runs").glob("*.json")
                 if '"status": "ok"' in p.read_text()}
    resumed = run_sweep(small_sweep(), out, workers=2, progress=False, runner=counting_runner).table
    executed = set((tmp_path / "runs.log").read_text().split())
    assert executed and executed.isdisjoint(stored_ok)  # finished runs were not run again
    clean = run_sweep(small_sweep(), None, workers=2, progress=False).table
    assert (resumed["status"] == "ok").all()
    pd.testing.assert_frame_equal(comparable(resumed), comparable(clean))


def test_failed_runs_are_reported_with_their_error(tmp_path):
    sw = Sweep("netburst", axes={"core.rob.entries": [64, 126]},
               workloads=[Workload("flaky", scenario=failing_scenario)], max_instructions=N, baseline="none")
    df = sw.run(tmp_path, executor=cf.ThreadPoolExecutor(2), progress=False)
    assert list(df["status"]) == ["failed", "ok"]
    assert "RuntimeError: deliberate failure at rob 64" in df["error"].iloc[0]
    assert df["ipc_t0"].iloc[1] > 0 and pd.isna(df["ipc_t0"].iloc[0])
    stored = [p.read_text() for p in (tmp_path / "runs").glob("*.json")]
    assert sum("deliberate failure" in s for s in stored) == 1  # the failure is in the store too


def test_os_scenario_by_name(tmp_path):
    sw = Sweep("netburst", axes={"core.threads": [1, 2]}, overrides={"system.cores": 1},
               workloads=[Workload("two", scenario="smtlab.sweep.scenarios:cpu_bound",
                                   params={"scheduler": "linux25ht", "tasks": 2})],
               max_instructions=N, baseline="none")
    df = sw.run(None, executor=cf.ThreadPoolExecutor(2), progress=False)
    assert (df["status"] == "ok").all(), df["error"].tolist()
    assert (df["makespan_cycles"] > 0).all() and df["ipc_t1"].notna().all()
    # one logical CPU runs the two tasks one after another in slices; two hardware threads overlap them
    one, two = df["makespan_cycles"]
    assert two < one


# --- sweep files and the command line


SWEEP_TOML = """
name = "tiny"
config = "netburst"
max_instructions = 20_000
seeds = [3]
format = "csv"
output = "results"

[set]
"core.iq.cap" = 0.5

[axes]
core.fetch_policy = ["round_robin", "icount"]

[workloads]
pair = ["gen:alu", "gen:branchy"]
"""


def test_sweep_file_and_command_line(tmp_path, capsys):
    f = tmp_path / "tiny.toml"
    f.write_text(SWEEP_TOML)
    sw, opts = load_sweep_file(f)
    assert sw.points == [{"core.fetch_policy": "round_robin"}, {"core.fetch_policy": "icount"}]
    assert sw.overrides == {"core.iq.cap": 0.5} and sw.seeds == [3] and opts["format"] == "csv"
    assert sw.expand()[0][0].spec.traces == ("gen:alu,seed=3", "gen:branchy,seed=3")
    assert sweep_main([str(f), "--workers", "1", "-q"]) == 0
    df = load_results(tmp_path / "results")
    assert len(df) == 2 and (df["status"] == "ok").all() and (df["seed"] == 3).all()
    assert "2 runs, 2 ok, 0 failed" in capsys.readouterr().out
    assert sweep_main([str(f), "--dry-run"]) == 0


def test_sweep_file_errors_name_the_key(tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text(SWEEP_TOML.replace("seeds = [3]", "seedz = [3]"))
    with pytest.raises(SweepError, match="unknown key 'seedz'"):
        load_sweep_file(f)
    f.write_text(SWEEP_TOML.replace("core.fetch_policy", "core.fetch_polcy"))
    assert sweep_main([str(f), "-q"]) == 1
    assert "core.fetch_polcy" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()  # nothing ran


def test_examples_validate():
    for f in sorted((ROOT / "examples" / "sweeps").glob("*.toml")):
        sw, _ = load_sweep_file(f)
        assert sw.validate() > 0, f
