"""make's compile jobs on real compiler code: windows of gcc 12's ``cc1`` compiling a real file.

The recipe is bench/programs.py's cc1 program (bench/README.md): the compiler proper, ``cc1 -fpreprocessed -quiet
-O2``, on workloads/kernels/aim9.c preprocessed once with ``gcc -E -P`` (so that cc1 is the one program traced: QEMU
does not follow the exec of gcc's driver), recorded with ``smtlab trace record --skip S --max-instructions K``. It is
repeated here, not imported: bench/ is standard-library scripts and the package cannot be imported without its
compiled module.

**Windows.** Job ``i`` of make_j2 runs window ``i mod WINDOWS``: :data:`WINDOW` instructions of the compile from
instruction ``SKIP + i * STRIDE``. Why separate skips and not offsets into one recording: a trace source starts at its
first record, so an offset would need a cut copy of each window anyway, and a QEMU recording that skips is cheap
(about 3 s per 100 M skipped instructions, no records written). Why these numbers (chosen): the whole compile is
566 M instructions, the first ~100 M start-up and parsing, about 93 % of it the ``-O2`` passes (bench/README.md), so
windows 100 M, 150 M, ..., 350 M apart lie in different passes of one compile, as the jobs of a real build run
different code on different inputs; and ``WINDOW`` (3 M) is the longest job the study asks for (default mode: jobs
of 0.5..1.0 x 3 M instructions; quick mode 1.5 M), so a job never runs past its window's end. Each job is its own
process (its own task and address-space id).

**Cache.** ``$SMTLAB_STUDY_CACHE`` (else ``$XDG_CACHE_HOME/smtlab``, else ~/.cache/smtlab), sub-folder ``cc1``:
``aim9.i``, ``cc1.wI.trace`` and ``cc1.wI.json`` (the recorder's manifest) per window, and ``cc1.stamp``, a SHA-256 of
the recipe (command line, environment, skips, window, the tracer's revision ``_core.TRACER_REVISION``), the cc1
binary and its input. cc1 runs in a fixed environment
(:func:`recording_env`) so that a skip lands on the same instruction whoever records. Windows are recorded again only when the
stamp changes. Each file is recorded under ``*.partial`` and renamed when complete, the stamp last, so an interrupted
run leaves no half window. Six windows are 6 x 3 M instructions, about 1.5 MB of native trace.

**Fallback.** Without the smtlab program, gcc's cc1 or the tracer (``smtlab trace record`` fails), :func:`enable`
returns the one-line reason, and every job runs ``Compute(n)`` on its own generated stream (``task_spec(60 + i)``) as
before; :func:`note` names the source the jobs ran for the report.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..resources import resource_path

#: Environment switch for this process and the study's workers: "1" on, "0" off (unavailable), "off" (the user
#: asked for estimated user work, --no-user-programs).
CC1_ENV = "SMTLAB_STUDY_CC1"
#: Why the jobs fell back, for the workers' note (set by :func:`enable`).
CC1_WHY_ENV = "SMTLAB_STUDY_CC1_WHY"

M = 1_000_000
SKIP = 100 * M  # start-up and parsing left out (bench/programs.py's cc1 skip)
STRIDE = 50 * M  # distance between two windows' starts
WINDOW = 3 * M  # instructions per window: the longest job of the study (two_package: 1.0 x 3 M)
WINDOWS = 6  # make_j2's jobs

SOURCE = resource_path("workloads/kernels/aim9.c")  # the installed package's copy, or the source tree's


class CompileJobError(Exception):
    """The cc1 windows cannot be had here (names what is missing and why)."""


def skip_of(window: int) -> int:
    """Instructions of the compile before window ``window`` starts."""
    return SKIP + window * STRIDE


def cache_dir() -> Path:
    """The study's cache for the cc1 windows (see the module doc)."""
    d = os.environ.get("SMTLAB_STUDY_CACHE")
    if d:
        base = Path(d)
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "smtlab"
    return base / "cc1"


