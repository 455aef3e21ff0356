"""One version number: CMakeLists.txt's project(smtlab VERSION ...) is its only source, and `smtlab --version`,
`smtlab.__version__`, the package metadata (pyproject.toml reads the same line) and the "smtlab_version" of JSON
results all report it."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import smtlab
from smtlab.__main__ import program

ROOT = Path(__file__).resolve().parents[2]


def cmake_version() -> str:
    match = re.search(r"^project\(smtlab VERSION ([0-9]+(?:\.[0-9]+)*)", (ROOT / "CMakeLists.txt").read_text(),
                      re.MULTILINE)
    assert match, "CMakeLists.txt has no project(smtlab VERSION ...) line"
    return match.group(1)


def test_pyproject_takes_the_version_from_cmakelists():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"], "pyproject.toml must not write the version a second time"
    assert "version" in pyproject["project"]["dynamic"]
    provider = pyproject["tool"]["scikit-build"]["metadata"]["version"]
    assert provider["input"] == "CMakeLists.txt"
    match = re.search(provider["regex"], (ROOT / "CMakeLists.txt").read_text(), re.MULTILINE)
    assert match and match.group("value") == cmake_version()


def test_the_program_and_the_module_report_it():
    out = subprocess.run([str(program()), "--version"], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert out == f"smtlab {cmake_version()}\n"
    assert smtlab.__version__ == cmake_version()


def test_json_results_carry_it(tmp_path):
    result = smtlab.run_traces(smtlab.load_config("netburst"), ["gen:alu"], 2000)
    assert "smtlab_version" in result, "Machine::statsJson (src/sim/stats_json.cpp) writes no smtlab_version"
    assert result["smtlab_version"] == cmake_version()
    out = tmp_path / "run.json"
    subprocess.run([str(program()), "run", "-q", "-c", "netburst", "-n", "2000", "--json", str(out), "gen:alu"],
                   check=True, stdout=subprocess.DEVNULL)
    assert json.loads(out.read_text())["smtlab_version"] == cmake_version()
