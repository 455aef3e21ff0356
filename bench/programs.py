#!/usr/bin/env python3
"""Real programs for the benchmarks: traced once with `smtlab trace record` into a cache, like the kernel:NAME traces.

Each program is traced twice, as two *copies* for two-thread runs: copy `a` from instruction SKIP (start-up left
out) and copy `b` from SKIP + KEEP/2, KEEP instructions each. Two hardware threads running `a` and `b` execute the
same program half a window apart, like two processes started at different times, not in lock-step.

The cache (default: bench-traces/ beside the smtlab program, i.e. in the build tree) holds NAME.a.trace, NAME.b.trace,
their manifests and NAME.stamp, a fingerprint of everything the trace depends on (the recipe, the program binary,
its input, the tracer's sources). A trace is recorded again only when the fingerprint changes. Files are recorded
under a temporary name and renamed when complete, the stamp last, so an interrupted run leaves no half trace.

`cmake --build build --target bench_traces` runs this script; bench.py and ht_gain.py call `ensure_traces` themselves.
Without the tracer (no qemu-x86_64, plugin or capstone) it says so in one line and the benchmarks run the generators
only. Standard library only. Usage: programs.py [SMTLAB] [--dir DIR] [--force]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
# Inputs that are real files, the same on every Debian machine: the licence texts of base-files (237 KB of English
# prose, unchanged for years), and one of our own C sources for the compiler.
LICENCE_DIR = Path("/usr/share/common-licenses")
CC1_SOURCE = REPO / "workloads" / "kernels" / "aim9.c"
RAYTRACE_SOURCE = REPO / "workloads" / "bench" / "raytrace.c"
# What the fingerprint covers of the tracer itself: when these change, traces are recorded again.
TRACER_SOURCES = ("src/tracer", "tools/qemu-tracer", "include/smtlab/tracer")


class ProgramError(Exception):
    pass


@dataclass(frozen=True)
class Program:
    name: str
    what: str
    skip: int  # instructions of start-up left out before copy a
    keep: int  # instructions per copy
    # Builds the command line (and its inputs) in the cache directory; returns (argv, files the trace depends on),
    # or raises ProgramError saying why this program cannot be traced here.
    prepare: Callable[[Path], tuple[list[str], list[Path]]]


def _which(name: str) -> Path:
    found = shutil.which(name)
    if not found:
        raise ProgramError(f"{name} not found on PATH")
    return Path(found).resolve()


def _licences(cache: Path) -> Path:
    """The licence texts concatenated in name order (symlinks left out, so each text once)."""
    if not LICENCE_DIR.is_dir():
        raise ProgramError(f"{LICENCE_DIR} (Debian base-files) not found; it is the input file")
    texts = sorted(p for p in LICENCE_DIR.iterdir() if p.is_file() and not p.is_symlink())
    data = b"".join(p.read_bytes() for p in texts)
    if not data:
        raise ProgramError(f"{LICENCE_DIR} holds no licence text")
    return _write_if_changed(cache / "licences.txt", data)


def _write_if_changed(path: Path, data: bytes) -> Path:
    if not (path.is_file() and path.read_bytes() == data):
        tmp = path.with_name(path.name + ".partial")
        tmp.write_bytes(data)
        tmp.replace(path)
    return path


def _run(cmd: list[str], what: str) -> bytes:
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as err:
        raise ProgramError(f"{what}: cannot run {cmd[0]}: {err}") from None
    if proc.returncode != 0:
        raise ProgramError(f"{what}: `{' '.join(cmd)}` exited with {proc.returncode}: "
                           f"{proc.stderr.decode(errors='replace').strip()[:500]}")
    return proc.stdout


def _prepare_gzip(cache: Path) -> tuple[list[str], list[Path]]:
    gzip = _which("gzip")
    text = _licences(cache)
    return [str(gzip), "-9", "-c", str(text)], [gzip, text]


def _prepare_bzip2(cache: Path) -> tuple[list[str], list[Path]]:
    bzip2 = _which("bzip2")
    text = _licences(cache)
    return [str(bzip2), "-9", "-c", str(text)], [bzip2, text]


def _prepare_cc1(cache: Path) -> tuple[list[str], list[Path]]:
    gcc = _which("gcc")
    cc1 = Path(_run([str(gcc), "-print-prog-name=cc1"], "cc1").decode().strip())
    if not (cc1.is_absolute() and cc1.is_file()):
        raise ProgramError(f"gcc -print-prog-name=cc1 gives {cc1}, not a file")
    # Preprocessed once, so that cc1 (the compiler proper) is the one program traced: QEMU does not follow the exec
    # of gcc's driver.
    source = _write_if_changed(cache / "aim9.i", _run([str(gcc), "-E", "-P", str(CC1_SOURCE)], "cc1: preprocess"))
    return [str(cc1), "-fpreprocessed", "-quiet", "-O2", str(source), "-o", os.devnull], [cc1, source]


def _prepare_raytrace(cache: Path) -> tuple[list[str], list[Path]]:
    cc = _which("gcc")
    binary = cache / "raytrace"
    # The reference kernels' flags (docs/tracing.md): generic x86-64, so QEMU can run it; static, so the trace has no
    # dynamic-loader start-up.
    cmd = [str(cc), "-O2", "-march=x86-64", "-mtune=generic", "-static", "-o", str(binary) + ".partial",
           str(RAYTRACE_SOURCE), "-lm"]
    if not binary.is_file() or binary.stat().st_mtime < RAYTRACE_SOURCE.stat().st_mtime:
        _run(cmd, "raytrace: compile")
        Path(str(binary) + ".partial").replace(binary)
    return [str(binary), "160", "120", "2"], [binary, RAYTRACE_SOURCE]


M = 1_000_000
# Dynamic instruction counts of the whole runs (valgrind, this machine): gzip 51.6 M, bzip2 84.3 M, cc1 566 M,
# raytrace 98.8 M. Every copy b ends at skip + 1.5 * keep, inside the run.
PROGRAMS = [
    Program("gzip", "gzip -9 of the base-files licence texts (237 KB)", 2 * M, 20 * M, _prepare_gzip),
    Program("bzip2", "bzip2 -9 of the same text", 2 * M, 20 * M, _prepare_bzip2),
    # cc1 spends its first ~100 M instructions on start-up and parsing the headers; the window is the -O2 passes.
    Program("cc1", "gcc 12's cc1 -O2 compiling workloads/kernels/aim9.c", 100 * M, 20 * M, _prepare_cc1),
    Program("raytrace", "workloads/bench/raytrace.c, 160x120, 2x2 samples per pixel", 1 * M, 20 * M, _prepare_raytrace),
]


def tracer_unavailable(smtlab: Path) -> str | None:
    """None if `smtlab trace record` can run here, else smtlab's one-line reason."""
    try:
        out = subprocess.run([str(smtlab), "trace", "kernels"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True).stdout
    except OSError as err:
        return f"cannot run {smtlab}: {err}"
    # The first line is "kernel traces (cache DIR; tracer unavailable: WHY; look-alikes are used):" when it cannot.
    first = out.splitlines()[0] if out else ""
    match = re.search(r"tracer unavailable: (.*?)(?:; look-alikes are used)?\)?:?$", first)
    return f"tracer unavailable: {match.group(1)}" if match else None


def _fingerprint(program: Program, argv: list[str], inputs: list[Path], cache: Path) -> str:
    # The cache's own location is left out (argv names the inputs made in it): a cache that is moved or copied, or a
    # second build tree's, has the same traces and must not record them again.
    h = hashlib.sha256()
    where = str(cache)
    argv = [a.replace(where, "<cache>") for a in argv]
    h.update(json.dumps([program.name, program.skip, program.keep, argv]).encode())
    for path in inputs:
        h.update(path.read_bytes())
    for folder in TRACER_SOURCES:
        for path in sorted((REPO / folder).rglob("*")):
            if path.is_file():
                h.update(str(path.relative_to(REPO)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def trace_files(cache: Path, name: str) -> tuple[Path, Path]:
    return cache / f"{name}.a.trace", cache / f"{name}.b.trace"


def _record(smtlab: Path, argv: list[str], prefix: Path, skip: int, keep: int, name: str) -> int:
    """Records one copy under a temporary prefix, then renames PREFIX.partial.{trace,json} to PREFIX.{trace,json};
    returns the instruction count. Partial files are removed when anything fails."""
    tmp = Path(f"{prefix}.partial")
    tmp_trace, tmp_manifest = Path(f"{tmp}.trace"), Path(f"{tmp}.json")
    cmd = [str(smtlab), "trace", "record", "-o", str(tmp), "--skip", str(skip), "--max-instructions", str(keep),
           "--", *argv]
    try:
        # The program's own output (gzip -c writes the compressed data to stdout) is not wanted.
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise ProgramError(f"`{' '.join(cmd)}` exited with {proc.returncode}: {proc.stderr.strip()[-500:]}")
        try:
            manifest = json.loads(tmp_manifest.read_text())
            threads = manifest["threads"]
            count = int(threads[0]["instructions"])
        except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
            raise ProgramError(f"cannot read the manifest {tmp_manifest}: {err}") from None
        if len(threads) != 1:
            raise ProgramError(f"{len(threads)} threads recorded; the benchmark programs are single-threaded")
        # A copy much shorter than asked means the program ended inside the window: the recipe does not fit here.
        if count < keep // 2:
            raise ProgramError(f"only {count} instructions recorded after skipping {skip} (asked for {keep}); the "
                               "program ended early")
        threads[0]["file"] = f"{prefix.name}.trace"
        tmp_manifest.write_text(json.dumps(manifest) + "\n")
        tmp_trace.replace(f"{prefix}.trace")
        tmp_manifest.replace(f"{prefix}.json")
        return count
    finally:
        # The recorder's raw stream (tmp.raw.*) is its own temporary; it is gone after a clean run, not after a kill.
        for leftover in (tmp_trace, tmp_manifest, *tmp.parent.glob(f"{tmp.name}.raw*")):
            leftover.unlink(missing_ok=True)


def ensure_traces(smtlab: Path, cache: Path, log=print, force: bool = False,
                  names: list[str] | None = None) -> dict[str, tuple[Path, Path]]:
    """Traces what is missing or stale; returns {name: (copy a, copy b)} for the programs available here. Logs one
    line per program it traces or skips (fresh cached traces are used silently), through `log`."""
    reason = tracer_unavailable(smtlab)
    cache.mkdir(parents=True, exist_ok=True)
    ready: dict[str, tuple[Path, Path]] = {}
    for program in PROGRAMS:
        if names is not None and program.name not in names:
            continue
        a, b = trace_files(cache, program.name)
        stamp = cache / f"{program.name}.stamp"
        if reason:
            # Cached traces still run without the tracer, as cached kernel:NAME traces do (perhaps of an older
            # program version or tracer; the log says so).
            if a.is_file() and b.is_file() and stamp.is_file():
                log(f"{program.name}: tracer unavailable, using the cached traces as they are")
                ready[program.name] = (a, b)
            continue
        try:
            argv, inputs = program.prepare(cache)
            fingerprint = _fingerprint(program, argv, inputs, cache)
            fresh = a.is_file() and b.is_file() and stamp.is_file() and stamp.read_text().strip() == fingerprint
            if fresh and not force:
                ready[program.name] = (a, b)
                continue
            stamp.unlink(missing_ok=True)
            start = time.perf_counter()
            count_a = _record(smtlab, argv, cache / f"{program.name}.a", program.skip, program.keep, program.name)
            count_b = _record(smtlab, argv, cache / f"{program.name}.b", program.skip + program.keep // 2,
                              program.keep, program.name)
            tmp = stamp.with_name(stamp.name + ".partial")
            tmp.write_text(fingerprint + "\n")
            tmp.replace(stamp)
            size = (a.stat().st_size + b.stat().st_size) / 1e6
            log(f"{program.name}: traced {count_a:,} + {count_b:,} instructions in "
                f"{time.perf_counter() - start:.1f} s, {size:.1f} MB ({program.what})")
            ready[program.name] = (a, b)
        except (ProgramError, OSError) as err:
            log(f"{program.name}: not traced: {err}")
    if reason and not ready:
        log(f"real programs: not run, {reason}; generators only")
    return ready


def default_cache(smtlab: Path) -> Path:
    return Path(os.environ.get("SMTLAB_BENCH_TRACES") or smtlab.resolve().parent / "bench-traces")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("smtlab", nargs="?", type=Path, default=REPO / "build" / "smtlab",
                        help="the smtlab program (default: build/smtlab)")
    parser.add_argument("--dir", type=Path, help="trace cache (default: $SMTLAB_BENCH_TRACES, else bench-traces/ "
                                                 "beside the smtlab program)")
    parser.add_argument("--force", action="store_true", help="record again even when the cached traces are fresh")
    args = parser.parse_args(argv)
    if not (args.smtlab.is_file() and os.access(args.smtlab, os.X_OK)):
        print(f"programs: {args.smtlab} is not an executable; run `make build` or pass the smtlab path",
              file=sys.stderr)
        return 2
    cache = args.dir or default_cache(args.smtlab)
    ready = ensure_traces(args.smtlab, cache, force=args.force)
    for name, (a, b) in ready.items():
        print(f"  {name:<9} {a} ({a.stat().st_size / 1e6:.1f} MB), {b.name} ({b.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
