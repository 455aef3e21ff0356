"""smtlab.sweep on bad input: every wrong sweep file is one message naming the file and the key,
found by `--dry-run` as well as by a run, before anything is simulated or written; nothing is silently dropped, a
sweep of no runs is never a success, and no input makes the command print a traceback or start thousands of
processes. Expected messages are read from what the rule says (the key, the file, the value), not copied from the
code's output."""

from __future__ import annotations

import concurrent.futures as cf
import os
import subprocess
import sys
from pathlib import Path

import pytest

import smtlab
from smtlab.sweep import Sweep, SweepError, Workload, expand_points, load_sweep_file, run_sweep
from smtlab.sweep.__main__ import main as sweep_main
from smtlab.sweep.execute import WORKERS_PER_CPU, host_cpus
from smtlab.sweep.scenarios import cpu_bound

PYTHON_DIR = str(Path(smtlab.__file__).resolve().parent.parent)
N = 5_000
HEADER = f'config = "netburst"\nmax_instructions = {N}\n'
ALU = '[workloads]\na = ["gen:alu"]\n'


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    f = tmp_path / name
    if isinstance(text, bytes):
        f.write_bytes(text)
    else:
        f.write_text(text)
    return f


def one_error(capsys: pytest.CaptureFixture[str]) -> str:
    """The command's stderr, checked to be one error line and no traceback; stdout must not claim success."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "OK" not in captured.out, captured
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("smtlab sweep: error: "), captured.err
    return lines[0]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`smtlab sweep ARGS` through the built program when SMTLAB_CLI names it, else `python -m smtlab.sweep`."""
    program = os.environ.get("SMTLAB_CLI")
    cmd = [program, "sweep", *args] if program else [sys.executable, "-m", "smtlab.sweep", *args]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


# --- 1. a key set by [axes] and by [[points]]: the point's value would never run ------------------------------------
def test_a_key_in_both_axes_and_points_is_an_error_naming_the_key_and_the_file(tmp_path, capsys):
    f = write(tmp_path, "conflict.toml", HEADER + '[axes]\n"core.rob.entries" = [64]\n'
              '[[points]]\n"core.rob.entries" = 32\n' + ALU)
    with pytest.raises(SweepError, match=r"conflict\.toml: .*'core\.rob\.entries'.*points\[0\]"):
        load_sweep_file(f)
    assert sweep_main([str(f), "--dry-run"]) == 1
    line = one_error(capsys)
    assert "conflict.toml" in line and "core.rob.entries" in line
    # the same in Python; a point key that is not an axis is still crossed with the grid
    with pytest.raises(SweepError, match="core.rob.entries"):
        expand_points({"core.rob.entries": [64]}, points=[{"core.rob.entries": 32}])
    assert expand_points({"core.fetch_policy": ["icount"]}, points=[{"core.rob.entries": 32}]) == [
        {"core.rob.entries": 32, "core.fetch_policy": "icount"}]


def test_a_key_given_quoted_and_dotted_is_an_error_not_a_dropped_value(tmp_path, capsys):
    # TOML keeps "core.rob.entries" (one quoted key) and core.rob.entries (nested tables) apart; both name one config
    # key, so one of the two value lists would be dropped
    f = write(tmp_path, "twice.toml", HEADER + '[axes]\n"core.rob.entries" = [64]\ncore.rob.entries = [32]\n' + ALU)
    assert sweep_main([str(f), "--dry-run"]) == 1
    line = one_error(capsys)
    assert "twice.toml" in line and "core.rob.entries" in line


# --- 2. seeds = []: no runs is an error, never "OK" or an empty results file -----------------------------------------
def test_empty_seeds_is_one_error_for_dry_run_and_run_and_writes_nothing(tmp_path, capsys):
    f = write(tmp_path, "noseeds.toml", HEADER + "seeds = []\n" + ALU)
    assert sweep_main([str(f), "--dry-run"]) == 1
    line = one_error(capsys)
    assert "noseeds.toml" in line and "seeds" in line
    out = tmp_path / "out"
    assert sweep_main([str(f), "-o", str(out), "-q"]) == 1
    line = one_error(capsys)
    assert "noseeds.toml" in line and "seeds" in line
    assert not out.exists()  # no empty results file presented as a result
    with pytest.raises(SweepError, match="seeds"):
        Sweep("netburst", workloads=[("gen:alu",)], seeds=[], max_instructions=N)


