"""The manual's commands run as written. Every fenced block of README.md and docs/*.md whose info string is
``sh runnable`` or ``python runnable`` runs in a fresh temporary folder, as a reader would paste it from the
checkout's root: the folder holds links to the checkout's ``build``, ``configs``, ``data``, ``examples`` and
``tests``, so ``./build/smtlab ...`` and ``examples/...`` resolve, and everything a block writes (``out/...``) lands
in the temporary folder. A block fails the test when any command in it exits non-zero (bash -e) or it runs past
its time limit. Blocks that take minutes (``make demo``, ``smtlab study``) or name a placeholder (``FILE``) are
plain ``sh`` blocks and are not run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINKED = ("build", "configs", "data", "examples", "tests")
FENCE = re.compile(r"^```(\S+)(?:[ \t]+(\S+))?[ \t]*$")
LIMIT_SECONDS = 300


def runnable_blocks(path: Path) -> list[tuple[int, str, str]]:
    """(line of the opening fence, language, body) of each block marked runnable in a Markdown file."""
    out = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        start, lang, mark = i + 1, m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        if mark == "runnable":
            out.append((start, lang, "\n".join(lines[i + 1:j])))
        i = j + 1
    return out


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


BLOCKS = [(p, line, lang, body) for p in _docs() for line, lang, body in runnable_blocks(p)]


def test_the_parser_finds_marked_blocks_only(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n```sh runnable\necho a\n```\n```sh\nexit 1\n```\n```python runnable\nprint(1)\n```\n")
    assert runnable_blocks(page) == [(2, "sh", "echo a"), (8, "python", "print(1)")]


def test_the_manual_has_runnable_blocks():
    """The README's tour of the program and of Python, and at least a few docs pages, are checked: a lost marker
    would silently stop the checks."""
    pages = {p.name for p, *_ in BLOCKS}
    assert "README.md" in pages
    assert {lang for p, _, lang, _ in BLOCKS if p.name == "README.md"} == {"sh", "python"}
    assert len(BLOCKS) >= 5, [f"{p.name}:{line}" for p, line, *_ in BLOCKS]


@pytest.mark.parametrize("path, line, lang, body", BLOCKS,
                         ids=[f"{p.relative_to(ROOT)}:{line}" for p, line, *_ in BLOCKS])
def test_runnable_block(tmp_path, path, line, lang, body):
    if not (ROOT / "build" / "smtlab").exists():
        pytest.skip("the program is not built (make build)")
    for name in LINKED:
        if (ROOT / name).exists():
            (tmp_path / name).symlink_to(ROOT / name)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "python"), env.get("PYTHONPATH")]))
    env["MPLBACKEND"] = "Agg"
    if lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c", body]
    elif lang == "python":
        cmd = [sys.executable, "-c", body]
    else:
        pytest.fail(f"{path.name}:{line}: a runnable block must be sh or python, not {lang!r}")
    try:
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.relative_to(ROOT)}:{line}: the block ran past {LIMIT_SECONDS} s")
    assert r.returncode == 0, (f"{path.relative_to(ROOT)}:{line}: exit {r.returncode}\n--- stdout\n{r.stdout[-3000:]}"
                               f"\n--- stderr\n{r.stderr[-3000:]}")
