"""bench.py's --set option and bench/mechanism_cost.py (the per-mechanism cost table, docs/mechanisms.md).

No speed is tested: what is tested is that overrides reach every `smtlab run`, that the table's claims (keys, tests,
which presets turn a mechanism on, the on/off switches) hold against the tree, and that the cost arithmetic and the
spliced document are right on numbers worked out by hand.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

import smtlab

from bench_scripts import load as load_bench_script




bench = load_bench_script("bench")
mc = load_bench_script("mechanism_cost")


def _preset(name: str, overrides: dict | None = None) -> dict:
    return mc.flatten(smtlab.load_config(name, overrides).to_dict())


def _overrides(settings: tuple[str, ...]) -> dict:
    return dict(s.split("=", 1) for s in settings)


# --- bench.py --set ---------------------------------------------------------------------------------------------

def test_set_arguments_become_one_set_option_each_after_the_preset():
    cmd = bench.run_command(Path("/x/smtlab"), "netburst", ["gen:mix"], 1000, Path("r.json"),
                            overrides=["core.wrong_path=true", "sim.skip=false"])
    assert cmd[:5] == ["/x/smtlab", "run", "-q", "-c", "netburst"]
    i = cmd.index("--set")
    assert cmd[i:i + 4] == ["--set", "core.wrong_path=true", "--set", "sim.skip=false"]
    assert "--set" not in bench.run_command(Path("/x/smtlab"), "netburst", ["gen:mix"], 1000, Path("r.json"))


def test_a_set_argument_without_key_and_value_is_refused():
    assert bench.parse_override("core.replay=false") == "core.replay=false"
    for bad in ("core.replay", "=false", ""):
        with pytest.raises(Exception, match="KEY=VALUE"):
            bench.parse_override(bad)


def test_bench_passes_the_overrides_to_every_run_and_records_them(tmp_path):
    # A stand-in smtlab that logs its arguments and writes the JSON keys bench.py reads.
    log = tmp_path / "argv.log"
    exe = tmp_path / "smtlab"
    exe.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
open({str(log)!r}, "a").write(" ".join(args) + "\\n")
out = args[args.index("--json") + 1]
json.dump({{"host_seconds": 1.0, "instructions": 1000, "cycles": 2000, "logical_cpus": [{{}}, {{}}]}}, open(out, "w"))
""")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "results.json"
    rc = bench.main([str(exe), "--no-programs", "--only", "mix", "-r", "1", "-n", "1k", "--set", "core.replay=false",
                     "--set", "sim.skip=false", "--json", str(out)])
    assert rc == 0
    lines = log.read_text().splitlines()
    # mix with one and with two threads, one repetition each, in the three modes: detailed, functional (one window
    # per run: --sample-period N) and sampled (--sample with its defaults)
    assert len(lines) == 6
    assert all("--set core.replay=false --set sim.skip=false" in line for line in lines)
    assert sum("--sample --sample-period 1000 " in line for line in lines) == 2
    assert sum("--sample" not in line for line in lines) == 2
    document = json.loads(out.read_text())
    assert document["overrides"] == ["core.replay=false", "sim.skip=false"]
    assert {row["overrides"] for row in document["rows"]} == {"core.replay=false sim.skip=false"}
    assert sorted(row["mode"] for row in document["mode_rows"]) == ["functional", "functional", "sampled", "sampled"]


def test_ht_gain_passes_the_overrides_to_all_three_runs(tmp_path):
    ht = load_bench_script("ht_gain")
    log = tmp_path / "argv.log"
    exe = tmp_path / "smtlab"
    # Each run: thread i retired 1000 instructions in 2000 cycles; the run 2000 in 2000 (numbers only need to be
    # valid windows here; the arithmetic is tested in test_bench_tools.py).
    exe.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
