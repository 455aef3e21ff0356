"""The study's output folder is checked before any simulation, as the smtlab program checks its outputs: one message
that names the folder and the reason, exit status 2, nothing simulated."""

from __future__ import annotations

import pathlib

import pytest

from smtlab.study.report import main


def test_output_is_a_file(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "out"
    f.write_text("keep me")
    assert main(["--quick", "-o", str(f), "--only", "lmbench", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"cannot write the study into '{f}': it is not a directory" in err
    assert f.read_text() == "keep me"  # the input is never overwritten


def test_output_under_a_file(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "file"
    f.write_text("")
    assert main(["--quick", "-o", str(f / "sub"), "--only", "lmbench", "--no-progress"]) == 2
    assert f"cannot create the study's output folder '{f / 'sub'}'" in capsys.readouterr().err
