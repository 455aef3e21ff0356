"""Address spaces of the study's workloads: every process its own, threads of one process one, the
kernel half one region shared by all. Expected values are counted on paper from the workloads' structure and from
the address mapping (smtlab/mem/address_space.hpp)."""

from __future__ import annotations

import smtlab
from smtlab import EventKind, Instr, Machine, Source
from smtlab.workloads import chat, fileserver
from smtlab.workloads.base import make_kernel

LINES = 4


def _loads(base: int, pc: int) -> Source:
    """``LINES`` loads, one per 64-byte line from ``base``, with no dependence between them."""
    recs = [Instr.parse(f"{pc + 4 * i:x} load dst=r{1 + i} src=r60 ld={base + 64 * i:x}:8") for i in range(LINES)]
    return Source.from_records(recs, name=f"loads@{base:x}")


def _l1d_misses_after_two_processes(base: int, pc: int) -> int:
    """Runs the same loads in address space 1, then (after a switch) in address space 2, on one logical CPU; returns
    the L1D misses of both."""
    with Machine(smtlab.load_config("netburst", {"core.threads": 1})) as m:
        for asid in (1, 2):
            m.attach(0, _loads(base, pc), asid=asid)
            while not any(e.kind == EventKind.SOURCE_ENDED for e in m.run(cycles=100_000)):
                pass
            m.detach(0)
        return m.stats()["cores"][0]["l1d"]["misses"]


def test_user_lines_of_two_processes_are_disjoint():
    # Process 2's copy of the same virtual lines is other physical lines: LINES cold misses each.
    assert _l1d_misses_after_two_processes(0x0000_5555_0000_0000, 0x0000_5555_5555_0000) == 2 * LINES


def test_kernel_lines_are_shared_across_address_spaces():
    # Kernel-half lines (as kpath: traces carry them) are global: process 2 finds process 1's lines in the L1D.
    assert _l1d_misses_after_two_processes(0xFFFF_8880_0100_0000, 0xFFFF_FFFF_8100_0000) == LINES


def _spaces(tasks) -> dict[str, int]:
    return {t.name: t.space for t in tasks}


def test_chat_is_two_processes_client_and_server():
    # The article: one chat server and one chat client program, a send and a receive thread per user on each side.
    k = make_kernel(False, "linux24")
    rooms = chat.build(2)
    chat.spawn(k, rooms, stagger_ms=0.1)
    spaces = _spaces(t for room in rooms for t in room.tasks)
    assert len(spaces) == 2 * chat.USERS * 4
    client = {s for n, s in spaces.items() if n.startswith("client_")}
    server = {s for n, s in spaces.items() if n.startswith("server_")}
    assert client == {chat.CLIENT_ASID} and server == {chat.SERVER_ASID} and chat.CLIENT_ASID != chat.SERVER_ASID
    # Two rooms' client threads are threads of the one client process: the same address space.
    assert spaces["client_send_0_0"] == spaces["client_send_1_0"] == spaces["client_recv_1_19"]
    k.machine.close()


def test_dbench_clients_are_processes_of_their_own():
    k = make_kernel(False, "linux24")
    tasks = fileserver.build_dbench(k, 3, {}, seed=0)
    k.spawn_all(tasks)
    spaces = _spaces(tasks)
    # 3 forked clients and the bdflush kernel thread: 4 tasks, 4 address spaces.
    assert sorted(spaces) == ["bdflush", "dbench_0", "dbench_1", "dbench_2"]
    assert len(set(spaces.values())) == 4
    k.machine.close()


def test_tbench_clients_and_servers_are_processes_of_their_own():
    k = make_kernel(False, "linux24")
    tasks = fileserver.build_tbench(k, 2, {}, seed=0)
    k.spawn_all(tasks)
    spaces = _spaces(tasks)
    # 2 client processes and one forked tbench_srv process per connection: 4 address spaces.
    assert sorted(spaces) == ["tbench_0", "tbench_1", "tbench_srv_0", "tbench_srv_1"]
    assert len(set(spaces.values())) == 4
    k.machine.close()
