"""The arithmetic and the edges of the benchmark scripts in bench/ (bench.py, ht_gain.py, programs.py).

Speed itself is never tested (it depends on the host); what is tested is that the scripts compute their figures
right from numbers worked out on paper, write their files completely or not at all, and say in one line when the
tracer is missing.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from bench_scripts import BENCH
from bench_scripts import load as load_bench_script




ht = load_bench_script("ht_gain")
bench = load_bench_script("bench")
programs = load_bench_script("programs")


def test_ht_gain_counts_what_the_faster_copy_runs_past_its_window():
    # Copy a alone: 1 M instructions in 2 M cycles (IPC 0.5); copy b alone: 1 M in 1 M cycles (IPC 1.0).
    # One copy running both windows back to back: 2 M instructions in 3 M cycles, IPC 2/3.
    # Together: a's 1 M take 4 M cycles (IPC 0.25); b's first 1 M take 2 M cycles (IPC 0.5), and b keeps running
    # to cycle 4 M, retiring 2 M in all: the pair retires 3 M in 4 M cycles, IPC 0.75.
    # HT gain = 0.75 / (2/3) - 1 = +12.5 %; weighted speedup = 0.25/0.5 + 0.5/1.0 = 1.0.
    g = ht.ht_gain(alone_a=ht.Window(1_000_000, 2_000_000), alone_b=ht.Window(1_000_000, 1_000_000),
                   pair_a=ht.Window(1_000_000, 4_000_000), pair_b=ht.Window(1_000_000, 2_000_000),
                   pair_total=ht.Window(3_000_000, 4_000_000))
    assert g.ipc_alone_a == pytest.approx(0.5)
    assert g.ipc_alone_b == pytest.approx(1.0)
    assert g.ipc_one_copy == pytest.approx(2 / 3)
    assert g.ipc_two_copies == pytest.approx(0.75)
    assert g.gain_percent == pytest.approx(12.5)
    assert g.weighted_speedup == pytest.approx(1.0)


def test_ht_gain_of_two_copies_that_do_not_slow_each_other_is_100_percent_and_a_loss_is_negative():
    # Each copy alone: 4 M instructions in 5 M cycles (IPC 0.8). Unhindered pair: both finish at cycle 5 M, 8 M in
    # all, IPC 1.6: +100 %, weighted speedup 2. A pair that takes 12.5 M cycles for the 8 M: IPC 0.64 = 0.8 * 0.8,
    # -20 %; each copy at IPC 0.32, weighted speedup 2 * 0.32 / 0.8 = 0.8.
    alone = ht.Window(4_000_000, 5_000_000)
    ideal = ht.ht_gain(alone, alone, alone, alone, ht.Window(8_000_000, 5_000_000))
    assert ideal.gain_percent == pytest.approx(100.0)
    assert ideal.weighted_speedup == pytest.approx(2.0)
    slow = ht.Window(4_000_000, 12_500_000)
    loss = ht.ht_gain(alone, alone, slow, slow, ht.Window(8_000_000, 12_500_000))
    assert loss.gain_percent == pytest.approx(-20.0)
    assert loss.weighted_speedup == pytest.approx(0.8)


def test_ht_gain_refuses_an_empty_window():
    ok = ht.Window(1000, 1000)
    with pytest.raises(ValueError, match="empty window"):
        ht.ht_gain(ok, ok, ok, ht.Window(0, 1000), ok)


def test_windows_are_read_from_the_run_json():
    # The shape `smtlab run --json` writes: per-CPU instructions and cycles of the measured window, and the run's
    # total cycles and everything simulated.
    data = {"cycles": 900, "instructions": 200, "simulated_instructions": 260,
            "logical_cpus": [{"instructions": 100, "cycles": 900}, {"instructions": 100, "cycles": 700}]}
    assert ht.cpu_window(data, 1) == ht.Window(100, 700)
    assert ht.run_total(data) == ht.Window(260, 900)
    assert bench.speed({**data, "host_seconds": 2.0})["mips"] == pytest.approx(260 / 2.0 / 1e6)


def test_callgrind_cost_is_the_marginal_cost_per_simulated_instruction():
    # 1 M host instructions for 100 simulated ones (mostly start-up), 21 M for 10 100: the difference, 20 M host
    # instructions for 10 000 simulated ones, is 2000 per simulated instruction; start-up cancels.
    assert bench.marginal_cost((1_000_000, 100), (21_000_000, 10_100)) == pytest.approx(2000.0)
    with pytest.raises(bench.BenchError, match="not more"):
        bench.marginal_cost((1_000_000, 100), (2_000_000, 100))


def test_counts_accept_suffixes_and_refuse_nonsense():
    assert bench.parse_count("5M") == 5_000_000
    assert bench.parse_count("500k") == 500_000
    assert bench.parse_count("123") == 123
    for bad in ("five", "0", "-3"):
        with pytest.raises(Exception, match="count"):
            bench.parse_count(bad)


def test_results_are_written_whole_under_their_name_and_nothing_else_is_left(tmp_path):
    target = tmp_path / "sub" / "results.json"
    bench.write_atomically(target, '{"rows": []}\n')
    assert json.loads(target.read_text()) == {"rows": []}
    assert [p.name for p in target.parent.iterdir()] == ["results.json"]


def _fake_smtlab(tmp_path: Path, first_line: str) -> Path:
    exe = tmp_path / "smtlab"
    exe.write_text(f"#!/bin/sh\necho '{first_line}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def test_without_the_tracer_the_programs_are_skipped_in_one_line(tmp_path):
    # The first line `smtlab trace kernels` prints when it cannot trace (src/cli/trace_command.cpp, listKernels).
    exe = _fake_smtlab(tmp_path, "kernel traces (cache /x; tracer unavailable: qemu-x86_64 not found on PATH; "
                                 "look-alikes are used):")
    lines: list[str] = []
    ready = programs.ensure_traces(exe, tmp_path / "cache", log=lines.append)
    assert ready == {}
    assert len(lines) == 1
    assert lines[0] == "real programs: not run, tracer unavailable: qemu-x86_64 not found on PATH; generators only"


def test_cached_traces_are_still_used_without_the_tracer(tmp_path):
    exe = _fake_smtlab(tmp_path, "kernel traces (cache /x; tracer unavailable: no capstone; look-alikes are used):")
    cache = tmp_path / "cache"
    cache.mkdir()
    for suffix in ("a.trace", "b.trace", "stamp"):
        (cache / f"gzip.{suffix}").write_text("x")
    lines: list[str] = []
    ready = programs.ensure_traces(exe, cache, log=lines.append)
    assert ready == {"gzip": (cache / "gzip.a.trace", cache / "gzip.b.trace")}
    assert lines == ["gzip: tracer unavailable, using the cached traces as they are"]


def test_a_working_tracer_is_recognised(tmp_path):
    exe = _fake_smtlab(tmp_path, "kernel traces (cache /x; traced on first use):")
    assert programs.tracer_unavailable(exe) is None


def test_every_copy_b_window_ends_inside_its_program():
    # Copy b records [skip + keep/2, skip + 3 keep/2); the whole runs are 51.6 M (gzip), 84.3 M (bzip2), 566 M (cc1)
    # and 98.8 M (raytrace) instructions, counted with callgrind and written in programs.py. A recipe that reaches
    # past its program's end would make the recorder stop short (programs.py then refuses the trace).
    whole = {"gzip": 51_600_000, "bzip2": 84_300_000, "cc1": 566_000_000, "raytrace": 98_800_000}
    assert {p.name for p in programs.PROGRAMS} == set(whole)
    for p in programs.PROGRAMS:
        assert p.skip + p.keep // 2 + p.keep <= whole[p.name], p.name


def test_the_fingerprint_does_not_depend_on_where_the_cache_lies(tmp_path):
    # Two caches with the same inputs at different paths (a copied cache, a second build tree) hold the same traces:
    # the same fingerprint. A changed input still changes it.
    program = next(p for p in programs.PROGRAMS if p.name == "gzip")
    prints = []
    for where in ("one", "two/deeper"):
        cache = tmp_path / where
        cache.mkdir(parents=True)
        data = cache / "input.txt"
        data.write_text("the same input\n")
        prints.append(programs._fingerprint(program, ["/usr/bin/gzip", "-c", str(data)], [data], cache))
    assert prints[0] == prints[1]
    data.write_text("another input\n")
    assert programs._fingerprint(program, ["/usr/bin/gzip", "-c", str(data)], [data], cache) != prints[1]


def test_kpath_ratio_mixes_name_recorded_paths_in_the_studys_shares():
    # bench/kpath_ratio.py measures the core on the study's own kernel work: its dbench mix must be the study's table
    # (every share, every call's recording) and every path of every mix one that the probe records.
    import re

    from smtlab.workloads import fileserver, kpaths

    ratio = load_bench_script("kpath_ratio")
    recorded = set(re.findall(r"^KPATH\((\w+),", (BENCH.parent / "workloads/kpath/kpath_paths.h").read_text(),
                              flags=re.M))
    assert ratio.MIXES["dbench"] == fileserver.dbench_call_shares()
    shares = dict(ratio.MIXES["dbench"])
    # Its calls are dbench's recorded ones (the lseek before every read and write stands as the null call, getppid),
    # and a write of client.txt is one call of every page it spans, so file_write outnumbers the writes' lseeks.
    assert set(shares) == {kpaths.REAL_PATHS[c] for _, _, calls, _ in fileserver.DBENCH_OPS for c in calls}
    assert shares["file_write"] > shares["getppid"] * 23287 / (23287 + 4698)
    for name, mix in ratio.MIXES.items():
        assert abs(sum(share for _, share in mix) - 1.0) < 1e-9, name
        assert {path for path, _ in mix} <= recorded, name
    assert ratio.mix_paths("getppid") == [("getppid", 1.0)]


def test_kpath_ratio_of_one_path_runs_both_machines_and_prints_the_ratio(real_paths, capsys):
    # One short window of one recorded path: HT off (core.threads = 1) and on. The printed ratio is the printed IPCs'
    # quotient, and a second run gives the same figures (seeded draws, deterministic model).
    ratio = load_bench_script("kpath_ratio")
    args = ["--mix", "getppid", "--cycles", "200k", "--warmup", "50k"]
    assert ratio.main(args) == 0
    first = capsys.readouterr().out
    row = [line.split() for line in first.splitlines() if line.startswith("getppid")]
    assert len(row) == 1
    one, two, r = map(float, row[0][1:4])
    assert one > 0 and two > 0 and abs(two / one - r) < 0.002
    assert ratio.main(args) == 0
    assert capsys.readouterr().out == first


def test_kpath_ratio_mem_rows_follow_the_cores_write_combining_counters(real_paths, capsys):
    # --mem prints the core's store path per 1,000 instructions. With netburst's write-through L1D every store goes
    # into a write-combining buffer (writes > 0, merged share a percentage); with a write-back L1D there are none.
    ratio = load_bench_script("kpath_ratio")

    def mem_rows(extra: list[str]) -> dict[str, list[float]]:
        assert ratio.main(["--mix", "file_write", "--cycles", "200k", "--warmup", "50k", "--mem", *extra]) == 0
        rows = {}
        for line in capsys.readouterr().out.splitlines():
            if line.startswith("    "):
                *label, alone, paired = line.split()
                rows[" ".join(label)] = [float(alone), float(paired)]
        return rows

    through = mem_rows([])
    assert set(through) == {"wc writes", "wc merged %", "wc wait cycles", "l1d misses", "l2 misses"}
    assert all(v > 0 for v in through["wc writes"])
    assert all(0 <= v <= 100 for v in through["wc merged %"])
    back = mem_rows(["--set", "mem.l1d_write_through=false"])
    assert back["wc writes"] == [0.0, 0.0] and back["wc wait cycles"] == [0.0, 0.0]
    assert ratio.memory_rows({"instructions": 2000, "write_combining": {"writes": 10, "merges": 4, "flushes": 1,
                                                                          "wait_cycles": 6},
                              "l1d": {"misses": 8}, "l2": {"misses": 2}}) == [
        ("wc writes", 5.0), ("wc merged %", 40.0), ("wc wait cycles", 3.0), ("l1d misses", 4.0), ("l2 misses", 1.0)]


def _fake_run(tmp_path: Path, name: str, host_seconds: float, cycles: int, log: Path) -> Path:
    # A stand-in for `smtlab run ... --json PATH`: writes a result with the given host time and cycles (1 M instructions
    # on two logical CPUs) and logs its name, so that a test sees which program ran when.
    exe = tmp_path / name
    exe.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
with open(args[args.index("--json") + 1], "w") as out:
    json.dump({{"host_seconds": {host_seconds}, "instructions": 1000000, "cycles": {cycles},
               "logical_cpus": [{{}}, {{}}]}}, out)
with open({str(log)!r}, "a") as out:
    out.write({name!r} + "\\n")
""")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


