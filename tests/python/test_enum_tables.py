"""The enum tables as Python sees them: smtlab.CPI_CAUSES, FETCH_POLICIES, THREAD_CHOICE_POLICIES,
ALLOCATION_POLICIES, UNIT_CLASSES and EventKind come from the C++ tables, and every Python list built on them holds every value. Each
check fails when a value is missing from a derived list or a Python copy drifts from the model's list."""

from __future__ import annotations

import pytest

import smtlab
from smtlab import plot
from smtlab.study import energy
from smtlab.workloads import base


def test_cpi_causes_are_exactly_the_json_statistics_keys_in_order():
    r = smtlab.run_traces(smtlab.load_config("netburst"), ["gen:mix", "gen:branchy"], 20000)
    for cpu in r["logical_cpus"]:
        assert list(cpu["cpi_stack_cycles"]) == list(smtlab.CPI_CAUSES)
        assert list(cpu["cpi_stack"]) == list(smtlab.CPI_CAUSES)
        # every cycle is charged to exactly one cause: a cause missing from the table would leave a gap
        assert sum(cpu["cpi_stack_cycles"].values()) == cpu["cycles"]
    assert len(smtlab.CPI_CAUSES) == 20  # docs/model.md "The CPI stack" rows, counted by hand
    assert all(doc for doc in smtlab.CPI_CAUSES.values())


def test_tables_are_read_only():
    with pytest.raises(TypeError):
        smtlab.CPI_CAUSES["new_cause"] = "x"  # type: ignore[index]


def test_python_cpi_lists_use_only_real_causes_and_the_stack_groups_cover_each_once():
    assert plot.CPI_ORDER == tuple(smtlab.CPI_CAUSES)
    grouped = [n for names in base._STACK_GROUPS.values() for n in names]
    assert sorted(grouped) == sorted(smtlab.CPI_CAUSES), "workloads.base groups must hold every cause exactly once"
    for group, names in energy._GROUPS.items():  # the energy study shows a chosen subset: each must exist
        assert set(names) <= set(smtlab.CPI_CAUSES), group


@pytest.mark.parametrize("name", list(smtlab.FETCH_POLICIES))
def test_every_fetch_policy_loads_and_runs(name):
    cfg = smtlab.load_config("netburst", {"core.fetch_policy": name})
    assert cfg.get("core.fetch_policy") == name
    r = smtlab.run_traces(cfg, ["gen:mix", "gen:branchy"], 5000)
    assert all(cpu["instructions"] >= 5000 for cpu in r["logical_cpus"])


@pytest.mark.parametrize("name", list(smtlab.ALLOCATION_POLICIES))
def test_every_allocation_policy_loads_and_runs(name):
    cfg = smtlab.load_config("netburst", {"core.allocation_policy": name})
    assert cfg.get("core.allocation_policy") == name
    r = smtlab.run_traces(cfg, ["gen:chase,footprint=4m", "gen:mix"], 5000)
    assert all(cpu["instructions"] >= 5000 for cpu in r["logical_cpus"])


def test_policy_and_unit_class_names_match_what_the_config_accepts():
    assert list(smtlab.FETCH_POLICIES) == ["round_robin", "icount", "brcount", "misscount", "stall", "flush", "mlp"]
    assert list(smtlab.ALLOCATION_POLICIES) == ["static", "dcra", "hill_climbing"]
    for name in smtlab.THREAD_CHOICE_POLICIES:
        assert smtlab.load_config(None, {"core.retire_policy": name}).get("core.retire_policy") == name
    with pytest.raises(smtlab.ConfigError, match="round_robin"):
        smtlab.load_config(None, {"core.fetch_policy": "fifo"})
    port = " ".join(f"{c}:2" for c in smtlab.UNIT_CLASSES)
    assert smtlab.load_config(None, {"core.ports": [port]}).get("core.ports") == [port]


def test_event_kinds_are_the_tables_names_upper_cased():
    names = set(smtlab.EventKind.__members__)
    assert names == {"SOURCE_ENDED", "MARK", "RETIRE_LIMIT", "CYCLE_BOUND"}
    m = smtlab.Machine(smtlab.load_config(None, {"core.threads": 1}))
    m.attach(0, smtlab.Source("gen:alu,count=50"))
    events = [e for _ in range(3) for e in m.run(cycles=100_000)]
    assert smtlab.EventKind.SOURCE_ENDED in {e.kind for e in events}
    assert "source_ended" in repr(next(e for e in events if e.kind == smtlab.EventKind.SOURCE_ENDED))
