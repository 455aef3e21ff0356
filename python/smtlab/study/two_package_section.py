"""The study's 2-package x 2-thread scheduler experiment (netburst with system.packages=2): where Linux24 (2.4.19)
and Linux25HT (2.5.32) put two CPU-bound tasks and make -j2's compile jobs, and what it costs. Follows the Section
contract (section.py); ht_linux.SECTIONS lists it as "two_package"."""

from __future__ import annotations

import pathlib
from typing import Any

import pandas as pd

from ..workloads import compile_jobs, two_package
from ..workloads.base import KERNELS
from .common import cost_sentence, markdown_table, run_jobs
from .section import Section


def _two_package_job(experiment: str, scheduler: str, seed: int, instructions: int) -> dict[str, Any]:
    return two_package.run(experiment, scheduler, seed, instructions)


def run_two_package(out_dir: pathlib.Path, quick: bool, workers: int, progress: bool) -> Section:
    seeds = range(2) if quick else range(5)
    instructions = 1_500_000 if quick else 3_000_000
    # make_j2's compile jobs on real cc1 windows (recorded on first use, with a line per window), else the generated
    # stream; either way the notes name the source.
    compile_jobs.enable(compile_jobs.log_stderr if progress else None)
    jobs_note = compile_jobs.note()
    params = [dict(experiment=e, scheduler=s, seed=seed, instructions=instructions)
              for e in ("cpu_pair", "make_j2") for seed in seeds for s in KERNELS.values()]
    res = run_jobs(_two_package_job, params, workers, progress, "two_package")
    get = {(r["experiment"], r["seed"], r["scheduler"]): r for r in res}
    rows = []
    for e in ("cpu_pair", "make_j2"):
        for seed in seeds:
            a, b = get[(e, seed, "linux24")], get[(e, seed, "linux25ht")]
            rows.append({"experiment": e, "seed": seed, "Linux24 ms": a["makespan_ms"],
                         "Linux25HT ms": b["makespan_ms"],
                         "HT-aware gain %": 100.0 * (a["makespan_ms"] / b["makespan_ms"] - 1.0),
                         "Linux24 one-package share": max(a["core_instructions"]) / max(1, sum(a["core_instructions"])),
                         "Linux25HT one-package share": max(b["core_instructions"]) /
                         max(1, sum(b["core_instructions"])),
                         "Linux24 package moves": a["core_migrations"],
                         "Linux25HT package moves": b["core_migrations"]})
    df = pd.DataFrame(rows)

    def never_worse(sub: list[dict[str, Any]]) -> bool:
        return all(r["Linux25HT ms"] <= r["Linux24 ms"] * 1.005 for r in sub)

    pair_rows = [r for r in rows if r["experiment"] == "cpu_pair"]
    make_rows = [r for r in rows if r["experiment"] == "make_j2"]
    worst = min(rows, key=lambda r: r["HT-aware gain %"])
    pair = df[df.experiment == "cpu_pair"]
    make = df[df.experiment == "make_j2"]
    checks = {"ht_aware_never_worse": never_worse(rows), "cpu_pair_ht_aware_never_worse": never_worse(pair_rows)}
    md = [markdown_table(df, 3), "",
          "netburst with system.packages=2, core.threads=2 (2 packages x 2 logical CPUs), both kernels at HZ=1000 "
          "(2.5.32's; Linux24 elsewhere runs 2.4.19's HZ=100): the comparison is where the schedulers put the tasks, "
          "and on runs of 1-3 ms a tick rate alone moves the makespan by about 3 %. `cpu_pair`: two CPU-bound "
          f"tasks of {instructions:,} instructions forked by a shell (task i runs compile window i); `make_j2`: 6 "
          "compile jobs (seeded lengths 50-100% of that, each reading its source first: a 200 us I/O wait) kept two "
          f"at a time by make; source of both: {jobs_note.split(': ', 1)[1]}. The "
          "'one-package share' is the fraction of all instructions retired by the busier package (0.5: the work was "
          "spread; 1.0: both tasks shared one package's siblings while the other package idled); 'package moves' "
          "counts migrations between packages.", "",
          f"Linux24 is 2.4.19: reschedule_idle() sends a forked or woken task whose CPU is busy to the first idle "
          f"logical CPU whose sibling is idle too (2.4.19's i386 sibling check), else to the CPU idle longest; a woken "
          f"task whose last CPU is idle goes back there whatever its sibling runs, and the balancer sees '1+1 busy on "
          f"one package, 0+0 on the other' as balanced, so a pair doubled up that way stays doubled up (cpu_pair "
          f"one-package share {pair['Linux24 one-package share'].mean():.2f} on average, "
          f"{int((pair['Linux24 one-package share'] > 0.9).sum())} of {len(pair)} seeds fully on one package). "
          f"Linux25HT forks onto the least-loaded package and actively pushes a running task to a fully idle "
          f"package (cpu_pair share {pair['Linux25HT one-package share'].mean():.2f}): on the two-CPU-bound-task "
          f"experiment it is never worse (worst {pair['HT-aware gain %'].min():+.1f}%, best "
          f"{pair['HT-aware gain %'].max():+.1f}%).", "",
          f"make_j2 is mixed (HT-aware gain {make['HT-aware gain %'].min():+.1f}% to "
          f"{make['HT-aware gain %'].max():+.1f}%): Linux24's sibling check spreads the jobs at fork and wake-up, "
          f"and Linux25HT pays for 2.5's wake-up, which looks only at the woken task's last CPU and its siblings "
          f"(see the note)."]
    notes = [jobs_note, cost_sentence(len(res), res.host_seconds, res.workers, res.wall_seconds)]
    if not checks["ht_aware_never_worse"]:
        bad = [r for r in rows if r["Linux25HT ms"] > r["Linux24 ms"] * 1.005]
        kinds = sorted({r["experiment"] for r in bad})
        notes.append(
            f"two_package: Linux25HT was slower than Linux24 in {len(bad)} of {len(rows)} seeded runs "
            f"({', '.join(kinds)}; worst {worst['experiment']} seed {worst['seed']}: "
            f"{worst['HT-aware gain %']:+.1f}%, {worst['Linux25HT ms']:.2f} vs {worst['Linux24 ms']:.2f} ms). "
            "This is what the documented 2.5.32 mechanisms do, and is left in. In make_j2, make forks the first job, "
            "the job starts its 200 us source read, and make forks the second: a task waiting for I/O is not "
            "runnable, so the first job's package counts as empty and the least-loaded-package fork puts the second "
            "job there too. When the reads finish, the first job wakes on its idle last CPU; the second finds its "
            "last CPU busy, and 2.5's HT-aware wake-up (the target if idle, else an idle sibling) takes the idle "
            "sibling: both jobs share one core while the other package idles (make is blocked). Nothing moves them "
            "until the idle package's next rebalance tick (every 1 ms at HZ=1000) finds 'two running, a whole "
            "package idle' and active balancing pushes one across (the Linux25HT package moves column), so the "
            "pair runs doubled up for up to 1 ms each time. Linux24's reschedule_idle() takes the first idle "
            "logical CPU whose sibling is idle too (2.4.19's i386 sibling check, docs/study.md), so the second job "
            "goes to the idle package at once; where a job wakes on its idle last CPU beside the other it has no "
            f"active balancing, and Linux25HT wins by up to {make['HT-aware gain %'].max():+.0f}%.")
    return Section("two_package", "2 packages x 2 threads: HT-aware vs HT-unaware scheduling", df, "\n".join(md), [],
                   checks, notes)
