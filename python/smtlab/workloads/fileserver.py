"""dbench and tbench (the reference study's Tables 5-6 and Figures 2-3) as task models.

dbench: N client processes replay a file-server operation mix (the NetBench trace's open / read / write / lock /
unlock / stat / close / rename / unlink / create / find / flush calls), drawn per client from a seeded random stream
with fixed proportions. Each operation is a system call: the recorded instance of the same call on a file of the
guest's ext4 disk (``kpath:``, Linux 6.1: open, 4 KiB pread and pwrite in the page cache with their copy, fcntl
lock, close, open(O_CREAT), stat, unlink, rename, getdents64; kpaths.REAL_PATHS) when real paths are on, else the
estimate (kpaths ``vfs_op``, reads and writes adding the copy of 4 KiB, 4 x ``copy_kb``). Reads miss the page cache with the probability that the clients' files (21 MiB each) do not fit
in the 2 GiB of RAM left for it, and then wait for the disk model; written data is written back by a daemon
(bdflush) in the background, which also occupies the disk; its kernel work is Linux 6.1's recorded write-back of
16 KiB (do_writepages -> ext4_writepages, kpath:writeback) four times per 64 KiB request, each followed after the disk's
time by its completion interrupt (kpath:writeback_irq), when real paths are on, else the ``writeback`` estimate. Throughput: MB read + written per simulated second.

tbench: the same client loop with no file system: each client process sends a request over a loopback TCP socket to
its own server process (tbench_srv), which decodes it (``smb_op``) and replies with the data (4 KiB); the client
waits for the reply. The request is a small message (the recorded 16-byte send and recv); the reply is the recorded
send and recv of 4 KiB with their copies when real paths are on (``tbench_reply``), else the small message's
estimate plus 4 x ``copy_kb``. Throughput: MB of replies per simulated second (4096 bytes per reply the client read).

Both: every process has its own instruction stream (seed) and its own address space, as the real benchmarks have
them: dbench forks one child process per client (dbench.c: ``fork()`` per client, each running ``child_run`` over
client.txt); tbench forks one client process per client, and tbench_srv forks a server process per accepted
connection (the classic accept-and-fork server). bdflush is a kernel thread (no user address space of its own); its
stand-in stream is its own data, so it gets its own address space too, apart from every client's. The kernel's
addresses are one region shared by every address space (smtlab/mem/address_space.hpp), which the kernel paths' real
streams (kpath: sources) use. Cross-CPU wake-ups pay a reschedule IPI.
Scaled down: the real runs replay 90,000 operations per client; here a window of a few simulated milliseconds after a
warm-up, which at 20-120 clients is a few hundred to a few thousand operations.
"""

from __future__ import annotations

import random
from typing import Any, Iterator

from ..os import IO, Block, Compute, Send, Task
from .base import counters, machine_summary, make_kernel
from .disk import Disk
from .kpaths import PATHS, WakeChannel, after_wake, estimated, kernel, mark_waker, recorded, syscall, task_spec
from .user_streams import UserStream

#: dbench's operation mix: (name, share, KiB moved, is a write, the recorded call: a key of kpaths.REAL_PATHS).
DBENCH_MIX = [("read", 0.30, 4, False, "file_read"), ("write", 0.22, 4, True, "file_write"),
              ("open", 0.10, 0, False, "file_open"), ("close", 0.10, 0, False, "file_close"),
              ("stat", 0.12, 0, False, "stat"), ("lock", 0.06, 0, False, "file_lock"),
              ("find", 0.05, 0, False, "find"), ("unlink", 0.02, 0, False, "unlink"),
              ("rename", 0.01, 0, False, "rename"), ("create", 0.02, 0, True, "file_create")]
CLIENT_MIB = 21.0
CACHE_MIB = 2048.0
CLIENT_WORK = 1500  # user instructions per operation (parse the next line of client.txt)


def _miss_probability(clients: int) -> float:
    return max(0.0, 1.0 - CACHE_MIB / (clients * CLIENT_MIB))


#: Pages of 4 KiB in one client's files (CLIENT_MIB).
CLIENT_PAGES = int(CLIENT_MIB * 1024) // 4


