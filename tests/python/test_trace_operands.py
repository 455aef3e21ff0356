"""Every memory operand of an instruction through the Python binding: four loads and two stores are
kept, a fifth load is a ValueError, and a source over a pipe is read once."""

from __future__ import annotations

import os
import threading

import pytest

import smtlab
from smtlab import EventKind, Instr, Machine, Source


def test_four_loads_and_two_stores_are_kept():
    loads = [(0x1000, 8), (0x2000, 4), (0x3000, 16), (0x4000, 1)]
    stores = [(0x5000, 8), (0x6000, 32)]
    i = Instr(0x400000, "int", loads=loads, stores=stores)
    assert i.loads == loads and i.stores == stores
    line = "400000 int   ld=1000:8 ld=2000:4 ld=3000:16 ld=4000:1 st=5000:8 st=6000:32"
    assert str(i) == line
    assert Instr.parse(line) == i


def test_a_fifth_load_is_a_value_error():
    with pytest.raises(ValueError, match="at most 4 loads"):
        Instr(0x400000, "int", loads=[0x1000, 0x2000, 0x3000, 0x4000, 0x5000])
    with pytest.raises(ValueError, match="at most 2 stores"):
        Instr(0x400000, "int", stores=[0x1000, 0x2000, 0x3000])


def test_a_trace_through_a_pipe_runs_to_its_end():
    # Before, the format sniffing opened the pipe three times and the run saw no instruction.
    text = "".join(f"{0x400000 + 4 * k:x} int dst=r1 src=r1\n" for k in range(2000))
    r, w = os.pipe()

    def feed():
        with os.fdopen(w, "w") as f:
            f.write(text)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        src = Source(f"/proc/self/fd/{r}")
        with Machine(smtlab.Config()) as m:
            m.attach(0, src)
            ended = False
            while not ended and m.now < 10_000_000:
                ended = any(e.kind == EventKind.SOURCE_ENDED for e in m.run(cycles=100_000))
            assert ended
            assert m.cpu_stats(0)["instructions"] == 2000
    finally:
        writer.join()
        os.close(r)
