#!/usr/bin/env python3
"""Which policy makes it better: fetch policies x allocation policies on pairs of real code, grouped as SMT papers
group them, with the directions those papers report checked against the model.

Programs: the reference kernels of workloads/kernels (traced with the QEMU tracer on first use, `kernel:NAME`) and,
with --programs, the real programs of bench/programs.py (copy a). Each program runs alone once per preset to measure
its loads served beyond the L2 per 1000 instructions; a program at or above --mem-mpki (2, chosen: a pointer chase
is far above it, the compute kernels far below) is MEM, else ILP. Every unordered pair of programs (and each MEM
program with a second copy of itself, in its own address space) is one row of its group, ILP+ILP, ILP+MEM or
MEM+MEM, as Tullsen and Brown (MICRO 2001) and Cazorla et al. (MICRO 2004) group their workloads.

Each pair runs under every fetch policy x allocation policy on each preset with `smtlab run --baselines` (each
program also alone, docs/metrics.md), giving STP, ANTT, hmean and fairness. The checks, each a pass or a miss with
its numbers (never folded into a pass):

- stall_flush_beat_icount: on ILP+MEM pairs (static allocation), STALL's and FLUSH's mean STP above ICOUNT's
  (Tullsen and Brown 2001).
- dcra_hmean_at_least_static: DCRA's mean hmean at least static allocation's on each MEM-containing group (ICOUNT
  fetch), by at most 16 % (chosen band: up to twice the paper's average gain of 8 %).
- hill_climbing_at_least_dcra: hill climbing's mean STP, the metric it climbs, at least DCRA's over all pairs (ICOUNT
  fetch; Choi and Yeung 2006 report +2.8 % weighted IPC).
- mlp_aware: on each MEM-containing group (static allocation), MLP-aware fetch's mean STP at least STALL's and
  FLUSH's (Eyerman and Eeckhout, HPCA 2007: it keeps the misses a thread can overlap that STALL and FLUSH cut off).
- no_starvation: every pair's fairness (min/max speedup) at least --fairness-floor (0.1, chosen) under every policy;
  each row below it is named.

Writes JSON and CSV (temporary names renamed when complete) and, when matplotlib is importable, a figure of mean
STP, ANTT and fairness per group and policy. Usage: policy_study.py [SMTLAB] [-n N] [-c PRESETS] [--fetch ...]
"""
from __future__ import annotations

import argparse
import concurrent.futures
import csv
import io
import itertools
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import programs  # noqa: E402
from bench import (BenchError, check_destination, host_info, parse_count, run_json, sigterm_as_exit,  # noqa: E402
                   write_atomically)

REPO = Path(__file__).resolve().parent.parent
try:  # progress lines (a bar on a terminal) when smtlab is importable; the study runs without them otherwise
    from smtlab.sweep.progress import Progress  # noqa: E402
except ImportError:
    Progress = None
KERNELS = ("kernel:chase", "kernel:chains", "kernel:aim9_sieve", "kernel:aim9_sort", "kernel:sysbench_cpu",
           "kernel:aim9_string")
FETCH = ("round_robin", "icount", "brcount", "misscount", "stall", "flush", "mlp")
ALLOCATION = ("static", "dcra", "hill_climbing")
DCRA_BAND_PCT = (0.0, 16.0)


def mpki_beyond_l2(data: dict, cpu: int = 0) -> float:
    """Loads served by the LLC or DRAM per 1000 instructions of one logical CPU of a `smtlab run --json` result."""
    c = data["logical_cpus"][cpu]
    levels = c["loads_by_level"]
    instructions = int(c["instructions"])
    if instructions <= 0:
        raise BenchError(f"cpu {cpu} retired nothing")
    return 1000.0 * (int(levels["llc"]) + int(levels["dram"])) / instructions


def group_of(a: str, b: str, kinds: dict[str, str]) -> str:
    """The pair's group, ILP before MEM: ILP+ILP, ILP+MEM or MEM+MEM."""
    return "+".join(sorted((kinds[a], kinds[b])))


