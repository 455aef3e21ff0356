"""The whole-run page-cache model (smtlab/workloads/page_cache.py): the kernels' thresholds from their sources, and
a load with a constant dirtying rate whose background, throttle and run length are computed by hand."""

from __future__ import annotations

import pytest

from smtlab.workloads import page_cache as pc

MIB_PER_PAGE = 4 / 1024


def test_thresholds_count_against_each_kernels_memory():
    # i386 with 2.5 GB: DMA 16 MiB (4,096 pages: pages_min 32, pages_high 96), NORMAL 880 MiB (pages_min 1,760
    # clamped to 255, pages_high 765), HIGHMEM 1,664 MiB (pages_high 765). 2.4.19 counts DMA + NORMAL less their
    # pages_high: 896 - (96 + 765) x 4 KiB = 892.637 MiB; 2.5.32 every zone: + 1,664 - 765 x 4 KiB = 2,553.648 MiB.
    r24, r25 = pc.kernel_rules("2.4.19"), pc.kernel_rules("2.5.32")
    assert r24.base_mib == pytest.approx(896 - 861 * MIB_PER_PAGE, abs=1e-6)
    assert r25.base_mib == pytest.approx(2560 - (861 + 765) * MIB_PER_PAGE, abs=1e-6)
    assert (r24.background_pct, r24.stop_pct, r24.throttle_pct, r24.expire_s, r24.interval_s) == (30, 20, 60, 30, 5)
    assert (r25.background_pct, r25.stop_pct, r25.throttle_pct, r25.expire_s, r25.interval_s) == (40, 40, 50, 30, 5)
    with pytest.raises(ValueError, match="2.6.0"):
        pc.kernel_rules("2.6.0")


def test_disk_rates():
    d = pc.DiskRates()
    # 64 KiB in sector order: half a turn (1.5 ms) + 64 KiB at 40 MB/s (1.5625 ms) = 3.0625 ms, 20.41 MiB/s.
    assert d.write_ms_per_page() * 16 == pytest.approx(3.0625)
    assert d.read_ms_per_page() == pytest.approx(7.7 * 4698 / 12414 + 0.09765625)


def test_client_profile_totals():
    groups = pc.profile_groups()
    # client.txt's distinct pages dirtied (47.4 MiB) and page dirtyings, fileio.c's rules (client_profile).
    assert sum(g.count for g in groups) == 12_132
    assert sum(g.count * len(g.writes) for g in groups) == 18_973
    assert sum(pc.CLIENT_READ_PAGES) == 12_414 and len(pc.CLIENT_READ_PAGES) == pc.BINS
    # The long-lived files: written in the first fifth and freed by the script's last hundredth.
    long_lived = sum(g.count for g in groups if max(g.writes) < 20 and g.freed == 99)
    assert 19.0 < long_lived * MIB_PER_PAGE < 23.0


#: A constant dirtying rate: 1,000 new pages per client in every hundredth, never freed, no reads.
STEADY = " ".join(f"1000:{b}:" for b in range(pc.BINS))
NO_READS = (0,) * pc.BINS


def _steady(kernel: str) -> pc.Run:
    return pc.simulate(10, kernel, 100.0, profile=STEADY, read_pages=NO_READS)


def test_constant_dirtying_reaches_the_background_threshold_when_computed():
    # 10 clients at 100 MB/s: a hundredth of the run is 10 x 1,326,519.73 bytes / 100 MB/s = 0.13265 s and dirties
    # 10 x 1,000 pages = 39.06 MiB: 294.5 MiB/s. 2.4.19's bdflush starts at 30 % of 892.64 MiB = 267.79 MiB: 0.909 s.
    run = _steady("2.4.19")
    rate = 10 * 1000 * MIB_PER_PAGE / (10 * pc.CLIENT_BYTES / pc.BINS / 100e6)
    t_bg = 0.3 * pc.kernel_rules("2.4.19").base_mib / rate
    first = next(s for s in run.states if s.daemon_writing)
    assert t_bg <= first.t_s + 1e-9 <= t_bg + 2 * pc.SNAPSHOT_MS / 1e3
    assert all(s.written_mib == 0 for s in run.states if s.t_s < t_bg - 0.02)


def test_throttled_writers_dirty_at_the_disks_write_back_rate():
    # From 0.909 s bdflush writes 20.41 MiB/s, so dirty grows at 294.5 - 20.4 MiB/s to 60 % (535.58 MiB) at
    # 0.909 + 267.79 / 274.1 = 1.886 s; from then on writers are throttled: they dirty as fast as the disk writes,
    # 20.41 MiB/s, and the remaining 3,906.25 - 555.4 MiB take 164.2 s: the run lasts 166.1 s.
    run = _steady("2.4.19")
    base = pc.kernel_rules("2.4.19").base_mib
    rate = 10 * 1000 * MIB_PER_PAGE / (10 * pc.CLIENT_BYTES / pc.BINS / 100e6)
    disk = pc.PAGE_KIB / 1024 / (pc.DiskRates().write_ms_per_page() / 1e3)
    t_bg = 0.3 * base / rate
    t_thr = t_bg + 0.3 * base / (rate - disk)
    total = 10 * 1000 * pc.BINS * MIB_PER_PAGE
    expected = t_thr + (total - rate * t_thr) / disk
    assert run.seconds == pytest.approx(expected, rel=0.01)
    first = next(s for s in run.states if s.throttled)
    assert first.t_s == pytest.approx(t_thr, abs=0.15)
    mid = run.at(0.5)
    assert mid.throttled and mid.dirty_mib == pytest.approx(0.6 * base, abs=40.0)
    later = run.at(0.75)
    assert (later.written_mib - mid.written_mib) / (later.t_s - mid.t_s) == pytest.approx(disk, rel=0.02)
    assert run.throttled_s / run.seconds == pytest.approx((run.seconds - t_thr) / run.seconds, abs=0.01)


def test_2532_leaves_the_same_load_unwritten_longer():
    # 2.5.32's pdflush starts at 40 % of 2,553.65 MiB = 1,021.5 MiB: 3.47 s at 294.5 MiB/s, nothing written before.
    run = _steady("2.5.32")
    rate = 10 * 1000 * MIB_PER_PAGE / (10 * pc.CLIENT_BYTES / pc.BINS / 100e6)
    t_bg = 0.4 * pc.kernel_rules("2.5.32").base_mib / rate
    first = next(s for s in run.states if s.written_mib > 0)
    assert t_bg <= first.t_s <= t_bg + 2 * pc.SNAPSHOT_MS / 1e3


def test_twenty_clients_under_2532_write_nothing_back():
    # 20 clients hold at most 20 x 47.4 MiB dirty, below 2.5.32's 1,021.5 MiB: the run is CPU-bound,
    # 20 x 132,651,973 bytes / 150 MB/s = 17.69 s, and nothing reaches the disk.
    run = pc.simulate(20, "2.5.32", 150.0)
    assert run.seconds == pytest.approx(20 * pc.CLIENT_BYTES / 150e6, rel=0.002)
    assert max(s.written_mib for s in run.states) == 0 and not any(s.throttled for s in run.states)