def _run_against(tmp_path: Path, new: tuple[float, int], base: tuple[float, int], repeat: int):
    """bench.py's mix rows of fake program `new` against fake `base`, each (host seconds, cycles): (rows, order log)."""
    log = tmp_path / "order.log"
    new_exe = _fake_run(tmp_path, "new", *new, log)
    base_exe = _fake_run(tmp_path, "base", *base, log)
    out = tmp_path / "r.json"
    assert bench.main([str(new_exe), "--against", str(base_exe), "--no-programs", "--only", "mix", "-r", str(repeat),
                       "--json", str(out)]) == 0
    return json.loads(out.read_text())["rows"], log


def test_against_a_baseline_the_runs_alternate_and_the_change_is_worked_out(tmp_path, capsys):
    # New program: 1 M instructions in 0.5 s = 2.0 M/s; baseline: 0.8 s = 1.25 M/s. Change = 2.0 / 1.25 - 1 = +60 %.
    # Both report 2 M cycles and 1 M instructions: the same statistics.
    rows, log = _run_against(tmp_path, new=(0.5, 2_000_000), base=(0.8, 2_000_000), repeat=2)
    assert [r["threads"] for r in rows] == [1, 2]
    for r in rows:
        assert r["mips"] == pytest.approx(2.0)
        assert r["baseline_mips"] == pytest.approx(1.25)
        assert r["change_percent"] == pytest.approx(60.0)
        assert r["same_statistics"] is True
    # Two rows, two repeats each, the baseline first in every pair.
    assert log.read_text().split() == ["base", "new"] * 4
    assert "+60.0%  yes" in capsys.readouterr().out