def pairs_of(names: list[str], kinds: dict[str, str]) -> list[tuple[str, str]]:
    """Every unordered pair of distinct programs, and each MEM program with itself (MEM+MEM needs two)."""
    out = list(itertools.combinations(names, 2))
    out += [(n, n) for n in names if kinds[n] == "MEM"]
    return out


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def check_rows(rows: list[dict], fairness_floor: float) -> dict[str, dict]:
    """The checks of the module docstring over the result rows of one preset: {name: {"pass": bool, "why": str}}."""
    def pick(group: str | None = None, fetch: str | None = None, alloc: str | None = None) -> list[dict]:
        return [r for r in rows if (group is None or r["group"] == group) and (fetch is None or r["fetch"] == fetch)
                and (alloc is None or r["allocation"] == alloc)]

    checks: dict[str, dict] = {}
    icount = mean([r["stp"] for r in pick("ILP+MEM", "icount", "static")])
    stall = mean([r["stp"] for r in pick("ILP+MEM", "stall", "static")])
    flush = mean([r["stp"] for r in pick("ILP+MEM", "flush", "static")])
    ok = all(x == x for x in (icount, stall, flush)) and stall > icount and flush > icount
    checks["stall_flush_beat_icount"] = {
        "pass": ok, "why": f"ILP+MEM mean STP: icount {icount:.3f}, stall {stall:.3f}, flush {flush:.3f}"}
    parts, ok = [], True
    for group in ("ILP+MEM", "MEM+MEM"):
        static = mean([r["hmean"] for r in pick(group, "icount", "static")])
        dcra = mean([r["hmean"] for r in pick(group, "icount", "dcra")])
        if not (static == static and dcra == dcra):
            parts.append(f"{group}: no pairs")
            ok = False
            continue
        gain = 100.0 * (dcra / static - 1.0)
        ok = ok and DCRA_BAND_PCT[0] <= gain <= DCRA_BAND_PCT[1]
        parts.append(f"{group}: hmean static {static:.3f}, dcra {dcra:.3f} ({gain:+.1f} %)")
    checks["dcra_hmean_at_least_static"] = {"pass": ok, "why": "; ".join(parts)}
    dcra = mean([r["stp"] for r in pick(None, "icount", "dcra")])
    hill = mean([r["stp"] for r in pick(None, "icount", "hill_climbing")])
    checks["hill_climbing_at_least_dcra"] = {
        "pass": hill == hill and dcra == dcra and hill >= dcra,
        "why": f"mean STP over all pairs: dcra {dcra:.3f}, hill_climbing {hill:.3f}"}
    parts, ok = [], True
    for group in ("ILP+MEM", "MEM+MEM"):
        stp = {f: mean([r["stp"] for r in pick(group, f, "static")]) for f in ("stall", "flush", "mlp")}
        if any(v != v for v in stp.values()):
            parts.append(f"{group}: no pairs")
            ok = False
            continue
        ok = ok and stp["mlp"] >= max(stp["stall"], stp["flush"])
        parts.append(f"{group}: STP stall {stp['stall']:.3f}, flush {stp['flush']:.3f}, mlp {stp['mlp']:.3f}")
    checks["mlp_aware"] = {"pass": ok, "why": "; ".join(parts)}
    starved = [f"{r['pair']} {r['fetch']}/{r['allocation']} fairness {r['fairness']:.3f}" for r in rows
               if not r["fairness"] >= fairness_floor]
    checks["no_starvation"] = {"pass": not starved,
                               "why": (f"every row's fairness >= {fairness_floor}" if not starved
                                       else f"{len(starved)} row(s) below {fairness_floor}: " + "; ".join(starved))}
    return checks


def summary(rows: list[dict]) -> list[dict]:
    """Mean STP, ANTT, hmean and the lowest fairness per preset, group and policy pair."""
    keys = sorted({(r["config"], r["group"], r["fetch"], r["allocation"]) for r in rows})
    out = []
    for config, group, fetch, alloc in keys:
        sel = [r for r in rows if (r["config"], r["group"], r["fetch"], r["allocation"]) == (config, group, fetch, alloc)]
        out.append({"config": config, "group": group, "fetch": fetch, "allocation": alloc, "pairs": len(sel),
                    "stp": mean([r["stp"] for r in sel]), "antt": mean([r["antt"] for r in sel]),
                    "hmean": mean([r["hmean"] for r in sel]), "min_fairness": min(r["fairness"] for r in sel)})
    return out


