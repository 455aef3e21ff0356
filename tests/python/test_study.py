"""The reference study in quick mode: the shape checks of issue 5 section 4 that quick mode can show, and the outputs.

One quick run (module-scoped; under a minute on two cores) is shared by every test. Bands the model misses today
are marked xfail with the reason the report gives, so that they turn into XPASS (visible) once the model gets them.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pandas as pd
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("study")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH", ""), str(ROOT / "python")]))
    proc = subprocess.run([sys.executable, "-m", "smtlab.study", "--quick", "-o", str(out), "--workers", "2",
                           "--no-progress"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _table(study: pathlib.Path, key: str) -> pd.DataFrame:
    return pd.read_csv(study / f"{key}.csv")


def test_outputs_exist(study: pathlib.Path) -> None:
    for key in ("lmbench", "aim9", "chat", "dbench", "tbench", "two_package"):
        assert (study / f"{key}.csv").stat().st_size > 0
    md = (study / "study.md").read_text()
    assert "Table 1: LMbench" in md and "Shape checks" in md
    for n, w in ((1, "chat"), (2, "dbench"), (3, "tbench")):
        png = study / f"figure{n}_{w}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    checks = json.loads((study / "checks.json").read_text())["checks"]
    assert "lmbench.single_thread_rows_flat" in checks


def test_published_columns_are_the_published_tables(study: pathlib.Path) -> None:
    lm = _table(study, "lmbench").set_index("kernel function")
    assert lm.loc["Process fork+exit", "pub noht us"] == pytest.approx(190.75)
    assert lm.loc["Process fork+exit", "pub speed-up %"] == pytest.approx(190.75 / 198.84 * 100 - 100)


def test_single_threaded_lmbench_rows_are_flat(study: pathlib.Path) -> None:
    lm = _table(study, "lmbench")
    single = lm[~lm["kernel function"].str.contains("Pipe|Process")]
    assert len(single) == 10
    assert single["model speed-up %"].abs().max() <= 2.0, single[["kernel function", "model speed-up %"]]


def test_single_threaded_aim9_rows_are_flat(study: pathlib.Path) -> None:
    a = _table(study, "aim9")
    cpu = a[~a["test"].isin(["creat-clo", "link_test"])]
    assert len(cpu) >= 20
    assert cpu["model speed-up %"].abs().max() <= 2.0


def test_pipe_latency_slightly_slower_with_ht(study: pathlib.Path) -> None:
    lm = _table(study, "lmbench").set_index("kernel function")
    assert -10.0 <= lm.loc["Pipe latency", "model speed-up %"] < 0.0


@pytest.mark.xfail(reason="the model's fork rows stay within ~1% of HT off (drains and IPIs are a small part of a "
                          "fork; see the report's notes)", strict=False)
def test_fork_rows_slightly_slower_with_ht(study: pathlib.Path) -> None:
    lm = _table(study, "lmbench")
    fork = lm[lm["kernel function"].str.contains("fork")]
    assert ((fork["model speed-up %"] < 0) & (fork["model speed-up %"] >= -10)).all()


def test_multithreaded_workloads_gain_from_ht(study: pathlib.Path) -> None:
    # The part of the band the model reaches: every geomean speed-up is a clear gain.
    for key in ("chat", "dbench", "tbench"):
        t = _table(study, key)
        g = t[t.iloc[:, 1].astype(str) == "geomean"]
        assert (g["model speed-up %"] >= 10.0).all(), (key, g)


@pytest.mark.xfail(reason="the model's synthetic kernel stream leaves a NetBurst core mostly idle with one thread, "
                          "so two threads raise throughput 1.6-1.9x (default-run geomeans +37..+89%); see the report",
                   strict=False)
def test_multithreaded_speedups_within_10_60(study: pathlib.Path) -> None:
    for key in ("chat", "dbench", "tbench"):
        t = _table(study, key)
        g = t[t.iloc[:, 1].astype(str) == "geomean"]
        assert g["model speed-up %"].between(10.0, 60.0).all(), (key, g)


def test_chat_25_at_least_24(study: pathlib.Path) -> None:
    t = _table(study, "chat")
    g = t[t["rooms"].astype(str) == "geomean"].set_index("kernel")
    assert g.loc["2.5.32", "model speed-up %"] >= g.loc["2.4.19", "model speed-up %"]


def test_ht_aware_scheduler_never_worse_on_two_cpu_bound_tasks(study: pathlib.Path) -> None:
    # The case HT-awareness exists for: two CPU-bound tasks on 2 packages x 2 threads. Linux25HT spreads them at fork
    # or by active balancing; Linux24 may leave them on one package's siblings.
    t = _table(study, "two_package")
    pair = t[t["experiment"] == "cpu_pair"]
    assert len(pair) >= 2
    assert (pair["Linux25HT ms"] <= pair["Linux24 ms"] * 1.005).all(), pair
    assert (pair["Linux25HT one-package share"] <= 0.6).all(), pair
    checks = json.loads((study / "checks.json").read_text())["checks"]
    assert checks["two_package.cpu_pair_ht_aware_never_worse"]


@pytest.mark.xfail(reason="make -j2 with I/O waits: 2.5's wake-up looks only at the last CPU and its siblings, so two "
                          "jobs can share one core until the idle package's next rebalance tick, where 2.4's "
                          "reschedule_idle() may draw the other package at once (default run: seeds 0 and 4, -5.5% and "
                          "-4.0%; quick mode's two seeds may not hit it, then this XPASSes); see the report's note",
                   strict=False)
def test_ht_aware_scheduler_never_worse_on_make_j2(study: pathlib.Path) -> None:
    t = _table(study, "two_package")
    make = t[t["experiment"] == "make_j2"]
    assert len(make) >= 2
    assert (make["Linux25HT ms"] <= make["Linux24 ms"] * 1.005).all(), make
