"""Atomic outputs in Python: complete or absent, never half-written; bad destinations refused with the reason."""

import os

import pytest

from smtlab import fileio


def test_written_file_appears_complete_and_alone(tmp_path):
    target = tmp_path / "table.csv"
    fileio.write_text(target, "a,b\n1,2\n")
    assert target.read_text() == "a,b\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


def test_failure_inside_keeps_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "study.md"
    target.write_text("old complete report\n")
    with pytest.raises(RuntimeError):
        with fileio.atomic_path(target) as tmp:
            tmp.write_text("half a rep")
            assert not target.read_text().startswith("half")
            raise RuntimeError("the run failed")
    assert target.read_text() == "old complete report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.md"]


def test_permissions_are_those_of_an_ordinary_new_file(tmp_path):
    target = fileio.write_json(tmp_path / "x.json", {"a": 1})
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda d: d / "missing" / "x.json", "does not exist"),
        (lambda d: d, "is a directory"),
        (lambda d: (d / "f").write_text("") or d / "f" / "x.json", "not a directory"),
    ],
)
def test_bad_destinations_name_the_reason(tmp_path, make, reason):
    with pytest.raises(ValueError, match=reason):
        fileio.check_output_path(make(tmp_path))
