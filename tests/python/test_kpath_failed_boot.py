"""A kpath: recording whose probe fails in the guest (src/tracer/kpath.cpp, ensureKpathCache): the guest is booted
once more on a fresh disk, the first failure printed; a second failure is one TraceError that quotes the probe's own
message and its last phase and names the kept console, and nothing is cached. A stand-in qemu-system-x86_64 (first
on PATH) prints what a guest whose probe died prints and powers off; the kernel is the real one, linked from the
cache the real recording downloaded it to, so nothing boots or downloads here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

_CONSOLE = (
    "kpath: probe starting\r\n"
    "kpath probe: 30 instances of 81 paths\r\n"
    "kpath probe: tcp\r\n"
    "kpath probe failed: a chat batch never reached the server's socket: no error code\r\n"
    "kpath: probe failed\r\n"
    "[   16.951522] reboot: Power down\r\n"
)


def _kernel_cache(tmp: Path) -> Path:
    """A fresh kpath cache holding only the real kernel (symlinks into the cache scripts/kpath_kernel.sh uses)."""
    home = os.environ.get("SMTLAB_KPATH_CACHE") or str(Path.home() / ".cache/smtlab/kpath")
    got = subprocess.run([str(ROOT / "scripts/kpath_kernel.sh"), home], capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr
    vmlinuz = Path(got.stdout.strip().splitlines()[-1])
    release = vmlinuz.name.removeprefix("vmlinuz-")
    cache = tmp / "cache"
    cache.mkdir()
    for name in (vmlinuz.name, f"modules-{release}", "kernel-package.txt"):
        (cache / name).symlink_to(vmlinuz.parent / name)
    return cache


def test_a_probe_that_fails_twice_is_one_clear_error_and_caches_nothing(real_paths, tmp_path):
    cache = _kernel_cache(tmp_path)
    fake = tmp_path / "bin"
    fake.mkdir()
    (tmp_path / "console.txt").write_text(_CONSOLE)
    qemu = fake / "qemu-system-x86_64"
    qemu.write_text(f"#!/bin/sh\necho boot >> {tmp_path / 'boots'}\ncat {tmp_path / 'console.txt'}\nexit 0\n")
    qemu.chmod(0o755)
    env = dict(os.environ, SMTLAB_KPATH_CACHE=str(cache), PATH=f"{fake}:{os.environ['PATH']}",
               PYTHONPATH=str(ROOT / "python"))
    run = subprocess.run(
        [sys.executable, "-c", "from smtlab._core import Source, TraceError\n"
         "try:\n    Source('kpath:getppid')\nexcept TraceError as e:\n    print(e)\n    raise SystemExit(3)\n"],
        env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert (tmp_path / "boots").read_text().count("boot") == 2  # booted once more, then gave up
    said = ("the guest said: kpath probe failed: a chat batch never reached the server's socket: no error code "
            "(the probe's last phase: tcp)")
    kept = cache / "failed-boot.log"
    message = run.stdout.strip()
    assert message == (f"kpath: the probe did not complete in the guest (qemu status 0); {said}; "
                       f"the whole console is in {kept}")
    assert run.stderr.count("booting once more") == 1 and said in run.stderr
    assert kept.read_bytes() == _CONSOLE.encode()
    assert not (cache / "manifest.json").exists()
    assert not [p for p in cache.iterdir() if p.name.startswith("boot.tmp") or ".tmp" in p.name]
