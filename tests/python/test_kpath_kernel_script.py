"""scripts/kpath_kernel.sh with a cache folder given as a relative path (SMTLAB_KPATH_CACHE=build/kpath, say).

The download runs inside a folder of its own (``cd``), so before the path was made absolute its log went to a path
that named nothing there and a failed download said only "apt-get download ... failed: " with no reason. A fake
``apt-get`` that fails with a known line stands in for the network: the reason must reach the message, and the fake
must have run in a folder under the cache. The script's other prerequisites (qemu-system-x86_64, a static busybox,
cpio) are faked too, so the test runs wherever bash does.
"""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_relative_cache_path_keeps_the_download_error(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apt-get").write_text(f"#!/bin/sh\npwd > {tmp_path / 'where'}\n"
                                  "echo 'E: Unable to locate package (fake)' >&2\nexit 100\n")
    (fake / "apt-get").chmod(0o755)
    for tool in ("qemu-system-x86_64", "busybox", "cpio"):  # a shell script: ldd calls it "not a dynamic executable"
        (fake / tool).write_text("#!/bin/sh\nexit 0\n")
        (fake / tool).chmod(0o755)
    (tmp_path / "work").mkdir()
    env = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
    env.pop("SMTLAB_KPATH_CACHE", None)
    got = subprocess.run([str(ROOT / "scripts/kpath_kernel.sh"), "rel/cache"], cwd=tmp_path / "work", env=env,
                         capture_output=True, text=True, timeout=60)
    assert got.returncode == 1
    assert "E: Unable to locate package (fake)" in got.stderr, got.stderr
    assert Path((tmp_path / "where").read_text().strip()).parent == tmp_path / "work/rel/cache"
    assert not list((tmp_path / "work/rel/cache").glob(".fetch.*"))  # the work folder is removed on failure