def test_a_repeated_seed_is_refused(tmp_path, capsys):
    # A seed gives the same statistics every time: seeds = [1, 1] would count one run twice as two samples.
    f = write(tmp_path, "twice.toml", HEADER + "seeds = [1, 2, 1]\n" + ALU)
    assert sweep_main([str(f), "--dry-run"]) == 1
    line = one_error(capsys)
    assert "twice.toml" in line and "seeds" in line and "1 given more than once" in line


def test_a_device_given_as_the_sweep_file_is_read_only_so_far(capsys):
    # /dev/zero never ends: read without a bound it would fill memory. A sweep file is far below the bound.
    assert sweep_main(["/dev/zero", "--dry-run"]) == 1
    line = one_error(capsys)
    assert "/dev/zero" in line and "larger than" in line


# --- 3. --workers: never more processes than runs; far beyond the host's CPUs is refused ------------------------------
def test_workers_far_beyond_the_cpus_are_refused_before_anything_starts(tmp_path, capsys):
    f = write(tmp_path, "ok.toml", HEADER + ALU)
    too_many = WORKERS_PER_CPU * host_cpus() + 1
    for bad in (str(too_many), "100000", "0", "-1"):
        with pytest.raises(SystemExit) as info:
            sweep_main([str(f), "-o", str(tmp_path / "out"), "--workers", bad, "-q"])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert "--workers" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(SweepError, match="workers"):
        run_sweep(Sweep("netburst", workloads=[("gen:alu",)], max_instructions=N), tmp_path / "api",
                  workers=too_many, progress=False)
    assert not (tmp_path / "api").exists()
    # the documented limit itself is allowed
    assert sweep_main([str(f), "--workers", str(WORKERS_PER_CPU * host_cpus()), "--dry-run"]) == 0


def test_the_pool_never_has_more_workers_than_runs(tmp_path, monkeypatch):
    sizes: list[int] = []

    def recording_pool(max_workers: int, **options: object) -> cf.Executor:
        sizes.append(max_workers)
        return cf.ThreadPoolExecutor(max_workers)

    monkeypatch.setattr(cf, "ProcessPoolExecutor", recording_pool)
    one_run = Sweep("netburst", workloads=[("gen:alu",)], max_instructions=N, baseline="none")
    res = run_sweep(one_run, None, workers=WORKERS_PER_CPU * host_cpus(), progress=False)
    assert (res.table["status"] == "ok").all()
    assert sizes == [1]  # one run to do: one worker, whatever --workers said
    sizes.clear()
    run_sweep(one_run, None, progress=False)  # the default (all CPUs) is capped the same way
    assert sizes == [1]


