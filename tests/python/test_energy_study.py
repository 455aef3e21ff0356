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


def test_calibrate_on_inputs_with_a_known_answer():
    """The procedure on made-up points worked by hand: idle 20 J and 1 thread 100 J per 10 s (2 W and 10 W), a split
    of uncore 0.25, dynamic 0.5 and a halted core at 0.5 W, and a run of 10 ms whose relative energies draw 1.1 W:
    dP = 8 W; uncore 2 + 0.25 x 8 = 4 W; the running core (1 - 0.25) x 8 - 0.5 = 5.5 W, half of it static (2.75 W)
    and half dynamic (2.75 W), reached by scaling the relative energies by 2.75 / 1.1 = 2.5."""
    freq_hz = sb.make_config(False).freq_ghz * 1e9
    run = {"cycles": 0.01 * freq_hz, "dynamic_joules": 0.011}
    split = energy.Split(uncore=0.25, dynamic=0.5, core_halted_w=0.5)
    c = energy.calibrate(run, idle_j=20.0, one_thread_j=100.0, split=split)
    assert c["package_idle_w"] == pytest.approx(2.0)
    assert c["uncore_w"] == pytest.approx(4.0)
    assert c["core_active_w"] == pytest.approx(2.75)
    assert c["core_halted_w"] == pytest.approx(0.5)
    assert c["_scale"] == pytest.approx(2.5)
    for name, nj in energy.RELATIVE_NJ.items():
        assert c[name] == pytest.approx(2.5 * nj), name
    # The running machine then draws the 1-thread point's 10 W: uncore, the running core's static and dynamic
    # power, and the halted core.
    running_w = c["uncore_w"] + c["core_active_w"] + c["_scale"] * run["dynamic_joules"] / 0.01 + c["core_halted_w"]
    assert running_w == pytest.approx(10.0)


def test_the_presets_energy_follows_the_published_points_and_the_split():
    """configs/broadwell.toml's [energy] against the procedure's formulas applied by hand to the published idle point
    (29.18 J / 10 s) and 1-thread HT-off point (106.83 J / 10 s) with energy.SPLIT (uncore 0.25, dynamic 0.5, halted
    core 0 W): P_idle 2.918 W, dP 7.765 W, uncore 2.918 + 0.25 x 7.765 = 4.859 W, running core static
    0.5 x 0.75 x 7.765 = 2.912 W. The per-event energies keep energy.RELATIVE_NJ's ratios: one common factor, the
    preset's four significant digits apart."""
    cfg = smtlab.load_config("broadwell")
    assert (energy.SPLIT.uncore, energy.SPLIT.dynamic, energy.SPLIT.core_halted_w) == (0.25, 0.5, 0.0)
    assert cfg.get("energy.package_idle_w") == pytest.approx(2.918, abs=5e-4)
    assert cfg.get("energy.uncore_w") == pytest.approx(2.918 + 0.25 * 7.765, abs=5e-4)
    assert cfg.get("energy.core_active_w") == pytest.approx(0.5 * 0.75 * 7.765, abs=5e-4)
    assert cfg.get("energy.core_halted_w") == 0.0
    factors = {name: cfg.get(f"energy.{name}") / nj for name, nj in energy.RELATIVE_NJ.items()}
    common = factors["fetch_nj"]
    for name, factor in factors.items():
        assert factor == pytest.approx(common, rel=1e-3), name


def test_the_preset_puts_the_model_on_its_calibration_points(section):
    """With the preset, the model's idle machine and its 1-thread HT-off run draw the published joules per 10 s
    (29.18 and 106.83; data/reference/smt_energy_sysbench.csv). The 1-thread point within 2 %: the preset was
    calibrated on a 2 ms window, quick mode measures 1 ms."""
    t = section.table
    assert t.loc[0, "model_noht_j"] == pytest.approx(energy.PUBLISHED[0][1], rel=1e-3)
    assert t.loc[1, "model_noht_j"] == pytest.approx(energy.PUBLISHED[1][1], rel=0.02)


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
