"""Every shape check of the study can fail: each is fed numbers inside and outside its band.

Bands from the article's tables (data/reference/): single-task rows flat within +-2 %, pipe latency -1.3 % +- 2 pp,
fork rows -10..0 %, multithreaded speed-ups 10..60 %, and the rows the article shows changing (sieve +60 %, sync
disk -35..-38 %, creat-clo +8 %, link +9 %) reproduced at the same sign and 0.5..1.5 x their size."""

from __future__ import annotations

import math

import pytest

from smtlab.study import checks as chk


@pytest.mark.parametrize("pct,ok", [(0.0, True), (1.9, True), (-2.0, True), (2.1, False), (-5.0, False),
                                    (math.nan, False)])
def test_flat(pct, ok):
    assert chk.is_flat(pct) is ok


def test_all_flat_needs_rows_and_every_row():
    assert chk.all_flat([0.0, 1.0, -1.5])
    assert not chk.all_flat([0.0, 3.0])
    assert not chk.all_flat([])  # nothing checked is not a pass


@pytest.mark.parametrize("pub,model,ok", [
    (60.0, 60.0, True), (60.0, 31.0, True), (60.0, 89.0, True),  # sieve: 30..90 reproduces
    (60.0, 0.0, False), (60.0, 29.0, False), (60.0, 91.0, False), (60.0, -60.0, False),
    (-35.1, -35.0, True), (-35.1, -18.0, True), (-35.1, 0.0, False), (-35.1, 35.0, False), (-35.1, -53.0, False),
    (8.2, 8.0, True), (8.2, 0.0, False), (8.2, 13.0, False),
    (0.5, 0.5, False),  # a flat published row is never "reproduced as changing"
    (60.0, math.nan, False),
])
def test_changing_row_reproduced(pub, model, ok):
    assert chk.reproduced(pub, model) is ok


@pytest.mark.parametrize("pct,ok", [(10.0, True), (35.0, True), (60.0, True), (9.9, False), (60.1, False),
                                    (89.0, False), (-5.0, False), (math.nan, False)])
def test_multithreaded_band(pct, ok):
    assert chk.in_mt_band(pct) is ok


@pytest.mark.parametrize("model,ok", [(-1.3, True), (-3.3, True), (0.6, True), (-3.4, False), (0.7, False),
                                      (-8.5, False)])
def test_pipe_latency_near_published(model, ok):
    assert chk.pipe_close(-1.33, model) is ok


def test_fork_rows_slower():
    assert chk.fork_slower([-4.0, -5.8, -2.1])
    assert not chk.fork_slower([-4.0, 0.2, -2.1])  # one row not slower
    assert not chk.fork_slower([-4.0, 0.0])  # exactly 0: not slower
    assert not chk.fork_slower([-11.0])  # slower than the band allows
    assert not chk.fork_slower([])


def test_numpy_values_give_plain_bools():
    # Table cells are numpy scalars; the report stores the answers as JSON booleans.
    import numpy as np

    assert chk.pipe_close(np.float64(-1.33), np.float64(-8.5)) is False
    assert chk.reproduced(np.float64(60.0), np.float32(55.0)) is True
    assert chk.in_mt_band(np.float64(35.0)) is True and chk.is_flat(np.float64(0.0)) is True