# --- 4. unreadable files: one line naming the file, exit 1 -----------------------------------------------------------
@pytest.mark.parametrize("case", ["deep_array", "deep_inline_table", "not_utf8", "directory", "deep_dotted_key"])
def test_an_unreadable_sweep_file_is_one_line_naming_it(tmp_path, capsys, case):
    if case == "deep_array":
        f = write(tmp_path, "deep.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    elif case == "deep_inline_table":
        f = write(tmp_path, "deep.toml", "x = " + "{a=" * 10_000 + "1" + "}" * 10_000 + "\n")
    elif case == "not_utf8":
        f = write(tmp_path, "latin1.toml", HEADER.encode() + b'name = "caf\xe9"\n' + ALU.encode())
    elif case == "directory":
        f = tmp_path / "folder.toml"
        f.mkdir()
    else:  # tables nested 5000 deep through a dotted key: an unknown config key, not a RecursionError
        f = write(tmp_path, "dotted.toml", HEADER + "[axes]\n" + ".".join(["a"] * 5000) + " = [1]\n" + ALU)
    assert sweep_main([str(f), "--dry-run"]) == 1
    assert f.name in one_error(capsys)


def test_the_built_program_names_a_directory_given_as_the_sweep_file(tmp_path):
    r = cli(".", "--dry-run", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines() == [r.stderr.strip()] and "'.'" in r.stderr


# --- 5. what every run would fail on is found by the validation ------------------------------------------------------
SCENARIO = HEADER + '[[scenarios]]\nname = "x"\nfunction = "smtlab.sweep.scenarios:cpu_bound"\nparams = {{ {} }}\n'


@pytest.mark.parametrize("params, key", [
    ('scheduler = "nope", tasks = 4', "scheduler"),
    ('scheduler = "linux24", tasks = -4', "tasks"),
    ('scheduler = "linux24", tasks = 0', "tasks"),
    ('scheduler = "linux24", taks = 2', "taks"),  # a misspelt parameter name
    ('scheduler = "linux24", scheduler_params = { cache_hot_msec = 1.0 }', "cache_hot_msec"),
    ('source = "gen:nosuch"', "source"),
])
def test_bad_scenario_parameters_fail_validation_naming_the_parameter(tmp_path, capsys, params, key):
    f = write(tmp_path, "scen.toml", SCENARIO.format(params))
    out = tmp_path / "out"
    for args in (["--dry-run"], ["-o", str(out), "-q"]):
        assert sweep_main([str(f), *args]) == 1
        line = one_error(capsys)
        assert "scen.toml" in line and key in line
    assert not out.exists()  # refused before any run


def test_good_scenario_parameters_still_validate(tmp_path):
    f = write(tmp_path, "scen.toml", SCENARIO.format(
        'scheduler = "linux24", tasks = 3, scheduler_params = { cache_hot_ms = 1.0 }'))
    sw, _ = load_sweep_file(f)
    assert sw.validate() == 1


def test_a_scenario_run_with_a_bad_parameter_says_which(tmp_path):
    # called directly (no sweep validation in front): the failure names the parameter, not max() of an empty list
    cfg = smtlab.load_config("netburst")
    with pytest.raises(ValueError, match="tasks"):
        cpu_bound(cfg, max_instructions=N, scheduler="linux24", tasks=-4)
    with pytest.raises(ValueError, match="scheduler"):
        cpu_bound(cfg, max_instructions=N, scheduler="nope")


def test_a_python_scenario_with_a_parameter_it_does_not_take_fails_validation():
    sw = Sweep("netburst", workloads=[Workload("w", scenario="smtlab.sweep.scenarios:cpu_bound",
                                               params={"sceduler": "linux24"})], max_instructions=N, baseline="none")
    with pytest.raises(SweepError, match="sceduler"):
        sw.validate()


def test_an_endless_generator_without_max_instructions_fails_validation(tmp_path, capsys):
    f = write(tmp_path, "endless.toml", 'config = "netburst"\nmax_instructions = 0\n[workloads]\n'
              'a = ["gen:alu,count=0"]\n')
    assert sweep_main([str(f), "--dry-run"]) == 1
    line = one_error(capsys)
    assert "endless.toml" in line and "max_instructions" in line and "gen:alu,count=0" in line
    # with an instruction count the same generator is fine, and so is a generator with its own count
    ok = write(tmp_path, "ok.toml", f'config = "netburst"\nmax_instructions = {N}\n[workloads]\n'
               'a = ["gen:alu,count=0"]\nb = ["gen:alu,count=1000"]\n')
    assert sweep_main([str(ok), "--dry-run"]) == 0
    bounded = write(tmp_path, "bounded.toml", 'config = "netburst"\n[workloads]\na = ["gen:alu,count=1000"]\n')
    assert sweep_main([str(bounded), "--dry-run"]) == 0


# --- 6. name: a label and the default folder <name>-results, so one plain file-name component -------------------------
@pytest.mark.parametrize("name", ["../../evil", "a/b", "..", ".", "", "a\\\\b"])
def test_a_name_that_is_not_a_plain_file_name_is_refused(tmp_path, monkeypatch, capsys, name):
    work = tmp_path / "x" / "y"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    f = write(work, "named.toml", f'name = "{name}"\n' + HEADER + ALU)
    assert sweep_main([str(f), "-q"]) == 1
    line = one_error(capsys)
    assert "named.toml" in line and "'name'" in line
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_dir()) == ["x", "y"]  # no results folder anywhere


def test_a_plain_name_names_the_default_result_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    f = write(tmp_path, "named.toml", 'name = "fetch-rob.v2"\nformat = "csv"\n' + HEADER + ALU)
    assert sweep_main([str(f), "-q", "--workers", "1"]) == 0
    assert (tmp_path / "fetch-rob.v2-results" / "results.csv").exists()


# --- 7. the file is named once --------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", ["max_instructions = 1.5", 'warmup = "10"', "baseline = 1", "points = 5"])
def test_a_wrongly_typed_key_names_the_file_once(tmp_path, capsys, line):
    f = write(tmp_path, "typed.toml", 'config = "netburst"\n' + line + "\n" + ALU)
    assert sweep_main([str(f), "--dry-run"]) == 1
    message = one_error(capsys)
    assert message.count("typed.toml") == 1 and line.split(" =")[0] in message


# --- more of the same kind, found on the way ------------------------------------------------------------------------
@pytest.mark.parametrize("text, key", [
    (HEADER + "[[scenarios]]\nfunction = 5\n", "function"),
    (HEADER + '[[scenarios]]\nfunction = "smtlab.sweep.scenarios:cpu_bound"\nparams = 5\n', "params"),
    (HEADER + '[[scenarios]]\nname = 5\nfunction = "smtlab.sweep.scenarios:cpu_bound"\n', "name"),
    (HEADER + "points = [5]\n" + ALU, "points"),
])
def test_wrongly_typed_scenario_and_point_entries_are_one_line(tmp_path, capsys, text, key):
    f = write(tmp_path, "entries.toml", text)
    assert sweep_main([str(f), "--dry-run"]) == 1
    message = one_error(capsys)
    assert "entries.toml" in message and key in message


def test_a_huge_unknown_key_is_not_echoed_whole(tmp_path, capsys):
    f = write(tmp_path, "long.toml", "k" * 100_000 + " = 1\n" + HEADER + ALU)
    assert sweep_main([str(f), "--dry-run"]) == 1
    message = one_error(capsys)
    assert "long.toml" in message and "kkkk" in message and len(message) < 1000


# --- 8. a grid too large to expand: counted first, refused naming the count, the bound can be raised -----------------
HUGE_GRID = HEADER + "[axes]\n" + "".join(
    f'"{key}" = [{", ".join(str(v) for v in range(100))}]\n'
    for key in ("core.rob.entries", "seed", "core.uop_queue.entries", "mem.l1d.latency", "mem.l2.latency")) + ALU


def test_a_grid_of_ten_billion_points_is_refused_at_once_naming_the_count(tmp_path):
    """Five keys of 100 values: 100^5 = 10^10 points x 1 workload x 1 seed. The refusal comes before the grid is
    built, so the command needs neither the time nor the memory of the grid (bounded here to 20 s and 1 GiB)."""
    import resource

    f = write(tmp_path, "huge.toml", HUGE_GRID)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    limit = 2**30
    proc = subprocess.run([sys.executable, "-m", "smtlab.sweep", str(f), "--dry-run"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=20,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert proc.returncode == 1, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "huge.toml" in lines[0] and "10,000,000,000 runs" in lines[0] and "--max-runs" in lines[0], lines[0]


def test_the_run_bound_counts_points_workloads_and_seeds_and_can_be_raised(tmp_path, capsys):
    # 2 x 3 points x 2 workloads x 2 seeds = 24 runs
    text = (HEADER + 'seeds = [1, 2]\n[axes]\n"core.rob.entries" = [32, 64]\n"core.uop_queue.entries" = [8, 12, 16]\n'
            '[workloads]\na = ["gen:alu"]\nb = ["gen:mix"]\n')
    f = write(tmp_path, "small.toml", text)
    assert sweep_main([str(f), "--dry-run", "--max-runs", "23"]) == 1
    line = one_error(capsys)
    assert "24 runs" in line and "bound of 23" in line and "--max-runs" in line, line
    assert sweep_main([str(f), "--dry-run", "--max-runs", "24"]) == 0
    assert "= 24 runs" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        sweep_main([str(f), "--dry-run", "--max-runs", "0"])
    assert exit_info.value.code == 2
    # the same in Python, with the keyword
    axes = {"core.rob.entries": [32, 64], "core.uop_queue.entries": [8, 12, 16]}
    wls = [("gen:alu",), ("gen:mix",)]
    with pytest.raises(SweepError, match=r"24 runs .*bound of 23: .*max_runs="):
        Sweep("netburst", axes=axes, workloads=wls, seeds=[1, 2], max_runs=23)
    assert len(Sweep("netburst", axes=axes, workloads=wls, seeds=[1, 2], max_runs=24).points) == 6
    with pytest.raises(SweepError, match="max_runs must be a positive integer"):
        Sweep("netburst", axes=axes, workloads=wls, max_runs=0)


def test_the_default_run_bound_admits_a_hundred_thousand_runs_and_refuses_one_more():
    """The count is of runs (points x workloads x seeds), taken before the points are built."""
    from smtlab.sweep.spec import MAX_RUNS

    assert MAX_RUNS == 100_000
    with pytest.raises(SweepError, match="100,001 runs"):
        Sweep("netburst", axes={"seed": list(range(100_001))}, workloads=[("gen:alu",)])
    with pytest.raises(SweepError, match=r"100,100 runs \(1,001 points x 5 workloads x 20 seeds\)"):
        Sweep("netburst", axes={"seed": list(range(1001))}, workloads=[(f"gen:alu,count={i + 1}",) for i in range(5)],
              seeds=list(range(20)))
    # explicit points multiply the grid: 1,000 x 100 = 100,000 is admitted
    sw = Sweep("netburst", axes={"core.rob.entries": list(range(1000))}, points=[{"seed": s} for s in range(100)],
               workloads=[("gen:alu",)])
    assert len(sw.points) == 100_000
