"""Kernel-mode code paths as trace segments with documented instruction counts.

The model sees no real kernel: a system call is a *trap* (the int 0x80 / iret privilege change) followed by a *path*
(the kernel function's work), each a documented number of instructions. Each count below is chosen from the size of
the Linux 2.4 code path it stands for (how many functions, loops over fds or path components, pages touched); none
is fitted to a published latency. The same counts serve both HT settings, so they cannot create an HT effect by
themselves.

Every task runs an instruction stream of its own (its ``source``, see ``task_spec``): a synthetic program with a
kernel-like mix (about 28 % loads, 14 % stores, 17 % branches, 94 % predictable, short dependency chains, a hot 8 KiB
inside a larger footprint), and its user code and estimated kernel paths are consecutive stretches of it.

Real kernel paths: the system calls in ``REAL_PATHS`` have a recording of the same call (``kpath:``, Linux 6.1 under
qemu-system, docs/tracing.md). When the study switches them on (``enable_real_paths``), ``syscall`` runs one
recorded instance (user-mode call, entry, kernel path, return) as a step on a source of its own, in the task's
address space, on the task's own kernel stack. Switching sources at a step boundary detaches and attaches in one
cycle, which the core applies as one change (no partition drain); the stream being left has its in-flight
instructions squashed and fetched again later.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass
from typing import Any

from ..os import Channel, Compute

#: The trap: int 0x80 and iret. NetBurst's microcoded privilege changes cost several hundred cycles (the reason Linux
#: 2.5 moved to sysenter); modelled as this many instructions of the task's stream (about 600 cycles at the kernel
#: mix's CPI of ~1.3; chosen, not measured).
TRAP_INSTRUCTIONS = 450


def task_spec(seed: int, footprint_kb: int = 64) -> str:
    """The instruction stream of one task (user code and kernel paths alike), with its own seed."""
    return (f"gen:mix,load=0.28,store=0.14,branch=0.17,imul=0.01,dep=3,footprint={footprint_kb}k,hot=0.9,hot_kb=8,"
            f"predictability=0.94,body=2048,count=0,seed={seed}")


@dataclass(frozen=True)
class KernelPath:
    """One kernel code path: ``instructions`` per call (``footprint_kb``: what it walks, for the docs)."""

    name: str
    instructions: int
    footprint_kb: int
    doc: str


_TABLE = [
    # name, instructions per call, footprint KiB, what it stands for
    ("null", 120, 16, "getppid: entry checks, read current->p_pptr->pid, exit work check"),
    ("read", 700, 32, "read(2) of one byte from /dev/zero: fget, rw checks, read_zero, clear_user, fput"),
    ("write", 550, 32, "write(2) of one byte to /dev/null: fget, rw checks, write_null, fput"),
    ("stat", 4000, 96, "stat(2): getname, path walk over 3-4 components through the dcache, cp_old_stat"),
    ("fstat", 700, 32, "fstat(2): fget, cp_old_stat, fput"),
    ("open", 5500, 96, "open(2): getname, path walk, get_empty_filp, dentry_open, fd install"),
    ("close", 900, 32, "close(2): fd table update, fput, dput"),
    ("select10", 4500, 48, "select(2) on 10 file descriptors: copy fd sets, poll each file (~400 each), copy back"),
    ("select10_tcp", 4800, 64, "select(2) on 10 TCP sockets: tcp_poll per socket"),
    ("sigaction", 450, 16, "rt_sigaction: copy the handler in and out, lock the signal table"),
    ("kill", 900, 24, "kill(2) to self: find the task, send_signal, queue it"),
    ("sigdeliver", 1500, 32, "do_signal: build the signal frame on the user stack, set up the handler"),
    ("sigreturn", 900, 24, "sigreturn: restore registers from the frame"),
    ("pipe_write", 1400, 48, "pipe_write of one word: lock the inode, copy, wake the reader"),
    ("pipe_read", 1200, 48, "pipe_read: wait queue, copy to user"),
    ("fork", 60000, 512, "do_fork of a small process: copy mm (page tables, vmas), files, signal handlers, task struct"),
    ("page_fault", 1500, 64, "a copy-on-write or zero-fill page fault: find the vma, allocate, copy or clear 4 KiB"),
    ("exit", 30000, 384, "do_exit: tear down the mm (free page tables and pages), close files, notify the parent"),
    ("wait", 3000, 48, "wait4: find the zombie child, collect its statistics, release the task struct"),
    ("execve", 250000, 768, "execve of a small static binary: open, read headers, flush the old mm, map segments"),
    ("creat", 7000, 128, "creat(2): path walk, allocate an inode, add a directory entry (journal metadata)"),
    ("link", 6000, 128, "link(2): two path walks, add a directory entry, bump the link count"),
    ("unlink", 6500, 128, "unlink(2): path walk, remove the entry, free the inode when the last link goes"),
    ("fs_write", 3500, 128, "write(2) of 1 KiB to a file: page cache lookup, copy, mark buffers dirty"),
    ("fsync", 4000, 96, "fsync(2): submit the dirty buffers of one file to the block layer"),
    ("writeback", 2500, 128, "bdflush/kupdated work per dirtied metadata block: build and submit the buffer"),
    ("tcp_send", 3500, 128, "send(2) of a small message on a loopback TCP socket: tcp_sendmsg, the loopback "
                            "device, the receiver's tcp_v4_rcv and socket wake-up"),
    ("semop", 600, 24, "semop(2) on one SysV semaphore: copy the operation in, look the array up, check access, "
                       "apply it, walk the queue of waiting operations (chat_source; no recording)"),
    ("tcp_recv", 2000, 96, "recv(2): tcp_recvmsg, copy to user, window update"),
    ("tcp_msg", 250, 16, "per extra small message carried by one send or recv call (copy 100 bytes, skb "
                         "bookkeeping): chat's calls move several queued messages at once"),
    ("smb_op", 2500, 128, "the file-server's request decode and reply build per SMB operation (tbench's "
                          "stand-in for smbd, in user mode)"),
    ("vfs_op", 3000, 128, "one metadata file operation (open / close / stat / lock / rename ...) with page cache "
                          "and dcache hits"),
    ("copy_kb", 600, 256, "copying one KiB between a user buffer and the page cache (rep movs, 16 lines)"),
]

PATHS: dict[str, KernelPath] = {n: KernelPath(n, i, f, d) for n, i, f, d in _TABLE}


def trap() -> Compute:
    """The int 0x80 / iret privilege change of one system call (instructions of the task's own stream)."""
    return Compute(TRAP_INSTRUCTIONS)


def kernel(name: str, scale: float = 1.0) -> Compute:
    """``scale`` times the named path's instructions (at least one), from the task's own stream."""
    return Compute(max(1, round(PATHS[name].instructions * scale)))


def syscall(name: str, scale: float = 1.0, task: Any = None) -> list[Compute]:
    """A whole system call: the trap and the path, as one step. With real kernel paths on (:func:`use_real_paths`)
    and ``name`` in :data:`REAL_PATHS` (and ``scale`` 1), the step runs one recorded instance of the real path
    instead (:func:`real_spec`; ``task``: the calling Task, for its instance and its own kernel stack)."""
    if scale == 1.0 and name in REAL_PATHS and real_paths_on():
        return [Compute(source=real_spec(name, task, _next_draws(task, name, 1) % DRAW_CYCLE))]
    return estimated(name, scale)


def estimated(name: str, scale: float = 1.0) -> list[Compute]:
    """A whole system call from the estimates alone: the trap and ``scale`` times the path, as one step."""
    return [Compute(TRAP_INSTRUCTIONS + max(1, round(PATHS[name].instructions * scale)))]


def sleep_entry() -> list[Compute]:
    """The trap of a call that sleeps, run before its ``Block``: with real paths the call's recorded instance, run
    after the wake-up (e.g. ``recorded("pipe_read", ...)``), holds its entry and exit, so there is none here."""
    return [] if real_paths_on() else [trap()]


# --- real kernel paths (kpath: sources, docs/tracing.md) -------------------------------------------------------------
#: The model's system calls that have a recording of the same call (Linux 6.1 under qemu-system, docs/tracing.md
#: "Paths"). A kpath instance runs from the user-mode call through the entry, the kernel path and the return, so it
#: stands for the trap and the path together. Keys are the model's names for what a workload does (``syscall`` takes
#: the single calls; :func:`recorded` the rest: a sequence of calls, a fault, an interrupt); values the kpath.
#: Only what the recording really ran: a tbench metadata operation and dbench's bulk copies without recordings keep
#: their estimates.
REAL_PATHS = {
    "null": "getppid",  # LMbench null call
    # dbench 1.x's lseek before each read and write (fileio.c): no recording of lseek; chosen: the null call's, the
    # nearest recorded call (entry, a short path without a wait, exit; lseek(SEEK_SET) adds the file's lookup and
    # the position's update, about a hundred instructions, which this leaves out).
    "lseek": "getppid",
    "read": "read",  # read() of 1 byte from /dev/zero
    "write": "write",  # write() of 1 byte to /dev/null
    "stat": "stat",
    "fstat": "fstat",
    "sigaction": "sigaction",
    "select10": "select",  # LMbench lat_select: 10 regular-file descriptors, zero timeout
    "select10_tcp": "select_tcp",  # LMbench 2 lat_select tcp: 10 dups of one loopback socket, write set, zero timeout
    "link": "link",  # AIM9 link_test: link() then unlink() of a file (ext4)
    "unlink": "unlink",
    "fork": "fork",  # fork() in the parent up to its return there (LMbench, make, the shell)
    "execve": "execve",  # execve of a small static program, up to its main()
    # LMbench fork+/bin/sh -c's child: execve of /bin/sh (busybox ash) -c PROG, ash's start-up, and its execve of
    # PROG (ash execs the last command without forking), up to PROG's main().
    "sh -c": "sh_c",
    "tcp_send": "tcp_send",  # send() on a loopback TCP connection, the receiver's side included
    "tcp_recv": "tcp_recv",
    # tbench's reply: 4 KiB sent by the server, received by the client, each with its copy (the 16-byte paths above
    # carry the request); without recordings the 16-byte estimate plus 4 x copy_kb (fileserver.tbench_reply).
    "tcp_send_4k": "tcp_send_4k",
    "tcp_recv_4k": "tcp_recv_4k",
    "open+close": "open_close",  # LMbench open/close
    "creat+close": "creat",  # AIM9 creat-clo (ext4)
    "kill+signal": "signal",  # LMbench signal handler overhead: kill, delivery, the handler, sigreturn
    "page_fault": "page_fault",  # a first write to an untouched anonymous page
    "pipe_write": "pipe_write_wake",  # a 1-byte write whose reader sleeps on the other CPU (LMbench lat_pipe)
    "pipe_read": "pipe_read",  # the read after the wake-up: the byte is there (the sleep is the model's switch)
    "exit+wait": "exit_wait",  # a child's _exit and its parent's waitpid return
    "fs_write": "disk_write",  # 1 KiB appended to an ext4 file (AIM9 sync disk tests)
    "fsync": "fsync",  # the data block and the journal commit to the virtio disk, and the wait
    "disk_read": "disk_read",  # AIM9 sync_disk_cp's read of 1 KiB from its cached source file (ext4), the copy in it
    # dbench's file-server operations on files of the guest's ext4 disk (fileserver.py; the probe's "file server"
    # phase): reads and writes of 4 KiB in the page cache, their copy included.
    "file_open": "file_open",
    "file_read": "file_read",
    "file_write": "file_write",
    "file_lock": "file_lock",  # fcntl(F_SETLK) of a byte range
    "file_close": "file_close",
    "file_create": "file_create",  # open(O_CREAT) of a new file, without its close
    "rename": "rename",
    "find": "getdents",  # dbench's FIND_FIRST: read a directory
    # dbench's write-back daemon (fileserver.bdflush): the flusher's do_writepages -> ext4_writepages for 16 KiB of
    # dirty pages, the bio submitted, no wait (recorded as sync_file_range(SYNC_FILE_RANGE_WRITE) in the probe).
    "writeback": "writeback",
    # ... and the disk's completion interrupt of each (virtblk_done -> ext4_end_bio), which the recording cuts out of
    # the submission wherever the host's timing put it (kpath_paths.h, SUBMIT / DEVICE_IRQ).
    "writeback_irq": "writeback_irq",
}
#: chat's batched calls (chat._batch_call): a send of B queued 100-byte messages as one write of B x 100 bytes, and a
#: recv of the B x 100 bytes that B separate sends queued, each a recording of its own per batch size
#: (workloads/kpath/probe_net.c, CHAT_BATCHES; kpath tcp_send_bB / tcp_recv_bB). A batch of 1 is the 16-byte
#: tcp_send / tcp_recv above.
TCP_BATCHES = tuple(range(2, 21))
REAL_PATHS.update({f"tcp_{d}_b{b}": f"tcp_{d}_b{b}" for d in ("send", "recv") for b in TCP_BATCHES})
# Not "ipi": the wake-up IPI is no system call of the woken task. A halted target runs the IPI's handler itself as
# the kernel's wake path (Kernel(wake_path=...), smtlab/os/halt.py and wake_ipi.py): for the 2.4.19 / 2.5.32
# schedulers the reschedule IPI's estimate (RESCHED_IPI_SPEC), for today's kernel (idle_core_first) Linux 6.1's
# recorded call-function IPI (kpath:wake_ipi, :func:`wake_path`); after_wake then adds nothing. A wake-up of a busy
# CPU (RESCHEDULE_VECTOR into a running task) runs Linux 6.1's recorded reschedule IPI (kpath:resched_ipi,
# :func:`busy_wake_spec`) in after_wake, or the estimate without recordings.

#: The environment variable that switches real paths on ("1") in this process and the study's worker processes
#: (set by :func:`enable_real_paths`, read by :func:`real_paths_on`).
REAL_PATHS_ENV = "SMTLAB_STUDY_KPATH"


def real_paths_on() -> bool:
    """True when system calls in REAL_PATHS run their recorded kernel paths."""
    return os.environ.get(REAL_PATHS_ENV) == "1"


def real_spec(name: str, task: Any = None, draw: int = 0, page: int | None = None) -> str:
    """The kpath: source of the model's path ``name`` for ``task``'s call number ``draw`` of it: the instance drawn by
    the task's pid and ``draw`` (calls in a real run differ, as the recorded instances do), with the task's own kernel
    stack (``stack=pid``: every instance was recorded by one probe process on one kernel stack; each task has its
    own). :func:`syscall` and :func:`recorded` number a task's calls of each path (:data:`DRAW_CYCLE`). ``page``: the
    file page the call copies, the first page of the simulated page cache its page-cache pages move to
    (``page=P``, src/tracer/page_cache.hpp); None: the probe's own page, as recorded."""
    pid = getattr(task, "pid", None) or 0
    spec = f"kpath:{REAL_PATHS[name]},seed={pid + 1_000_003 * draw},stack={pid}"
    return spec if page is None else f"{spec},page={page}"


#: A task's successive calls of one path draw instances with ``draw`` = 0, 1, ..., DRAW_CYCLE - 1, 0, 1, ... (seeded:
#: picks with replacement among the recording's instances). Had every call of a task run the one instance its pid
#: drew, a task that drew an instance holding a timer tick (file_read: 7,687 to 17,298 instructions; tcp_recv 1,849
#: or 7,574) would pay it on every call, and a study window in which one or two clients run would measure their
#: draws, not the path. Chosen: 32, about the recording's default count of instances (30), so that a
#: task's calls average over about as many picks as there are instances, while the sources a task opens stay bounded
#: (at most 32 per path: the kernel keeps one per spec and task). A task's k-th call draws the same in every run, so
#: HT on and off stay paired.
DRAW_CYCLE = 32

_DRAWS: "weakref.WeakKeyDictionary[Any, dict[str, int]]" = weakref.WeakKeyDictionary()


def _next_draws(task: Any, name: str, times: int) -> int:
    """The draw of ``task``'s next call of ``name``; counts ``times`` calls. A call without a task always draws 0."""
    if task is None:
        return 0
    calls = _DRAWS.setdefault(task, {})
    first = calls.get(name, 0)
    calls[name] = first + times
    return first


def recorded(name: str, estimate: list[Compute], task: Any = None, times: int = 1,
             page: int | None = None) -> list[Compute]:
    """``times`` recorded instances of the model's ``name`` (a key of :data:`REAL_PATHS`) when real paths are on,
    each a step of its own (``task``'s next ``times`` calls of the path; ``page``: the file page a single call
    copies, see :func:`real_spec`); else ``estimate``, the steps of the estimated instruction counts."""
    if not real_paths_on():
        return estimate
    if page is not None and times != 1:
        raise ValueError("recorded: a page is the file page of one call (times=1)")
    first = _next_draws(task, name, times)
    return [Compute(source=real_spec(name, task, (first + d) % DRAW_CYCLE, page)) for d in range(times)]


def enable_real_paths() -> str | None:
    """Switches real kernel paths on for this process and the worker processes it starts, if the kpath: recording
    can be had (recorded on first use: about a minute of qemu-system). Returns None when on, else the one-line reason
    why the study falls back to the estimated instruction counts."""
    from .._core import Source, TraceError  # the compiled module; imported here so the estimates need none of it

    try:
        Source("kpath:getppid")
    except TraceError as e:
        os.environ[REAL_PATHS_ENV] = "0"
        return f"real kernel paths unavailable ({e}); every system call uses its estimated instruction count"
    os.environ[REAL_PATHS_ENV] = "1"
    return None


def user(n: int) -> Compute:
    """``n`` instructions of user code (the task's own stream)."""
    return Compute(n)


#: The context-switch path the study's kernels run (Kernel(kernel_path=..., switch_instructions=...)): schedule(),
#: switch_mm (a CR3 write that flushes the TLB) and switch_to, about 1500 instructions in 2.4.
SWITCH_SPEC = ("gen:mix,load=0.28,store=0.14,branch=0.17,imul=0.01,dep=3,footprint=32k,hot=0.9,hot_kb=8,"
               "predictability=0.94,body=2048,count=0,seed=97")
SWITCH_INSTRUCTIONS = 1500
#: The recorded context switch (sched_yield to another runnable process, through the switch to the other process's
#: return from its own yield). Every logical CPU runs the same instance (seed 0), whole, per switch: a draw per CPU
#: would give HT on (two CPUs) other switch lengths than HT off (one) by chance alone.
REAL_SWITCH_SPEC = "kpath:ctxsw,seed=0"


#: The recorded wake-up IPI on a halted CPU (call-function-single vector, sched_ttwu_pending, the idle loop's exit, up
#: to __schedule): the wake path of today's kernel (idle_core_first) only, see RESCHED_IPI_SPEC for 2.4/2.5. Every
#: logical CPU runs the same instance (seed 0), whole, for the reason REAL_SWITCH_SPEC gives.
REAL_WAKE_SPEC = "kpath:wake_ipi,seed=0"


#: The reschedule IPI of the 2.4.19 and 2.5.32 kernels as the halted CPU runs it, between its HLT exit and its pick
#: (Kernel(wake_path=...) for schedulers without Scheduler.remote_wakeup; smtlab/os/halt.py): interrupt entry and
#: exit around smp_reschedule_interrupt, which only acknowledges the local APIC, and the idle loop's way to
#: schedule(). Without recordings it is this estimate (trap + the "ipi" path, :func:`resched_ipi_instructions`), as
#: kernel code in a stream of its own with the path's footprint; with them, :data:`REAL_HALTED_RESCHED_SPEC`.
RESCHED_IPI_SPEC = task_spec(89, footprint_kb=16)


def resched_ipi_instructions() -> int:
    """Instructions of RESCHED_IPI_SPEC per run: the trap's entry and exit and the "ipi" path."""
    return TRAP_INSTRUCTIONS + PATHS["ipi"].instructions


def wake_path() -> str | None:
    """The recorded wake-up path of a halted CPU for today's kernel (make_kernel gives it to idle_core_first) when real
    kernel paths are on, else None (the wake-up costs the HLT exit alone, and after_wake's estimate gives the
    handler)."""
    if real_paths_on():
        from .._core import Source

        if Source(REAL_WAKE_SPEC).length:
            return REAL_WAKE_SPEC
    return None


def switch_path() -> tuple[str, int]:
    """(kernel_path, switch_instructions) of the study's kernels: the recorded switch when real paths are on, else
    the estimate (SWITCH_SPEC, SWITCH_INSTRUCTIONS)."""
    if real_paths_on():
        from .._core import Source

        length = Source(REAL_SWITCH_SPEC).length
        if length:
            return REAL_SWITCH_SPEC, int(length)
    return SWITCH_SPEC, SWITCH_INSTRUCTIONS


def table_markdown() -> str:
    """The path table for the docs and the report."""
    lines = ["| path | instructions | walks about | stands for |", "|---|---:|---:|---|"]
    for p in PATHS.values():
        lines.append(f"| `{p.name}` | {p.instructions} | {p.footprint_kb} KiB | {p.doc} |")
    lines.append(f"| trap (int 0x80 + iret) | {TRAP_INSTRUCTIONS} | - | added to every system call |")
    return "\n".join(lines)


# A wake-up that crosses logical CPUs (the woken task lands on another CPU than its waker's) costs the target CPU a
# reschedule inter-processor interrupt: interrupt entry and exit (the same microcoded privilege change as a trap)
# and the handler, about 300 instructions (ack the local APIC, set need_resched). This is its estimate, used without
# recordings (with them: busy_wake_spec, halted_resched_spec). One logical CPU never pays it, so it is an HT-on cost
# by construction of the hardware, not a fitted penalty. The APIC delivery and the exit from HLT of a halted target
# are the kernel's os.wake_cycles (smtlab/os/halt.py).
_TABLE_IPI = ("ipi", 300, 16, "reschedule IPI handler: ack the local APIC, set need_resched")
PATHS[_TABLE_IPI[0]] = KernelPath(*_TABLE_IPI)


class WakeChannel(Channel):
    """A Channel that remembers the logical CPU of its last waker (for the IPI cost of ``after_wake``)."""

    __slots__ = ("waker_cpu",)

    def __init__(self, name: str = "channel") -> None:
        super().__init__(name)
        self.waker_cpu: int | None = None


def mark_waker(channel: Any, me: Any) -> None:
    """Remember the CPU of the task about to wake a waiter of ``channel`` (call just before ``Send``)."""
    channel.waker_cpu = me.cpu


#: The reschedule IPI as a busy CPU takes it (kpath:resched_ipi, docs/tracing.md): the interrupt entry from a running
#: task, scheduler_ipi, and the exit work up to the preemption; the switch itself is the model's (kpath:ctxsw). Linux
#: 6.1's handler only folds need_resched, as 2.4.19's smp_reschedule_interrupt only acknowledges the APIC: the
#: enqueue was done by the waker in both, which is why this recording (unlike kpath:wake_ipi) stands for the IPI of
#: every scheduler when its target is busy.
REAL_RESCHED_IPI = "resched_ipi"


#: The same IPI on a halted CPU with real kernel paths on: Linux 6.1's recorded reschedule IPI
#: (:data:`REAL_RESCHED_IPI`: interrupt entry, the handler, the exit up to __schedule; 148 instructions in 29 of
#: recording A's 30 instances). 2.4.19's halted CPU runs code of the same kind and about the same length, by 2.4.20's
#: source: SAVE_ALL, smp_reschedule_interrupt (the APIC EOI write), ret_from_intr and RESTORE_ALL with iret, about 37
#: instructions; then the idle loop's schedule(), which finds nothing when the waker's CPU took the task first (lock,
#: skip the running task, unlock: about 75), and the way back to hlt (about 25): some 140 in all. The estimate spent 450
#: instructions of kernel mix on the trap alone, whose real cost is the microcode's latency on the woken CPU, not
#: instructions that compete with its sibling. It runs on the halted CPU's idle task, so not on a task's stack or draw:
#: every logical CPU runs the same instance (seed 0), whole, as :data:`REAL_WAKE_SPEC`.
REAL_HALTED_RESCHED_SPEC = f"kpath:{REAL_RESCHED_IPI},seed=0"


def halted_resched_spec() -> str | None:
    """:data:`REAL_HALTED_RESCHED_SPEC` when real kernel paths are on and the recording holds instances of it, else
    None."""
    if real_paths_on() and _has_instances(REAL_RESCHED_IPI):
        return REAL_HALTED_RESCHED_SPEC
    return None


def resched_wake_path() -> tuple[str, int | None]:
    """(wake_path, wake_instructions) of a halted CPU under the 2.4.19 and 2.5.32 kernels (make_kernel): the recorded
    reschedule IPI, whole (:func:`halted_resched_spec`), else the estimate."""
    spec = halted_resched_spec()
    return (spec, None) if spec is not None else (RESCHED_IPI_SPEC, resched_ipi_instructions())


def busy_wake_spec(task: Any) -> str | None:
    """The recorded reschedule IPI of a busy CPU for ``task``'s next wake-up into a running CPU (the instance its pid
    and its count of such wake-ups draw, on its kernel stack, as :func:`real_spec` draws a call's: its IPIs sample the
    recording's instances instead of repeating one) when real kernel paths are on and the recording has instances,
    else None."""
    if not real_paths_on() or not _has_instances(REAL_RESCHED_IPI):
        return None
    pid = getattr(task, "pid", None) or 0
    draw = _next_draws(task, REAL_RESCHED_IPI, 1) % DRAW_CYCLE
    return f"kpath:{REAL_RESCHED_IPI},seed={pid + 1_000_003 * draw},stack={pid}"


_INSTANCES: dict[str, bool] = {}


def _has_instances(path: str) -> bool:
    # A recording where no spin gave an instance has none to draw; asked once per process (a Source opens the cache).
    if path not in _INSTANCES:
        from .._core import Source

        _INSTANCES[path] = bool(Source(f"kpath:{path}").length)
    return _INSTANCES[path]


def after_wake(channel: Any, me: Any) -> list[Compute]:
    """Steps to run right after ``Block(channel)`` returns: the reschedule IPI's path if the waker ran on another
    logical CPU than the one ``me`` was woken on, unless ``me``'s kernel ran the recorded wake-up IPI on that CPU
    for this switch-in (a halted target, Kernel(wake_path=...)): its handler is counted there. The path is the
    recorded IPI of a busy CPU (:func:`busy_wake_spec`) when real kernel paths are on and ``me`` came onto its CPU
    from another task (Kernel.came_from_halt), the recorded IPI of a halted CPU (:data:`REAL_HALTED_RESCHED_SPEC`)
    when they are on and it came from HLT, else the estimate (trap + the "ipi" path)."""
    waker = getattr(channel, "waker_cpu", None)
    if waker is not None and me.cpu is not None and waker != me.cpu:
        kernel = getattr(me, "kernel", None)
        wake = getattr(kernel, "wake_ipi", None)
        if wake is not None and wake.ran_for(me):
            return []
        # Into a running task: the recorded IPI of a busy CPU. Onto a halted CPU whose kernel ran no path for it
        # (a forked child's first switch-in, or no OS costs): what the 2.4/2.5 kernels' halted CPUs run.
        spec = None
        if kernel is not None:
            spec = halted_resched_spec() if kernel.came_from_halt(me) else busy_wake_spec(me)
        if spec is not None:
            return [Compute(source=spec)]
        return [Compute(TRAP_INSTRUCTIONS + PATHS["ipi"].instructions)]
    return []
