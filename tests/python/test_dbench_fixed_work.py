"""dbench's fixed-work window (fileserver.run_dbench; docs/study.md, "dbench's fixed-work window").

On paper: every dbench client runs the one script (dbench 1.x: each child replays the one client.txt; here the same
seeded draw of operations), so operations W + 1 .. W + M move the same bytes for every client, with HT off and on.
A window fixed by work therefore holds the same bytes in both modes, where a window fixed by time held whatever
stretch of the script each mode reached. A time slice of the 2.4.19 scheduler (tens of ms) is far longer than the few
dozen operations these tests measure, so one client per logical CPU runs through them and no other client completes
an operation inside a measured window. These runs use the estimated kernel paths and user work (no recordings)."""

from __future__ import annotations

import pytest

from smtlab.study import ht_linux
from smtlab.workloads import fileserver

W, M = 5, 10


@pytest.fixture(scope="module")
def off_and_on():
    return (fileserver.run_dbench(3, False, "linux24", W, M), fileserver.run_dbench(3, True, "linux24", W, M))


def test_ht_off_and_on_measure_the_same_operations(off_and_on):
    off, on = off_and_on
    # One client per logical CPU, each over its operations W + 1 .. W + M; the script is one, so the bytes are equal.
    assert len(off["measured_clients"]) == 1 and len(set(on["measured_clients"])) == 2
    assert off["window_bytes"][0] > 0
    assert on["window_bytes"] == [off["window_bytes"][0]] * 2
    assert off["foreign_ops"] == on["foreign_ops"] == 0
    assert (off["warm_ops"], off["window_ops"]) == (W, M)


def test_throughput_is_the_sum_of_the_measured_clients_rates(off_and_on):
    off, on = off_and_on
    # HT off: one client, so its rate is the window's bytes over the window's length (MB/s, 10^6 bytes).
    assert off["throughput"] == pytest.approx(off["window_bytes"][0] / (off["window_ms"] / 1e3) / 1e6, rel=1e-9)
    # The cross-check over the span counts every client's operations in it: with one client and none foreign, the
    # same bytes over the same time.
    assert off["span_throughput"] == pytest.approx(off["throughput"], rel=1e-9)
    # HT on: two rates, each its window's bytes over its own window, neither longer than window_ms (the longest):
    # so at least the bytes of both over window_ms, and equal to it only if both windows are that long.
    both = sum(on["window_bytes"]) / (on["window_ms"] / 1e3) / 1e6
    assert on["throughput"] >= both * (1 - 1e-9)


def test_a_window_whose_work_is_not_done_in_time_raises():
    # W + M = 15 operations of at least 1,500 user instructions each (CLIENT_WORK, times 2.26 lines) cannot retire in
    # 0.005 ms = 8,000 cycles at 1.6 GHz on a core that retires at most 3 instructions per cycle (24,000).
    with pytest.raises(fileserver.NoCompletion, match="fixed-work window"):
        fileserver.run_dbench(3, False, "linux24", W, M, max_ms=0.005)


def test_bad_window_sizes_are_refused():
    with pytest.raises(ValueError, match="warm_ops and window_ops >= 1"):
        fileserver.run_dbench(3, False, "linux24", 0, M)
    with pytest.raises(ValueError, match="warm_ops and window_ops >= 1"):
        fileserver.run_dbench(3, False, "linux24", W, 0)


def test_fixed_work_applies_while_the_page_cache_holds_every_clients_files():
    # 2 GiB of page cache over 21 MiB per client: 97.5 clients fit. The study's points: 20, 30, 60, 90 fit; 120 not.
    assert all(fileserver.fixed_work_applies(n) for n in (1, 20, 30, 60, 90, 97))
    assert not any(fileserver.fixed_work_applies(n) for n in (98, 120))


def test_the_study_measures_each_dbench_point_by_its_regime(monkeypatch):
    calls = []
    monkeypatch.setattr(fileserver, "run_dbench", lambda *a, **kw: calls.append(("fixed", a, kw)) or {})
    monkeypatch.setattr(fileserver, "run", lambda *a, **kw: calls.append(("timed", a, kw)) or {})
    ht_linux._mt_job("dbench", 20, True, "linux24", 5.0, 5.0, seed=2)
    ht_linux._mt_job("dbench", 120, True, "linux24", 5.0, 5.0, seed=2)
    ht_linux._mt_job("dbench", 20, False, "linux24", 2.0, 2.0, seed=0, quick=True)
    ht_linux._mt_job("tbench", 20, False, "linux24", 5.0, 40.0)
    assert [c[0] for c in calls] == ["fixed", "timed", "fixed", "timed"]
    assert calls[0][1][:5] == (20, True, "linux24", fileserver.DBENCH_WARM_OPS, fileserver.DBENCH_WINDOW_OPS)
    assert calls[0][2] == {"seed": 2}
    assert calls[2][1][3:5] == (fileserver.DBENCH_WARM_OPS // 3, fileserver.DBENCH_WINDOW_OPS // 3)
