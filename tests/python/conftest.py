"""Shared fixtures: the package from the source tree (python/, where in-tree builds put _core*.so) unless an installed
smtlab is already importable, and small machine configs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
try:
    import smtlab  # noqa: F401
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import smtlab  # noqa: F401


@pytest.fixture(scope="session", autouse=True)
def _dask_scratch_in_pytest_tmp(tmp_path_factory):
    """Dask clusters (in this process and in `dask scheduler`/`dask worker` subprocesses) put their scratch space in
    pytest's own temporary folder instead of leaving `dask-scratch-space` in TMPDIR after the run."""
    scratch = str(tmp_path_factory.mktemp("dask-scratch"))
    old = os.environ.get("DASK_TEMPORARY_DIRECTORY")
    os.environ["DASK_TEMPORARY_DIRECTORY"] = scratch
    try:
        import dask

        with dask.config.set({"temporary-directory": scratch}):
            yield
    except ImportError:
        yield
    finally:
        if old is None:
            os.environ.pop("DASK_TEMPORARY_DIRECTORY", None)
        else:
            os.environ["DASK_TEMPORARY_DIRECTORY"] = old


@pytest.fixture
def cfg_1x2():
    """One core, two hardware threads (logical CPUs 0 and 1 are siblings)."""
    return smtlab.load_config(None, {"system.cores": 1, "core.threads": 2})


@pytest.fixture
def cfg_2x2():
    """Two packages of two hardware threads: CPUs 0,1 on core 0 and 2,3 on core 1."""
    return smtlab.load_config(None, {"system.packages": 2, "core.threads": 2})


@pytest.fixture
def data_dir():
    """tests/data."""
    return ROOT / "tests" / "data"


@pytest.fixture
def real_paths(monkeypatch):
    """Real kernel paths on, as the study switches them on (the kpath: cache is recorded on first use: about a minute
    of qemu-system). setenv records the variable as it was, and its undo puts that back after the test;
    enable_real_paths writes os.environ itself, so a delenv after the yield would record "1" and leave real paths on
    for every later test."""
    from smtlab.workloads import kpaths

    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "")
    assert kpaths.enable_real_paths() is None
    yield


@pytest.fixture
def estimates(monkeypatch):
    """Real kernel paths off: every system call runs its estimated instruction count."""
    from smtlab.workloads import kpaths

    monkeypatch.setenv(kpaths.REAL_PATHS_ENV, "0")


@pytest.fixture
def streams_on(monkeypatch):
    """The recorded user programs on, as the study switches them on (workloads/user traced on first use: a few seconds
    each). As for real_paths: setenv records the variable as it was and its undo puts that back; a delenv of a
    variable that is not set records nothing, so the variable enable_user_streams writes stayed "1" for every later
    test (which the LMbench bodies, whose loop is a user stream, notice)."""
    from smtlab.workloads import user_streams as us

    monkeypatch.setenv(us.USER_STREAMS_ENV, "")
    assert us.enable_user_streams() is None
    yield
