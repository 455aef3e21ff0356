"""The pybind11 module: config, topology, sources, run/events, conservation across detach, and every misuse raising a
clear exception instead of crashing."""

from __future__ import annotations

import pickle
import threading

import pytest

import smtlab
from smtlab import ConfigError, EventKind, Instr, Machine, Source, TraceError, UsageError


def run_until(m: Machine, kind: EventKind, cpu: int | None = None, limit: int = 50_000_000):
    """Runs until an event of `kind` (on `cpu`) and returns it; fails if the cycle limit passes first."""
    while m.now < limit:
        for e in m.run(cycles=1_000_000):
            if e.kind == kind and (cpu is None or e.cpu == cpu):
                return e
    pytest.fail(f"no {kind} event before cycle {limit}")


# --- config ---------------------------------------------------------------------------------------------------------
def test_config_overrides_and_get():
    cfg = smtlab.load_config(None, {"core.rob.entries": 96, "system.cores": 2, "core.recombine": False})
    assert cfg.get("core.rob.entries") == 96
    assert cfg.get("core.recombine") is False
    assert cfg.cores == 2 and cfg.logical_cpus == 4
    assert cfg.to_dict()["core"]["rob"]["entries"] == 96
    assert any(p["key"] == "core.rob.entries" for p in cfg.describe())


def test_config_preset_and_pickle():
    cfg = smtlab.load_config("netburst", {"system.cores": 2})
    back = pickle.loads(pickle.dumps(cfg))
    assert back.to_dict() == cfg.to_dict()
    assert back.source == cfg.source


def test_config_errors_name_the_key():
    with pytest.raises(ConfigError, match="core.rob.entriez"):
        smtlab.load_config(None, {"core.rob.entriez": 96})
    with pytest.raises(ConfigError, match="core.rob.entries"):
        smtlab.load_config(None, {"core.rob.entries": "lots"})
    with pytest.raises(ConfigError, match="no_such_preset"):
        smtlab.load_config("no_such_preset")
    with pytest.raises(TypeError):
        smtlab.load_config(None, {"core.rob.entries": [1, 2]})
    with pytest.raises(TypeError):
        smtlab.load_config(None, ["core.rob.entries=3"])  # type: ignore[arg-type]
    assert issubclass(ConfigError, smtlab.Error)


def test_config_takes_numpy_scalars():
    """Sweep and analysis code computes values with numpy: numpy integers, booleans and floats set a key as the
    Python number of the same value would: each is taken as its Python value (item()), since a numpy.float64's repr
    under numpy 2, 'np.float64(4.0)', is no number the config parser reads."""
    np = pytest.importorskip("numpy")
    plain = smtlab.load_config(None, {"core.rob.entries": 96, "core.recombine": False, "mem.dram.bytes_per_cycle": 4.0})
    cfg = smtlab.load_config(None, {"core.rob.entries": np.int64(96), "core.recombine": np.bool_(False),
                                    "mem.dram.bytes_per_cycle": np.float64(4.0)})
    assert cfg.to_dict() == plain.to_dict()
    cfg.set("core.rob.entries", np.uint16(64))
    cfg.set("mem.dram.bytes_per_cycle", np.float32(2.5))  # exact in binary, so the same double
    assert cfg.get("core.rob.entries") == 64 and cfg.get("mem.dram.bytes_per_cycle") == 2.5
    with pytest.raises(TypeError, match="core.rob.entries"):
        smtlab.load_config(None, {"core.rob.entries": np.array([1, 2])})  # an array is not a value


# --- topology -------------------------------------------------------------------------------------------------------
def test_topology_as_linux_numbers_it(cfg_2x2):
    with Machine(cfg_2x2) as m:
        assert m.logical_cpus == 4 and m.cores == 2
        assert [c["core"] for c in m.cpus] == [0, 0, 1, 1]
        assert [c["thread"] for c in m.cpus] == [0, 1, 0, 1]
        assert m.cpu(1)["siblings"] == [0]
        assert m.cpu(2)["siblings"] == [3]


# --- sources and events ---------------------------------------------------------------------------------------------
def test_source_runs_to_its_end(cfg_1x2):
    with Machine(cfg_1x2) as m:
        src = Source("gen:alu,count=5000")
        assert src.length == 5000
        m.attach(0, src, asid=1)
        e = run_until(m, EventKind.SOURCE_ENDED, 0)
        assert e.cpu == 0 and e.cycle < m.now
        assert src.retired == 5000
        assert m.cpu_stats(0)["instructions"] == 5000
        assert m.stats()["instructions"] == 5000
        assert m.detach(0) is src and not src.attached