def write_figure(path: Path, table: list[dict]) -> bool:
    """Bars of mean STP, ANTT and the lowest fairness per group and policy, one row of panels per preset; False
    without matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    configs = sorted({r["config"] for r in table})
    groups = sorted({r["group"] for r in table})
    policies = sorted({(r["fetch"], r["allocation"]) for r in table})
    fig, axes = plt.subplots(len(configs), 3, figsize=(15, 3.6 * len(configs)), squeeze=False)
    width = 0.8 / max(1, len(policies))
    for i, config in enumerate(configs):
        for j, (metric, label) in enumerate((("stp", "STP"), ("antt", "ANTT"), ("min_fairness", "lowest fairness"))):
            ax = axes[i][j]
            for k, pol in enumerate(policies):
                vals = [next((r[metric] for r in table if r["config"] == config and r["group"] == g
                              and (r["fetch"], r["allocation"]) == pol), float("nan")) for g in groups]
                ax.bar([x + k * width for x in range(len(groups))], vals, width, label=f"{pol[0]}/{pol[1]}")
            ax.set_xticks([x + 0.4 - width / 2 for x in range(len(groups))], groups)
            ax.set_title(f"{config}: {label}")
    axes[0][2].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, path)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", type=Path, default=REPO / "build" / "smtlab",
                        help="the smtlab program (default: build/smtlab)")
    parser.add_argument("-n", "--max-instructions", type=parse_count, default=1_000_000, metavar="N",
                        help="instructions per thread measured in every run (default 1M)")
    parser.add_argument("--warmup", type=parse_count, default=500_000, metavar="W",
                        help="instructions per thread simulated before measuring, in every run and baseline "
                             "(default 500k: the kernels' loops are warm, so a program is MEM by its steady misses, "
                             "not its first touches)")
    parser.add_argument("-c", "--config", default="netburst,broadwell", metavar="PRESETS",
                        help="preset(s), comma-separated (default netburst,broadwell)")
    parser.add_argument("--fetch", default=",".join(FETCH), help=f"fetch policies (default {','.join(FETCH)})")
    parser.add_argument("--allocation", default=",".join(ALLOCATION),
                        help=f"allocation policies (default {','.join(ALLOCATION)})")
    parser.add_argument("--programs", action="store_true",
                        help="add bench/programs.py's real programs (traced on first use)")
    parser.add_argument("--mem-mpki", type=float, default=2.0,
                        help="loads beyond the L2 per 1000 instructions from which a program is MEM (default 2)")
    parser.add_argument("--fairness-floor", type=float, default=0.1, help="the starvation floor (default 0.1)")
    parser.add_argument("-j", "--workers", type=int, default=os.cpu_count() or 1, help="runs at once (default: CPUs)")
    parser.add_argument("-o", "--out", default=str(REPO / "bench" / "policy_study"), metavar="PREFIX",
                        help="writes PREFIX.json, PREFIX.csv and PREFIX.png (default bench/policy_study)")
    args = parser.parse_args(argv)
    binary = args.binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        print(f"policy_study: {binary} is not an executable; run `make build` or pass the smtlab path",
              file=sys.stderr)
        return 2
    fetch = [f for f in args.fetch.split(",") if f]
    alloc = [a for a in args.allocation.split(",") if a]
    for name, given, known in (("--fetch", fetch, FETCH), ("--allocation", alloc, ALLOCATION)):
        bad = [x for x in given if x not in known]
        if bad or not given:
            parser.error(f"{name}: {', '.join(bad) or 'none given'}: choose from {', '.join(known)}")
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    prefix = Path(args.out)
    try:
        for ext in (".json", ".csv", ".png"):
            check_destination(prefix.with_name(prefix.name + ext), "--out")
    except BenchError as err:
        print(f"policy_study: {err}", file=sys.stderr)
        return 2
    with sigterm_as_exit():
        try:
            return _run(args, binary, fetch, alloc, prefix)
        except (BenchError, OSError, KeyError, ValueError) as err:
            print(f"policy_study: {err}", file=sys.stderr)
            return 1


def _run(args, binary: Path, fetch: list[str], alloc: list[str], prefix: Path) -> int:
    names = list(KERNELS)
    if args.programs:
        cache = programs.default_cache(binary)
        for name, (a, _b) in programs.ensure_traces(binary, cache, log=lambda s: print(s, flush=True)).items():
            names.append(str(a))
    configs = [c for c in args.config.split(",") if c]
    n = args.max_instructions
    rows: list[dict] = []
    checks: dict[str, dict] = {}
    kinds_by_config: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="smtlab-policies-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        counter = itertools.count()

        def run(config: str, specs: list[str], overrides: list[str], baselines: bool) -> dict:
            path = Path(tmp) / f"run{next(counter)}.json"
            data = run_json(binary, config, specs, n, path, args.warmup, overrides=overrides,
                            mode="baselines" if baselines else "detailed")
            if baselines and "multiprogram" not in data:
                raise BenchError(f"{' '.join(specs)} on {config}: the result has no multiprogram object")
            return data

        for config in configs:
            alone = dict(zip(names, pool.map(lambda s: run(config, [s], [], False), names)))
            kinds = {s: ("MEM" if mpki_beyond_l2(alone[s]) >= args.mem_mpki else "ILP") for s in names}
            kinds_by_config[config] = kinds
            print(f"{config}: " + ", ".join(f"{s} {mpki_beyond_l2(alone[s]):.2f} -> {kinds[s]}" for s in names),
                  flush=True)
            jobs = [(a, b, f, al) for a, b in pairs_of(names, kinds) for f in fetch for al in alloc]
            print(f"{config}: {len(pairs_of(names, kinds))} pairs x {len(fetch)} fetch x {len(alloc)} allocation "
                  f"policies = {len(jobs)} runs, each with its programs alone", flush=True)
            progress = Progress(len(jobs), f"policy_study {config}", failures=False) if Progress else None
            results = []
            for data in pool.map(lambda j: run(config, [j[0], j[1]], [f"core.fetch_policy={j[2]}",
                                                                      f"core.allocation_policy={j[3]}"], True), jobs):
                results.append(data)
                if progress:
                    progress.update()
            if progress:
                progress.close()
            config_rows = []
            for (a, b, f, al), data in zip(jobs, results):
                mp = data["multiprogram"]
                config_rows.append({"config": config, "pair": f"{a} + {b}", "group": group_of(a, b, kinds),
                                    "fetch": f, "allocation": al, "stp": mp["stp"], "antt": mp["antt"],
                                    "hmean": mp["hmean"], "fairness": mp["fairness"],
                                    "speedup_a": mp["threads"][0]["speedup"], "speedup_b": mp["threads"][1]["speedup"]})
            rows += config_rows
            checks[config] = check_rows(config_rows, args.fairness_floor)
    if not rows:
        print("policy_study: nothing was run", file=sys.stderr)
        return 1
    table = summary(rows)
    print(f"{'config':<10} {'group':<8} {'fetch':<12} {'allocation':<14} {'pairs':>5} {'STP':>6} {'ANTT':>6} "
          f"{'hmean':>6} {'min fair':>8}")
    for r in table:
        print(f"{r['config']:<10} {r['group']:<8} {r['fetch']:<12} {r['allocation']:<14} {r['pairs']:>5} "
              f"{r['stp']:>6.3f} {r['antt']:>6.3f} {r['hmean']:>6.3f} {r['min_fairness']:>8.3f}")
    for config, cs in checks.items():
        for name, c in cs.items():
            print(f"{config} {name}: {'pass' if c['pass'] else 'MISS'}: {c['why']}")
    document = {"binary": str(binary), "max_instructions": n, "warmup": args.warmup, **host_info(), "kinds": kinds_by_config,
                "checks": checks, "summary": table, "rows": rows}
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    try:
        write_atomically(prefix.with_name(prefix.name + ".json"), json.dumps(document, indent=1) + "\n", "--out")
        write_atomically(prefix.with_name(prefix.name + ".csv"), buf.getvalue(), "--out")
        figure = write_figure(prefix.with_name(prefix.name + ".png"), table)
    except (BenchError, OSError) as err:
        print(f"policy_study: {err}", file=sys.stderr)
        return 1
    print(f"wrote {prefix}.json, {prefix}.csv" + (f", {prefix}.png" if figure else " (no matplotlib: no figure)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
