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


def test_a_symbolic_link_is_written_through_and_stays(tmp_path):
    """As a shell's ``>`` writes through a link (and as smtlab's C++ outputs do): before, the rename replaced the link
    with a regular file and left the file it named as it was."""
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "table.csv"
    real.write_text("old\n")
    real.chmod(0o600)  # kept, not the umask's 0644
    (tmp_path / "link.csv").symlink_to("real/table.csv")  # relative to the link's folder
    fileio.write_text(tmp_path / "link.csv", "new\n")
    assert (tmp_path / "link.csv").is_symlink()
    assert real.read_text() == "new\n"
    assert real.stat().st_mode & 0o7777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real"]  # no temporary file left
    assert sorted(p.name for p in real.parent.iterdir()) == ["table.csv"]
    # A link to a link is followed to the end; a dangling link's file is created where it points.
    (tmp_path / "link2.csv").symlink_to("link.csv")
    fileio.write_text(tmp_path / "link2.csv", "newer\n")
    assert real.read_text() == "newer\n"
    (tmp_path / "dangling.json").symlink_to(tmp_path / "real" / "new.json")  # absolute
    fileio.write_json(tmp_path / "dangling.json", {"a": 1})
    assert (tmp_path / "dangling.json").is_symlink()
    assert (tmp_path / "real" / "new.json").read_text() == '{\n  "a": 1\n}\n'
    # A link that points to itself is refused by name, before anything is written.
    (tmp_path / "loop.json").symlink_to("loop.json")
    with pytest.raises(ValueError, match=r"cannot write output '.*loop\.json': too many levels of symbolic links"):
        fileio.check_output_path(tmp_path / "loop.json")