def test_marks_are_reported_in_order(cfg_1x2, data_dir):
    with Machine(cfg_1x2) as m:
        m.attach(0, Source(str(data_dir / "marks.txt")))
        ids = []
        while True:
            events = m.run(cycles=100_000)
            ids += [e.mark_id for e in events if e.kind == EventKind.MARK]
            if any(e.kind == EventKind.SOURCE_ENDED for e in events):
                break
        assert ids == [7, 42]


def test_records_built_in_python():
    recs = [Instr(0x400000 + 4 * i, "int", dst=["r1"], src=["r1"]) for i in range(100)]
    recs.append(Instr(0x400190, "mark", mark_id=9))
    recs.append(Instr.parse("400194 load dst=r2 src=r1 ld=10000000:8"))
    assert recs[-1].loads == [(0x10000000, 8)] and recs[-1].op == "load"
    src = Source.from_records(recs, name="mine")
    with Machine(smtlab.Config()) as m:
        m.attach(0, src)
        assert run_until(m, EventKind.MARK).mark_id == 9
        run_until(m, EventKind.SOURCE_ENDED)
    assert src.retired == 102
    with pytest.raises(TypeError):
        Source.from_records([1, 2, 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown op"):
        Instr(0, "frobnicate")
    with pytest.raises(ValueError, match="register"):
        Instr(0, "int", dst=["r99"])


def test_trace_errors_name_file_and_line():
    with pytest.raises(TraceError, match="gen:nosuch"):
        Source("gen:nosuch")
    with pytest.raises(TraceError, match="/no/such/file"):
        Source("/no/such/file")
    with pytest.raises(TraceError, match="<text>:2"):
        Source.from_text("400000 int dst=r1\n400004 bogus\n")


@pytest.mark.parametrize("text", ["400000 int dst=r1\n400004 int dst=r2", "400000 int dst=r1\n",
                                  "400000 int dst=r1 # one\n400004 int dst=r2", "# header\n400000 int"])
def test_instr_parse_of_more_than_one_line_says_one_record_is_one_line(text):
    # Before, a line break was "binary byte 0x0a ...: not a text trace", a comment hid it ("no instruction on this
    # line"), or a second record after a comment was silently dropped.
    column = text.index("\n") + 1
    with pytest.raises(TraceError, match=f"<python>:1: line break in column {column}: .*one record, which is one line"):
        Instr.parse(text)
    assert Instr.parse("400000 int dst=r1\r") == Instr.parse("400000 int dst=r1")  # a CR alone is a blank, as before


def test_taken_is_refused_on_an_instr_that_is_no_branch():
    # As the text reader refuses 'taken' on a record with no branch kind (the core reads the flag only on branches,
    # so on an 'int' it was silently ignored): the constructor and the setter say so, a branch keeps it.
    with pytest.raises(ValueError, match=r"Instr: taken=True on op 'int', which is no branch"):
        Instr(0x400000, "int", taken=True)
    with pytest.raises(ValueError, match=r"taken=True on op 'br' with branch='none', which is no branch"):
        Instr(0x400000, "br", taken=True, branch="none")
    i = Instr(0x400000, "load")
    with pytest.raises(ValueError, match=r"Instr.taken: cannot set True on op 'load', which is no branch"):
        i.taken = True
    assert i.taken is False
    i.taken = False  # False is always allowed
    b = Instr(0x400000, "br", taken=True, target=0x400100)
    assert b.taken is True
    b.taken = False
    assert b.taken is False


def test_retire_limit_is_exact(cfg_1x2):
    with Machine(cfg_1x2) as m:
        src = Source("gen:mix,count=0")
        m.attach(0, src)
        m.set_retire_limit(0, 12_345)
        run_until(m, EventKind.RETIRE_LIMIT, 0)
        assert m.retired(0) == 12_345
        m.detach(0)
        assert src.retired == 12_345


def test_detach_rewinds_so_nothing_is_lost_or_retired_twice(cfg_1x2):
    """Ping-pong one source between two CPUs every few hundred cycles (in-flight work squashed each time): it retires
    exactly its length, and the CPUs' counts add up to it."""
    n = 20_000
    with Machine(cfg_1x2) as m:
        src = Source(f"gen:mix,count={n},seed=3")
        cpu, switches = 0, 0
        m.attach(cpu, src, asid=5)
        while True:
            events = m.run(cycles=337)
            if any(e.kind == EventKind.SOURCE_ENDED for e in events):
                break
            assert m.detach(cpu) is src
            cpu ^= 1
            m.attach(cpu, src, asid=5)
            switches += 1
        assert switches > 50
        assert src.retired == n
        assert m.retired(0) + m.retired(1) == n
        assert m.stats()["logical_cpus"][0]["squashed"] + m.stats()["logical_cpus"][1]["squashed"] > 0


def test_halted_sibling_gives_single_thread_ipc():
    """With its sibling halted, a thread gets the recombined partitions: its IPC equals that of the same core with
    SMT off; with a busy sibling it is lower."""
    spec = "gen:alu,count=60000"

    def ipc(threads: int, sibling: str | None) -> float:
        cfg = smtlab.load_config(None, {"core.threads": threads})
        with Machine(cfg) as m:
            m.attach(0, Source(spec), asid=1)
            if sibling is not None:
                m.attach(1, Source(sibling), asid=2)
            elif threads == 2:
                m.halt(1)
            run_until(m, EventKind.SOURCE_ENDED, 0)
            return m.cpu_stats(0)["ipc"]

    alone = ipc(1, None)
    halted = ipc(2, None)
    shared = ipc(2, "gen:alu,count=0")
    assert halted == pytest.approx(alone, rel=0.01)
    assert shared < 0.9 * halted


def test_run_releases_the_gil(cfg_1x2):
    with Machine(cfg_1x2) as m:
        m.attach(0, Source("gen:alu,count=0"))
        m.attach(1, Source("gen:alu,count=0"))
        done = threading.Event()
        refused = []

        def work():
            m.run(cycles=2_000_000)
            done.set()

        t = threading.Thread(target=work)
        t.start()
        spins = 0
        while not done.is_set():
            spins += 1
            if not refused:
                try:
                    m.now
                except UsageError as e:
                    refused.append(str(e))
        t.join()
        assert spins > 1000  # the main thread ran while the machine simulated
        assert refused and "running in another thread" in refused[0]
        assert m.now == 2_000_000


# --- misuse ---------------------------------------------------------------------------------------------------------
def test_misuse_raises_clear_errors(cfg_2x2):
    m = Machine(cfg_2x2)
    a, b = Source("gen:alu"), Source("gen:alu")
    m.attach(0, a)
    with pytest.raises(UsageError, match="CPU 0 is busy"):
        m.attach(0, b)
    with pytest.raises(UsageError, match="logical CPU 4 does not exist"):
        m.attach(4, b)
    with pytest.raises(UsageError, match="logical CPU -1 does not exist"):
        m.detach(-1)
    with pytest.raises(ValueError):  # UsageError is a ValueError too
        m.busy(17)
    with pytest.raises(UsageError, match="already attached"):
        m.attach(1, a)
    with pytest.raises(UsageError, match="detach it first"):
        m.halt(0)
    with pytest.raises(UsageError, match="has not finished"):
        m.restart_trace(0)
    with pytest.raises(UsageError, match="exactly one of"):
        m.run()
    with pytest.raises(UsageError, match="attached"):
        a.restart()
    with pytest.raises(TypeError):
        m.attach("0", b)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        m.attach(1, "gen:alu")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Machine("netburst")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no source"):
        m.attach(1, None)  # type: ignore[arg-type]
    m.close()
    assert m.closed and not a.attached  # close detaches, so the source can be used again
    for call in (lambda: m.attach(1, b), lambda: m.run(cycles=10), lambda: m.stats(), lambda: m.now,
                 lambda: m.detach(0)):
        with pytest.raises(UsageError, match="closed"):
            call()
    m.close()  # closing twice is harmless
    with Machine(cfg_2x2) as m2:
        m2.attach(3, a)  # reusable after its machine closed
        assert m2.attached(3) is a


def test_source_attached_to_another_machine_is_refused(cfg_1x2):
    with Machine(cfg_1x2) as m1, Machine(cfg_1x2) as m2:
        s = Source("gen:alu")
        m1.attach(0, s)
        with pytest.raises(UsageError, match="already attached"):
            m2.attach(0, s)


def test_run_traces_matches_the_program(cfg_1x2):
    stats = smtlab.run_traces(cfg_1x2, ["gen:alu,count=10000", "gen:fp,count=10000"], max_instructions=5000)
    assert stats["instructions"] == 10000
    assert [c["instructions"] for c in stats["logical_cpus"]] == [5000, 5000]