def test_against_a_baseline_that_simulated_other_cycles_says_so(tmp_path, capsys):
    rows, _ = _run_against(tmp_path, new=(1.0, 2_000_000), base=(1.0, 2_000_001), repeat=1)
    assert [r["same_statistics"] for r in rows] == [False, False]
    assert [r["change_percent"] for r in rows] == [pytest.approx(0.0)] * 2
    assert capsys.readouterr().out.count("+0.0%  NO") == 2


def test_against_something_that_is_not_a_program_is_refused(tmp_path, capsys):
    log = tmp_path / "order.log"
    new = _fake_run(tmp_path, "new", 1.0, 1, log)
    assert bench.main([str(new), "--against", str(tmp_path / "missing"), "--no-programs"]) == 2
    assert "--against" in capsys.readouterr().err
    assert not log.exists()


def test_against_a_baseline_under_callgrind_the_change_is_the_ratio_of_marginal_costs(tmp_path, monkeypatch):
    # Each fake run simulates exactly its --max-instructions (2 M cycles). Counted host instructions: 10 M of start-up
    # plus 2000 per simulated instruction (new) or 2500 (baseline); the marginal costs are 2000 and 2500, start-up
    # cancelling, and the new program is 2500 / 2000 - 1 = +25 % faster.
    def fake(name: str) -> Path:
        exe = tmp_path / name
        exe.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
