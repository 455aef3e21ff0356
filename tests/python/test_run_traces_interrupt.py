"""Ctrl-C during run_traces: the C++ run checks for signals between chunks of simulated cycles,
so SIGINT ends it with KeyboardInterrupt instead of being ignored until the run finishes."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

import smtlab


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals go to the main thread")
def test_sigint_stops_run_traces_within_a_fraction_of_a_second():
    config = smtlab.load_config("netburst")
    sent: list[float] = []

    def interrupt() -> None:
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    # A process started in the background by a non-interactive shell inherits SIGINT ignored and has no
    # KeyboardInterrupt handler; the test is about run_traces honouring Python's handler, so it installs it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, interrupt)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            # 3 x 10^7 instructions per thread: ~20 s of host time (~3 M/s), so a run that ignores the signal
            # returns (and fails the latency check below) instead of hanging the suite.
            smtlab.run_traces(config, ["gen:mix,count=0,seed=1", "gen:mix,count=0,seed=2"], 3 * 10**7)
        assert sent, f"run_traces ended after {time.monotonic() - started:.1f} s, before the timer fired"
        latency = time.monotonic() - sent[0]
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    # A chunk is 2^20 cycles: ~0.3 s of host time at the worst IPC-1 speed of ~3 M instructions/s; 2 s leaves room
    # for a loaded machine and still fails when the signal waits for the end of the run.
    assert 0.0 <= latency < 2.0, f"KeyboardInterrupt came {latency:.3f} s after SIGINT"


def test_run_traces_still_returns_statistics_when_not_interrupted():
    stats = smtlab.run_traces(smtlab.load_config("netburst"), ["gen:alu,count=5000"], 5000)
    assert stats["instructions"] == 5000
