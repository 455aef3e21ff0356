"""smtlab.study: the reference studies rerun on the model.

"Hyper-Threading speeds Linux" (LMbench, AIM9, chat, dbench, tbench on the netburst preset, HT off vs on, the model's
Linux24 and Linux25HT, and a 2-package x 2-thread scheduler experiment; ht_linux.py) and the SMT energy study
(energy.py, when present). Each section is a function ``run_section(out_dir, quick, workers, progress) -> Section``
(section.py). Run everything with ``python -m smtlab.study [--quick] [-o out] [--workers N] [--only KEYS]``.
"""

from .section import Section

__all__ = ["Section", "run_study"]


def run_study(*args, **kwargs):  # type: ignore[no-untyped-def]
    """See report.run_study (imported lazily: the sections import the compiled module)."""
    from .report import run_study as _run
    return _run(*args, **kwargs)
