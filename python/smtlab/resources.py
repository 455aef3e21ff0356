"""Where the files that smtlab reads at run time lie: the presets (configs/), the published tables
(data/reference/), the workloads' sources (workloads/) and the kernel script (scripts/).

An installed package (``pip install .``) carries them inside the package folder under the same relative paths as in
the source tree, beside its presets; a package imported from the source tree (``PYTHONPATH=python``) reads them in
the tree. The C++ side finds them by the same rule (include/smtlab/common/resources.hpp), so the program and the
package of one installation read the same files.
"""

from __future__ import annotations

from pathlib import Path

#: The package's own folder (smtlab/).
PACKAGE_DIR = Path(__file__).resolve().parent


def installed() -> bool:
    """True for an installed package, which holds its presets in its own folder."""
    return (PACKAGE_DIR / "configs").is_dir()


def resource_root() -> Path:
    """The folder the resources' relative paths start from: the package folder when installed, else the source tree
    (python/smtlab/ lies two levels below it)."""
    return PACKAGE_DIR if installed() else PACKAGE_DIR.parents[1]


def resource_path(relative: str) -> Path:
    """A resource by its path relative to :func:`resource_root`, e.g. ``"data/reference"``. Not checked for existence:
    the caller says what is missing in its own terms."""
    return resource_root() / relative
