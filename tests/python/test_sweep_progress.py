"""One progress display for the study and the sweep (smtlab/sweep/progress.py): a bar on a terminal, plain lines
at most one per interval anywhere else, so that a log of either has no carriage returns."""

from __future__ import annotations

import io
import sys

from smtlab.study import common
from smtlab.sweep.progress import Progress


def _square(x: int) -> dict[str, int]:
    return {"y": x * x}


def test_the_studys_jobs_write_plain_lines_when_stderr_is_not_a_terminal(capsys):
    assert not sys.stderr.isatty()  # capsys's stream, as a file or a pipe would be
    with common.progress_step(2, 7):
        res = common.run_jobs(_square, [{"x": i} for i in range(5)], workers=1, progress=True, desc="lmbench")
    assert [r["y"] for r in res] == [0, 1, 4, 9, 16]
    err = capsys.readouterr().err
    assert "\r" not in err, repr(err)
    lines = err.splitlines()
    # the start and the end (five instant jobs are within one interval); the section counter comes first
    assert lines == ["[2/7] lmbench: 0/5 runs done, 5 remaining, 0 s", "[2/7] lmbench: 5/5 runs done, 0 remaining, 0 s"]


def test_the_studys_jobs_write_nothing_without_progress(capsys):
    common.run_jobs(_square, [{"x": 1}], workers=1, progress=False, desc="lmbench")
    assert capsys.readouterr().err == ""


def test_a_progress_without_failures_or_cache_leaves_them_out_of_its_lines():
    stream = io.StringIO()
    bar = Progress(2, "aim9", failures=False, stream=stream, interval=0.0)
    bar.update()
    bar.close()
    assert stream.getvalue().splitlines() == ["aim9: 0/2 runs done, 2 remaining, 0 s",
                                              "aim9: 1/2 runs done, 1 remaining, 0 s",
                                              "aim9: 1/2 runs done, 1 remaining, 0 s"]
