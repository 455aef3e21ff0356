"""Installed like a Python tool, and found by the smtlab program without the project's venv.

The wheel test builds the wheel once per session (a minute or two of both cores the first time: the whole C++ library,
unoptimized) into a temporary folder, installs it into a fresh virtual environment outside the tree, and runs
`smtlab run`, `python -m smtlab run`, `smtlab sweep` and `smtlab study` from there. CMake's build folder is kept
between sessions in ~/.cache/smtlab/wheel-build/ (SMTLAB_WHEEL_BUILD_DIR overrides it), so only the first test run
pays the full compile.
The fresh environment takes the wheel's dependencies (numpy, pandas, ...) from this interpreter's site-packages
through a .pth file, so nothing is downloaded; smtlab itself comes only from the wheel.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "build" / "smtlab"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that points at the source tree or a chosen interpreter."""
    drop = {"PYTHONPATH", "SMTLAB_PYTHON", "SMTLAB_CLI", "SMTLAB_CONFIG_DIR", "VIRTUAL_ENV", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


# --- the Python engines without the project's venv ------------------------------------------------------------------
@pytest.mark.skipif(not PROGRAM.exists(), reason="needs the in-tree build (make build)")
@pytest.mark.parametrize("command", ["study", "sweep"])
def test_study_and_sweep_without_a_python_that_has_smtlab_say_how_to_point_at_one(tmp_path, command):
    # A copy of the program outside the tree finds neither the tree's .venv nor its package, as an installed program
    # whose package is missing; SMTLAB_PYTHON names a Python that lacks smtlab (this one, with PYTHONPATH gone).
    exe = tmp_path / "smtlab"
    shutil.copy2(PROGRAM, exe)
    r = subprocess.run([str(exe), command, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env=clean_env(SMTLAB_PYTHON=sys.executable))
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr  # one message, no traceback
    assert lines[0].startswith("smtlab: error: ") and f"{sys.executable} cannot import smtlab" in lines[0]
    assert "set SMTLAB_PYTHON=" in lines[0]


@pytest.mark.skipif(not PROGRAM.exists(), reason="needs the in-tree build (make build)")
def test_a_python_with_smtlab_but_without_its_dependencies_names_the_missing_one(tmp_path):
    # The tree's program puts the tree's package on PYTHONPATH; a bare venv of this Python has no pandas / numpy.
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    r = subprocess.run([str(PROGRAM), "study", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env=clean_env(SMTLAB_PYTHON=str(venv / "bin" / "python")))
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr  # no traceback from the study's imports
    assert "cannot import numpy" in lines[0] or "cannot import pandas" in lines[0], lines[0]
    assert "set SMTLAB_PYTHON=" in lines[0]


@pytest.mark.skipif(not PROGRAM.exists(), reason="needs the in-tree build (make build)")
def test_an_interpreter_that_does_not_exist_is_named(tmp_path):
    r = subprocess.run([str(PROGRAM), "sweep", "--help"], capture_output=True, text=True, timeout=60,
                       env=clean_env(SMTLAB_PYTHON=str(tmp_path / "no-such-python")))
    assert r.returncode != 0
    assert "no-such-python' cannot be started" in r.stderr and "SMTLAB_PYTHON" in r.stderr


# --- the wheel -----------------------------------------------------------------------------------------------------
#: A build folder without a CMake cache this old is a build that was killed before configuring, not one under way.
_UNCONFIGURED_STALE_SECONDS = 24 * 3600.0


def _source_tree(build: Path) -> Path | None:
    """The source tree a wheel build folder was configured from (its CMakeCache.txt), None if it has none."""
    try:
        for line in (build / "CMakeCache.txt").read_text(errors="replace").splitlines():
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                return Path(line.partition("=")[2])
    except OSError:
        return None
    return None


def prune_wheel_builds(root: Path, keep: Path, now: float | None = None) -> list[str]:
    """Removes the build folders under ``root`` whose source tree is gone (a clone that was deleted: CI clones a fresh
    tree each run, and each tree gets its own 74 MB folder, so they piled up, six in one day), and folders a build left
    without a CMake cache more than a day ago; never ``keep`` (this tree's) or a tree that still exists. Returns the
    names removed."""
    now = time.time() if now is None else now
    removed = []
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        if d == keep or d.is_symlink() or not d.is_dir():
            continue
        src = _source_tree(d)
        if src is not None:
            stale = not (src / "pyproject.toml").is_file()
        else:
            try:
                stale = now - d.stat().st_mtime > _UNCONFIGURED_STALE_SECONDS
            except OSError:
                continue
        if stale:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
    return removed


def _build_dir() -> Path:
    if os.environ.get("SMTLAB_WHEEL_BUILD_DIR"):
        return Path(os.environ["SMTLAB_WHEEL_BUILD_DIR"])
    tree = hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]  # one per source tree: worktrees do not collide
    build = Path.home() / ".cache" / "smtlab" / "wheel-build" / tree
    prune_wheel_builds(build.parent, build)
    return build


def test_prune_wheel_builds_removes_only_the_folders_of_trees_that_are_gone(tmp_path):
    root, trees = tmp_path / "wheel-build", tmp_path / "trees"
    now = 1_000_000.0

    def build(name: str, tree: str | None, age: float = 0.0) -> Path:
        d = root / name
        (d / "sub").mkdir(parents=True)
        if tree is not None:
            (d / "CMakeCache.txt").write_text(f"# cache\nCMAKE_HOME_DIRECTORY:INTERNAL={trees / tree}\nX:BOOL=ON\n")
        os.utime(d, (now - age, now - age))
        return d

    for t in ("live", "mine"):
        (trees / t).mkdir(parents=True)
        (trees / t / "pyproject.toml").write_text("")
    (trees / "not-a-checkout").mkdir()  # the folder exists but holds no source tree any more
    mine = build("mine", "mine")
    build("live", "live")
    build("deleted", "gone")
    build("emptied", "not-a-checkout")
    build("killed-yesterday", None, age=2 * 24 * 3600)
    build("configuring-now", None, age=60)
    (root / "a-file").write_text("")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "x").mkdir(parents=True)
    (root / "link").symlink_to(elsewhere)
    assert prune_wheel_builds(root, mine, now=now) == ["deleted", "emptied", "killed-yesterday"]
    assert sorted(p.name for p in root.iterdir()) == ["a-file", "configuring-now", "link", "live", "mine"]
    assert (elsewhere / "x").is_dir()


@pytest.fixture(scope="session")
def wheel_venv():
    """A fresh virtual environment outside the tree with the smtlab wheel installed; removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="smtlab-wheel-") as tmp_name:
        tmp = Path(tmp_name)
        # Built unoptimized (-O0, no debug information, hence no link-time optimization): this tests the packaging
        # (the wheel's contents, its entry points, finding the package without the tree), not the compiled code, which
        # the in-tree Release build is tested with; it compiles in about a third of the Release build's CPU time.
        cmd = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(tmp / "dist"), "-q",
               "-C", f"build-dir={_build_dir()}", "-C", "cmake.build-type=Debug",
               "-C", "cmake.define.CMAKE_CXX_FLAGS_DEBUG=-O0"]
        if importlib.util.find_spec("scikit_build_core") is not None:
            cmd.append("--no-build-isolation")  # the build backend is here already: no download
        subprocess.run(cmd, check=True, cwd=tmp, timeout=3600, env=clean_env())
        wheels = list((tmp / "dist").glob("smtlab-*.whl"))
        assert len(wheels) == 1, wheels
        venv = tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=clean_env())
        py = venv / "bin" / "python"
        purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        # the dependencies of this interpreter (numpy, pandas, tqdm, dask), after the venv's own site-packages
        deps = [p for p in [sysconfig.get_paths()["purelib"], *site.getsitepackages()] if "site-packages" in p]
        (Path(purelib) / "zz_smtlab_test_deps.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheels[0])],
                       check=True, timeout=300, env=clean_env())
        yield venv


@pytest.mark.slow
def test_the_wheel_installs_the_smtlab_command_and_python_m_smtlab(wheel_venv, tmp_path):
    py = wheel_venv / "bin" / "python"
    env = clean_env(PATH=f"{wheel_venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    where = subprocess.run([str(py), "-c", "import smtlab, smtlab._core; print(smtlab.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, env=env, check=True).stdout.strip()
    assert Path(where).is_relative_to(wheel_venv) and not Path(where).is_relative_to(ROOT)

    # `smtlab run` and `python -m smtlab run`: 1000 instructions of gen:alu under the packaged netburst preset
    for i, launcher in enumerate([[str(wheel_venv / "bin" / "smtlab")], [str(py), "-m", "smtlab"]]):
        out = tmp_path / f"run{i}.json"
        r = subprocess.run([*launcher, "run", "-c", "netburst", "gen:alu", "-n", "1000", "-q", "--json", str(out)],
                           cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        stats = json.loads(out.read_text())
        assert stats["logical_cpus"][0]["instructions"] == 1000  # -n 1000 measures exactly the first 1000

    # the Python engines come back to the venv's interpreter (SMTLAB_PYTHON set by the entry point)
    sweep = tmp_path / "s.toml"
    sweep.write_text('name = "s"\nconfig = "netburst"\nmax_instructions = 1000\n[axes]\ncore.rob.entries = [64]\n'
                     '[workloads]\npair = ["gen:alu", "gen:branchy"]\n')
    r = subprocess.run([str(wheel_venv / "bin" / "smtlab"), "sweep", str(sweep), "--dry-run"], cwd=tmp_path,
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "1 runs, 2 single-thread baselines; OK" in r.stdout, r.stderr
    r = subprocess.run([str(wheel_venv / "bin" / "smtlab"), "study", "--help"], cwd=tmp_path, capture_output=True,
                       text=True, env=env, timeout=300)
    assert r.returncode == 0 and "usage" in r.stdout.lower(), r.stderr


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.slow
def test_the_installed_package_reads_its_own_files_not_the_checkouts_or_its_build_folders(wheel_venv, tmp_path):
    py = wheel_venv / "bin" / "python"
    exe = wheel_venv / "bin" / "smtlab"
    pkg = Path(subprocess.run([str(py), "-c", "import pathlib, smtlab; print(pathlib.Path(smtlab.__file__).parent)"],
                              cwd=tmp_path, capture_output=True, text=True, check=True,
                              env=clean_env()).stdout.strip())
    build = _build_dir()
    # No folder of the checkout that holds run-time files, and nothing of the wheel's build folder, is compiled into
    # the installed program or module. (An unoptimized build keeps the header paths of its asserts, the build
    # environment's pybind11 among them: those name no file that is read at run time.)
    for binary in [pkg / "bin" / "smtlab", *pkg.glob("_core*.so")]:
        data = binary.read_bytes()
        for where in [*(ROOT / d for d in ("configs", "data", "workloads", "scripts", "build", "tools")), build]:
            assert str(where).encode() not in data, f"{binary.name} names {where}"

    kernels = tmp_path / "kernels"  # a cache of the test's own: kernel:NAME compiles the installed source
    env = clean_env(PATH=f"{wheel_venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                    SMTLAB_KERNEL_CACHE=str(kernels))
    tree_kpath = ROOT / "build" / "kpath"
    if (tree_kpath / "kpaths.json").is_file():
        env["SMTLAB_KPATH_CACHE"] = str(tree_kpath)  # the probe's sources are compared by content: no new boot
    version = re.search(r"project\(smtlab\s+VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
    tree_has_tracer = (ROOT / "build" / "tools" / "qemu-tracer" / "libsmtlab_qemu_tracer.so").is_file()

    away = build.with_name(build.name + ".moved-away")
    build.rename(away)  # what the installation still needed from its build folder fails from here on
    try:
        r = _run([str(exe), "--version"], tmp_path, env)
        assert r.returncode == 0 and version in r.stdout, r.stdout + r.stderr

        # Run inside the checkout, whose configs/ the search above the working folder would find: the installed
        # presets come first, for the program and for the module.
        r = _run([str(exe), "config", "show", "-c", "broadwell"], ROOT, env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines()[0] == f"# smtlab config: {pkg / 'configs' / 'broadwell.toml'}", r.stdout[:200]
        r = _run([str(py), "-c", "import smtlab; print(smtlab.load_config('netburst').source)"], ROOT, env)
        assert r.returncode == 0 and r.stdout.strip() == str(pkg / "configs" / "netburst.toml"), r.stdout + r.stderr

        r = _run([str(exe), "run", "-q", "-c", "netburst", "gen:alu", "-n", "1000"], tmp_path, env)
        assert r.returncode == 0, r.stderr

        # The tracer: the installed plugin records a program, and kernel:NAME compiles the installed source and traces
        # it (never a look-alike generator in its place).
        rec = _run([str(exe), "trace", "record", "-q", "-o", str(tmp_path / "true"), "--", "/bin/true"], tmp_path, env)
        kernel = _run([str(exe), "run", "-q", "-c", "netburst", "kernel:chase", "-n", "1000"], tmp_path, env,
                      timeout=600)
        if tree_has_tracer:
            assert rec.returncode == 0 and (tmp_path / "true.trace").is_file(), rec.stderr
            assert kernel.returncode == 0 and "look-alike" not in kernel.stderr, kernel.stderr
            assert (kernels / "chase.trace").is_file()
        else:  # this machine cannot build the plugin: the installation says so in one line
            assert rec.returncode != 0 and len(rec.stderr.strip().splitlines()) == 1, rec.stderr
            assert "plugin" in rec.stderr

        # The study reads its published tables from the package.
        out = tmp_path / "study"
        r = _run([str(exe), "study", "--quick", "--only", "lmbench", "--no-progress", "-o", str(out)], tmp_path, env,
                 timeout=900)
        assert r.returncode == 0, r.stderr[-2000:]
        assert (out / "study.md").is_file()
    finally:
        away.rename(build)
