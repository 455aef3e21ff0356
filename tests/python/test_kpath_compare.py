"""bench/kpath_compare.py on two hand-made kpath: manifests. Expected values by hand: path p has instances of 10, 20
and 30 kernel instructions in A (median 20; 90th percentile by nearest rank: rank ceil(0.9 x 3) = 3, so 30) and one
of 40 in B (median and percentile 40), so its spread is 40 / 20 - 1 = 100 %; a_same has 100, 100 in A and 90, 110 in B
(both medians 100: spread 0), so it comes second though its name sorts first; only_a is missing from B and is
left out."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
_spec = importlib.util.spec_from_file_location("smtlab_bench_kpath_compare", BENCH / "kpath_compare.py")
kc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kc)


def _cache(root: Path, name: str, paths: dict) -> Path:
    d = root / name
    d.mkdir()
    instances = {p: {"file": f"{p}.trace", "instances": [[0, 1, n] for n in ns]} for p, ns in paths.items()}
    (d / "kpaths.json").write_text(json.dumps({"paths": instances, "count": 3}))
    return d


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    a = _cache(tmp_path, "A", {"p": [30, 10, 20], "a_same": [100, 100], "only_a": [5]})
    b = _cache(tmp_path, "B", {"p": [40], "a_same": [110, 90]})
    return a, b


def test_rows_are_the_paths_of_every_cache_most_different_first(tmp_path, capsys):
    a, b = _pair(tmp_path)
    rows = kc.compare([kc.load(a), kc.load(b)])
    assert [r["path"] for r in rows] == ["p", "a_same"]
    assert rows[0]["medians"] == [20.0, 40.0] and rows[0]["p90"] == [30.0, 40.0] and rows[0]["spread"] == 1.0
    assert rows[1]["medians"] == [100.0, 100.0] and rows[1]["spread"] == 0.0
    assert rows[0]["instances"] == [3, 1]
    out = tmp_path / "rows.csv"
    assert kc.main([str(a), str(b), "--csv", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[0] == "p" and lines[2].endswith("100.0%")
    assert lines[3].split()[0] == "a_same" and lines[3].endswith("0.0%")
    table = list(csv.reader(out.open()))
    assert table[0][:4] == ["path", "A instances", "A median", "A p90"]
    assert table[1][0] == "p" and float(table[1][-1]) == 1.0
    assert not list(tmp_path.glob("rows.csv.tmp*"))


def test_a_prefix_keeps_only_its_paths(tmp_path, capsys):
    a, b = _pair(tmp_path)
    assert kc.main([str(a), str(b), "--path", "a_"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[2].split()[0] == "a_same"


def test_bad_input_is_one_message_and_a_nonzero_exit(tmp_path, capsys):
    a, _ = _pair(tmp_path)
    assert kc.main([str(a), str(tmp_path / "missing")]) == 2
    assert "missing/kpaths.json: no such file" in capsys.readouterr().err
    bad = _cache(tmp_path, "bad", {})
    (bad / "kpaths.json").write_text(json.dumps({"paths": {"p": {"instances": [[0, 1]]}}}))
    assert kc.main([str(a), str(bad)]) == 2
    assert "path 'p': 'instances' must be a list" in capsys.readouterr().err
    other = _cache(tmp_path, "other", {"z": [1]})
    assert kc.main([str(a), str(other)]) == 1  # nothing in common: no empty table reported as a result
    assert "no path has instances in every cache" in capsys.readouterr().err
