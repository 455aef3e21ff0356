"""The reference study in quick mode: its outputs, the shape checks the model meets for a reason worked out on
paper, and for every check that the report states what the numbers show.

One quick run (module-scoped; about 100 s on two idle cores) is shared by every test. No test asserts that the model
hits a band it misses today: a miss is reported in study.md and checks.json, and the tests check that the report
says so, computed from the CSV the same run wrote. The checks themselves are fed numbers inside and outside their
bands in test_study_checks.py."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

import pandas as pd
import pytest

from smtlab.study import checks as chk
from smtlab.study.fidelity import fidelity

ROOT = pathlib.Path(__file__).resolve().parents[2]
SECTIONS = ("lmbench", "aim9", "chat", "dbench", "tbench", "two_package")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("study")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH", ""), str(ROOT / "python")]))
    # Its own session, so that a timeout kills the study's worker processes too (subprocess.run's timeout kills
    # only the direct child and would leave the pool's workers computing). The bound is generous: quick mode takes
    # about 100 s on an idle 2-core host and was measured at over 10 minutes with many builds running beside it.
    proc = subprocess.Popen([sys.executable, "-m", "smtlab.study", "--quick", "-o", str(out), "--workers", "2",
                             "--no-progress"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=1800)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the quick study did not finish within 30 minutes")
    assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
    return out


def _table(study: pathlib.Path, key: str) -> pd.DataFrame:
    return pd.read_csv(study / f"{key}.csv")


def _report(study: pathlib.Path) -> dict:
    return json.loads((study / "checks.json").read_text())


def test_outputs_exist(study: pathlib.Path) -> None:
    for key in SECTIONS:
        assert (study / f"{key}.csv").stat().st_size > 0
    md = (study / "study.md").read_text()
    assert "Table 1: LMbench" in md and "Shape checks" in md
    for n, w in ((1, "chat"), (2, "dbench"), (3, "tbench")):
        png = study / f"figure{n}_{w}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "lmbench.single_thread_rows_flat" in _report(study)["checks"]
    assert not list(study.glob(".*.tmp"))  # atomic writes leave no temporary behind


def test_fidelity_figure_opens_the_report_and_matches_the_csv(study: pathlib.Path) -> None:
    rep = _report(study)["fidelity"]
    tables = {p.stem: pd.read_csv(p) for p in study.glob("*.csv")}
    again = fidelity(tables)
    assert rep["rows"] == again["rows"] > 20
    assert rep["mad_pp"] == pytest.approx(again["mad_pp"], abs=1e-9)
    head = (study / "study.md").read_text().splitlines()[2]
    assert head.startswith("**Fidelity: ") and f"{rep['mad_pp']:.1f} percentage points" in head


def test_published_columns_are_the_published_tables(study: pathlib.Path) -> None:
    lm = _table(study, "lmbench").set_index("kernel function")
    assert lm.loc["Process fork+exit", "pub noht us"] == pytest.approx(190.75)
    assert lm.loc["Process fork+exit", "pub speed-up %"] == pytest.approx(190.75 / 198.84 * 100 - 100)


def test_single_threaded_lmbench_rows_are_flat(study: pathlib.Path) -> None:
    # One task: the idle sibling halts and the partitions recombine, so HT on runs the same cycles as HT off.
    lm = _table(study, "lmbench")
    single = lm[~lm["kernel function"].str.contains("Pipe|Process")]
    assert len(single) == 10
    assert single["model speed-up %"].abs().max() <= 2.0, single[["kernel function", "model speed-up %"]]


def test_aim9_flat_check_covers_only_the_rows_published_flat(study: pathlib.Path) -> None:
    a = _table(study, "aim9")
    flat = a[a["published shape"] == "flat"]
    changing = a[a["published shape"] == "changes"]
    # From Table 2: sieve +60 %, creat-clo +8 %, link_test +9 %, the three sync rows -35..-38 %.
    assert sorted(changing.test) == sorted(["sieve", "creat-clo", "link_test", "sync_disk_rw", "sync_disk_wrt",
                                            "sync_disk_cp"])
    assert len(flat) >= 20 and (flat["pub speed-up %"].abs() <= 2.0).all()
    # Every flat row is a single task: exactly the argument of the LMbench test above.
    assert flat["model speed-up %"].abs().max() <= 2.0
    rep = _report(study)
    assert rep["checks"]["aim9.flat_rows_flat"]


def test_aim9_changing_rows_reported_row_by_row(study: pathlib.Path) -> None:
    a = _table(study, "aim9")
    rep = _report(study)
    for _, r in a[a["published shape"] == "changes"].iterrows():
        ok = chk.reproduced(r["pub speed-up %"], r["model speed-up %"])
        assert rep["checks"][f"aim9.changing_row_{r.test}_reproduced"] is ok
        assert bool(r["model matches"]) is ok
        if not ok:
            assert any(n.startswith(f"AIM9 {r.test}: published") and "not reproduced" in n for n in rep["notes"])


def test_lmbench_pipe_and_fork_checks_say_what_the_table_shows(study: pathlib.Path) -> None:
    lm = _table(study, "lmbench").set_index("kernel function")
    checks = _report(study)["checks"]
    pipe = lm.loc["Pipe latency"]
    assert checks["lmbench.pipe_latency_within_2pp_of_published"] is chk.pipe_close(pipe["pub speed-up %"],
                                                                                     pipe["model speed-up %"])
    fork = lm[lm.index.str.contains("fork")]["model speed-up %"]
    assert len(fork) == 3
    assert checks["lmbench.fork_rows_slower_within_10pct"] is chk.fork_slower(fork)


def test_multithreaded_band_reported_as_the_numbers_show(study: pathlib.Path) -> None:
    rep = _report(study)
    for key in ("chat", "dbench", "tbench"):
        t = _table(study, key)
        g = t[t.iloc[:, 1].astype(str) == "geomean"]
        inside = all(chk.in_mt_band(x) for x in g["model speed-up %"])
        assert rep["checks"][f"{key}.ht_speedup_in_10_60_band"] is inside
        for _, r in g.iterrows():
            if not chk.in_mt_band(r["model speed-up %"]):
                assert any(n.startswith(f"{key} {r.kernel}: model geomean speed-up") for n in rep["notes"])


def test_the_quick_models_speed_ups_lie_in_bands_from_the_article_and_from_invariants(study: pathlib.Path) -> None:
    """Bands asserted on the numbers themselves, from both sides, with the bounds written here rather than read from
    checks.py: pipe latency's HT change within 2 points of the published -1.3 %; every fork row slower with HT (the
    article: -2.1 to -5.8 %) by less than 10 %; every multithreaded geomean (chat, dbench, tbench, both kernels) a gain
    of at least +10 % (the article's smallest, dbench under 2.5.32, is +12.4 %) and below +100 % (an invariant: with HT
    each package gets a second logical CPU on the same core, which at most doubles its throughput). The report's
    narrower +10..+60 band is a check that may miss: these geomeans sit at +40..+60 %, a few points apart from one
    kpath recording to the next (docs/study.md), and test_multithreaded_band_reported_as_the_numbers_show holds the
    report to its numbers when one leaves it."""
    lm = _table(study, "lmbench").set_index("kernel function")
    pipe = lm.loc["Pipe latency"]
    assert pipe["pub speed-up %"] == pytest.approx(11.16 / 11.31 * 100 - 100)
    assert -2.0 <= pipe["model speed-up %"] - pipe["pub speed-up %"] <= 2.0, pipe
    fork = lm[lm.index.str.contains("fork")]["model speed-up %"]
    assert len(fork) == 3
    assert ((fork < 0.0) & (fork >= -10.0)).all(), fork
    for key in ("chat", "dbench", "tbench"):
        t = _table(study, key)
        g = t[t.iloc[:, 1].astype(str) == "geomean"]
        assert len(g) == 2, key
        assert ((g["model speed-up %"] >= 10.0) & (g["model speed-up %"] < 100.0)).all(), (key, g)


def test_chat_rooms_reported(study: pathlib.Path) -> None:
    t = _table(study, "chat")
    g = t[t["rooms"].astype(str) == "geomean"].set_index("kernel")
    rep = _report(study)
    assert rep["checks"]["chat.kernel25_at_least_kernel24"] is bool(
        g.loc["2.5.32", "model speed-up %"] >= g.loc["2.4.19", "model speed-up %"])
    assert "chat.every_room_ran_in_window" in rep["checks"]
    # A window without some role of the benchmark is a miss with its note, never a silent pass.
    whole = rep["checks"]["chat.whole_pipeline_ran_in_window"]
    assert whole or any(n.startswith("chat: in ") and "never ran in the window" in n for n in rep["notes"])


def test_ht_aware_scheduler_never_worse_on_two_cpu_bound_tasks(study: pathlib.Path) -> None:
    # The case HT-awareness exists for: two CPU-bound tasks on 2 packages x 2 threads. Linux25HT spreads them at fork
    # or by active balancing; Linux24 may leave them on one package's siblings.
    t = _table(study, "two_package")
    pair = t[t["experiment"] == "cpu_pair"]
    assert len(pair) >= 2
    assert (pair["Linux25HT ms"] <= pair["Linux24 ms"] * 1.005).all(), pair
    assert (pair["Linux25HT one-package share"] <= 0.6).all(), pair
    checks = _report(study)["checks"]
    assert checks["two_package.cpu_pair_ht_aware_never_worse"]


def test_make_j2_check_reported_as_the_numbers_show(study: pathlib.Path) -> None:
    t = _table(study, "two_package")
    never_worse = bool((t["Linux25HT ms"] <= t["Linux24 ms"] * 1.005).all())
    assert _report(study)["checks"]["two_package.ht_aware_never_worse"] is never_worse
