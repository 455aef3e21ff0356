"""The OS layer: instruction conservation across context switches, HT-aware vs HT-unaware placement, block/wake
ordering, timers, and misuse. Ticks and slices are scaled down (tens of thousands of cycles) so that tests that need
many scheduling decisions stay fast."""

from __future__ import annotations

import pytest

import smtlab
from smtlab import DeadlockError, UsageError
from smtlab.os import (
    IO,
    Block,
    Channel,
    Compute,
    IdleCoreFirst,
    Kernel,
    Linux24,
    Linux25HT,
    Send,
    Sleep,
    Spawn,
    Task,
    WakeAll,
    Yield,
    make_scheduler,
)

TICK = 20_000  # cycles; the schedulers' intervals are given in ms, so they are scaled to match below
FAST = dict(idle_interval_ms=TICK / 3e6, busy_interval_ms=10 * TICK / 3e6)


def kernel(cfg, sched, **kw) -> Kernel:
    kw.setdefault("tick_cycles", TICK)
    kw.setdefault("time_slice_cycles", TICK)
    kw.setdefault("switch_cycles", 500)
    return Kernel(smtlab.Machine(cfg), sched, **kw)


# --- conservation ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel_path", [None, "gen:mix,count=0,seed=99"])
def test_instructions_conserved_across_thousands_of_switches(cfg_1x2, kernel_path):
    """Five tasks on one core with two threads, a 1500-cycle slice: thousands of preemptions, each squashing
    in-flight work. Every task retires exactly its length, every source exactly its count, and the machine's count
    is their sum plus the kernel path."""
    lengths = [150_000, 200_000, 250_000, 300_000, 350_000]
    # Tasks stay on their CPU's queue (no wake-to-idle placement), so every slice end is a preemption.
    k = kernel(cfg_1x2, Linux24(wake_idle=False, **FAST), tick_cycles=1500, time_slice_cycles=1500, switch_cycles=200,
               kernel_path=kernel_path, switch_instructions=150)
    tasks = [k.spawn(Task(f"t{i}", [Compute(n)], source=f"gen:mix,count=0,seed={i}")) for i, n in enumerate(lengths)]
    k.run()
    assert [t.stats.instructions for t in tasks] == lengths
    assert [k.record(t).sources[t.source].retired for t in tasks] == lengths
    assert all(t.done and t.stats.finished is not None for t in tasks)
    switches = sum(t.stats.dispatches for t in tasks)
    assert switches > 2000
    assert sum(t.stats.preemptions for t in tasks) > 1900
    machine_total = k.machine.stats()["instructions"]
    kernel_total = sum(c.kernel_instructions for c in k.cpus)
    assert machine_total == sum(lengths) + kernel_total
    # Every instruction is credited once, and every source here (tasks and kernel path) is a generated stream.
    assert k.code_instructions == k.generated_instructions == machine_total
    if kernel_path:
        assert kernel_total == 150 * switches
    else:
        assert kernel_total == 0
    frame = k.task_frame()
    assert list(frame["instructions"]) == lengths


def test_compute_steps_split_over_sources_and_marks(cfg_1x2):
    text = "\n".join(
        [f"{0x400000 + 4 * i:x} int dst=r1 src=r1" for i in range(50)]
        + ["4000c8 mark id=3"]
        + [f"{0x400100 + 4 * i:x} int dst=r2 src=r2" for i in range(30)]
    )
    src = smtlab.Source.from_text(text, "marked")
    k = kernel(cfg_1x2, Linux24(**FAST))
    t = k.spawn(Task("m", [Compute(until_mark=3, source=src), Compute(10, source="gen:alu,count=0"),
                           Compute(source=src), Compute(7, source="gen:alu,count=0")]))
    k.run()
    assert src.retired == 81  # 51 through the mark, then the remaining 30
    assert k.record(t).sources["gen:alu,count=0"].retired == 17  # the same spec continues the same source
    assert t.stats.instructions == 98
    # Of the 98, the 17 of the gen: steps came from a generated stream, the text trace's 81 did not.
    assert (k.code_instructions, k.generated_instructions) == (98, 17)


