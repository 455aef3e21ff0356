"""The study's user-mode work from real programs: workloads/user/*.c traced as kernel:user_*, one
instance per message / operation / request cut out between pause markers. Expected values are derived from the C
sources (loop counts, system calls per iteration, calls per message, the load file's lines), not from a model run.
The first run traces the ten programs (a few seconds each under QEMU); later runs read the kernel: cache."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest

from smtlab.os import Task
from smtlab.os.results import task_records
from smtlab.workloads import user_streams as us
from smtlab.workloads.base import make_kernel

USER_DIR = Path(__file__).resolve().parents[2] / "workloads" / "user"
ITERATIONS = 400  # the count every kernel:user_* entry passes (src/tracer/kernels.cpp)
USERS = 20  # chat.c's room size
#: loops.c's programs (one per loop shape). A run of C calls evaluates its loop's condition C + 1 times, so it holds
#: C + 1 instances; link_test's loops make 7 calls per outer pass, 400 // 7 passes.
LOOPS = ("lmbench_loop", "aim9_creat", "aim9_link", "aim9_sync", "aim9_sync_rw")


def _instances_in_source(program: str) -> int:
    """How many instances the C source makes: one per iteration; loops.c one per loop test; hello.c one."""
    if us.PROGRAMS[program].to_exit:
        return 1
    if program == "aim9_link":
        return 7 * (ITERATIONS // 7) + 1
    return ITERATIONS + (program in LOOPS)


def _load_file_lines() -> list[str]:
    """The load file of loadfile.h, line by line, as the C string literal spells it."""
    text = (USER_DIR / "loadfile.h").read_text()
    body = text[text.index("load_file[] ="):text.index(";", text.index("load_file[] ="))]
    joined = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body))
    return joined.split("\\n")[:-1]


def _syscalls(records, lo: int, hi: int) -> int:
    return sum(us.is_syscall(records, i) for i in range(lo, hi))


@pytest.mark.parametrize("program", sorted(us.PROGRAMS))
def test_every_iteration_is_one_instance_with_its_system_calls_outside(program):
    records, ranges = us.recorded(program)
    # Two markers per loop iteration and none elsewhere (no glibc pause in a single-threaded static program); the
    # loops of loops.c have one more pair around the loop, their first condition and their last; hello.c one
    # marker, its instance running to the exit.
    assert len(ranges) == _instances_in_source(program)
    # An instance is pure user work: no system call inside it.
    assert all(_syscalls(records, a, b) == 0 for a, b in ranges)
    # Between two instances: the system calls the source makes per iteration (UserProgram.syscalls_between); the
    # dbench FIND line makes five (opendir: openat + fstat; readdir: getdents64 until it returns 0, twice; closedir).
    lines = _load_file_lines()
    assert len(lines) == 50
    for i, ((_, end), (start, _)) in enumerate(zip(ranges, ranges[1:])):
        want = us.PROGRAMS[program].syscalls_between
        if program == "dbench_client" and lines[i % len(lines)].startswith("FIND"):
            want = 5
        assert _syscalls(records, end, start) == want, (program, i)


def _middle(program: str) -> list[list]:
    records, ranges = us.recorded(program)
    return [records[a:b] for a, b in ranges[1:-1]]


def _pcs(instance) -> list[int]:
    return [r.pc for r in instance]


def _memory(instance) -> tuple[list, list]:
    return [m for r in instance for m in r.loads], [m for r in instance for m in r.stores]


@pytest.mark.parametrize("program", ["lmbench_loop", "aim9_sync"])
def test_the_while_loops_hold_their_control_only(program):
    # LMbench's `while (iterations-- > 0)` and AIM's sync `while (n--)` around one call: from a call's return to the
    # next call the loop only counts and tests (the counter of a noinline function around one call lives in a
    # callee-saved register): a few register instructions and the conditional branch back, taken in every instance
    # but the last (the loop ends); every iteration runs the same code.
    records, ranges = us.recorded(program)
    middle = _middle(program)
    assert len(middle) == ITERATIONS - 1
    for inst in middle:
        assert 2 <= len(inst) <= 4, [r.op for r in inst]
        assert _memory(inst) == ([], [])
        assert inst[-1].op == "br" and inst[-1].taken
        assert _pcs(inst) == _pcs(middle[0])
    last = records[ranges[-1][0]:ranges[-1][1]]
    assert _pcs(last) == _pcs(middle[0]) and not last[-1].taken
    # The first instance tests the count before the first call and enters the loop (its branch to the loop's end is
    # not taken), so it is other code than the back edge.
    first = records[ranges[0][0]:ranges[0][1]]
    assert any(r.op == "br" for r in first) and _pcs(first) != _pcs(middle[0])


def test_aim9_creat_clo_counts_each_operation_in_its_result_record():
    # AIM's creat_clo: `res->i++` after each creat/close pair, then `while (n--)`: one read and one write of the same
    # 4-byte field of the result record (res points to it), the counter, the branch back.
    for inst in _middle("aim9_creat"):
        loads, stores = _memory(inst)  # (address, size) pairs
        assert loads == stores and len(loads) == 1 and loads[0][1] == 4
        assert len(inst) <= 5 and inst[-1].op == "br" and inst[-1].taken


def test_aim9_link_test_runs_seven_pairs_per_outer_pass():
    # AIM's link_test: seven unlink/link pairs per pass of `while (n--)`, `res->i++` after each: six of every seven
    # consecutive instances are the inner loop's back edge, the seventh also ends the inner loop and starts the next
    # pass (longer, other code); every one updates the result record once.
    middle = _middle("aim9_link")
    inner = _pcs(middle[0])
    kinds = ["inner" if _pcs(inst) == inner else "pass" for inst in middle]
    assert kinds[:13] == ["inner"] * 6 + ["pass"] + ["inner"] * 6
    assert kinds.count("pass") == ITERATIONS // 7 - 1
    assert all(len(_memory(inst)[1]) == 1 for inst in middle)
    assert all(len(inst) > len(middle[0]) for inst, k in zip(middle, kinds) if k == "pass")


def test_aim9_sync_disk_rw_draws_each_block_from_aims_generator():
    # AIM's sync_disk_rw: between a write and the next lseek, the loop's counter and test, a call of AIM's
    # generator (its state read, multiplied, incremented, written back: one load and one store of one 8-byte
    # variable; the call's return address one more store and load, at one stack slot), and the block number modulo
    # the file's blocks, a 64-bit division; lseek and write lie between two instances (checked above).
    for inst in _middle("aim9_sync_rw"):
        ops = [r.op for r in inst]
        assert ops.count("call") == 1 and ops.count("ret") == 1
        assert ops.count("imul") == 1 and ops.count("idiv") == 1
        loads, stores = _memory(inst)  # (address, size) pairs
        assert sorted(loads) == sorted(stores) and len(loads) == 2 and all(size == 8 for _, size in loads)


def test_hello_runs_from_its_write_to_exit_group():
    records, ranges = us.recorded("lmbench_hello")
    ((a, b),) = ranges
    # hello.c: close(1) and write(1, ...) before the marker, none after it but glibc's exit_group, the last record.
    assert _syscalls(records, 0, a) >= 2 and b == len(records) - 1
    last = records[-1]
    assert last.op == "int" and not (last.src or last.dst or last.loads or last.stores)
    instance = records[a:b]
    # main's return (xor, add, ret) and glibc 2.36's exit() up to exit_group: callgrind counts 396 instructions for
    # exit() on a static hello (lmbench.HELLO_AFTER_MAIN, measured independently, with main's 19); exit() calls its
    # handlers and stdio clean-up, so calls and returns.
    assert [r.op for r in instance[:3]] == ["int", "int", "ret"]
    assert abs(len(instance) - (3 + 396)) <= 40, len(instance)
    assert any(r.op == "call" for r in instance)


def test_chat_server_hands_each_message_to_the_other_19_members():
    records, ranges = us.recorded("chat_server_recv")
    for a, b in ranges[:50]:
        calls = collections.Counter(r.pc for r in records[a:b] if r.op == "call")
        # deliver() once per other member from one call site, its memcpy of the frame once per call, and the three
        # number conversions of parse_message (strtol, strtol, strtoul); the 4-byte length memcpy is inlined.
        assert sorted(calls.values(), reverse=True) == [USERS - 1, USERS - 1, 1, 1, 1]


def test_chat_server_send_frames_one_message_with_one_copy():
    records, ranges = us.recorded("chat_server_send")
    for a, b in ranges[:50]:
        instance = records[a:b]
        # The queue slot, its length and one memcpy of a 60..160-byte frame (glibc's unaligned SSE2 copy: a handful
        # of 16-byte moves, a few compares) : one call and one return, a few dozen instructions.
        assert [r.op for r in instance].count("call") == 1
        assert [r.op for r in instance].count("ret") == 1
        assert 12 <= len(instance) <= 80


def test_dbench_instances_follow_the_load_file():
    records, ranges = us.recorded("dbench_client")
    lines = _load_file_lines()
    pcs = [tuple(r.pc for r in records[a:b]) for a, b in ranges]
    # The file wraps after 50 lines and every handle is closed again by then, so line i and line i + 50 run the
    # same code path (same pcs in the same order); the same text on two lines with no handle to look up (STAT f1 at
    # lines 5 and 24) too; lines of different operations do not.
    for i in range(len(lines)):
        assert pcs[i] == pcs[i + len(lines)], i
    assert lines[4] == lines[23] == "STAT f1" and pcs[4] == pcs[23]
    assert lines[0].startswith("OPEN") and lines[2].startswith("READ") and pcs[0] != pcs[2]


def test_two_seeds_draw_different_instances_and_one_seed_the_same(streams_on):
    n = len(us.instances("chat_client_send"))
    assert n == us.MAX_INSTANCES
    a, b, a2 = (us.UserStream("chat_client_send", s, 300) for s in (1, 2, 1))
    da, db, da2 = ([s.next_index() for _ in range(20)] for s in (a, b, a2))
    assert da == da2
    assert da != db
    # Different draws are different streams: the formatted sequence number differs, so the records do.
    inst = us.instances("chat_client_send")
    assert any(inst[i] != inst[j] for i, j in zip(da, db) if i != j)


def test_a_task_retires_exactly_the_instances_it_drew(streams_on):
    k = make_kernel(False, "linux24")
    work = us.UserStream("tbench_client", 7, 1500)
    probe = us.UserStream("tbench_client", 7, 1500)
    drawn = [probe.next_index() for _ in range(3)]

    def program():
        yield from work.work(3)

    t = Task("client", program)
    k.spawn(t)
    k.run()
    rec, = [r for r in task_records(k) if r["name"] == "client"]
    assert rec["instructions"] == sum(len(us.instances("tbench_client")[i]) for i in drawn)
    k.machine.close()


def test_without_a_recording_the_study_says_so_and_uses_the_estimates(monkeypatch):
    monkeypatch.delenv(us.USER_STREAMS_ENV, raising=False)

    def no_trace(program):
        raise us.UserStreamError(f"kernel:{us.PROGRAMS[program].kernel}: not recorded (tracer unavailable)")

    monkeypatch.setattr(us, "instances", no_trace)
    why = us.enable_user_streams()
    assert why is not None and "unavailable" in why and "estimated" in why
    assert not us.user_streams_on()
    assert "estimated" in us.note()
    steps = list(us.UserStream("dbench_client", 1, 1500).work(2))
    assert len(steps) == 1 and steps[0].instructions == 3000 and steps[0].source is None


def test_the_report_names_the_workloads_whose_user_work_is_real(streams_on):
    line = us.note()
    for workload in ("chat", "dbench", "tbench", "lmbench", "aim9"):
        assert f"{workload}: " in line
    for name in us.PROGRAMS:
        assert name in line


def test_the_study_report_line_follows_the_switch(monkeypatch):
    from smtlab.study.report import real_user_programs_note

    monkeypatch.delenv(us.USER_STREAMS_ENV, raising=False)
    assert real_user_programs_note(False).endswith("(--no-user-programs)") and not us.user_streams_on()
    line = real_user_programs_note(True)
    assert us.user_streams_on() and line == us.note() and "real user-mode work" in line
