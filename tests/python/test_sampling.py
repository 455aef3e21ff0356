"""Sampled runs from Python (docs/sampling.md): run_traces(sample=...) gives the JSON of `smtlab run --sample`, and a
misused `sample` argument is one UsageError naming it."""

from __future__ import annotations

import pytest

import smtlab


def test_sampled_run_reports_an_interval_that_holds_the_detailed_ipc():
    # gen:alu on the netburst preset: independent integer ops, the same IPC in every window, so the sampled IPC must
    # match the detailed run's closely and its interval must be narrow; 300 k instructions give about 10 windows.
    cfg = smtlab.load_config("netburst")
    detailed = smtlab.run_traces(cfg, ["gen:alu"], max_instructions=300_000)
    sampled = smtlab.run_traces(cfg, ["gen:alu"], max_instructions=300_000, sample={"period": 30_000, "window": 5_000,
                                                                                     "warmup": 5_000})
    assert "sampling" not in detailed
    cpu = sampled["logical_cpus"][0]
    assert cpu["instructions"] == 300_000
    assert cpu["windows"] >= 5
    assert cpu["ipc_ci95"] is not None and cpu["ipc_ci95"] >= 0
    ipc = detailed["logical_cpus"][0]["ipc"]
    assert abs(cpu["ipc"] - ipc) <= max(cpu["ipc_ci95"], 0.01 * ipc)
    s = sampled["sampling"]
    assert s["period_instructions"] == 30_000
    assert s["detailed_instructions"] + s["functional_instructions"] >= 300_000
    assert s["target_met"] is None


def test_sample_true_takes_the_defaults():
    cfg = smtlab.load_config("netburst")
    out = smtlab.run_traces(cfg, ["gen:alu"], max_instructions=200_000, sample=True)
    assert out["sampling"]["window_instructions"] == 10_000
    assert out["sampling"]["warmup_instructions"] == 20_000
    assert smtlab.run_traces(cfg, ["gen:alu"], max_instructions=1000, sample=False)["logical_cpus"][0]["ipc"] > 0


@pytest.mark.parametrize(
    "sample, words",
    [
        ({"periode": 10}, ["periode", "known: period"]),
        ({"window": -1}, ["sample['window']", "negative"]),
        ({"target": "2 %"}, ["target", "number"]),
        ({"target": 3.0}, ["--sample-target", "[0, 1)"]),
        ("yes", ["sample must be", "str"]),
    ],
)
def test_a_misused_sample_argument_is_one_usage_error(sample, words):
    cfg = smtlab.load_config("netburst")
    with pytest.raises(smtlab.UsageError) as err:
        smtlab.run_traces(cfg, ["gen:alu"], max_instructions=100_000, sample=sample)
    for w in words:
        assert w in str(err.value)


def test_machine_warm_advances_sources_at_their_rates():
    # Two sources at 1 and 0.25 instructions per cycle for 1000 cycles: 1000 and 250 instructions, time +1000; a
    # source of 300 instructions ends after 300.
    cfg = smtlab.load_config("netburst")
    with smtlab.Machine(cfg) as m:
        a, b = smtlab.Source("gen:alu,count=0"), smtlab.Source("gen:alu,count=0,seed=2")
        before = m.now
        out = m.warm([(0, a, 1.0), (1, b, 0.25, 2)], 1000)
        assert [o["instructions"] for o in out] == [1000, 250]
        assert [o["ended"] for o in out] == [False, False]
        assert m.now - before == 1000
    with smtlab.Machine(cfg) as m:
        short = smtlab.Source("gen:alu,count=300")
        assert m.warm([(0, short, 1.0)], 1000) == [{"instructions": 300, "ended": True}]


@pytest.mark.parametrize(
    "lanes, words",
    [
        ([(0, None, 1.0)], ["Source"]),
        ([(0,)], ["tuple (cpu, source, ipc)"]),
        ([(9, "gen:alu", 1.0)], ["logical CPU 9"]),
        ([(0, "x", "fast")], ["Source"]),
    ],
)
def test_machine_warm_refuses_bad_lanes(lanes, words):
    cfg = smtlab.load_config("netburst")
    with smtlab.Machine(cfg) as m:
        with pytest.raises(smtlab.UsageError) as err:
            m.warm(lanes, 10)
        for w in words:
            assert w in str(err.value)
