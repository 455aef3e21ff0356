"""The SMT energy section (smtlab.study.energy) in quick mode, its calibration, and the sysbench workload's arithmetic.

Expected values come from the published table (data/reference/smt_energy_sysbench.csv), from sysbench's algorithm
counted by hand, or from the section's shape checks (smtlab.study.energy); none from the model's own output."""

from __future__ import annotations

import math
import os

import pytest

import smtlab
from smtlab.study import energy
from smtlab.study.section import Section
from smtlab.workloads import sysbench as sb


def test_trial_divisions_by_hand():
    # max prime 10: c = 4..8 stop at l = 2 (4, 6, 8 divisible; 5, 7 have sqrt < 3): 5 trials; c = 9 tries 2 and 3;
    # c = 3 tries none (sqrt 3 < 2). 7 in all; gcc turns the six l = 2 trials (c = 4..9) into bit tests.
    assert sb.trial_divisions(10) == 7
    assert sb.compiled_divisions(10) == 1


def test_event_progress_counts_divisions():
    # 4096 instructions, divisions only in the second half of the event: half the instructions is no progress yet
    ev = sb.EventTrace("x", 4096, 2, True, "", (0, 0, 0, 1))
    assert ev.progress(0) == 0.0
    assert ev.progress(2048) == 0.0
    assert ev.progress(3072) == pytest.approx(0.5)
    assert ev.progress(4096 + 3072) == pytest.approx(1.5)
    assert ev.divisions_done(2 * 4096) == pytest.approx(4.0)
    # without a profile: linear in instructions
    assert sb.EventTrace("x", 100, 0, False, "").progress(250) == pytest.approx(2.5)


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    return energy.run_section(tmp_path_factory.mktemp("energy"), quick=True, workers=2, progress=False)


def test_section_shape(section):
    assert isinstance(section, Section)
    assert section.key == "sysbench_energy"
    assert list(section.table.index) == [0, *energy.QUICK_THREADS]
    for col in ("pub_noht_events", "pub_ht_events", "pub_speedup_pct", "model_noht_events", "model_ht_events",
                "model_speedup_pct", "model_noht_j", "model_ht_j", "model_noht_mj_op", "model_ht_mj_op"):
        assert col in section.table.columns
    assert section.table.loc[4, "pub_ht_events"] == 34895
    assert all(p.exists() and p.suffix == ".png" and p.stat().st_size > 10_000 for p in section.figures)
    assert "| threads |" in section.markdown and "Calibration" in section.markdown


def test_predicted_energy_at_points_not_used_to_calibrate(section):
    """The calibration uses only the idle point and 1 thread with HT off (energy.CALIBRATION_POINTS); every other
    (threads, HT) point of the quick run is a prediction: 1 thread HT on, 2..4 threads HT off and on. Each must come
    within +-10 % of the published joules per 10 s (data/reference/smt_energy_sysbench.csv)."""
    t = section.table
    points = energy.predicted_points(energy.QUICK_THREADS)
    assert (1, True) in points and (1, False) not in points and len(points) == 7
    for n, ht in points:
        pub = energy.PUBLISHED[n][3 if ht else 1]
        model = t.loc[n, "model_ht_j" if ht else "model_noht_j"]
        assert model == pytest.approx(pub, rel=energy.PREDICTION_PCT / 100), (n, ht, model, pub)
    assert section.checks["predicted_energy_within_10pct"]


def test_prediction_check_can_fail():
    rows = {n: {"pub_noht_j": p[1], "pub_ht_j": p[3], "model_noht_j": p[1], "model_ht_j": p[3]}
            for n, p in energy.PUBLISHED.items()}
    assert energy.prediction_error_pct(rows, 4, True) == 0.0
    rows[4]["model_ht_j"] = 204.22 * 1.11  # 11 % high: outside
    assert abs(energy.prediction_error_pct(rows, 4, True)) > energy.PREDICTION_PCT
    rows[4]["model_ht_j"] = 204.22 * 0.91  # 9 % low: inside
    assert abs(energy.prediction_error_pct(rows, 4, True)) <= energy.PREDICTION_PCT


def test_calibrate_reproduces_the_preset():
    """A consistency test of the procedure, not a prediction: re-running it (a shorter window than the one the preset was made with) gives the preset's
    coefficients, and they put the model on both calibration points."""
    c = energy.calibrate(window_ms=1.0)
    cfg = smtlab.load_config("broadwell")
    for k in (*energy.RELATIVE_NJ, "core_active_w", "core_halted_w", "uncore_w", "package_idle_w"):
        assert cfg.get(f"energy.{k}") == pytest.approx(c[k], rel=0.02, abs=1e-9), k
    assert c["package_idle_w"] * 10 == pytest.approx(29.18)
    # the static terms leave exactly the a priori dynamic share of the running core's power to per-event energy
    sp = energy.SPLIT
    static = c["uncore_w"] + c["core_active_w"] + c["core_halted_w"]
    dp = 10.683 - 2.918
    assert 10.683 - static == pytest.approx(sp.dynamic * ((1 - sp.uncore) * dp - sp.core_halted_w), rel=1e-9)


