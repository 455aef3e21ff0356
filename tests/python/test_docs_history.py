"""Documentation, comments and test names describe the product as it is, never how it got there.

History lives in CHANGELOG.md and in git log; everywhere else (README, docs/, comments, test names and their
comments) a sentence says what the product does and why, with its source. The project's tracker is
not in the repository, so "issue 10 §3" or a bare "§6" points at nothing a reader can open, and "before session 43"
or "second round" says when something changed instead of what it is. This test reads every tracked text file and
fails, listing each offending file:line with the rule it breaks, on:

- ``session N`` / ``round N`` (also plural, also ``#N``): a work session or round by number;
- an ordinal or relative word before ``round`` / ``session`` ("second round", "previous session", "that session");
  "round trip" and "round-robin" are words of the trade, not history, and are let through;
- ``issue N`` / ``issues N`` / ``Issue #N``: a tracker item. "issue" is also a pipeline stage, so a number that reads
  as a count or a cycle is let through: one of three digits or more (the tracker's items are numbered below 100), or
  one followed by a comma, "%", "+", a decimal part, "of", "times", "over", "per", "uops" or "cycles" ("issue 274",
  "issue 8, 4 load ports", "issues 18 times", "issue 6 of 8 uops"). "Issue #N" is always a tracker item;
- a ``§`` that does not follow the document it cites on the same line. Allowed: ``<document> §N`` where the document
  is "SDM", "Vol. 3A" (any volume), "RFC <number>", "ISO <number>", "POSIX", "C++<year>", the optimization manual's
  number 248966, or a name ending in "manual", "guide", "specification" or "standard" (so "Intel SDM Vol. 3A §4.5",
  "RFC 8878 §3.1.1", "Vol. 3A §4.3", "Agner Fog, microarchitecture guide §10"); a range's second end
  ("SDM Vol. 3A §4.3-§4.5") is allowed when its first end is. A bare "(§4.3; ...)" is not: write the document;
- ``shared/reference``: a folder outside the repository (the published tables are in data/reference/).

Not read: CHANGELOG.md (history is its job), this file (its own examples), binary files (a NUL byte or bytes that are
no UTF-8: compressed or native trace fixtures), and the published tables under data/, which are data, not prose.
Outside a git checkout (an unpacked sdist, an installed wheel) there is no list of tracked files and the test skips.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
THIS_FILE = "tests/python/test_docs_history.py"

_NUMBER = r"#?\s*\d+(?!\d)"
_ORDINAL = r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|earlier|previous|last|next|later|latest"
_COUNT_AFTER_ISSUE = r"\s*(?:[,%+]|\.\d|(?:of|times|over|per|uops?|cycles?)\b)"

#: (rule name, pattern); every pattern is matched case-insensitively against one line.
RULES: list[tuple[str, re.Pattern[str]]] = [
    ("session or round by number", re.compile(r"\b(?:session|round)s?\s+" + _NUMBER + r"(?!\.\d)", re.I)),
    ("ordinal or relative round/session",
     re.compile(r"\b(?:" + _ORDINAL + r")\s+(?:rounds?\b(?!\s*-?\s*(?:trips?|robin)\b)|sessions?\b)", re.I)),
    ("this/that session", re.compile(r"\b(?:this|that)\s+sessions?\b", re.I)),
    ("tracker issue by number", re.compile(r"\bissues?\s*#\s*\d+", re.I)),
    ("tracker issue by number", re.compile(r"\bissues?\s+\d{1,2}(?!\d)(?!" + _COUNT_AFTER_ISSUE + r")", re.I)),
    ("path outside the repository", re.compile(r"shared/reference", re.I)),
]

#: What may stand right before a "§": the cited document (see the module docstring). Matched against the text before
#: the "§" on its line, so it must end there (optionally with a comma and spaces).
DOCUMENT_BEFORE_SECTION = re.compile(
    r"(?:\bSDM|\bVol\.\s*\d+[A-Z]?|\bRFC\s*\d+|\bISO(?:/IEC)?\s*[\d-]+(?::\d+)?|\bPOSIX(?:\.1)?|\bC\+\+\d*"
    r"|\b248966|(?:manual|guide|specification|standard))\s*,?\s*$",
    re.I,
)
#: The second end of a range whose first end was allowed: "§4.3-§4.5", "§4.3–§5".
_RANGE_BEFORE_SECTION = re.compile(r"§\s*[\d.]*\d\s*[-–]\s*$")


def bare_sections(line: str) -> list[int]:
    """Columns of the "§" signs on ``line`` that do not follow a named document."""
    bad = []
    previous_allowed = False
    for m in re.finditer("§", line):
        before = line[: m.start()]
        allowed = bool(DOCUMENT_BEFORE_SECTION.search(before)) or (
            previous_allowed and bool(_RANGE_BEFORE_SECTION.search(before)))
        if not allowed:
            bad.append(m.start())
        previous_allowed = allowed
    return bad


def offences(line: str) -> list[str]:
    """The names of the rules ``line`` breaks (empty when it is clean)."""
    found = [name for name, pattern in RULES if pattern.search(line)]
    if bare_sections(line):
        found.append("section sign without its document")
    return list(dict.fromkeys(found))


def is_checked(path: str) -> bool:
    """Whether a tracked path is read at all (text-ness is decided on its bytes, in _text_of)."""
    return path != "CHANGELOG.md" and path != THIS_FILE and not path.startswith("data/")


def _text_of(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("not in a git checkout (or git is missing): there is no list of tracked files to read")
    files = [p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p]
    if not files:
        pytest.skip("git lists no tracked files here")
    return files


def test_no_tracked_file_narrates_its_history():
    report = []
    for path in _tracked_files():
        if not is_checked(path):
            continue
        try:
            text = _text_of((ROOT / path).read_bytes())
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            continue  # deleted in the work tree, or a submodule
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            rules = offences(line)
            if rules:
                report.append(f"{path}:{number}: [{'; '.join(rules)}] {line.strip()[:160]}")
    per_file: dict[str, int] = {}
    for entry in report:
        per_file[entry.split(":", 1)[0]] = per_file.get(entry.split(":", 1)[0], 0) + 1
    summary = "\n".join(f"  {n:4d}  {p}" for p, n in sorted(per_file.items()))
    assert not report, (f"{len(report)} lines in {len(per_file)} files narrate history or cite the tracker "
                        f"(say what the product does and why, with a citable source; history goes to CHANGELOG.md):\n"
                        f"{summary}\n" + "\n".join(report))


# Samples derived by hand from the rules above: each offending line names the rules it must break, each clean line
# must break none.
OFFENDING = [
    ("before session 43 such a file was read as raw bytes", {"session or round by number"}),
    ("Sessions 12 and 14 measured it on the shared host", {"session or round by number"}),
    ("a figure kept since round 12", {"session or round by number"}),
    ("one session #44 recording", {"session or round by number"}),
    ("Fuzzing, second round (23:05-23:33 UTC)", {"ordinal or relative round/session"}),
    ("## Trace readers (Second Round)", {"ordinal or relative round/session"}),
    ("as the previous session found", {"ordinal or relative round/session"}),
    ("at the end of that session, the last session's run", {"this/that session", "ordinal or relative round/session"}),
    ("the per-mechanism table of issue 10 §8", {"tracker issue by number", "section sign without its document"}),
    ("the multithreaded band of issues 5 and 11", {"tracker issue by number"}),
    ("see Issue #7", {"tracker issue by number"}),
    ("The study's measurement windows (issue 11; studyfix)", {"tracker issue by number"}),
    ("issue 5's band: HT on at 4 threads", {"tracker issue by number"}),
    ("a bounded edit distance, issue 12 section 8", {"tracker issue by number"}),
    ("the target issue 10 sets, 3 M/s", {"tracker issue by number"}),
    ("as issue 12 (the bad-input catalogue) asked", {"tracker issue by number"}),
    ("and 4-byte entries (§4.3; PAE also does two loads per walk", {"section sign without its document"}),
    ("the Python-facing parsers that §8 asks to have covered", {"section sign without its document"}),
    ("# --- §7: the wheel ----", {"section sign without its document"}),
    ("Intel SDM Vol. 3A §4.5 and then (§4.3)", {"section sign without its document"}),
    ("(shared/reference/netburst_ht_facts.md)", {"path outside the repository"}),
]
CLEAN = [
    "a counter wraps around 2^64 cycles",
    "round-robin among the threads, as ICOUNT's tie-break",
    "each client's next round trip through the kernel",
    "the first round-robin pass starts at thread 0",
    "the size rounds up to the next line; Python rounds 2.5 to 2",
    "8-byte entries (Intel SDM Vol. 3A §4.5)",
    "32-bit paging (SDM Vol. 3A §4.3; PAE: SDM Vol. 3A §4.4.1)",
    "zstd's frame magic (RFC 8878 §3.1.1, 0xFD2FB528 little-endian)",
    "4-byte entries (Vol. 3A §4.3)",
    "Agner Fog, microarchitecture guide §10",
    "the paging-structure caches, SDM Vol. 3A §4.10.3-§4.10.4",
    "rename 273, issue 274, done and retired 284",
    "Per tick: issue 676 (about 445 per instruction whose uops issue)",
    "8 instructions, issue 8, 4 load ports and 4 ALUs",
    "So each issues 18 times: 17 replays",
    "4 load ports, 4 ALUs, issue 6 of 8 uops",
    "a thread alone issues 48.0 wrong-path uops per mispredict",
    "the scheduler's issue 34 % with what it calls",
    "its uop issues 1 + ceil(D / period) times",
    "the issue width and the issue queue's entries",
    "The wheel is built once per session; @pytest.fixture(scope=\"session\")",
    "data/reference/smt_energy_sysbench.csv",
]


@pytest.mark.parametrize("line, rules", OFFENDING)
def test_the_matcher_flags_history(line, rules):
    assert set(offences(line)) == rules


@pytest.mark.parametrize("line", CLEAN)
def test_the_matcher_lets_the_trade_s_words_through(line):
    assert offences(line) == []


def test_the_files_left_unread_are_history_data_and_this_file():
    assert not is_checked("CHANGELOG.md")
    assert not is_checked("data/reference/ht_linux_multithreaded.csv")
    assert not is_checked(THIS_FILE)
    assert is_checked("docs/hardening.md") and is_checked("tests/data/native_v1.txt")
    assert _text_of(b"\x28\xb5\x2f\xfd\0\0") is None  # a zstd frame
    assert _text_of("SDM Vol. 3A §4.5\n".encode()) is not None
