"""make_j2's compile jobs on real cc1 code (workloads/compile_jobs.py). Expected values come from the
recipe (gcc's cc1, the skips and window of compile_jobs), the recorder's own manifests, an independent recording of
the same compile, and the job lengths' formula in two_package.run (Random(seed).uniform(0.5, 1.0) x instructions);
never from a previous model run. The first run records the six windows into the study cache (about 25 s)."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from smtlab import Source, read_records
from smtlab.os import Compute
from smtlab.workloads import compile_jobs as cj
from smtlab.workloads import two_package
from smtlab.workloads.kpaths import WakeChannel, task_spec


@pytest.fixture
def cc1_on(monkeypatch):
    monkeypatch.delenv(cj.CC1_ENV, raising=False)
    monkeypatch.delenv(cj.CC1_WHY_ENV, raising=False)
    assert cj.enable() is None
    yield
    # monkeypatch restores the environment enable() changed


def _lengths(seed: int, instructions: int, jobs: int = 6) -> list[int]:
    """two_package.run's job lengths, written out from its docstring's rule."""
    rng = random.Random(seed)
    return [int(instructions * rng.uniform(0.5, 1.0)) for _ in range(jobs)]


def test_every_window_is_the_recipe_as_its_manifest_records_it(cc1_on):
    argv, _ = cj.recipe(cj.cache_dir())
    gcc_cc1 = subprocess.run(["gcc", "-print-prog-name=cc1"], capture_output=True, text=True, check=True).stdout
    assert argv[0] == gcc_cc1.strip() and argv[1:5] == ["-fpreprocessed", "-quiet", "-O2", "aim9.i"]
    for w in range(cj.WINDOWS):
        manifest = json.loads(cj.manifest_path(w).read_text())
        assert manifest["command"] == argv
        assert manifest["skip"] == 100_000_000 + w * 50_000_000
        assert manifest["max_instructions"] == 3_000_000
        assert manifest["end"] == "max_instructions"  # the compile went on past the window: nothing cut short
        assert manifest["threads"] == [{"file": cj.window_path(w).name, "instructions": 3_000_000}]
        # The trace the jobs read holds exactly what the manifest says was recorded.
        assert Source(str(cj.window_path(w))).length == manifest["threads"][0]["instructions"]


def test_window_starts_where_the_compile_is_at_its_skip(cc1_on, tmp_path):
    """An independent recording of the same compile from window 1's skip begins with window 1's records (cc1 and
    QEMU user mode are deterministic), so the window is that stretch of the compile and nothing else."""
    argv, _ = cj.recipe(cj.cache_dir())
    control = tmp_path / "control"
    subprocess.run([str(cj.smtlab_program()), "trace", "record", "-q", "-o", str(control), "--skip",
                    str(cj.skip_of(1)), "--max-instructions", "1000", "--", *argv], cwd=cj.cache_dir(),
                   env=cj.recording_env(), check=True, stdout=subprocess.DEVNULL)
    want = read_records(f"{control}.trace")
    assert len(want) == 1000
    assert read_records(str(cj.window_path(1)), 1000) == want


def test_jobs_run_different_instructions(cc1_on):
    heads = [[r.pc for r in read_records(str(cj.window_path(w)), 2000)] for w in range(cj.WINDOWS)]
    for a in range(cj.WINDOWS):
        for b in range(a + 1, cj.WINDOWS):
            assert heads[a] != heads[b], (a, b)
    assert len({cj.job_source(i) for i in range(cj.WINDOWS)}) == cj.WINDOWS
    assert cj.job_source(cj.WINDOWS) == cj.job_source(0)  # a seventh job takes window 0 again


def test_make_j2_jobs_retire_their_lengths_from_their_own_cc1_window(cc1_on):
    seed, instructions = 3, 200_000
    out = two_package.run("make_j2", "linux25ht", seed, instructions)
    lengths = _lengths(seed, instructions)
    for i, n in enumerate(lengths):
        # Every compile instruction came from the job's window; the task's own generated stream ran none of them.
        assert out["job_retired_by_source"][f"cc{i}"] == {str(cj.window_path(i)): n}
        assert out["job_sources"][i] == str(cj.window_path(i))
    assert "real gcc 12 cc1 -O2" in cj.note()


def test_a_job_longer_than_its_window_is_refused(cc1_on):
    done = WakeChannel("t")
    steps = two_package.job_steps(2, cj.WINDOW, done)
    assert steps[1] == Compute(cj.WINDOW, source=str(cj.window_path(2)))
    with pytest.raises(ValueError, match="longer than its cc1 window"):
        two_package.job_steps(2, cj.WINDOW + 1, done)


def test_without_gcc_the_jobs_fall_back_to_the_generated_stream_and_say_so(monkeypatch, tmp_path):
    monkeypatch.setenv("SMTLAB_STUDY_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no gcc
    monkeypatch.delenv(cj.CC1_ENV, raising=False)
    monkeypatch.delenv(cj.CC1_WHY_ENV, raising=False)
    why = cj.enable()
    assert why is not None and "gcc not found" in why
    assert os.environ[cj.CC1_ENV] == "0"
    note = cj.note()
    assert note.startswith("make_j2 compile jobs and cpu_pair tasks: generated stream") and "gcc not found" in note
    assert two_package.job_steps(0, 1000, WakeChannel("t"))[1] == Compute(1000)
    seed, instructions = 1, 100_000
    out = two_package.run("make_j2", "linux24", seed, instructions)
    assert out["job_sources"] == [task_spec(60 + i, 64) for i in range(6)]
    for i, n in enumerate(_lengths(seed, instructions)):
        assert out["job_retired_by_source"][f"cc{i}"] == {task_spec(60 + i, 64): n}


def test_a_failed_recording_leaves_no_window_and_no_stamp(monkeypatch, tmp_path):
    fake = tmp_path / "smtlab"
    fake.write_text("#!/bin/sh\n: > cc1.w0.partial.trace\necho 'qemu-x86_64: not found' >&2\nexit 3\n")
    fake.chmod(0o755)
    cache = tmp_path / "cache"
    monkeypatch.setenv("SMTLAB_STUDY_CACHE", str(cache))
    monkeypatch.setenv("SMTLAB_CLI", str(fake))
    monkeypatch.delenv(cj.CC1_ENV, raising=False)
    monkeypatch.delenv(cj.CC1_WHY_ENV, raising=False)
    why = cj.enable()
    assert why is not None and "window 0 exited with 3" in why and "qemu-x86_64: not found" in why
    assert sorted(p.name for p in (cache / "cc1").iterdir()) == ["aim9.i"]
    assert cj.job_source(0) is None


def test_no_user_programs_turns_the_cc1_jobs_off(monkeypatch):
    monkeypatch.setenv(cj.CC1_ENV, "off")
    assert "--no-user-programs" in cj.enable()
    assert cj.job_source(0) is None and "--no-user-programs" in cj.note()


def test_cpu_pair_tasks_run_their_cc1_windows(cc1_on):
    # Task i runs window i for exactly its length (the experiment's instructions); its generated stream runs none.
    instructions = 150_000
    out = two_package.run("cpu_pair", "linux24", 0, instructions)
    for i in range(2):
        assert out["task_retired_by_source"][f"cpu{i}"] == {str(cj.window_path(i)): instructions}
    with pytest.raises(ValueError, match="cpu_pair: a task of"):
        two_package.compile_step(0, cj.WINDOW + 1, "cpu_pair: a task")
