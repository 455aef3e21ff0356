"""scripts/dbench_load.py, which counts dbench 1.x's system calls for its client.txt (the source of fileserver.py's
DBENCH_OPS), on a small load file whose calls are worked out here by hand from child.c's and fileio.c's rules."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).parents[2]
_spec = importlib.util.spec_from_file_location("dbench_load", ROOT / "scripts" / "dbench_load.py")
dbench_load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dbench_load)

# Word positions as child.c reads them: SMBopenX REQUEST names the file in word 5, its REPLY the status (2), the
# handle (3) and the size (5); SMBwrite: handle 3, size 5, offset 7; SMBwritebraw and SMBreadbraw: handle 3, offset 5,
# size 7; SMBclose: handle 3; SMBgetatr / SMBunlink: the file in word 3; SMBmv: old 3, new 5.
LOAD = """\
SMBopenX REQUEST x x x \\clients\\client1\\A
SMBopenX REPLY OK 7 x 0
SMBwrite REQUEST x 7 x 4 x 0
SMBwrite REPLY OK
SMBwritebraw REQUEST x 7 x 0 x 65475
SMBwrite REQUEST x 9 x 4 x 0
SMBreadbraw REQUEST x 7 x 0 x 8192
SMBflush REQUEST x 7
SMBflush REPLY OK
SMBgetatr REQUEST x \\clients\\client1\\A
SMBgetatr REPLY OK
SMBgetatr REQUEST x \\clients\\client1\\B
SMBgetatr REPLY ERRDOS
SMBclose REQUEST x 7
SMBclose REQUEST x 7
SMBopenX REQUEST x x x \\clients\\client1\\A
SMBopenX REPLY OK 8 x 100
SMBmv REQUEST x \\clients\\client1\\A x \\clients\\client1\\C
SMBunlink REQUEST x \\clients\\client1\\C
SMBunlink REPLY OK

lonely
"""


def test_counts_follow_dbench_1x_dispatch():
    got = dbench_load.count(LOAD.splitlines(keepends=True))
    calls = got["calls"]
    # Writes: two on the open handle 7 (4 bytes, and writebraw's 65,475 with size in word 7); the one on handle 9,
    # never opened, makes no call. Each that is made seeks first, as does the read (readbraw: 8,192 bytes).
    assert calls["write"] == 2 and calls["read"] == 1 and calls["lseek"] == 3
    assert dict(got["sizes"]["write"]) == {4: 1, 65475: 1} and dict(got["sizes"]["read"]) == {8192: 1}
    # The first open of A creates it, the second opens it (each with its fstat); the stat of B failed (ERR): no call.
    assert calls["create"] == 1 and calls["open"] == 1 and calls["fstat"] == 2 and calls["stat"] == 1
    # The second close of handle 7 finds it closed; SMBflush makes no call; the rename, then the unlink of C.
    assert calls["close"] == 1 and calls["rename"] == 1 and calls["unlink"] == 1
    assert not {"flush", "SMBflush"} & set(calls)
    # Every line of two words or more is parsed (20 here), whether or not it makes a call.
    assert got["lines"] == 20


def test_sizes_group_by_the_pages_they_span():
    sizes = {4: 3, 4096: 2, 4097: 1, 65536: 1}
    assert dbench_load.by_pages(sizes) == [(1, 5, 4 * 3 + 4096 * 2), (2, 1, 4097), (16, 1, 65536)]


def test_a_file_that_is_not_a_load_file_is_refused(tmp_path, capsys):
    missing = tmp_path / "none.txt"
    assert dbench_load.main([str(missing)]) == 1
    assert "none.txt" in capsys.readouterr().err
    other = tmp_path / "other.txt"
    other.write_text("hello world\nnot a load file\n")
    assert dbench_load.main([str(other)]) == 1
    assert "no line makes a system call" in capsys.readouterr().err