def window_path(window: int, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / f"cc1.w{window}.trace"


def manifest_path(window: int, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / f"cc1.w{window}.json"


def smtlab_program() -> Path:
    """The smtlab program that records: $SMTLAB_CLI, the package's own, the source tree's build, or PATH."""
    from ..__main__ import program

    try:
        return program()
    except FileNotFoundError as e:
        found = shutil.which("smtlab")
        if found:
            return Path(found)
        raise CompileJobError(str(e)) from None


def _run(cmd: list[str], what: str) -> bytes:
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise CompileJobError(f"{what}: cannot run {cmd[0]}: {e.strerror}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()[-400:]
        raise CompileJobError(f"{what}: `{' '.join(cmd)}` exited with {proc.returncode}: {err}")
    return proc.stdout


def recipe(cache: Path) -> tuple[list[str], list[Path]]:
    """cc1's command line (the input preprocessed into ``cache``) and the files the recording depends on."""
    gcc = shutil.which("gcc")
    if not gcc:
        raise CompileJobError("gcc not found on PATH (Debian package gcc)")
    cc1 = Path(_run([gcc, "-print-prog-name=cc1"], "cc1").decode().strip())
    if not (cc1.is_absolute() and cc1.is_file()):
        raise CompileJobError(f"gcc -print-prog-name=cc1 gives '{cc1}', not a file")
    if not SOURCE.is_file():
        raise CompileJobError(f"{SOURCE} (the file the jobs compile) not found")
    data = _run([gcc, "-E", "-P", str(SOURCE)], "cc1: preprocess")
    source = cache / "aim9.i"
    if not (source.is_file() and source.read_bytes() == data):
        tmp = source.with_name(source.name + ".partial")
        tmp.write_bytes(data)
        tmp.replace(source)
    # The input by its name in the cache folder (cwd), so that the command (and the stamp) do not depend on where the
    # cache is.
    return [str(cc1), "-fpreprocessed", "-quiet", "-O2", source.name, "-o", os.devnull], [cc1, source]


def recording_env() -> dict[str, str]:
    """The environment cc1 runs in under the recorder: fixed, because QEMU hands the recorder's environment to the
    program, and its size moves every later instruction (glibc and cc1's getenv calls walk it; the stack starts below
    it), so a skip would land elsewhere in the compile from a shell with other variables. The tracer's own settings
    (SMTLAB_QEMU, SMTLAB_QEMU_PLUGIN) are kept when set: smtlab needs them to find QEMU and the plugin."""
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    for key in ("SMTLAB_QEMU", "SMTLAB_QEMU_PLUGIN"):
        if os.environ.get(key):
            env[key] = os.environ[key]
    return env


def fingerprint(argv: list[str], inputs: list[Path]) -> str:
    h = hashlib.sha256()
    from .._core import TRACER_REVISION  # a tracer change that alters recordings records the windows again

    h.update(json.dumps({"argv": argv, "env": recording_env(), "skips": [skip_of(w) for w in range(WINDOWS)],
                         "window": WINDOW, "tracer_revision": TRACER_REVISION}).encode())
    for path in inputs:
        h.update(path.read_bytes())
    return h.hexdigest()


def _record(smtlab: Path, argv: list[str], cache: Path, window: int) -> None:
    """Records window ``window`` under a temporary prefix and renames it when complete; partial files are removed
    when anything fails."""
    tmp = cache / f"cc1.w{window}.partial"
    tmp_trace, tmp_manifest = Path(f"{tmp}.trace"), Path(f"{tmp}.json")
    cmd = [str(smtlab), "trace", "record", "-q", "-o", tmp.name, "--skip", str(skip_of(window)),
           "--max-instructions", str(WINDOW), "--", *argv]
    try:
        try:
            proc = subprocess.run(cmd, cwd=cache, env=recording_env(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        except OSError as e:
            raise CompileJobError(f"cannot run {smtlab}: {e.strerror}") from None
        if proc.returncode != 0:
            raise CompileJobError(f"`smtlab trace record` of cc1 window {window} exited with {proc.returncode}: "
                                  f"{proc.stderr.strip()[-400:]}")
        try:
            manifest = json.loads(tmp_manifest.read_text())
            threads = manifest["threads"]
            count = int(threads[0]["instructions"])
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            raise CompileJobError(f"cannot read the manifest {tmp_manifest}: {e}") from None
        # The compile runs 566 M instructions, so every window is full; a short one means another cc1 or input.
        if len(threads) != 1 or count != WINDOW:
            raise CompileJobError(f"cc1 window {window}: {count} instructions in {len(threads)} thread(s) after "
                                  f"skipping {skip_of(window)}, not {WINDOW} in one")
        threads[0]["file"] = window_path(window).name
        tmp_manifest.write_text(json.dumps(manifest) + "\n")
        tmp_trace.replace(window_path(window, cache))
        tmp_manifest.replace(manifest_path(window, cache))
    finally:
        for leftover in (tmp_trace, tmp_manifest, *cache.glob(f"{tmp.name}.raw*")):
            leftover.unlink(missing_ok=True)


def ensure_windows(log=None) -> list[Path]:
    """The windows' trace files, recorded first if missing or stale (``log``: one line per window recorded; about
    5-12 s each under QEMU). Raises CompileJobError saying why they cannot be had."""
    cache = cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CompileJobError(f"cannot create the cache folder {cache}: {e.strerror}") from None
    argv, inputs = recipe(cache)
    stamp = cache / "cc1.stamp"
    want = fingerprint(argv, inputs)
    paths = [window_path(w, cache) for w in range(WINDOWS)]
    if stamp.is_file() and stamp.read_text().strip() == want and all(p.is_file() for p in paths):
        return paths
    smtlab = smtlab_program()
    stamp.unlink(missing_ok=True)
    for w in range(WINDOWS):
        if log:
            log(f"recording cc1 window {w + 1}/{WINDOWS} ({WINDOW:,} instructions from {skip_of(w):,}; first run "
                "only)")
        _record(smtlab, argv, cache, w)
    tmp = stamp.with_name(stamp.name + ".partial")
    tmp.write_text(want + "\n")
    tmp.replace(stamp)
    return paths


def cc1_jobs_on() -> bool:
    return os.environ.get(CC1_ENV) == "1"


def enable(log=None) -> str | None:
    """Switches the cc1 windows on for this process and its workers if they can be had (recorded on first use).
    Returns None when on, else the one-line reason for the fallback to the generated stream."""
    if os.environ.get(CC1_ENV) == "off":
        return "estimated user work asked for (--no-user-programs)"
    try:
        ensure_windows(log)
    except (CompileJobError, OSError) as e:
        why = f"cc1 windows unavailable ({e})"
        os.environ[CC1_ENV] = "0"
        os.environ[CC1_WHY_ENV] = why
        return why
    os.environ[CC1_ENV] = "1"
    return None


def job_source(job: int) -> str | None:
    """The trace file job ``job`` runs (None: the job's own generated stream), as :func:`enable` decided."""
    if not cc1_jobs_on():
        return None
    return str(window_path(job % WINDOWS))


def note() -> str:
    """The report's line naming the source of make_j2's compile jobs and cpu_pair's tasks (call after
    :func:`enable`)."""
    if cc1_jobs_on():
        return (f"make_j2 compile jobs and cpu_pair tasks: real gcc 12 cc1 -O2 compiling workloads/kernels/aim9.c "
                f"(traced with smtlab trace record), job i = {WINDOW / M:g} M instructions from instruction "
                f"{SKIP // M} M + (i mod {WINDOWS}) x {STRIDE // M} M of the compile")
    why = os.environ.get(CC1_WHY_ENV) or "estimated user work asked for (--no-user-programs)"
    if os.environ.get(CC1_ENV) == "off":
        why = "estimated user work asked for (--no-user-programs)"
    return (f"make_j2 compile jobs and cpu_pair tasks: generated stream (gen:mix, task_spec(60 + i) and "
            f"task_spec(50 + i)); {why}")


def log_stderr(line: str) -> None:
    print(f"smtlab.study: two_package: {line}", file=sys.stderr, flush=True)
