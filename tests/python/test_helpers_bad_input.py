"""Bad input to the Python helpers (smtlab.fileio, smtlab.metrics, smtlab.plot, bench/bench.py, bench/ht_gain.py): each
case is refused with one clear error naming the file, argument or value, before harm is done, and never answered
with a wrong number or a raw traceback.

The "not a regular file" cases use a FIFO made here with os.mkfifo in tmp_path, never a device file.
"""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from smtlab import fileio, metrics, plot  # noqa: E402

from bench_scripts import BENCH  # noqa: E402
from bench_scripts import load as load_bench_script  # noqa: E402




bench = load_bench_script("bench")
ht = load_bench_script("ht_gain")


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _fifo(tmp_path: Path, name: str = "pipe") -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


# --- smtlab.fileio ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("write", [
    lambda p: fileio.write_text(p, "x"),
    lambda p: fileio.write_bytes(p, b"x"),
    lambda p: fileio.write_json(p, {"a": 1}),
    lambda p: fileio.check_output_path(p),
])
def test_fileio_refuses_to_replace_a_fifo(tmp_path, write):
    fifo = _fifo(tmp_path)
    with pytest.raises(ValueError, match=r"'.*pipe': it is not a regular file \(a device, FIFO or socket\)"):
        write(fifo)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still the FIFO, not a regular file put in its place
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]  # no temporary left