def client_page(client: int, op: int) -> int:
    """The page-cache page that client ``client``'s ``op``-th read or write (counted from 0) copies: its files are
    CLIENT_PAGES pages of their own, walked in order, one page per 4 KiB operation (chosen: dbench's NetBench load
    reads and writes its files mostly in sequence; the walk wraps after 21 MiB). The recording copies one page of
    the probe's 64 KiB file for every instance, so without this every client's copies would hit the same few cache
    lines, which no real dbench run does with N x 21 MiB of files (page=P, src/tracer/page_cache.hpp)."""
    return client * CLIENT_PAGES + op % CLIENT_PAGES


def dbench_call(call: str, kib: int, task: Task, page: int | None = None) -> list[Any]:
    """One dbench operation's system call for ``task``: its recorded instance (``call``, a key of
    kpaths.REAL_PATHS; a read's or write's copy is in it, moved to file page ``page`` when given), else the estimate:
    ``vfs_op`` plus ``kib`` x ``copy_kb``."""
    estimate = estimated("vfs_op") + ([kernel("copy_kb", kib)] if kib else [])
    return recorded(call, estimate, task, page=page)


def build_dbench(k: Any, clients: int, stats: dict[str, Any], seed: int) -> list[Task]:
    disk = Disk(k.freq_ghz)
    p_miss = _miss_probability(clients)
    flush = WakeChannel("bdflush")
    holder: dict[Any, Task] = {}
    stats["bytes"] = 0
    names = [m[0] for m in DBENCH_MIX]
    weights = [m[1] for m in DBENCH_MIX]
    tasks: list[Task] = []
    for c in range(clients):
        rng = random.Random(seed * 1000 + c)
        work = UserStream("dbench_client", seed * 1000 + c, CLIENT_WORK)  # workloads/user/dbench.c when on

        def client(c: int = c, rng: random.Random = rng, work: UserStream = work) -> Iterator[Any]:
            me = holder[c]
            writes = copies = 0
            while True:
                op = rng.choices(range(len(names)), weights)[0]
                _, _, kib, is_write, call = DBENCH_MIX[op]
                yield from work.work()
                page = None
                if kib:
                    page, copies = client_page(c, copies), copies + 1
                yield from dbench_call(call, kib, me, page)
                if kib:
                    if not is_write and rng.random() < p_miss:
                        yield IO(cycles=disk.request(k.now, kib))
                    stats["bytes"] += kib * 1024
                if is_write:
                    writes += 1
                    if writes % 16 == 0:
                        mark_waker(flush, me)
                        yield Send(flush)

        holder[c] = Task(f"dbench_{c}", client, source=task_spec(2000 + c, 64))  # own process
        tasks.append(holder[c])

    def bdflush() -> Iterator[Any]:
        me = holder["flush"]
        while True:
            yield Block(flush)
            yield from after_wake(flush, me)
            n = 1 + flush.pending
            flush.received += flush.pending
            flush.pending = 0
            # A request stands for 16 client writes of 4 KiB (see client: a Send every 16 writes), 64 KiB of dirty
            # pages, which the disk model writes as one 64 KiB request. Real paths: Linux 6.1's write-back code
            # (do_writepages -> ext4_writepages, building and submitting the bio) for 16 KiB, recorded per instance
            # (kpath:writeback), so 4 instances per request, 4 x n in all: chosen, one instance per run of 4
            # contiguous dirty pages of one file, since a client's writes fall into several files. Without recordings
            # the estimate as before: 16 blocks of 4 KiB per request at the "writeback" estimate each.
            yield from recorded("writeback", [kernel("writeback", 16 * n)], me, times=4 * n)
            yield IO(cycles=disk.request(k.now, 64.0 * n, sequential=True))
            # The disk's completion interrupt of each submission (virtblk_done -> ext4_end_bio: the end of the pages'
            # write-back), recorded per writeback instance (kpath:writeback_irq). It runs on the CPU that submitted
            # (virtio-blk's managed interrupt), here charged to bdflush after its I/O: chosen, since the model has
            # no device interrupts of its own. Without recordings none, as before (the estimate never had it).
            yield from recorded("writeback_irq", [], me, times=4 * n)

    holder["flush"] = Task("bdflush", bdflush, source=task_spec(1999, 64), priority=-1)
    tasks.append(holder["flush"])
    for t in tasks:
        t.daemon = True
    return tasks


#: Bytes of one tbench reply (the data of the request it answers), counted when the client has read it.
TBENCH_REPLY_BYTES = 4096