n = int(args[args.index("--max-instructions") + 1])
with open(args[args.index("--json") + 1], "w") as out:
    json.dump({{"host_seconds": 1.0, "instructions": n, "cycles": 2000000, "logical_cpus": [{{}}, {{}}]}}, out)
""")
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
        return exe

    new, base = fake("new"), fake("base")

    def counted(cmd: list[str]) -> int:
        import subprocess
        subprocess.run(cmd, check=True)
        n = int(cmd[cmd.index("--max-instructions") + 1])
        return 10_000_000 + (2000 if Path(cmd[0]).name == "new" else 2500) * n

    monkeypatch.setattr(bench, "callgrind_count", counted)
    monkeypatch.setattr(bench.shutil, "which", lambda _: "/usr/bin/valgrind")
    out = tmp_path / "r.json"
    assert bench.main([str(new), "--against", str(base), "--no-programs", "--only", "mix", "-n", "1M", "--callgrind",
                       "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 2
    for r in rows:
        assert r["host_instructions_per_instruction"] == pytest.approx(2000)
        assert r["baseline_host_instructions_per_instruction"] == pytest.approx(2500)
        assert r["change_percent"] == pytest.approx(25.0)
        assert r["same_statistics"] is True


# --- study_point.py: one study point, timed ------------------------------------------------------------------------
study_point = load_bench_script("study_point")


@pytest.fixture
def no_real_streams(monkeypatch):
    """study_point --no-real writes the two switches into os.environ, as the study does; restored afterwards."""
    from smtlab.workloads import user_streams
    from smtlab.workloads.kpaths import REAL_PATHS_ENV

    for var in (REAL_PATHS_ENV, user_streams.USER_STREAMS_ENV):
        monkeypatch.setenv(var, "0")


def test_study_point_runs_a_point_and_applies_its_overrides(no_real_streams, tmp_path, capsys):
    """A tbench point on generated streams (--no-real, 1 + 1 ms: a few seconds), once as the preset has it and once
    with DRAM 1,000 cycles slower. The slower memory cannot make the same point's instructions faster, so its CPI must
    be higher: the override reached the machine. The JSON holds what was printed."""
    out = tmp_path / "point.json"
    base = ["tbench", "20", "--warm", "1", "--window", "1", "--no-real"]
    assert study_point.main(base + ["--json", str(out)]) == 0
    fast = json.loads(out.read_text())
    assert study_point.main(base + ["--set", "mem.dram.latency=1300", "--json", str(out)]) == 0
    slow = json.loads(out.read_text())
    assert fast["overrides"] == {} and slow["overrides"] == {"mem.dram.latency": "1300"}
    assert fast["real"] == [] and fast["instructions"] > 0 and fast["host_seconds"] > 0
    assert slow["cpi"] > fast["cpi"]
    text = capsys.readouterr().out
    assert "tbench 20 HT on linux25ht --set mem.dram.latency=1300" in text and "real streams: none" in text
    # Why the warm-up and window ended (fileserver.run's reasons) is printed and kept.
    assert fast["warm_end"] in ("met", "stalled", "bound") and fast["window_end"] in ("met", "stalled", "bound")
    assert f"ms warm-up ({fast['warm_end']})" in text


@pytest.mark.parametrize("argv, message", [
    (["tbench", "20", "--set", "core.threads=1"], "--set core.threads: the point sets it"),
    (["tbench", "0"], "N must be at least 1"),
    (["tbench", "20", "--window", "0"], "--window must be a positive number of ms"),
])
def test_study_point_refuses_bad_arguments_before_anything_runs(no_real_streams, capsys, argv, message):
    with pytest.raises(SystemExit) as caught:
        study_point.main(argv)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_study_point_names_an_unknown_config_key_in_one_line(no_real_streams, capsys):
    assert study_point.main(["tbench", "20", "--set", "core.no_such_key=1", "--no-real"]) == 1
    err = capsys.readouterr().err
    assert "unknown key 'core.no_such_key'" in err and "Traceback" not in err and len(err.splitlines()) == 1