open({str(log)!r}, "a").write(" ".join(args) + "\\n")
out = args[args.index("--json") + 1]
cpu = {{"instructions": 1000, "cycles": 2000}}
json.dump({{"host_seconds": 1.0, "instructions": 2000, "cycles": 2000, "logical_cpus": [cpu, cpu]}}, open(out, "w"))
""")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "ht.json"
    assert ht.main([str(exe), "--no-programs", "-c", "netburst", "-n", "1k", "--set", "core.wrong_path=true",
                    "--json", str(out)]) == 0
    lines = log.read_text().splitlines()
    assert len(lines) == 3 and all("--set core.wrong_path=true" in line for line in lines)
    assert json.loads(out.read_text())["overrides"] == ["core.wrong_path=true"]


def test_bench_refuses_a_malformed_set_before_running_anything(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench.main([str(tmp_path / "smtlab"), "--set", "core.replay"])
    assert exit_info.value.code == 2
    assert "KEY=VALUE" in capsys.readouterr().err


# --- mechanism_cost.py: the table's claims against the tree ---------------------------------------------------

def test_every_key_switch_and_test_of_the_table_exists_in_the_tree():
    configs = {p: _preset(p) for p in mc.PRESETS}
    assert mc.check_tree(configs) == []


def test_an_unknown_key_or_test_is_named():
    configs = {p: _preset(p) for p in mc.PRESETS}
    del configs["netburst"]["core.wrong_path"]
    broken = mc.Mechanism("X", "x", ("core.wrong_path",), (("tests/integration/wrong_path_test.cpp", "No.SuchTest"),),
                          mc._always)
    mc.MECHANISMS.append(broken)
    try:
        problems = mc.check_tree(configs)
    finally:
        mc.MECHANISMS.remove(broken)
    assert "X: config key core.wrong_path is not in `smtlab config show`" in problems
    assert "X: test No.SuchTest is not in tests/integration/wrong_path_test.cpp" in problems


@pytest.mark.parametrize("mech", [m for m in mc.MECHANISMS if m.switch], ids=lambda m: m.name)
def test_each_switch_turns_its_mechanism_on_and_off(mech):
    # The "on" settings over the preset must give a config the row calls on, the "off" settings one it calls off;
    # otherwise the measured cost would belong to something else.
    on = _preset(mech.switch.preset, _overrides(mech.switch.on))
    off = _preset(mech.switch.preset, _overrides(mech.switch.off))
    assert mech.on_in(on) and not mech.on_in(off)


def test_on_in_follows_the_presets_own_sources():
    # From the presets' cited sources (configs/*.toml): NetBurst has no stack engine and has 64K aliasing and replay;
    # Broadwell has a stack engine and 4K aliasing, no 64K aliasing and no replay.
    by_name = {m.name: m for m in mc.MECHANISMS}
    netburst, broadwell = _preset("netburst"), _preset("broadwell")
    assert not by_name["Stack engine"].on_in(netburst) and by_name["Stack engine"].on_in(broadwell)
    alias_64k = by_name["64K aliasing (NetBurst)"]
    assert alias_64k.on_in(netburst) and not alias_64k.on_in(broadwell)
    assert by_name["4K aliasing"].on_in(broadwell) and not by_name["4K aliasing"].on_in(netburst)
    assert by_name["NetBurst replay"].on_in(netburst) and not by_name["NetBurst replay"].on_in(broadwell)


# --- mechanism_cost.py: arithmetic and outputs ----------------------------------------------------------------

def _row(name, on, off, workload="mix", preset="netburst"):
    return {"mechanism": name, "preset": preset, "workload": workload, "instructions": 300000,
            "on_settings": "(preset)", "off_settings": "x=1", "host_per_instr_on": on, "host_per_instr_off": off,
            "cycles_on": 10, "cycles_off": 12}


def test_cost_is_on_over_off_minus_one():
    # 2200 host instructions per instruction on, 2000 off: the mechanism costs 10 %; 1800 on is a 10 % saving.
    assert mc.cost_percent(_row("m", 2200, 2000)) == pytest.approx(10.0)
    assert mc.cost_percent(_row("m", "1800", "2000")) == pytest.approx(-10.0)  # CSV values are strings


def test_the_table_says_not_separable_and_never_shows_a_number_for_it():
    configs = {p: _preset(p) for p in mc.PRESETS}
    rows = [_row("Post-retire store buffer", 2200, 2000), _row("Post-retire store buffer", 1900, 2000, "cc1")]
    table = mc.markdown(rows, configs, {"date": "2026-11-24", "command": "cmd", "instructions": 300000})
    summary = table.split("\n\n")[0]  # the per-mechanism table; the per-run table follows a blank line
    lines = {line.split(" | ")[0].lstrip("| "): line for line in summary.splitlines() if line.startswith("| ")}
    assert len(lines) == len(mc.MECHANISMS) + 1  # one row each and the header
    assert "mix +10.0 %, cc1 -5.0 % (netburst)" in lines["Post-retire store buffer"]
    assert "not separable (" in lines["Issue ports"] and "%" not in lines["Issue ports"].split(" | ")[-1]
    assert "not measured" in lines["NetBurst replay"]  # switchable, but no row of it was given
    assert "none (off in every preset)" in lines["Long-latency hook (STALL / FLUSH / MLP)"]  # every preset fetches round_robin


def test_splice_replaces_only_the_marked_block(tmp_path):
    doc = tmp_path / "mechanisms.md"
    doc.write_text(f"intro\n{mc.BEGIN_MARK}\nold table\n{mc.END_MARK}\nafter\n")
    mc.splice(doc, "new table\n")
    assert doc.read_text() == f"intro\n{mc.BEGIN_MARK}\nnew table\n{mc.END_MARK}\nafter\n"
    assert [p.name for p in tmp_path.iterdir()] == ["mechanisms.md"]
    doc.write_text("no markers\n")
    with pytest.raises(mc.BenchError, match="markers"):
        mc.splice(doc, "x")
    assert doc.read_text() == "no markers\n"
