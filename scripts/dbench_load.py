#!/usr/bin/env python3
"""Counts the system calls one dbench 1.x client makes for its load file: the source of fileserver.py's DBENCH_OPS,
DBENCH_SIZES and DBENCH_LINES_PER_OP (docs/study.md, "dbench").

dbench 1.x (the version "Hyper-Threading speeds Linux" describes: a 4 MB client.txt of about 90,000 NetBench
operations) is GPL and not part of smtlab; get its client.txt from dbench's history (github.com/sahlberg/dbench,
commit 68d2eda: `git show 68d2eda:client.txt > client.txt`) and run

    python3 scripts/dbench_load.py client.txt

The rules follow child.c's child_run and fileio.c at that commit: a REQUEST line of SMBclose, SMBmkdir, SMBrmdir,
CREATE, SMBmv, SMBwrite / SMBwritebraw or SMBread / SMBreadbraw makes its call (a read or write on a handle that is
not open makes none; one that is seeks first); SMBopenX, SMBgetatr and SMBunlink make theirs at the REPLY line unless
it says ERR (an open is open(O_RDWR | O_CREAT) and fstat: "create" when the file does not exist yet); every other line
(SMBflush, SMBlockingX, SMBtrans2, SMBfindclose, SMBdskattr, SMBsetatr, SMBlseek) is read and parsed and makes no
call. Lines with fewer than two words are skipped, as child_run does.
"""
from __future__ import annotations

import argparse
import collections
import sys
from typing import Iterable

PAGE = 4096


def count(lines: Iterable[str]) -> dict:
    """The calls, read and write sizes and parsed lines of one client's run of ``lines``."""
    calls: collections.Counter[str] = collections.Counter()
    sizes: dict[str, collections.Counter[int]] = {"write": collections.Counter(), "read": collections.Counter()}
    exists: set[str] = set()
    handles: set[int] = set()
    pending = ""
    parsed = 0
    for raw in lines:
        words = raw.rstrip("\n").replace("\\", "/").replace(" /", " ").split()
        if len(words) < 2:
            continue
        parsed += 1
        arg = (lambda i: words[i] if i < len(words) else "")
        cmd, kind = words[0], words[1]
        if kind == "REQUEST":
            if cmd == "SMBopenX":
                pending = arg(5)
            elif cmd in ("SMBunlink", "SMBgetatr"):
                pending = arg(3)
            elif cmd == "SMBclose":
                if int(arg(3)) in handles:
                    handles.discard(int(arg(3)))
                    calls["close"] += 1
            elif cmd in ("SMBmkdir", "SMBrmdir", "CREATE"):
                calls[cmd] += 1
            elif cmd == "SMBmv":
                calls["rename"] += 1
                if arg(3) in exists:
                    exists.discard(arg(3))
                    exists.add(arg(5))
            elif cmd in ("SMBwrite", "SMBwritebraw", "SMBread", "SMBreadbraw"):
                data = "write" if cmd.startswith("SMBwrite") else "read"
                size = int(arg(5)) if cmd in ("SMBwrite", "SMBread") else int(arg(7))
                if int(arg(3)) in handles:
                    calls["lseek"] += 1
                    calls[data] += 1
                    sizes[data][size] += 1
        elif not arg(2).startswith("ERR"):
            if cmd == "SMBopenX":
                calls["create" if pending not in exists else "open"] += 1
                calls["fstat"] += 1
                exists.add(pending)
                handles.add(int(arg(3)))
            elif cmd == "SMBgetatr":
                calls["stat"] += 1
            elif cmd == "SMBunlink":
                calls["unlink"] += 1
                exists.discard(pending)
    return {"calls": calls, "sizes": sizes, "lines": parsed}


def by_pages(sizes: collections.Counter[int]) -> list[tuple[int, int, int]]:
    """(pages of 4 KiB spanned, calls, bytes of those calls), by pages."""
    agg: dict[int, list[int]] = collections.defaultdict(lambda: [0, 0])
    for size, n in sizes.items():
        pages = max(1, -(-size // PAGE))
        agg[pages][0] += n
        agg[pages][1] += size * n
    return [(p, n, b) for p, (n, b) in sorted(agg.items())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("client_txt", help="dbench 1.x's client.txt")
    args = parser.parse_args(argv)
    try:
        with open(args.client_txt, errors="replace") as f:
            got = count(f)
    except OSError as e:
        print(f"dbench_load: {args.client_txt}: {e.strerror}", file=sys.stderr)
        return 1
    calls = got["calls"]
    ops = sum(calls[c] for c in ("write", "read", "stat", "close", "open", "create", "unlink", "rename",
                                 "SMBmkdir", "SMBrmdir", "CREATE"))
    if ops == 0:
        print(f"dbench_load: {args.client_txt}: no line makes a system call (not a dbench 1.x client.txt?)",
              file=sys.stderr)
        return 1
    for name, n in calls.most_common():
        print(f"{name:10s} {n}")
    for data in ("write", "read"):
        print(f"{data} (pages, calls, bytes): {by_pages(got['sizes'][data])}")
    print(f"lines {got['lines']}, operations that make calls {ops}, lines per operation {got['lines'] / ops:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