# --- placement: HT-aware vs HT-unaware ------------------------------------------------------------------------------
def shared_package_fraction(k: Kernel) -> float:
    """Fraction of the time both tasks ran at once that they ran on the same package."""
    segs = k.timeline_records()
    together = same = 0
    for i, a in enumerate(segs):
        for b in segs[i + 1:]:
            if a["pid"] == b["pid"]:
                continue
            overlap = min(a["end"], b["end"]) - max(a["start"], b["start"])
            if overlap > 0:
                together += overlap
                if a["core"] == b["core"]:
                    same += overlap
    return same / together if together else 0.0


def two_cpu_bound(cfg, sched, seed: int) -> tuple[Kernel, int]:
    k = kernel(cfg, sched, seed=seed, log=True)
    for i in range(2):
        k.spawn(Task(f"cpu{i}", [Compute(400_000)], source=f"gen:alu,count=0,seed={i}"))
    k.run()
    return k, max(t.stats.finished for t in k.tasks)


@pytest.mark.parametrize("make", [lambda: Linux25HT(**FAST), lambda: IdleCoreFirst(
    smt_interval_ms=TICK / 3e6, package_interval_ms=2 * TICK / 3e6, idle_interval_ms=TICK / 3e6)])
def test_ht_aware_schedulers_use_both_packages(cfg_2x2, make):
    for seed in range(4):
        k, _ = two_cpu_bound(cfg_2x2, make(), seed)
        assert shared_package_fraction(k) == 0.0
        assert {t.last_cpu // 2 for t in k.tasks} == {0, 1}


def test_linux24_forks_a_pair_onto_both_packages(cfg_2x2):
    """2.4.19's reschedule_idle() (i386): the forked task's CPU is busy, so it scans the CPUs in order and takes the
    first idle one whose sibling is idle too. The first task runs on CPU 0; for the second, CPU 1's sibling (0) is
    busy, CPU 2's (3) is idle: CPU 2, the other package, whatever the seed (a random draw among CPUs 1-3 would double
    the pair up in some seeds)."""
    for seed in range(6):
        k, _ = two_cpu_bound(cfg_2x2, Linux24(**FAST), seed)
        assert shared_package_fraction(k) == 0.0
        assert {t.last_cpu for t in k.tasks} == {0, 2}


def test_linux24_a_wakeup_on_its_idle_last_cpu_doubles_up_and_it_costs(cfg_2x2):
    """2.4.19 sends a woken task to its last CPU whenever that CPU is idle (reschedule_idle()'s shortcut), sibling
    busy or not, and its balancing treats siblings as independent CPUs (1+1 vs 0+0 is balanced). The scene: "hog"
    runs on CPU 0; "napper" first runs on CPU 1 (affinity), is then allowed everywhere, sleeps and wakes with CPU 1
    idle: it goes back to CPU 1 and shares core 0 with the hog while package 1 idles. On paper its compute then runs
    beside the hog on one core's three ALUs, so it takes longer than the same compute run alone on a core."""
    def run(hog: bool) -> int:
        k = kernel(cfg_2x2, Linux24(**FAST), log=True)
        if hog:
            k.spawn(Task("hog", [Compute(2_000_000)], source="gen:alu,count=0,seed=1", affinity=[0], daemon=True))
        napper = k.spawn(Task("napper", [Compute(1000), Sleep(cycles=50_000), Compute(300_000)],
                              source="gen:alu,count=0,seed=2", affinity=[1]))
        k.run(until=20_000)
        napper.affinity = None
        k.run()
        assert napper.last_cpu == 1
        return k.record(napper).stats.finished
    alone, beside = run(False), run(True)
    assert beside > 1.5 * (alone - 51_000) + 51_000


def test_linux24_idle_choice_takes_a_free_package_else_the_cpu_idle_longest(cfg_2x2):
    """reschedule_idle()'s choice among idle CPUs, by hand on the 2x2 machine (CPUs 0, 1 on package 0; 2, 3 on 1):
    the first (lowest) idle CPU whose sibling is idle too; with no such CPU, the one idle since the earliest time
    (2.4.19's oldest last_schedule)."""
    sched = Linux24(**FAST)
    k = kernel(cfg_2x2, sched)
    assert sched.idle_choice([1, 2, 3]) == 1  # everything idle: CPU 1's sibling (0) is idle
    k.cpus[0].need_resched = True  # CPU 0 busy (is_idle is False)
    assert sched.idle_choice([1, 2, 3]) == 2  # CPU 1's sibling is busy, CPU 2's is not
    k.cpus[3].need_resched = True  # CPU 3 busy too: no idle pair left
    k.cpus[1].since, k.cpus[2].since = 500, 200
    assert sched.idle_choice([1, 2]) == 2
    k.cpus[1].since = 100
    assert sched.idle_choice([1, 2]) == 1


def test_linux25ht_active_balancing_splits_a_doubled_package(cfg_2x2):
    """Pin both tasks' start onto package 0 (fork placement), then widen the affinity: active balancing must push
    one to the idle package."""
    sched = Linux25HT(**FAST)
    k = kernel(cfg_2x2, sched, log=True)
    tasks = [k.spawn(Task(f"t{i}", [Compute(300_000)], source="gen:alu,count=0", affinity=[0, 1])) for i in range(2)]
    k.run(until=3 * TICK)
    assert {t.last_cpu for t in tasks} == {0, 1}
    for t in tasks:
        t.affinity = None
    k.run()
    assert any(d["what"] == "active_migrate" for d in k.decision_records())
    assert sum(t.stats.core_migrations for t in tasks) == 1


def test_idle_core_first_prefers_an_idle_core_on_wakeup(cfg_2x2):
    ch = Channel("go")

    def sleeper():
        yield Block(ch)
        yield Compute(50_000)

    k = kernel(cfg_2x2, IdleCoreFirst(), log=True)
    busy = k.spawn(Task("busy", [Compute(200_000)], source="gen:alu,count=0"))
    k.spawn(Task("waker", [Compute(1000), Sleep(cycles=30_000), Send(ch)], source="gen:alu,count=0", affinity=[1]))
    s = k.spawn(Task("sleeper", sleeper, source="gen:alu,count=0"))
    k.run()
    # The sleeper wakes while "busy" runs on core 0: it goes to the idle core 1, not to CPU 1 (busy's sibling).
    assert k.cpus[busy.last_cpu].core != k.cpus[s.last_cpu].core


# --- blocking and waking --------------------------------------------------------------------------------------------
def test_block_wake_fifo_order_and_pending_messages(cfg_1x2):
    ch = Channel("q")
    woken: list[str] = []

    def waiter(name, delay):
        yield Compute(delay)
        yield Block(ch)
        woken.append(name)
        yield Compute(1000)

    def sender():
        yield Compute(200_000)  # long enough that every waiter blocked first
        for _ in range(3):
            yield Send(ch)
            yield Compute(5000)
        yield Send(ch, 2)  # nobody waits: two messages stay pending

    def late():
        yield Compute(400_000)
        yield Block(ch)  # takes a pending message without waiting
        yield Block(ch)
        woken.append("late")

    # The channel wakes its waiters in the order they blocked (which order the scheduler ran them in first is its
    # own business: 2.4.19 runs the task forked last first, test_os_wakeup.py), each once.
    k = kernel(cfg_1x2, Linux24(wake_idle=False, **FAST), log=True)
    for name, delay in (("a", 1000), ("b", 20_000), ("c", 40_000)):
        k.spawn(Task(name, lambda n=name, d=delay: waiter(n, d), source=f"gen:alu,count=0,seed={len(name)}"))
    k.spawn(Task("sender", sender, source="gen:alu,count=0,seed=7"))
    late_task = k.spawn(Task("late", late, source="gen:alu,count=0,seed=8"))
    k.run()
    records = k.decision_records()
    blocks = [d["task"] for d in records if d["what"] == "block" and d["task"] in ("a", "b", "c")]
    wakes = [d["task"] for d in records if d["what"] == "wake"]
    assert sorted(blocks) == ["a", "b", "c"] and wakes == blocks
    assert sorted(woken[:3]) == ["a", "b", "c"] and woken[3] == "late"
    assert ch.pending == 0 and ch.sent == 5 and ch.received == 5
    assert late_task.stats.blocked == 0


def test_wake_all_and_sleep_and_io_timing(cfg_2x2):
    ch = Channel("barrier")
    k = kernel(cfg_2x2, Linux25HT(**FAST))
    waiters = [k.spawn(Task(f"w{i}", [Block(ch), Compute(1000)], source="gen:alu,count=0")) for i in range(3)]
    sleeper = k.spawn(Task("s", [Compute(1000), Sleep(cycles=100_000), WakeAll(ch), IO(cycles=70_000),
                                 Compute(1000)], source="gen:alu,count=0"))
    k.run()
    assert sleeper.stats.sleeping == 100_000
    assert sleeper.stats.io_wait == 70_000
    assert all(w.done for w in waiters)
    # Four tasks on four CPUs: nobody waits for a CPU, and each dispatch costs one 500-cycle switch.
    segments = {}
    for r in k.timeline_records():
        segments.setdefault(r["task"], []).append(r)
    first, after_sleep = segments["s"][0], segments["s"][1]
    assert (first["why"], after_sleep["why"]) == ("sleep", "io")
    # The sleeper sleeps 100,000 cycles from the end of its first run, is switched in (500) and wakes the waiters in
    # that cycle (WakeAll retires no instruction): each waiter is blocked from its block to exactly then.
    assert after_sleep["start"] == first["end"] + 100_000 + 500
    for w in waiters:
        blocked_at = segments[w.name][0]
        assert blocked_at["why"] == "block"
        assert w.stats.blocked == after_sleep["start"] - blocked_at["end"]
    # The sleeper's life is three switches, its running, 100,000 cycles asleep and 70,000 in I/O, nothing else.
    assert sleeper.stats.runnable == 0 and sleeper.stats.blocked == 0
    assert sleeper.stats.switching == 3 * 500
    assert sleeper.stats.running == sum(r["end"] - r["start"] for r in segments["s"])
    assert sleeper.stats.finished == 3 * 500 + sleeper.stats.running + 100_000 + 70_000
    # 2000 independent ints run at most 3 per cycle (3 ALUs) and, even with every fetch missing to memory, at least
    # one per memory path (~270 cycles).
    assert 2000 / 3 <= sleeper.stats.running <= 2000 * 270


def test_spawn_and_yield(cfg_1x2):
    child = Task("child", [Compute(20_000)], source="gen:alu,count=0,seed=1")
    parent = Task("parent", [Compute(5000), Spawn(child), Yield(), Compute(5000)], source="gen:alu,count=0")
    k = kernel(cfg_1x2, Linux24(**FAST))
    k.spawn(parent)
    k.run()
    assert child.parent is parent and child.done and parent.done
    assert child.stats.instructions == 20_000 and parent.stats.instructions == 10_000


def test_priority_preempts_on_wakeup(cfg_1x2):
    k = kernel(cfg_1x2, Linux24(**FAST), log=True, time_slice_cycles=10**9)
    low = k.spawn(Task("low", [Compute(300_000)], source="gen:alu,count=0", priority=5, affinity=[0]))
    high = k.spawn(Task("high", [Sleep(cycles=30_000), Compute(10_000)], source="gen:alu,count=0",
                        priority=-5, affinity=[0]))
    k.run()
    assert high.stats.finished < low.stats.finished
    assert low.stats.preemptions >= 1


def test_results_frames(cfg_2x2):
    k, _ = two_cpu_bound(cfg_2x2, IdleCoreFirst(), 0)
    tf, cf, tl, df = k.task_frame(), k.cpu_frame(), k.timeline_frame(), k.decision_frame()
    assert {"instructions", "running", "runnable", "finished", "migrations", "ipc"} <= set(tf.columns)
    assert list(cf.index) == [0, 1, 2, 3]
    total = cf["busy"] + cf["switch"] + cf["idle"]
    assert (total == k.now).all()
    assert len(tl) >= 2 and len(df) > 0
    k.machine.close()
    assert len(k.cpu_frame()) == 4  # still readable after the machine is closed


# --- misuse ---------------------------------------------------------------------------------------------------------
def test_os_misuse(cfg_1x2):
    with pytest.raises(ValueError):
        Compute(-5)
    with pytest.raises(ValueError):
        Sleep()
    with pytest.raises(TypeError):
        Block("not a channel")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown scheduler"):
        make_scheduler("cfs")
    with pytest.raises(TypeError):
        Kernel(smtlab.Machine(cfg_1x2), "linux24")  # type: ignore[arg-type]

    k = kernel(cfg_1x2, Linux24(**FAST))
    t = k.spawn(Task("x", [Compute(100)], source="gen:alu"))
    with pytest.raises(UsageError, match="spawned already"):
        k.spawn(t)
    with pytest.raises(UsageError, match="CPU 9"):
        k.spawn(Task("y", [Compute(1)], source="gen:alu", affinity=[9]))

    k = kernel(cfg_1x2, Linux24(**FAST))
    k.spawn(Task("junk", [Compute(10), "compute please"], source="gen:alu"))
    with pytest.raises(TypeError, match="not a step"):
        k.run()

    k = kernel(cfg_1x2, Linux24(**FAST))
    k.spawn(Task("stuck", [Block(Channel("never"))], source="gen:alu"))
    with pytest.raises(DeadlockError, match="stuck"):
        k.run()

    k = kernel(cfg_1x2, Linux24(**FAST))
    k.spawn(Task("nosrc", [Compute(10)]))
    with pytest.raises(UsageError, match="no source"):
        k.run()

    shared = smtlab.Source("gen:alu,count=0")
    k = kernel(cfg_1x2, Linux25HT(**FAST))
    k.spawn(Task("s1", [Compute(100_000, source=shared)]))
    k.spawn(Task("s2", [Compute(100_000, source=shared)]))
    with pytest.raises(UsageError, match="attached to another CPU"):
        k.run()

    m = smtlab.Machine(cfg_1x2)
    m.attach(0, smtlab.Source("gen:alu"))
    with pytest.raises(UsageError, match="already has a source"):
        Kernel(m, Linux24())


def test_daemon_server_and_clients(cfg_2x2):
    """A server loop (daemon) serves requests from clients; run() returns when the clients are done, and every
    request was served."""
    ch = Channel("requests")
    served = []

    def server():
        while True:
            yield Block(ch)
            yield Compute(5_000)
            served.append(1)

    def client():
        for _ in range(4):
            yield Compute(20_000)
            yield Send(ch)
            yield Sleep(us=5)

    k = kernel(cfg_2x2, Linux25HT(**FAST))
    srv = k.spawn(Task("server", server, source="gen:mix,count=0,seed=9", daemon=True))
    clients = [k.spawn(Task(f"c{i}", client, source=f"gen:alu,count=0,seed={i}")) for i in range(3)]
    k.run()
    assert all(c.done for c in clients) and not srv.done
    assert ch.sent == 12
    k.run(until=k.now + 2_000_000)  # let the server drain what is left
    assert len(served) == 12 and srv.stats.instructions == 12 * 5_000


def test_lone_task_on_a_halted_core_gets_single_thread_ipc():
    """The kernel halts the idle sibling, so a lone task runs as on the same core with SMT off."""

    def lone_ipc(threads: int) -> float:
        cfg = smtlab.load_config(None, {"system.cores": 1, "core.threads": threads})
        k = kernel(cfg, IdleCoreFirst(), switch_cycles=0)
        t = k.spawn(Task("lone", [Compute(100_000)], source="gen:alu,count=0"))
        k.run()
        return t.stats.instructions / t.stats.running

    assert lone_ipc(2) == pytest.approx(lone_ipc(1), rel=0.01)


def test_compute_again_on_an_ended_source_starts_it_over(cfg_1x2):
    """Compute(1000) twice on a 1000-instruction source: the first ends with the source (retire limit and source
    end in the same cycle), the second starts it again; also across a sleep (detached in between)."""
    k = kernel(cfg_1x2, Linux24(**FAST))
    t = k.spawn(Task("again", [Compute(1000), Compute(1000), Sleep(cycles=5000), Compute(), Compute(500)],
                     source="gen:alu,count=1000"))
    k.run()
    src = k.record(t).sources["gen:alu,count=1000"]
    assert t.stats.instructions == 3500 and src.retired == 3500
    assert src.restarts == 3