def test_fileio_refuses_a_target_that_became_a_fifo_during_the_run(tmp_path):
    target = tmp_path / "late"
    with pytest.raises(ValueError, match="not a regular file"):
        with fileio.atomic_path(target) as tmp:
            tmp.write_text("result")
            os.mkfifo(target)
    assert stat.S_ISFIFO(target.lstat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["late"]


def test_fileio_keeps_the_permission_bits_of_the_file_it_replaces(tmp_path):
    target = tmp_path / "secret.json"
    target.write_text("{}")
    target.chmod(0o600)
    fileio.write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    target.chmod(0o640)
    fileio.write_text(target, "x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_fileio_writes_a_name_at_the_length_limit_and_refuses_a_longer_one_by_name(tmp_path):
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    longest = tmp_path / ("a" * limit)
    fileio.write_text(longest, "whole\n")  # the temporary name must fit too
    assert longest.read_text() == "whole\n"
    assert [p.name for p in tmp_path.iterdir()] == [longest.name]
    too_long = tmp_path / ("b" * (limit + 1))
    with pytest.raises(ValueError, match=rf"'{too_long}': the file name is {limit + 1} bytes long, over .* {limit}"):
        fileio.write_text(too_long, "x")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_write_json_refuses_nan_and_infinity_naming_the_file_and_key(tmp_path, value):
    target = tmp_path / "checks.json"
    with pytest.raises(ValueError, match=r"'.*checks\.json'.*\(at fidelity\.rows\[1\]\); JSON has no NaN"):
        fileio.write_json(target, {"fidelity": {"rows": [1.0, value]}})
    assert not target.exists()
    fileio.write_json(target, [value], allow_nan=True)  # a caller that asks for it still gets it
    assert target.exists()


# --- smtlab.metrics -----------------------------------------------------------------------------------------------

FUNCTIONS = [metrics.speedups, metrics.weighted_speedup, metrics.antt, metrics.hmean_speedup, metrics.fairness]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_metrics_refuse_non_finite_values_naming_the_program_and_argument(fn, bad):
    with pytest.raises(ValueError, match=r"program 1 has a non-finite shared value"):
        fn([1.0, bad], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"program 0 has a non-finite alone value"):
        fn([1.0], [bad])


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_metrics_refuse_speedups_that_underflow_or_overflow(fn):
    # 1e-320 / 1e308 is 0 in floating point (a speedup of "nothing"), 1e308 / 1e-10 is infinity: neither is the
    # answer, and antt / hmean_speedup of the first would divide by zero.
    with pytest.raises(ValueError, match=r"program 0's speedup \(shared / alone = 1e-320 / 1e\+308\) is 0\.0"):
        fn([1e-320], [1e308])
    with pytest.raises(ValueError, match=r"program 0's speedup .* is inf"):
        fn([1e308], [1e-10])


def test_metrics_refuse_aggregates_that_overflow():
    # Each speedup is finite (1e308), their sum is not.
    with pytest.raises(ValueError, match="weighted speedup is inf"):
        metrics.weighted_speedup([1e308, 1e308], [1.0, 1.0])
    # Each slowdown 1 / 1e-300 ... is finite, but 1e-300 / 1e10 = 1e-310: its inverse overflows.
    with pytest.raises(ValueError, match="ANTT is inf"):
        metrics.antt([1e-300], [1e10])


def test_metrics_accept_numpy_arrays_pandas_series_and_tuples():
    # IPCs 2.0 and 0.5 shared, 2.0 and 1.0 alone: speedups 1.0 and 0.5 (test_metrics.py worked them out).
    shared, alone = np.array([2.0, 0.5]), pd.Series([2.0, 1.0])
    assert metrics.speedups(shared, alone) == [1.0, 0.5]
    assert metrics.weighted_speedup(shared, alone) == pytest.approx(1.5)
    assert metrics.antt(tuple(shared), alone.to_numpy()) == pytest.approx(1.5)
    assert metrics.hmean_speedup(pd.Series([2.0, 0.5]), [2, 1]) == pytest.approx(2 / 3)
    assert metrics.fairness(np.array([150, 150]), np.array([100, 100]), times=True) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no programs"):
        metrics.weighted_speedup(np.array([]), np.array([]))
    with pytest.raises(ValueError, match=r"program 1 has a non-finite shared value \(nan\)"):
        metrics.weighted_speedup(np.array([1.0, np.nan]), np.array([1.0, 1.0]))


def test_metrics_refuse_what_is_not_a_number():
    with pytest.raises(TypeError, match=r"program 0 has a shared value that is not a number: 'fast'"):
        metrics.weighted_speedup(["fast"], [1.0])
    with pytest.raises(TypeError, match="alone must be a sequence of numbers"):
        metrics.antt([1.0], 1.0)


# --- smtlab.plot --------------------------------------------------------------------------------------------------

COLS = ["core.fetch_policy", "core.rob.entries", "workload", "stp", "status"]


def _table(values, status="ok"):
    return pd.DataFrame([{"core.fetch_policy": p, "core.rob.entries": r, "workload": "a", "stp": v, "status": status}
                         for (p, r), v in zip([("icount", 64), ("icount", 126), ("rr", 64), ("rr", 126)], values)],
                        columns=COLS)


EMPTY_TABLES = {
    "no rows": (pd.DataFrame(columns=COLS), "the table has no rows"),
    "all failed": (_table([None] * 4, status="failed"), "4 runs, all failed or NaN"),
    "all NaN": (_table([math.nan] * 4), "4 runs, all failed or NaN"),
}


@pytest.mark.parametrize("case", list(EMPTY_TABLES))
def test_plots_of_a_table_with_nothing_to_draw_say_so(case):
    df, why = EMPTY_TABLES[case]
    with pytest.raises(ValueError, match=rf"heatmap: no rows with a value of 'stp' to plot \({why}\)"):
        plot.heatmap(df, "stp", "core.fetch_policy", "core.rob.entries")
    with pytest.raises(ValueError, match=rf"metric_vs_axis: no rows with a value of 'stp' to plot \({why}\)"):
        plot.metric_vs_axis(df, "stp", "core.rob.entries", by="core.fetch_policy")


@pytest.mark.parametrize("rows, why", [
    ([], r"no rows with a value of 'cpi' to plot \(the table has no rows\)"),
    ([math.nan, math.nan], r"no rows with a value of 'cpi' to plot \(2 rows, all failed or NaN\)"),
    ([0.0, 0.0], r"every CPI value is zero \(2 rows\)"),
])
def test_cpi_stacks_with_nothing_to_stack_says_so(rows, why):
    cpi = pd.DataFrame([{"run": 0, "thread": t, "component": "base", "cpi": v} for t, v in enumerate(rows)],
                       columns=["run", "thread", "component", "cpi"])
    with pytest.raises(ValueError, match="cpi_stacks: " + why):
        plot.cpi_stacks(cpi)


def test_gmean_of_values_that_are_not_positive_is_refused_and_of_positive_ones_is_the_geometric_mean():
    for bad in (0.0, -1.0):
        df = _table([1.0, 2.0, bad, 4.0])
        for draw in (lambda: plot.metric_vs_axis(df, "stp", "core.rob.entries", agg="gmean"),
                     lambda: plot.heatmap(df, "stp", "core.fetch_policy", "core.rob.entries", agg="gmean")):
            with pytest.raises(ValueError, match=rf"agg='gmean' needs positive values of 'stp', but 1 row\(s\) are "
                                                 rf"zero or negative \(e\.g\. {bad}\)"):
                draw()
    # Positive values: at 64 entries icount 1.0 and rr 4.0 give sqrt(1 * 4) = 2; at 126, 2.0 and 8.0 give 4.
    fig = plot.metric_vs_axis(_table([1.0, 2.0, 4.0, 8.0]), "stp", "core.rob.entries", agg="gmean")
    assert list(fig.axes[0].get_lines()[0].get_ydata()) == pytest.approx([2.0, 4.0])
    grid = plot.heatmap(_table([1.0, 2.0, 4.0, 8.0]), "stp", "core.rob.entries", "workload",
                        agg="gmean").axes[0].get_images()[0].get_array()
    assert list(grid[0]) == pytest.approx([2.0, 4.0])


def test_an_unknown_agg_is_named():
    df = _table([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"metric_vs_axis: unknown agg 'bogus' \(known: .*gmean.*mean"):
        plot.metric_vs_axis(df, "stp", "core.rob.entries", agg="bogus")
    with pytest.raises(ValueError, match=r"heatmap: unknown agg 'bogus'"):
        plot.heatmap(df, "stp", "core.fetch_policy", "core.rob.entries", agg="bogus")


@pytest.mark.parametrize("draw, message", [
    (lambda df: plot.metric_vs_axis(df, "stp", "stp"), "metric_vs_axis: metric and axis are the same column 'stp'"),
    (lambda df: plot.metric_vs_axis(df, "stp", "core.rob.entries", by="core.rob.entries"),
     "metric_vs_axis: axis and by are the same column 'core.rob.entries'"),
    (lambda df: plot.metric_vs_axis(df, "stp", "core.rob.entries", by="stp"),
     "metric_vs_axis: metric and by are the same column 'stp'"),
    (lambda df: plot.heatmap(df, "stp", "workload", "workload"), "heatmap: x and y are the same column 'workload'"),
    (lambda df: plot.heatmap(df, "stp", "stp", "workload"), "heatmap: metric and x are the same column 'stp'"),
])
def test_two_arguments_naming_one_column_are_refused(draw, message):
    with pytest.raises(ValueError, match=message):
        draw(_table([1.0, 2.0, 3.0, 4.0]))


def test_cpi_stacks_labels_must_be_distinct_other_columns():
    cpi = pd.DataFrame([{"run": 0, "thread": 0, "component": "base", "cpi": 1.0}])
    for label in (["run", "run"], ["component"], "cpi", []):
        with pytest.raises(ValueError, match="cpi_stacks: label must name distinct columns"):
            plot.cpi_stacks(cpi, label=label)


@pytest.mark.parametrize("not_a_frame", [None, [{"stp": 1.0}], {"stp": [1.0]}])
def test_plots_of_something_that_is_not_a_dataframe_are_a_type_error(not_a_frame):
    kind = type(not_a_frame).__name__
    with pytest.raises(TypeError, match=f"metric_vs_axis: df must be a pandas DataFrame, not {kind}"):
        plot.metric_vs_axis(not_a_frame, "stp", "core.rob.entries")
    with pytest.raises(TypeError, match=f"heatmap: df must be a pandas DataFrame, not {kind}"):
        plot.heatmap(not_a_frame, "stp", "a", "b")
    with pytest.raises(TypeError, match=f"cpi_stacks: cpi must be a pandas DataFrame, not {kind}"):
        plot.cpi_stacks(not_a_frame)


# --- bench/bench.py and bench/ht_gain.py --------------------------------------------------------------------------


def _fake_smtlab(tmp_path: Path, *, sleep: float = 0.0, then_fifo: Path | None = None, log: Path | None = None) -> Path:
    """A stand-in for `smtlab run ... --json PATH`: 1000 instructions in 2000 cycles on every logical CPU. It may log
    its arguments, sleep first (marking that it started), or turn `then_fifo` into a FIFO (a destination that changes
    while the bench runs)."""
    exe = tmp_path / "fake-smtlab"
    exe.write_text(f"""#!{sys.executable}
import json, os, sys, time
args = sys.argv[1:]
if {str(log) if log else ''!r}:
    with open({str(log) if log else ''!r}, "a") as out:
        out.write(" ".join(args) + "\\n")
if {sleep!r}:
    open({str(tmp_path / "started")!r}, "w").close()
    time.sleep({sleep!r})
fifo = {str(then_fifo) if then_fifo else ''!r}
if fifo and not os.path.exists(fifo):
    os.mkfifo(fifo)
n = max(2, sum(a.startswith("gen:") for a in args))
with open(args[args.index("--json") + 1], "w") as out:
    json.dump({{"host_seconds": 1.0, "instructions": 1000 * n, "cycles": 2000,
               "logical_cpus": [{{"instructions": 1000, "cycles": 2000}}] * n}}, out)
""")
    exe.chmod(0o755)
    return exe


def test_bench_write_atomically_refuses_a_fifo_and_keeps_permission_bits(tmp_path):
    fifo = _fifo(tmp_path)
    with pytest.raises(bench.BenchError, match=r"cannot write output '.*pipe': it is not a regular file"):
        bench.write_atomically(fifo, "x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o600)
    bench.write_atomically(kept, "[]\n")
    assert kept.read_text() == "[]\n" and stat.S_IMODE(kept.stat().st_mode) == 0o600
    new = tmp_path / "new" / "results.json"
    bench.write_atomically(new, "[]\n")  # a new file: the mode of any new file, not mkstemp's 0600
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~_umask()
    longest = tmp_path / ("r" * 255)
    bench.write_atomically(longest, "x")
    assert longest.read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["pipe", "kept.json", "new", longest.name])


def test_bench_writes_through_a_symbolic_link_as_every_smtlab_output_does(tmp_path):
    """bench.py writes with smtlab.fileio (loaded by path), so a --json that is a link is written where it points and
    the link stays, as smtlab's own outputs do (src/common/output_file.cpp). Its own copy of the writer replaced the
    link with a regular file and left the linked file as it was."""
    real = tmp_path / "results" / "bench.json"
    real.parent.mkdir()
    real.write_text("old\n")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    bench.write_atomically(link, "[]\n")
    assert link.is_symlink() and real.read_text() == "[]\n"
    assert sorted(p.name for p in real.parent.iterdir()) == ["bench.json"]


@pytest.mark.parametrize("script", ["bench", "ht_gain"])
@pytest.mark.parametrize("make, reason", [
    (lambda d: d, "it is a directory"),
    (lambda d: _fifo(d), "it is not a regular file"),
    (lambda d: (d / "file").write_text("") or d / "file" / "out.json", "is not a directory"),
])
def test_a_bad_json_destination_is_refused_before_anything_runs(tmp_path, capsys, script, make, reason):
    log = tmp_path / "runs.log"
    exe = _fake_smtlab(tmp_path, log=log)
    dest = make(tmp_path)
    main = bench.main if script == "bench" else ht.main
    assert main([str(exe), "--no-programs", "--only", "mix", "-n", "1k", "--json", str(dest)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write --json '{dest}'" in err and reason in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not log.exists()  # nothing ran


def test_a_read_only_json_folder_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    log = tmp_path / "runs.log"
    exe = _fake_smtlab(tmp_path, log=log)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    if os.geteuid() == 0:
        # root may write into a folder of mode 0500, so os.access says yes to it; the check asks os.access, and is
        # given the answer an unprivileged user gets for this folder
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == folder and mode & os.W_OK
                            else real_access(p, mode, **kw))
    try:
        assert bench.main([str(exe), "--no-programs", "--only", "mix", "--json", str(folder / "r.json")]) == 2
    finally:
        folder.chmod(0o700)
    assert "is not writable" in capsys.readouterr().err
    assert not log.exists()


def test_bench_csv_destination_is_checked_before_running_too(tmp_path, capsys):
    log = tmp_path / "runs.log"
    exe = _fake_smtlab(tmp_path, log=log)
    assert bench.main([str(exe), "--no-programs", "--only", "mix", "--json", str(tmp_path / "r.json"),
                       "--csv", str(tmp_path)]) == 2
    assert f"cannot write --csv '{tmp_path}': it is a directory" in capsys.readouterr().err
    assert not log.exists()


@pytest.mark.parametrize("script", ["bench", "ht_gain"])
def test_a_destination_spoilt_during_the_run_is_one_message_not_a_traceback(tmp_path, capsys, script):
    dest = tmp_path / "out.json"
    exe = _fake_smtlab(tmp_path, then_fifo=dest)  # the first run makes the destination a FIFO
    main = bench.main if script == "bench" else ht.main
    assert main([str(exe), "--no-programs", "--only", "mix", "-n", "1k", "-c", "netburst", "--json", str(dest)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"{script}: cannot write --json '{dest}': it is not a regular file (a device, FIFO or socket)"
    assert stat.S_ISFIFO(dest.lstat().st_mode)


@pytest.mark.parametrize("script", ["bench", "ht_gain"])
def test_only_a_program_with_no_programs_names_the_conflict(tmp_path, capsys, script):
    exe = _fake_smtlab(tmp_path)
    main = bench.main if script == "bench" else ht.main
    with pytest.raises(SystemExit) as exit_:
        main([str(exe), "--only", "gzip", "--no-programs", "--json", str(tmp_path / "r.json")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--only gzip is a real program but --no-programs" in err and "drop one of the two" in err


def test_ht_gain_accepts_a_warmup_of_zero_meaning_none(tmp_path, capsys):
    assert bench.parse_count_or_zero("0") == 0 and bench.parse_count_or_zero("5k") == 5000
    with pytest.raises(Exception, match="not a non-negative count"):
        bench.parse_count_or_zero("-1")
    with pytest.raises(Exception, match="not a positive count"):
        bench.parse_count("0")  # -n 0 is still refused
    log = tmp_path / "runs.log"
    exe = _fake_smtlab(tmp_path, log=log)
    out = tmp_path / "ht.json"
    assert ht.main([str(exe), "--no-programs", "-n", "1k", "-c", "netburst", "--warmup", "0", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["warmup"] == 0
    runs = log.read_text().splitlines()
    assert len(runs) == 3 and not any("--warmup" in r for r in runs)


@pytest.mark.parametrize("script, prefix", [("ht_gain", "smtlab-htgain-"), ("bench", "smtlab-bench-")])
def test_sigterm_removes_the_temporary_folder(tmp_path, script, prefix):
    exe = _fake_smtlab(tmp_path, sleep=60.0)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    proc = subprocess.Popen([sys.executable, str(BENCH / f"{script}.py"), str(exe), "--no-programs", "-n", "1k",
                             "--json", str(tmp_path / "out.json")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert [p.name.startswith(prefix) for p in tmpdir.iterdir()] == [True]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    assert b"Traceback" not in err
    assert list(tmpdir.iterdir()) == []
    assert not (tmp_path / "out.json").exists()
