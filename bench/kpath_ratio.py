#!/usr/bin/env python3
"""The core's throughput ratio on recorded kernel paths: two hardware threads against one, without the OS layer.

The study's multithreaded HT gains mix two things: what the core does with a second thread, and what the OS does
(who runs, who waits, wake-ups, idle CPUs). This script measures the first alone, on the same real instruction
streams the study's dbench and tbench run (kpath: recordings of Linux 6.1 system calls, docs/tracing.md): each
logical CPU runs an endless random sequence of recorded path instances drawn from a workload's mix, in its own
address space and on its own kernel stack (as the study's tasks do), and the script prints

    ratio = IPC of the core with both threads running / IPC with HT off (core.threads = 1)

with the CPI stack of one thread alone and of thread 0 of the pair. A ratio of 2 means the second thread runs as
fast as the first alone; 1 means it adds nothing. The article's Xeon gave dbench and tbench +18..35 % with the
machine saturated by runnable clients, which bounds its ratio on their kernel work at about 1.2..1.4 (the OS layer
only takes from it). Windows are whole-run cycles after a warm-up; the draw of instances is seeded, so a run is
reproducible from the kpath: cache (SMTLAB_KPATH_CACHE) and the arguments.

Usage (imports the smtlab module: run from the tree with its venv):

    PYTHONPATH=python .venv/bin/python bench/kpath_ratio.py [--mix dbench,tbench] [-c netburst] [--cycles 4M]
        [--set KEY=VALUE ...] [--stacks] [--mem]

`--mix` takes the built-in mixes (dbench: the recorded calls of fileserver.DBENCH_OPS in their shares; tbench: the
16-byte request's send and recv and the 4 KiB reply's, in equal shares) or any kpath name (one path alone).
`--set` overrides a config key over the preset for both runs, e.g. `--set mem.l1i.size_kb=64` to ask what a larger
trace cache does to the ratio (docs/study.md has such a table). `--stacks` prints the CPI stacks of one thread
alone and of thread 0 of the pair; `--mem` the core's store path (stores into NetBurst's write-combining buffers,
the share merged, the cycles stores waited for a buffer) and its L1D and L2 misses, per 1,000 instructions.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

import smtlab  # noqa: E402
from smtlab import EventKind, Machine, Source  # noqa: E402
from smtlab.workloads import fileserver, kpaths  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import parse_count, parse_override  # noqa: E402

#: Built-in mixes: (kpath name, share). dbench's from the study's own table (fileserver.dbench_call_shares), tbench's
#: per reply (fileserver.py).
MIXES: dict[str, list[tuple[str, float]]] = {
    "dbench": fileserver.dbench_call_shares(),
    "tbench": [("tcp_send", 0.25), ("tcp_recv", 0.25), ("tcp_send_4k", 0.25), ("tcp_recv_4k", 0.25)],
}
#: Calls that copy a page: each draw gets its own page-cache page, as the study's dbench clients' calls do.
COPIES_PAGE = {"file_read", "file_write", "disk_read"}
#: The first task stack slot; thread t runs on slot FIRST_STACK + t (any slots work; the study gives pids).
FIRST_STACK = 11


def mix_paths(name: str) -> list[tuple[str, float]]:
    if name in MIXES:
        return MIXES[name]
    return [(name, 1.0)]


def run(mix: list[tuple[str, float]], threads: int, preset: str, overrides: dict, cycles: int, warmup: int,
        seed: int) -> tuple[float, list[dict], dict]:
    """IPC of the core over `cycles` after `warmup`, each logical CPU's statistics and the core's."""
    cfg = smtlab.load_config(preset, {**overrides, "core.threads": threads})
    names = [n for n, _ in mix]
    weights = [w for _, w in mix]
    rngs = [random.Random(seed * 1000 + t) for t in range(threads)]
    pages = [t * 1_000_000 for t in range(threads)]

    def next_source(t: int) -> Source:
        name = rngs[t].choices(names, weights)[0]
        spec = f"kpath:{name},seed={rngs[t].randrange(1 << 30)},stack={FIRST_STACK + t}"
        if name in COPIES_PAGE:
            pages[t] += 1
            spec += f",page={pages[t]}"
        return Source(spec)

    with Machine(cfg) as m:
        for t in range(threads):
            m.attach(t, next_source(t), asid=t + 1)

        def until(end: int) -> None:
            while m.now < end:
                for e in m.run(until=end):
                    if e.kind == EventKind.SOURCE_ENDED:
                        m.detach(e.cpu)
                        m.attach(e.cpu, next_source(e.cpu), asid=e.cpu + 1)

        until(warmup)
        m.reset_stats()
        start = m.now
        until(warmup + cycles)
        stats = [m.cpu_stats(t) for t in range(threads)]
        return sum(s["instructions"] for s in stats) / (m.now - start), stats, m.stats()["cores"][0]


def memory_rows(core: dict) -> list[tuple[str, float]]:
    """The core's store path per 1,000 instructions: stores into the write-combining buffers, how many merged into one
    holding their line (%), the cycles stores waited for a buffer (docs/memory.md, "Write-through L1D"), and L1D (a
    store missing it counts) and L2 misses."""
    per_k = 1000.0 / max(1, core["instructions"])
    wc = core["write_combining"]
    return [
        ("wc writes", wc["writes"] * per_k),  # stores (one split across two lines counts twice); 0: write-back L1D
        ("wc merged %", 100.0 * wc["merges"] / wc["writes"] if wc["writes"] else 0.0),
        ("wc wait cycles", wc["wait_cycles"] * per_k),
        ("l1d misses", core["l1d"]["misses"] * per_k),
        ("l2 misses", core["l2"]["misses"] * per_k),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", default="dbench,tbench", help="comma-separated mixes or kpath names")
    parser.add_argument("-c", "--config", default="netburst", help="preset (default netburst)")
    parser.add_argument("--cycles", type=parse_count, default=4_000_000, help="measured cycles (default 4M)")
    parser.add_argument("--warmup", type=parse_count, default=1_000_000, help="warm-up cycles (default 1M)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--set", dest="overrides", action="append", type=parse_override, default=[],
                        metavar="KEY=VALUE", help="config override for both runs (repeatable)")
    parser.add_argument("--stacks", action="store_true", help="also print the CPI stacks (alone, thread 0 of two)")
    parser.add_argument("--mem", action="store_true",
                        help="also print the core's store path and misses per 1,000 instructions (alone, two threads)")
    args = parser.parse_args(argv)
    overrides = dict(o.split("=", 1) for o in args.overrides)
    if "core.threads" in overrides:
        parser.error("--set core.threads: the script runs 1 and 2 threads itself")
    sets = "".join(f" --set {o}" for o in args.overrides)
    print(f"kpath ratio: -c {args.config}{sets}, {args.cycles} cycles after {args.warmup}, seed {args.seed}")
    print(f"{'mix':<14} {'IPC 1T':>7} {'IPC 2T':>7} {'ratio':>6}")
    for name in [n for n in args.mix.split(",") if n]:
        mix = mix_paths(name)
        try:
            one, s1, c1 = run(mix, 1, args.config, overrides, args.cycles, args.warmup, args.seed)
            two, s2, c2 = run(mix, 2, args.config, overrides, args.cycles, args.warmup, args.seed)
        except smtlab.Error as e:
            print(f"kpath ratio: {name}: {e}", file=sys.stderr)
            return 1
        print(f"{name:<14} {one:7.3f} {two:7.3f} {two / one:6.3f}")
        if args.stacks:
            alone, paired = s1[0]["cpi_stack"], s2[0]["cpi_stack"]
            for cause in smtlab.CPI_CAUSES:
                if alone.get(cause, 0) >= 0.01 or paired.get(cause, 0) >= 0.01:
                    print(f"    {cause:<18} {alone.get(cause, 0):6.3f} {paired.get(cause, 0):6.3f}")
            print(f"    {'cpi':<18} {s1[0]['cpi']:6.3f} {s2[0]['cpi']:6.3f}")
        if args.mem:
            for (label, alone), (_, paired) in zip(memory_rows(c1), memory_rows(c2)):
                print(f"    {label:<18} {alone:6.1f} {paired:6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