def test_shape_bands_quick_mode_shows(section):
    t, ch = section.table, section.checks
    # an idle sibling halts and the partitions recombine: one thread is the same with HT on
    assert abs(t.loc[1, "model_speedup_pct"]) <= 2.0 and ch["single_thread_rows_flat"]
    # HT off: two cores, two threads double the throughput, more threads add nothing
    assert t.loc[2, "model_noht_events"] >= 1.8 * t.loc[1, "model_noht_events"]
    assert t.loc[4, "model_noht_events"] == pytest.approx(t.loc[2, "model_noht_events"], rel=0.05)
    assert ch["noht_saturates_at_2_threads"]
    # HT on with 2 threads: IdleCoreFirst puts them on different cores, like HT off
    assert t.loc[2, "model_ht_events"] == pytest.approx(t.loc[2, "model_noht_events"], rel=0.02)
    # energy per operation lower with HT at 4 threads; static power is shared, so HT never costs more per op here
    assert t.loc[4, "model_ht_mj_op"] < t.loc[4, "model_noht_mj_op"]
    assert ch["energy_per_op_lower_with_ht_from_4_threads"]
    assert all(not math.isnan(t.loc[n, "model_ht_mj_op"]) for n in energy.QUICK_THREADS)


def test_ht_gain_band_at_4_threads(section):
    """The shape band: HT on at 4 threads +30..70% over HT off (published: 22,900 -> 34,895 events, +52.4%). The
    divider's busy interval (15) against one thread's interval between its own divides (21) leaves a sibling room for
    21/15 - 1 = 40% in a purely divide-bound loop."""
    if not sb.event_trace().traced:
        pytest.skip("kernel:sysbench_cpu is untraced: the look-alike has no divider-bound loop")
    assert 30.0 <= section.table.loc[4, "model_speedup_pct"] <= 70.0
    assert section.checks["ht_gain_30_to_70pct_at_4_threads"]


def test_energy_per_op_lower_with_ht_at_3_and_4_threads(section):
    # The published shape: energy per operation lower with HT from 3-4 threads on (7.06 -> 6.31 and 7.06 -> 5.85 mJ)
    t = section.table
    for n in (3, 4):
        assert t.loc[n, "model_ht_mj_op"] < t.loc[n, "model_noht_mj_op"], n
    assert section.checks["energy_per_op_lower_with_ht_at_3_threads"]


def test_divider_interval_rule():
    # interval 0: 1 if pipelined, else the latency (the rule before the key existed); else the interval itself
    assert sb.divider_interval(sb.make_config(False)) == 15
    assert sb.divider_interval(sb.make_config(False, {"core.fu.int_div.interval": 0})) == 32
    cfg = sb.make_config(False, {"core.fu.int_div.interval": 0, "core.fu.int_div.pipelined": True})
    assert sb.divider_interval(cfg) == 1


def test_event_cache_key_is_the_trace_bytes(tmp_path):
    """The cut event is cached by the kernel trace's bytes, not its time stamp: a fresh build traces the program
    again and gets the same bytes with a new time, and under a size-and-time key each build would add an entry no later
    build reads (one day of CI runs with such a key left six identical ones in ~/.cache/smtlab)."""
    a, b, c = tmp_path / "a.trace", tmp_path / "b.trace", tmp_path / "c.trace"
    a.write_bytes(b"\x01" * 5000)
    b.write_bytes(b"\x01" * 5000)
    c.write_bytes(b"\x01" * 4999 + b"\x02")
    os.utime(a, (1_000_000, 1_000_000))
    os.utime(b, (2_000_000, 2_000_000))
    assert sb.event_stem(a) == sb.event_stem(b)
    assert sb.event_stem(a) != sb.event_stem(c)  # same size, one byte differs
    assert sb.event_stem(a).startswith("sysbench_cpu.event.b2-5000-")


def test_event_cache_prune(tmp_path):
    """What prune_event_cache removes: entries under a size-and-time key (as older builds wrote them) and temporary
    files older than an hour; it keeps entries under the content key, recent temporary files (a cut may be running),
    other files and links."""
    now = 10_000_000.0
    old = ["sysbench_cpu.event.59216-1796039604073057997.trace", "sysbench_cpu.event.59216-1796039604073057997.meta",
           "sysbench_cpu.event.100-5.txt", "sysbench_cpu.event.59216-17.4242.tmp.meta"]
    keep = ["sysbench_cpu.event.b2-59216-0123456789abcdef0123.trace",
            "sysbench_cpu.event.b2-59216-0123456789abcdef0123.meta",
            "sysbench_cpu.event.b2-59216-0123456789abcdef0123.99.tmp.txt",  # 10 minutes old
            "sysbench_cpu.event.59216-1796039604073057997.trace.bak", "qemu-plugin-7.2.h", "other.meta"]
    for n in old + keep:
        (tmp_path / n).write_text("x")
        os.utime(tmp_path / n, (now - 7200, now - 7200))
    os.utime(tmp_path / keep[2], (now - 600, now - 600))
    target = tmp_path / "elsewhere.trace"
    target.write_text("y")
    (tmp_path / "sysbench_cpu.event.1-2.trace").symlink_to(target)
    assert sb.prune_event_cache(tmp_path, now=now) == sorted(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep + ["elsewhere.trace",
                                                                        "sysbench_cpu.event.1-2.trace"])
    assert target.read_text() == "y"