def tbench_reply(side: str, task: Any = None) -> list[Compute]:
    """The kernel's part of one tbench reply on ``side`` ("send": the server's send, "recv": the client's recv): the
    recorded call of 4 KiB with its copy (kpaths.REAL_PATHS "tcp_send_4k" / "tcp_recv_4k") when real paths are on,
    else the small message's estimated call plus the copy of the 4 KiB (4 x ``copy_kb``), as before the recordings."""
    kib = TBENCH_REPLY_BYTES // 1024
    return recorded(f"tcp_{side}_4k", [*estimated(f"tcp_{side}"), kernel("copy_kb", kib)], task)


def build_tbench(k: Any, clients: int, stats: dict[str, Any], seed: int) -> list[Task]:
    holder: dict[Any, Task] = {}
    stats["bytes"] = 0
    stats["done"] = [0] * clients  # requests each client has completed (its reply read)
    tasks: list[Task] = []
    for c in range(clients):
        req, rep = WakeChannel(f"req{c}"), WakeChannel(f"rep{c}")
        # User-mode work from workloads/user/tbench.c when user streams are on (the server's: smb_op's estimate).
        cwork = UserStream("tbench_client", seed * 1000 + c, CLIENT_WORK)
        swork = UserStream("tbench_server", seed * 1000 + c, PATHS["smb_op"].instructions)

        def client(c: int = c, req: WakeChannel = req, rep: WakeChannel = rep,
                   work: UserStream = cwork) -> Iterator[Any]:
            me = holder[("c", c)]
            while True:
                yield from work.work()
                yield from syscall("tcp_send", task=me)
                mark_waker(req, me)
                yield Send(req)
                yield Block(rep)
                yield from after_wake(rep, me)
                yield from tbench_reply("recv", me)
                stats["bytes"] += TBENCH_REPLY_BYTES
                stats["done"][c] += 1

        def server(c: int = c, req: WakeChannel = req, rep: WakeChannel = rep,
                   work: UserStream = swork) -> Iterator[Any]:
            me = holder[("s", c)]
            while True:
                yield Block(req)
                yield from after_wake(req, me)
                yield from syscall("tcp_recv", task=me)
                yield from work.work()  # decode the request, build the reply (kpaths smb_op when off)
                yield from tbench_reply("send", me)
                mark_waker(rep, me)
                yield Send(rep)

        holder[("c", c)] = Task(f"tbench_{c}", client, source=task_spec(3000 + c, 64), daemon=True)
        holder[("s", c)] = Task(f"tbench_srv_{c}", server, source=task_spec(4000 + c, 64), daemon=True)
        tasks += [holder[("s", c)], holder[("c", c)]]
    return tasks


#: Upper bound of a tbench point's warm-up, in ms: the adaptive warm-up below stops here whether or not every client
#: has read a reply (chosen: about 1.4 x the longest start-up convoy measured, 145 ms at 120 clients under Linux24 with
#: HT off, rec2 recording, 2026-11-28; docs/study.md, "tbench"). Until then warm-up and window shared one 60 ms bound,
#: and at 60-120 clients under Linux24 the window lay in the convoy.
MAX_WARM_MS = 200.0
#: The default study's tbench window, in ms (at least; it extends until every client has read a reply in it). Chosen
#: from measurements (bench/tbench_timeline.py, docs/study.md): under Linux25HT the run's throughput swings with a
#: period that grows with the clients (about 20 ms at 60 clients, 40 ms at 120), and a 5 ms window, which every
#: client's reply already filled, read one phase of a swing (60 clients +20 % against +66 % over 190 ms). Over any
#: 40 ms of fourteen measured runs (20-120 clients, both schedulers, HT off and on) the throughput was within 6.3 % of
#: the run's, in all but one within 3.6 %.
STUDY_WINDOW_MS = 40.0
#: Upper bound of a tbench point's window, in ms, after the warm-up: the window stops here whether or not every client
#: has read a reply inside it (chosen: the default window, so a default point's window is exactly that long. Linux24
#: serves 60-120 clients unevenly, a few of 120 had no reply in 270 ms while others had over 100, yet every 10 ms of
#: its run gives the same throughput within 6 %, so waiting for them measures nothing new: a 60 ms bound gave the
#: same rows within 0.4 points and cost the default study about 20 s).
MAX_WINDOW_MS = STUDY_WINDOW_MS
_STEP_MS = 1.0


class NoCompletion(RuntimeError):
    """No request completed inside a measurement window: there is no throughput to report (never report 0)."""


