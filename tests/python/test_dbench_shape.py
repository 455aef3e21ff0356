"""dbench's row-shape check in the study (smtlab/study/dbench_checks.py): a model row as flat as a window that the
client count never reaches fails it; one that falls like the published row passes."""

from __future__ import annotations

import pandas as pd

from smtlab.study import dbench_checks


def _rows(model_120: float, kernel: str, pub_20: float, pub_120: float) -> pd.DataFrame:
    return pd.DataFrame([{"kernel": kernel, "clients": 20, "pub noht": pub_20, "model noht": 150.0},
                         {"kernel": kernel, "clients": 120, "pub noht": pub_120, "model noht": model_120},
                         {"kernel": kernel, "clients": "geomean", "pub noht": 1.0, "model noht": 1.0}])


def test_a_flat_row_fails_and_a_falling_one_passes():
    # Published 2.4.19: 99.31 / 132.82 = 0.748. A model at 148 / 150 = 0.99 is 32 % above it: outside the 25 % band.
    assert not dbench_checks.ratio_ok(_rows(148.0, "2.4.19", 132.82, 99.31), "2.4.19")
    # 0.70 / 0.748 - 1 = -6 %: inside.
    assert dbench_checks.ratio_ok(_rows(105.0, "2.4.19", 132.82, 99.31), "2.4.19")
    # 2.5.32's published 57.44 / 142.02 = 0.404: a model at 0.52 is 29 % above (fails), at 0.48 19 % (passes).
    assert not dbench_checks.ratio_ok(_rows(78.0, "2.5.32", 142.02, 57.44), "2.5.32")
    assert dbench_checks.ratio_ok(_rows(72.0, "2.5.32", 142.02, 57.44), "2.5.32")
    # A row that rises where the published falls fails whatever the band.
    assert not dbench_checks.ratio_ok(_rows(160.0, "2.4.19", 132.82, 130.0), "2.4.19")
