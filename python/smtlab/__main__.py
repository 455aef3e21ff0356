"""``python -m smtlab ARGS`` and the ``smtlab`` command of an installed package: runs the smtlab program.

The program is C++ (src/cli). A wheel carries it inside the package (``smtlab/bin/smtlab``, installed by
python/bindings/CMakeLists.txt); in a source tree it is ``build/smtlab``. The commands whose engine is Python
(``smtlab study``, ``smtlab sweep``) must come back to *this* interpreter, which has the package, so SMTLAB_PYTHON is
set to it unless the user chose another.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def program() -> Path:
    """The smtlab executable: $SMTLAB_CLI, else the one installed with the package, else the source tree's build."""
    candidates = []
    if os.environ.get("SMTLAB_CLI"):
        candidates.append(Path(os.environ["SMTLAB_CLI"]))
    candidates += [_PACKAGE / "bin" / "smtlab", _PACKAGE.parent.parent / "build" / "smtlab"]
    for exe in candidates:
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe
    raise FileNotFoundError(
        "the smtlab program was not found (looked for " + ", ".join(str(c) for c in candidates) + "); install the "
        "package with pip (the wheel carries it), build the source tree (make build), or set SMTLAB_CLI to it")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        exe = program()
    except FileNotFoundError as e:
        print(f"smtlab: error: {e}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env.setdefault("SMTLAB_PYTHON", sys.executable)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(exe, [str(exe), *args], env)  # does not return
    return 0  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