def _every_client_done(done: list[int], base: list[int]) -> bool:
    """Every client has read a reply since ``base``. (The earlier criterion, N replies in total, was met at 20 clients
    with HT on by one client/server pair ping-ponging across the two siblings: 116 of the window's 157 replies, while
    20 % of the clients had none; the row then measured that pair against HT off's time-sliced convoy.)"""
    return all(d > b for d, b in zip(done, base))


def run(workload: str, clients: int, ht: bool, scheduler: str, warm_ms: float, window_ms: float,
        seed: int = 0, max_warm_ms: float = MAX_WARM_MS, max_window_ms: float = MAX_WINDOW_MS,
        time_slice_ms: float | None = None) -> dict[str, Any]:
    """MB/s over the window (``workload`` 'dbench' or 'tbench') and the machine statistics of the window.

    tbench counts a reply when the client has read it, and on one CPU the start is a convoy: every client sends,
    then every server replies, then every client reads, so the first reply of N clients comes after about 3N
    dispatches (~6 ms at 90 clients with HT off) and one round of all N takes 2N dispatches. A fixed window shorter
    than that measured nothing (0 MB/s at 90 and 120 clients). So for tbench the warm-up lasts at least ``warm_ms``
    and until every client has read a reply (the convoy has passed), and the window lasts at least ``window_ms``
    and until every client has read a reply inside it (so the window spans a round, not one pair's exchanges), both
    in steps of 1 ms, the warm-up bounded by ``max_warm_ms`` and the window by ``max_window_ms``; ``ops_by_client``
    gives each client's replies in the window. ``warm_ms`` / ``window_ms`` in the result are the lengths used;
    ``clients_done`` the fraction of clients that completed a request in the window (below 1 when the scheduler
    served some clients several times before others once, or when the window lies in the start-up convoy);
    ``warm_complete`` False when the bound came before every client had read a reply in the warm-up, so that the
    window starts inside the convoy. Raises :class:`NoCompletion` if no request completed in the window. dbench
    counts bytes as each operation runs, so its window stays fixed. ``time_slice_ms``: the kernel's slice (default
    the scheduler's own; tests use a short one to keep a round cheap)."""
    k = make_kernel(ht, scheduler, seed=seed, time_slice_ms=time_slice_ms)
    stats: dict[str, Any] = {}
    builder = build_dbench if workload == "dbench" else build_tbench
    for t in builder(k, clients, stats, seed):
        k.spawn(t)
    done = stats.get("done")
    step = k.ms_to_cycles(_STEP_MS)
    k.run(until=k.ms_to_cycles(warm_ms))
    warm_complete = True
    if done is not None:
        zero, cap = [0] * len(done), k.ms_to_cycles(max(warm_ms, max_warm_ms))
        while not _every_client_done(done, zero) and k.now + step <= cap:
            k.run(until=k.now + step)
        warm_complete = _every_client_done(done, zero)
    snap, b0, t0 = counters(k), stats["bytes"], k.now
    base = list(done) if done is not None else []
    k.run(until=t0 + k.ms_to_cycles(window_ms))
    if done is not None:
        cap = t0 + k.ms_to_cycles(max(window_ms, max_window_ms))
        while not _every_client_done(done, base) and k.now + step <= cap:
            k.run(until=k.now + step)
    seconds = (k.now - t0) / (k.freq_ghz * 1e9)
    out = {"workload": workload, "param": clients, "ht": ht, "scheduler": scheduler,
           "throughput": (stats["bytes"] - b0) / seconds / 1e6, "host_seconds": k.host_seconds,
           "warm_ms": t0 / k.cycles_per_us / 1000.0, "window_ms": (k.now - t0) / k.cycles_per_us / 1000.0,
           "clients_done": (sum(1 for d, b in zip(done, base) if d > b) / len(done)) if done else 1.0,
           "ops_by_client": [d - b for d, b in zip(done, base)] if done else [],
           "warm_complete": warm_complete,
           **machine_summary(k, snap)}
    k.machine.close()
    if stats["bytes"] == b0:
        raise NoCompletion(f"{workload} {clients} clients, HT {'on' if ht else 'off'}, {scheduler}: no request "
                           f"completed in the window ({out['warm_ms']:.1f} ms warm-up, {out['window_ms']:.1f} ms "
                           f"window; bounds {max_warm_ms:g} and {max_window_ms:g} ms)")
    return out
