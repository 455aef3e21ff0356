"""dbench and tbench (the reference study's Tables 5-6 and Figures 2-3) as task models.

dbench: N client processes run dbench 1.x's load (client.txt: what its child_run and fileio.c do for each line,
counted per operation, DBENCH_OPS): every client the same seeded draw of operations in client.txt's proportions
(writes 54 %, stats 15 %, reads 11 %, closes, opens, creates, unlinks, renames), a read or a write of the sizes
client.txt gives (DBENCH_SIZES), and the user work of the operation's lines. Each system call is the recorded
instance of the same call on a file of the guest's ext4 disk (``kpath:``, Linux 6.1: open, fstat, a pread or pwrite of
4 KiB in the page cache with its copy per page, close, open(O_CREAT), stat, unlink, rename; lseek as the null call)
when real paths are on, else the estimate (kpaths ``vfs_op``, a page read or written adding the copy of 4 KiB,
4 x ``copy_kb``). The page cache is where the article's run had it when the window is taken
(page_cache.py: a fluid model of the whole run under the kernel's write-back rules, on 2.5 GB): reads miss it with
that state's probability and wait for the disk model; newly dirtied data is written back in 64 KiB requests by the
writer itself, waiting for the disk, when the run's writers are throttled, else by a daemon (bdflush) in the
background when the run's daemon is writing, else not in the window; its kernel work is Linux 6.1's recorded write-back of
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

import dataclasses
import random
from typing import Any, Iterator

from ..os import IO, Block, Compute, Send, Task
from .base import STALL_MS, counters, machine_summary, make_kernel, run_until, started
from .disk import Disk
from . import page_cache
from .kpaths import (PATHS, REAL_PATHS, WakeChannel, after_wake, estimated, kernel, mark_waker, recorded, syscall,
                     task_spec)
from .user_streams import UserStream

#: dbench's operations: what dbench 1.x (the version the article describes: a 4 MB client.txt of about 90,000
#: NetBench operations) does for the lines of its load file, counted over the whole of client.txt for one client
#: (sahlberg/dbench at 68d2eda, child.c and fileio.c; the count's method in docs/study.md, "dbench"):
#: (name, operations per client, the system calls it makes in order: keys of kpaths.REAL_PATHS, and whether it reads
#: or writes file data). A read or write seeks first (fileio.c nb_read / nb_write: lseek, then read or write); an open
#: is open(O_RDWR | O_CREAT) and fstat (nb_open), of a file that exists or ("create") of a new one. SMBflush,
#: SMBlockingX, SMBtrans2 (find), SMBfindclose, SMBdskattr, SMBsetatr and SMBlseek lines make no call in dbench 1.x;
#: 15 mkdir, 10 rmdir and 2 CREATE per client (0.06 % of the calls) have no recording and are left out.
DBENCH_OPS = [("write", 23287, ("lseek", "file_write"), "write"), ("read", 4698, ("lseek", "file_read"), "read"),
              ("stat", 6393, ("stat",), None), ("close", 3617, ("file_close",), None),
              ("open", 2654, ("file_open", "fstat"), None), ("create", 970, ("file_create", "fstat"), None),
              ("unlink", 961, ("unlink",), None), ("rename", 195, ("rename",), None)]
#: Reads and writes by the pages of 4 KiB they span, from client.txt: (pages, calls, bytes of those calls). Sizes
#: vary from 2 bytes to 64 KiB (writes: 3,534 of 4 bytes, 6,875 of 4 KiB, 680 of 65,475 bytes; reads: 2,080 of 4 KiB,
#: 337 of 65,534 bytes); 94,701,582 bytes are written and 37,950,391 read, the 132 MB per client of dbench's figure
#: (dbench.c: 132 * clients / t). Each page is one recorded 4 KiB call (kpath file_read / file_write) on the client's
#: next page (chosen: no recording of other sizes, so a call of k pages runs k entries and exits where dbench makes
#: one, and a call of a few bytes copies a page); the throughput counts the bytes of the call's class.
DBENCH_SIZES = {"write": ((1, 21671, 38273077), (2, 445, 2718436), (3, 61, 606866), (4, 380, 5434352),
                          (9, 1, 32796), (16, 729, 47636055)),
                "read": ((1, 3938, 10770857), (2, 178, 1345848), (3, 32, 315520), (4, 212, 3400384),
                         (9, 1, 32824), (16, 337, 22084958))}
#: Lines of client.txt per call-making operation: dbench 1.x reads and parses every line (child_run: fgets, three
#: string substitutions, strtok), 96,535 REQUEST and REPLY lines for 42,802 operations that make calls.
DBENCH_LINES_PER_OP = 96_535 / 42_802
CLIENT_MIB = 21.0
CLIENT_WORK = 1500  # user instructions per operation (parse the next line of client.txt)


def dbench_call_shares() -> list[tuple[str, float]]:
    """The recorded calls of DBENCH_OPS in their shares of all calls (kpath name, share; a read's or write's data
    call counted once per page), merged by recording: what one client's kernel work is made of (bench/kpath_ratio.py
    runs it without the OS layer)."""
    shares: dict[str, float] = {}
    for _, count, calls, data in DBENCH_OPS:
        for call in calls:
            n = float(count)
            if data is not None and call == f"file_{data}":
                sizes = DBENCH_SIZES[data]
                n *= sum(p * k for p, k, _ in sizes) / sum(k for _, k, _ in sizes)
            name = REAL_PATHS[call]
            shares[name] = shares.get(name, 0.0) + n
    total = sum(shares.values())
    return [(name, n / total) for name, n in shares.items()]


#: MB/s the clients move with nothing waiting on the disk, per (kernel, HT on): the speed page_cache.simulate runs a
#: whole run at until the disk holds it back. The detailed model's own dbench rows at 20-90 clients with every read in
#: memory and write-back in the background (CPU-bound: the client count does not reach them; docs/study.md, "20-90
#: clients measure the same few clients"), rounded.
DBENCH_CPU_MBPS = {("2.4.19", False): 150.0, ("2.4.19", True): 215.0, ("2.5.32", False): 148.0,
                   ("2.5.32", True): 210.0}


def kernel_of(scheduler: str) -> str:
    """The kernel whose write-back rules go with ``scheduler`` (linux24: 2.4.19; the others 2.5.32's)."""
    return "2.4.19" if scheduler == "linux24" else "2.5.32"


_STATES: dict[tuple[int, str, bool], page_cache.RunState] = {}


def dbench_state(clients: int, scheduler: str, ht: bool) -> page_cache.RunState:
    """The page cache of a whole run of ``clients`` at the moment the detailed window is taken
    (page_cache.WINDOW_AT of the run), from page_cache.simulate at DBENCH_CPU_MBPS."""
    kern = kernel_of(scheduler)
    key = (clients, kern, ht)
    if key not in _STATES:
        _STATES[key] = page_cache.window_state(clients, kern, DBENCH_CPU_MBPS[(kern, ht)])[0]
    return _STATES[key]


#: Pages of 4 KiB in one client's files (CLIENT_MIB).
CLIENT_PAGES = int(CLIENT_MIB * 1024) // 4


#: Pages of 4 KiB per 64 KiB: the places a page can take modulo 64 KiB, where NetBurst's L1D holds one line per
#: address (64K aliasing, core.lsu.alias_64k; a direct-map page's virtual address is its frame's physical one plus a
#: constant, so its place is its frame's).
PAGE_SLOT = 16


def _frame_position(logical: int) -> int:
    """The place modulo 64 KiB (0..PAGE_SLOT-1) of the frame holding page-cache page ``logical``: a hash of its
    number (splitmix64's finaliser), fixed per page."""
    z = (logical + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) % PAGE_SLOT


def client_page(client: int, op: int) -> int:
    """The page-cache page that client ``client``'s ``op``-th read or write (counted from 0) copies: its files are
    CLIENT_PAGES pages of their own, walked in order, one page per 4 KiB operation (chosen: dbench's NetBench load
    reads and writes its files mostly in sequence; the walk wraps after 21 MiB). The recording copies one page of
    the probe's 64 KiB file for every instance, so without this every client's copies would hit the same few cache
    lines, which no real dbench run does with N x 21 MiB of files (page=P, src/tracer/page_cache.hpp).

    Where a page lies: the kernel puts each page of the page cache in whatever frame the allocator hands it, so two
    clients' pages share a place modulo 64 KiB by chance, one pair in PAGE_SLOT. Here logical page L (client x
    CLIENT_PAGES + the walk's page) gets the 64 KiB block L of the simulated page cache, at the place
    :func:`_frame_position` (L) in it (chosen: the allocator's choice is not something the model can know; a hash
    makes it fixed per page). Placing page L at L itself would put two clients' pages exactly 21 MiB (a multiple of
    64 KiB) apart: every two clients copying the same page of the script, which they do in step (every client runs
    the one script), would alias at every line on sibling logical CPUs."""
    logical = client * CLIENT_PAGES + op % CLIENT_PAGES
    return PAGE_SLOT * logical + _frame_position(logical)


def dbench_call(call: str, task: Task, page: int | None = None) -> list[Any]:
    """One system call of a dbench operation for ``task``: its recorded instance (``call``, a key of
    kpaths.REAL_PATHS; a read's or write's copy of 4 KiB is in it, moved to file page ``page`` when given), else the
    estimate: the null call for lseek, ``fstat`` for fstat, ``vfs_op`` for the others, plus 4 x ``copy_kb`` for a
    page read or written."""
    if call == "lseek":
        estimate = estimated("null")
    elif call == "fstat":
        estimate = estimated("fstat")
    else:
        estimate = estimated("vfs_op") + ([kernel("copy_kb", 4)] if page is not None else [])
    return recorded(call, estimate, task, page=page)


def build_dbench(k: Any, clients: int, stats: dict[str, Any], seed: int,
                 state: page_cache.RunState | None = None) -> list[Task]:
    """dbench's clients and bdflush, at the run's page-cache ``state`` (default: an empty cache, every write in
    the background): a read misses with ``state.read_miss`` and waits for the disk; a page written dirties a clean
    page with ``state.new_dirty``; those pages are written back, per 64 KiB, by the writer itself, which waits for the
    disk, when ``state.throttled`` (2.4's balance_dirty, 2.5's balance_dirty_pages), by bdflush when
    ``state.daemon_writing``, and not at all in the window otherwise (they stay dirty in memory)."""
    disk = Disk(k.freq_ghz)
    if state is None:
        state = page_cache.RunState(0.0, 0.0, 0.0, 0.0, False, True, 0.0, 1.0, 0.0)
    p_miss = state.read_miss
    flush = WakeChannel("bdflush")
    holder: dict[Any, Task] = {}
    stats["bytes"] = 0
    weights = [count for _, count, _, _ in DBENCH_OPS]
    size_weights = {data: [calls for _, calls, _ in sizes] for data, sizes in DBENCH_SIZES.items()}
    extra_line = DBENCH_LINES_PER_OP - int(DBENCH_LINES_PER_OP)
    tasks: list[Task] = []
    for c in range(clients):
        # Every client runs the same script (dbench 1.x: each child_run reads the one client.txt, CLIENT1 renamed),
        # here the same seeded draw of operations; its user work and kernel instances are its own.
        rng = random.Random(seed * 1000)
        dirtying = random.Random(seed * 1000 + 7 + c)  # own draws: the script's draws stay those of every state
        work = UserStream("dbench_client", seed * 1000 + c, CLIENT_WORK)  # workloads/user/dbench.c when on

        def client(c: int = c, rng: random.Random = rng, work: UserStream = work,
                   dirtying: random.Random = dirtying) -> Iterator[Any]:
            me = holder[c]
            written = copies = 0
            while True:
                _, _, calls, data = rng.choices(DBENCH_OPS, weights)[0]
                for _ in range(int(DBENCH_LINES_PER_OP) + (rng.random() < extra_line)):
                    yield from work.work()  # the operation's lines of client.txt
                pages = nbytes = 0
                if data is not None:
                    pages, calls_of_size, bytes_of_size = rng.choices(DBENCH_SIZES[data], size_weights[data])[0]
                    nbytes = bytes_of_size / calls_of_size
                for call in calls:
                    if data is not None and call == f"file_{data}":
                        for _ in range(pages):
                            page, copies = client_page(c, copies), copies + 1
                            yield from dbench_call(call, me, page)
                    else:
                        yield from dbench_call(call, me)
                if data == "read" and rng.random() < p_miss:
                    yield IO(cycles=disk.request(k.now, 4 * pages))
                stats["bytes"] += nbytes
                if data == "write":
                    # Every 64 KiB of newly dirtied pages is written back (the request's size, below): by the
                    # writer, who waits for it, when throttled, else by bdflush when the run's daemon is writing.
                    for _ in range(pages):
                        if state.new_dirty < 1.0 and dirtying.random() >= state.new_dirty:
                            continue
                        written += 1
                        if written % 16 == 0 and state.throttled:
                            yield from recorded("writeback", [kernel("writeback", 16)], me, times=4)
                            yield IO(cycles=disk.request(k.now, 64.0, sequential=True))
                            yield from recorded("writeback_irq", [], me, times=4)
                        elif written % 16 == 0 and state.daemon_writing:
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
            # the estimate: 16 blocks of 4 KiB per request at the "writeback" estimate each.
            yield from recorded("writeback", [kernel("writeback", 16 * n)], me, times=4 * n)
            yield IO(cycles=disk.request(k.now, 64.0 * n, sequential=True))
            # The disk's completion interrupt of each submission (virtblk_done -> ext4_end_bio: the end of the pages'
            # write-back), recorded per writeback instance (kpath:writeback_irq). It runs on the CPU that submitted
            # (virtio-blk's managed interrupt), here charged to bdflush after its I/O: chosen, since the model has
            # no device interrupts of its own. Without recordings none (the estimates hold no interrupt).
            yield from recorded("writeback_irq", [], me, times=4 * n)

    holder["flush"] = Task("bdflush", bdflush, source=task_spec(1999, 64), priority=-1)
    tasks.append(holder["flush"])
    for t in tasks:
        t.daemon = True
    return tasks


#: The default study's dbench window, in ms, after 5 ms of warm-up. Chosen from measurements (docs/study.md, "dbench's
#: page-cache frames and its window"): one run's MB/s per 5 ms at 20 clients swings over 100-283 MB/s, with the
#: operations each stretch holds (a 64 KiB write moves 16 times the bytes of a 4 KiB one) and, under 2.5.32, with the
#: clients taking turns on the logical CPUs (four in 45 ms of one run with HT off); a 5 ms window showed HT off and on
#: different stretches of the script, and even the mean of four seeds moved by up to 33 points with the recording.
#: 40 ms holds some 1,400 operations of a client with HT off and several turns, like tbench's window
#: (STUDY_WINDOW_MS), for about the simulated time of four seeds' 5 ms warm-ups and 5 ms windows.
DBENCH_WINDOW_MS = 40.0


#: Bytes of one tbench reply (the data of the request it answers), counted when the client has read it.
TBENCH_REPLY_BYTES = 4096


def tbench_reply(side: str, task: Any = None) -> list[Compute]:
    """The kernel's part of one tbench reply on ``side`` ("send": the server's send, "recv": the client's recv): the
    recorded call of 4 KiB with its copy (kpaths.REAL_PATHS "tcp_send_4k" / "tcp_recv_4k") when real paths are on,
    else the small message's estimated call plus the copy of the 4 KiB (4 x ``copy_kb``)."""
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
#: has read a reply. Chosen: about 2.8 x the longest warm-up measured over the default study's points (18 ms,
#: recording A; under first-come service the start-up convoy ends when every client has read a reply). Linux24
#: serves equals head first, as 2.4.19 does, so its points never meet that criterion (a client-server pair runs for
#: about a slice while the others wait; docs/study.md, "2.4.19's run-list order") and the bound decides their
#: warm-up: a 200 ms bound (1.4 x a 145 ms convoy measured on recording rec2 under first-come service) took the
#: default study to 807 s, past its 10-minute budget.
MAX_WARM_MS = 50.0
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


def _clients_done(done: list[int], base: list[int]) -> int:
    """How many clients have read a reply since ``base``."""
    return sum(1 for d, b in zip(done, base) if d > b)


def run(workload: str, clients: int, ht: bool, scheduler: str, warm_ms: float, window_ms: float,
        seed: int = 0, max_warm_ms: float = MAX_WARM_MS, max_window_ms: float = MAX_WINDOW_MS,
        time_slice_ms: float | None = None, scheduler_params: dict[str, Any] | None = None,
        overrides: dict[str, Any] | None = None, stall_ms: float | None = STALL_MS) -> dict[str, Any]:
    """MB/s over the window (``workload`` 'dbench' or 'tbench') and the machine statistics of the window.
    ``scheduler_params``: keywords of the scheduler (smtlab.os.SchedulerParams), as make_kernel takes them;
    ``overrides``: config keys over the preset's (``{"core.wrong_path": False}``; the study uses none).

    tbench counts a reply when the client has read it, and on one CPU the start is a convoy: every client sends,
    then every server replies, then every client reads, so the first reply of N clients comes after about 3N
    dispatches (~6 ms at 90 clients with HT off) and one round of all N takes 2N dispatches. A fixed window shorter
    than that measured nothing (0 MB/s at 90 and 120 clients). So for tbench the warm-up lasts at least ``warm_ms``
    and until every client has read a reply (the convoy has passed), and the window lasts at least ``window_ms``
    and until every client has read a reply inside it (so the window spans a round, not one pair's exchanges), both
    in steps of 1 ms, the warm-up bounded by ``max_warm_ms`` and the window by ``max_window_ms``, and each ending
    early when its criterion has made no progress for ``stall_ms`` (base.run_until; None: never). Progress in the
    warm-up is a task's first dispatch or a client's first reply, in the window a client's first reply in it: under
    2.4.19's head-first order a client-server pair keeps the CPU until the ticks use up its counters, and waiting
    for the others' turns would take about a tick per pair (docs/study.md, "Stalled warm-ups"). ``ops_by_client``
    gives each client's replies in the window. ``warm_ms`` / ``window_ms`` in the result are the lengths used;
    ``clients_done`` the fraction of clients that completed a request in the window (below 1 when the scheduler
    served some clients several times before others once, or when the window lies in the start-up convoy);
    ``warm_complete`` False when the bound or a stall came before every client had read a reply in the warm-up, so
    that the window starts inside the convoy or in a scheduler's turns; ``warm_end`` and ``window_end`` say why each
    ended ("met", "stalled", "bound"; "fixed" for dbench). Raises :class:`NoCompletion` if no request completed in
    the window. dbench counts bytes as each operation runs, so its window stays fixed. ``time_slice_ms``: the
    kernel's slice (default the scheduler's own; tests use a short one to keep a round cheap)."""
    k = make_kernel(ht, scheduler, seed=seed, time_slice_ms=time_slice_ms, scheduler_params=scheduler_params,
                    overrides=overrides)
    stats: dict[str, Any] = {}
    state = dbench_state(clients, scheduler, ht) if workload == "dbench" else None
    tasks = list(build_dbench(k, clients, stats, seed, state) if state else build_tbench(k, clients, stats, seed))
    for t in tasks:
        k.spawn(t)
    done = stats.get("done")
    step = k.ms_to_cycles(_STEP_MS)
    k.run(until=k.ms_to_cycles(warm_ms))
    warm_end = window_end = "fixed"
    if done is not None:
        zero, cap = [0] * len(done), k.ms_to_cycles(max(warm_ms, max_warm_ms))
        # Progress toward the criterion: a task's first dispatch (the convoy's first pass) or a client's reply.
        warm_end = run_until(k, lambda: _every_client_done(done, zero),
                             lambda: (started(k, tasks), _clients_done(done, zero)), cap, step, stall_ms)
    snap, b0, t0 = counters(k), stats["bytes"], k.now
    base = list(done) if done is not None else []
    k.run(until=t0 + k.ms_to_cycles(window_ms))
    if done is not None:
        cap = t0 + k.ms_to_cycles(max(window_ms, max_window_ms))
        window_end = run_until(k, lambda: _every_client_done(done, base), lambda: _clients_done(done, base), cap,
                               step, stall_ms)
    seconds = (k.now - t0) / (k.freq_ghz * 1e9)
    out = {"workload": workload, "param": clients, "ht": ht, "scheduler": scheduler,
           "throughput": (stats["bytes"] - b0) / seconds / 1e6, "host_seconds": k.host_seconds,
           "warm_ms": t0 / k.cycles_per_us / 1000.0, "window_ms": (k.now - t0) / k.cycles_per_us / 1000.0,
           "clients_done": _clients_done(done, base) / len(done) if done else 1.0,
           "ops_by_client": [d - b for d, b in zip(done, base)] if done else [],
           "warm_complete": warm_end in ("met", "fixed"), "warm_end": warm_end, "window_end": window_end,
           **({"page_cache": dataclasses.asdict(state)} if state else {}), **machine_summary(k, snap)}
    k.machine.close()
    if stats["bytes"] == b0:
        raise NoCompletion(f"{workload} {clients} clients, HT {'on' if ht else 'off'}, {scheduler}: no request "
                           f"completed in the window ({out['warm_ms']:.1f} ms warm-up, {out['window_ms']:.1f} ms "
                           f"window; bounds {max_warm_ms:g} and {max_window_ms:g} ms)")
    return out
