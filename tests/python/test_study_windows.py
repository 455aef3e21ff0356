"""The study's measurement windows: a window that measured nothing must never be reported as a
measurement, and tbench's window must adapt to the client count.

On paper: tbench on one logical CPU starts as a convoy. N clients are forked and each sends its first request before
any server runs (FIFO among equals), then the N servers reply, then the clients read: the first reply is read after
about 2N + 1 dispatches. At N = 12 each dispatch runs at least a system call with its trap (>= 2,450 instructions:
tcp_recv 2,000 + trap 450) plus the switch path (1,500), so the first reply needs more than 25 x 3,950 = 98,750
instructions; the netburst core retires at most 3 per cycle, so more than 32,900 cycles = 0.021 ms at 1.6 GHz. A
fixed 0.002 + 0.002 ms warm-up and window therefore holds no reply, and a fixed window would report 0 MB/s there.
"FIFO among equals" is Linux24 with woken and forked tasks joining the tail of its run list (``run_list_head=False``);
2.4.19's own order, the head, runs the task woken last first, which changes the convoy this derivation counts."""

from __future__ import annotations

import math

import pytest

from smtlab.study import common
from smtlab.workloads import fileserver

FIFO = {"run_list_head": False}  # module doc


def test_tbench_window_extends_until_a_round_of_replies():
    r = fileserver.run("tbench", 12, False, "linux24", warm_ms=0.002, window_ms=0.002, scheduler_params=FIFO)
    # A fixed window would measure 0 MB/s here (no reply inside it), so the warm-up and the window each
    # run until as many replies as clients were read.
    assert r["throughput"] > 0
    assert r["window_ms"] > 0.021 and r["warm_ms"] > 0.021
    assert r["window_ms"] <= fileserver.MAX_WINDOW_MS and r["warm_ms"] <= fileserver.MAX_WARM_MS
    # 12 replies of 4 KiB at least, in the window: the throughput is at least that over the window's length.
    assert r["throughput"] >= 12 * 4096 / (r["window_ms"] / 1000.0) / 1e6 * 0.999


def test_tbench_without_a_completion_raises_instead_of_reporting_zero():
    # The bounds (0.002 + 0.003 ms = 8,000 cycles) are shorter than the first reply can take (> 32,900 cycles, module
    # doc).
    with pytest.raises(fileserver.NoCompletion, match="no request completed in the window"):
        fileserver.run("tbench", 12, False, "linux24", warm_ms=0.001, window_ms=0.001, max_warm_ms=0.002,
                       max_window_ms=0.003, scheduler_params=FIFO)


def test_tbench_window_has_its_own_bound_after_a_cut_warm_up():
    # A warm-up bound of 0.002 ms ends the warm-up before the first reply (> 0.021 ms, module doc): the warm-up is
    # reported incomplete. The window then has its own bound (MAX_WINDOW_MS), not what the warm-up left of a shared one
    # (with one bound for both, at 60-120 clients under Linux24 the convoy would use it all), so it
    # still runs until every client has read a reply in it.
    r = fileserver.run("tbench", 12, False, "linux24", warm_ms=0.002, window_ms=0.002, max_warm_ms=0.002,
                       scheduler_params=FIFO)
    assert r["warm_complete"] is False and r["warm_ms"] < 0.021
    assert r["clients_done"] == 1.0 and r["window_ms"] > 0.021 and r["throughput"] > 0


def test_geomean_of_a_missing_or_zero_point_is_missing():
    assert common.geomean([4.0, 9.0]) == pytest.approx(6.0)
    # Dropping the 0 and averaging the other rows would give a geomean over fewer rows than the table's.
    assert math.isnan(common.geomean([4.0, 0.0, 9.0]))
    assert math.isnan(common.geomean([4.0, float("nan")]))
    assert math.isnan(common.geomean([]))


def test_study_job_reports_no_completion_as_missing(monkeypatch):
    from smtlab.study import ht_linux

    def boom(*args, **kwargs):
        raise fileserver.NoCompletion("tbench 90 clients: no request completed in the window")

    monkeypatch.setattr(fileserver, "run", boom)
    r = ht_linux._mt_job("tbench", 90, False, "linux24", 1.0, 1.0)
    assert math.isnan(r["throughput"]) and "no request completed" in r["no_completion"]


_STARTED: list[int] = []


def _job(n: int) -> dict[str, int]:
    _STARTED.append(n)
    return {"n": n, "square": n * n}


@pytest.mark.parametrize("workers", [1, 2])
def test_run_jobs_starts_the_costliest_first_and_keeps_the_input_order(workers):
    """With a cost key the jobs start in decreasing cost (seen in-process with one worker); either way every result
    sits at its job's place in ``params``."""
    _STARTED.clear()
    params = [{"n": n} for n in (3, 1, 4, 1, 5, 9, 2, 6)]
    res = common.run_jobs(_job, params, workers, False, "t", cost=lambda p: p["n"])
    assert res == [{"n": p["n"], "square": p["n"] ** 2} for p in params]
    if workers == 1:
        assert _STARTED == sorted((p["n"] for p in params), reverse=True)
        _STARTED.clear()
        common.run_jobs(_job, params, 1, False, "t")
        assert _STARTED == [p["n"] for p in params]  # no key: the input order
