"""A whole dbench run's page cache, as a fluid model stepped in simulated milliseconds: the state (dirty pages,
pages written back, writers throttled, reads missing the cache) that the detailed window of a dbench point runs at.

The article's dbench (dbench 1.x) runs client.txt to its end in every client and reports ``132 * clients / t`` MB/s,
t the time until the last client exits (dbench.c). Its runs last 20-280 s; the detailed window is 40 ms. What the
run's page cache is doing when the window is taken decides whether a client's operations wait on the disk, so this
model runs the whole run coarsely and hands its state to the window (fileserver.build_dbench).

The load. Every client replays the one client.txt; ``CLIENT_PAGES_PROFILE`` is what one replay does to the page
cache, read from client.txt (sahlberg/dbench at 68d2eda) by :func:`client_profile` with fileio.c's rules: each 4 KiB
page of a file the client writes (nb_write, and nb_open's expand_file up to the opened size), in which hundredths of
the client's run it is written and in which it is freed (unlink, a rename over it, a truncating open; data of a file
deleted before its write-back never reaches the disk: truncate_inode_pages drops its dirty pages). A run's progress
is counted in the bytes dbench counts (reads and writes, 132,651,973 per client), so a hundredth is 1.33 MB of a
client's work. ``CLIENT_READ_PAGES`` is the pages each hundredth reads. 12,132 pages (47.4 MiB) are dirtied per
client, 18,973 page dirtyings in all; the files alive at a time hold 20-23 MiB from the first fifth of the run on.

The clients run in step (chosen: they run one script with the same operation costs; dbench's figure waits for the
last), so the machine holds ``clients`` times one client's pages, and one client's state stands for all.

Time. The clients progress at ``cpu_mbps`` (the detailed model's throughput with nothing waiting on the disk, per
kernel and HT mode: ``fileserver.DBENCH_CPU_MBPS``) unless the disk holds them back: a read of a page not in memory
waits for the disk, and throttled writers dirty no faster than the disk writes back. CPU and disk overlap fully
(chosen: 20-120 clients keep one busy while others wait).

The kernels' write-back rules (``WritebackRules``; each from the kernel's source, file and variable given there):

- Linux 2.4.19 (fs/buffer.c): dirty data is counted in buffers (``size_buffers_type[BUF_DIRTY]``) against
  ``nr_free_buffer_pages()`` (mm/page_alloc.c: the GFP_USER zones, ZONE_DMA and ZONE_NORMAL, less each zone's
  ``pages_high``), not against all memory. ``balance_dirty_state``: above ``nfract`` (30 %) a writer wakes bdflush,
  above ``nfract_sync`` (60 %) it writes buffers itself (``balance_dirty`` -> ``write_some_buffers``, blocking when
  the request queue is full): writers are throttled to the disk's pace. bdflush writes until ``bdflush_stop``, at
  ``nfract_stop_bdflush`` (20 %). kupdate wakes every ``interval`` (5 s) and writes buffers whose ``b_flushtime``
  (dirtied + ``age_buffer``, 30 s) has passed (``sync_old_buffers``). All in ``bdf_prm`` =
  {30, 500, 0, 0, 5*HZ, 30*HZ, 60, 20, 0}.
- Linux 2.5.32 (mm/page-writeback.c; its values as the "-" lines of A. Morton's patch against 2.5.32, linux-kernel
  27 Aug 2002, "adjustments to dirty memory thresholds"): thresholds against ``nr_free_pagecache_pages()``, every zone
  (high memory too). ``balance_dirty_pages``: above ``dirty_background_ratio`` (40 %) pdflush's
  ``background_writeout`` writes until the dirty pages are below it again; above ``dirty_async_ratio`` (50 %) the
  writer writes ``sync_writeback_pages()`` itself (and above ``dirty_sync_ratio``, 60 %, waits on them): throttled.
  ``wb_kupdate`` every ``dirty_writeback_centisecs`` (5 s) writes data dirtied more than ``dirty_expire_centisecs``
  (30 s) ago. (2.5.32 ages a whole inode by its first dirtying, ``mapping->dirtied_when``; here every page by its
  own: chosen, the profile keeps pages, not files.)

Both write back oldest first (2.4's BUF_DIRTY list and 2.5's s_dirty inode list are in dirtying order). Memory full
(mm/vmscan.c ``shrink_cache`` in both): clean pages are reclaimed (chosen: from every client's live files alike, so
a read misses with the fraction of live pages not in memory); a dirty page reclaim meets is written first, so with
memory full of dirty pages the writers wait as when throttled. A read of a reclaimed page brings it back.

The disk (``DiskRates``): the workloads' disk model (workloads/disk.py: a 2002 10k-rpm SCSI disk, 4.7 ms average
seek, 3 ms for half a turn, 40 MB/s media rate); the article's machine had two 9.2 GB SCSI disks and does not say
how dbench used them, so one disk holds the clients' files (chosen). Write-back goes out in 64 KiB requests that the
elevator keeps in sector order, so each pays half a turn and no seek (disk.py's ``sequential``): 3.06 ms per
64 KiB, 20.4 MiB/s. A read call that misses is one random request for its pages (2.6 on average): 7.7 ms of seek and
half a turn plus 0.1 ms per page.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

#: Memory of the article's machine (a 1.6 GHz Xeon MP with 2.5 GB of RAM), in MiB.
MEMORY_MIB = 2560.0
#: Memory the page cache cannot use, in MiB (chosen: mem_map, 2.5 GB / 4 KiB x 60 bytes, about 40 MiB; the kernel
#: image, slab caches (inodes, dentries, 2.4's buffer heads) and page tables, together taken as as much again).
RESERVED_MIB = 80.0
#: Per client process (chosen: dbench's child: its stack, heap and page tables; client.txt is read through the one
#: shared page-cache copy), in MiB.
CLIENT_PROCESS_MIB = 0.5
PAGE_KIB = 4.0
#: Pages per read call of client.txt (12,414 pages over 4,698 nb_read calls); a call that misses is one request.
READ_PAGES_PER_CALL = 12414 / 4698
#: The bytes dbench counts per client (reads and writes of client.txt; dbench.c reports 132 MB per client).
CLIENT_BYTES = 132_651_973
#: Hundredths of a client's run in CLIENT_PAGES_PROFILE and CLIENT_READ_PAGES.
BINS = 100
#: One client's pages: "count:bins written in:bin freed in" (bins 0-99, dot-separated; no freeing bin: the page
#: outlives the run), from :func:`client_profile` on client.txt.
CLIENT_PAGES_PROFILE = (
    "35:0: 303:0:99 1:0.1:99 1:0.99: 319:1:99 1:1.2:99 335:2:99 1:2.3:99 320:3:99 315:4:99 1:4.5:99 "
    "2:4.19.30.41.52.63.74.85.96:99 2:4.20.31.42.53.64.75.86.97:99 1:4.23.34.35.46.57.68.79.90:99 333:5:99 1:5.6:99 "
    "1:5.24.35.46.57.68.79.90:99 1:5.26.37.48.59.70.81.92:99 318:6:99 1:6.7:99 1:6.26.37.48.59.70.81.92:99 336:7:99 "
    "320:8:99 315:9:99 3:9.27.28.38.39.50.61.72.83.94:99 1:9.27.38.50.61.72.83.94:99 1:9.28.39.50.61.72.83.94:99 "
    "333:10:99 1:10.11:99 2:10.28.39.50.61.72.83.94:99 319:11:99 1:11.12:99 335:12:99 1:12.13:99 221:13:99 1:13.14:99 "
    "1:13.15.20.24.27.28.31.35.38.39.42.46.49.51.53.57.58.60.62.64.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "15:13.15.20.24.27.28.31.35.38.39.42.46.49.51.53.57.60.62.64.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "16:13.15.20.24.27.28.31.35.38.39.42.46.49.51.53.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "1:13.16.20.24.27.29.31.35.36.38.40.42.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "1:13.16.20.24.27.29.31.35.38.39.40.42.46.47.49.51.53.54.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "15:13.16.20.24.27.29.31.35.38.39.42.46.49.51.53.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "31:13.16.20.24.27.29.31.35.38.40.42.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "16:13.16.20.24.27.29.31.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "1:13.16.29.40.51.62.63.73.74.84.85.95.96:99 1:13.16.29.40.51.62.73.84.85.95.96:99 239:14:99 1:14.15:99 "
    "1:14.16.20.21.25.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.72.73.76.80.83.84.87.91.94.95.98:99 "
    "1:14.16.20.24.27.29.31.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "15:14.16.20.24.27.29.31.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.87.91.93.95.98:99 "
    "1:14.16.20.24.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.91.93.95.98:99 "
    "15:14.16.20.24.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.76.80.82.84.91.93.95.98:99 "
    "17:14.16.21.25.27.29.32.36.38.40.43.47.49.51.54.58.61.62.65.69.72.73.76.80.83.84.87.91.94.95.98:99 "
    "1:14.16.21.25.27.32.36.38.40.43.47.49.51.54.58.60.61.62.65.69.72.73.76.80.83.84.87.91.94.95.98:99 "
    "15:14.16.21.25.27.32.36.38.40.43.47.49.51.54.58.60.62.65.69.72.73.76.80.83.84.87.91.94.95.98:99 "
    "15:14.16.21.25.27.32.36.38.40.43.47.49.51.54.58.61.62.65.69.72.73.76.80.83.84.87.91.94.95.98:99 1:15: 9:15:15 "
    "9:15:28 200:15:99 1:16:16 27:16:28 "
    "1:16.20.24.25.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.83.84.91.93.95.98:99 "
    "15:16.20.24.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.82.84.91.93.95.98:99 "
    "1:16.20.25.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.83.84.87.91.93.94.95.98:99 "
    "15:16.20.25.27.29.32.36.38.40.43.47.49.51.54.58.60.62.65.69.71.73.76.80.83.84.91.93.95.98:99 "
    "15:16.20.25.27.29.32.36.38.40.43.47.49.51.54.58.60.65.69.71.73.76.80.83.84.87.91.94.95.98:99 27:19:19 17:19:20 "
    "148:19:28 10:19.20:28 11:20:20 31:20:28 3:21:22 213:21:28 3:22:22 3:22:23 155:22:28 2:22.23:28 25:23:24 3:23:28 "
    "5:23.24:24 50:24:24 40:24:28 16:25:28 2:25.26:28 55:26:28 7:27:27 27:27:28 8:27.28:28 12:28:28 9:28:39 1:29:29 "
    "27:29:39 27:30:30 17:30:31 51:30:39 11:31:31 138:31:39 2:32:33 149:32:39 3:33:33 3:33:34 187:33:39 37:34:39 "
    "80:35:35 40:35:39 10:36:39 4:36.37:39 40:37:39 7:38:38 46:38:39 4:38.39:39 16:39:39 9:39:50 1:40:40 27:40:50 "
    "27:41:41 17:41:42 22:41:50 11:42:42 167:42:50 3:43:44 112:43:50 3:44:44 3:44:45 224:44:50 37:45:50 80:46:46 "
    "40:46:50 7:47:50 3:47.48:50 16:48:50 2:49:49 72:49:50 1:49.50:50 26:50:50 9:50:61 1:51:51 27:51:61 14:52:52 "
    "13:52:53 13:52:61 7:52.53:53 21:53:53 176:53:61 3:54:55 75:54:61 3:55:55 3:55:56 261:55:61 37:56:61 80:57:57 "
    "40:57:61 3:58:61 7:58.59:61 16:59:61 71:60:61 23:61:61 7:61:62 5:61:72 3:61.62:72 16:62:72 15:63:63 13:63:64 "
    "15:63:72 28:64:64 186:64:72 3:65:66 57:65:72 3:66:66 3:66:67 279:66:72 37:67:72 80:68:68 40:68:72 3:69:72 "
    "7:69.70:72 16:70:72 71:71:72 22:72:72 5:72:73 5:72:83 3:73:73 4:73:83 1:74:74 19:74:75 27:74:83 8:74.75:75 "
    "28:75:75 189:75:83 3:76:77 36:76:83 3:77:77 3:77:78 289:77:83 48:78:83 61:79:79 19:79:80 29:79:83 4:79.80:83 "
    "10:80:83 7:80.81:83 16:81:83 71:82:83 22:83:83 4:83:84 4:83.84:94 4:84:84 5:84:94 1:85:85 6:85:86 27:85:94 "
    "8:85.86:86 30:86:86 11:86:87 169:86:94 3:86.87:94 3:87:88 64:87:94 3:88:88 3:88:89 289:88:94 37:89:94 61:90:90 "
    "19:90:91 38:90:94 2:90.91:94 3:91:94 7:91.92:94 16:92:94 71:93:94 22:94:94 4:94:95 4:94.95:99 4:95:95 5:95:99 "
    "1:96:96 12:96:97 27:96:99 2:96.97:97 41:97:97 177:97:99 25:98:99 4:99: 306:99:99 ")
#: Pages of 4 KiB that one client's reads touch in each hundredth of its run (nb_read), from :func:`client_profile`.
CLIENT_READ_PAGES = (
    10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 84, 103, 341, 340, 73, 53, 163, 297, 307, 55, 97, 245, 57, 96, 149,
    186, 13, 143, 248, 331, 68, 64, 245, 42, 89, 116, 219, 13, 163, 174, 363, 110, 64, 222, 41, 113, 82, 252, 14, 163,
    100, 386, 161, 64, 188, 68, 73, 127, 254, 14, 155, 62, 407, 178, 64, 171, 85, 67, 133, 252, 16, 163, 30, 422, 192,
    67, 137, 119, 61, 106, 283, 14, 167, 35, 434, 175, 67, 154, 102, 66, 117, 267, 16, 165, 22)


@dataclass(frozen=True)
class WritebackRules:
    """One kernel's dirty-data rules; percentages of ``base_mib``, the memory its limits count against."""

    kernel: str
    base_mib: float  #: what the limits are percentages of
    background_pct: float  #: a daemon starts writing back above this
    stop_pct: float  #: ... and stops at or below this
    throttle_pct: float  #: above this a writer writes back itself (throttled to the disk's pace)
    expire_s: float  #: data dirty this long is written by the periodic pass
    interval_s: float  #: the periodic pass's interval


def _zone_high_mib(zone_mib: float) -> float:
    """A zone's ``pages_high`` in MiB: 3 x pages_min, pages_min = size / 128 within 20..255 pages (2.4.19
    mm/page_alloc.c ``zone_balance_ratio``, ``zone_balance_min``, ``zone_balance_max``; 2.5.32 the same)."""
    pages = zone_mib * 1024 / PAGE_KIB
    return 3 * min(255.0, max(20.0, pages // 128)) * PAGE_KIB / 1024


def kernel_rules(kernel: str, memory_mib: float = MEMORY_MIB) -> WritebackRules:
    """The write-back rules of ``kernel`` ("2.4.19" or "2.5.32") on an i386 machine of ``memory_mib``. Zones: DMA
    16 MiB, NORMAL up to 896 MiB (the direct map: 1 GiB less ``__VMALLOC_RESERVE``, 128 MiB, include/asm-i386/page.h),
    HIGHMEM the rest."""
    dma, normal = 16.0, min(memory_mib, 896.0) - 16.0
    high = max(0.0, memory_mib - 896.0)
    low = dma + normal - _zone_high_mib(dma) - _zone_high_mib(normal)
    if kernel == "2.4.19":  # fs/buffer.c bdf_prm: nfract 30, nfract_stop_bdflush 20, nfract_sync 60, 5*HZ, 30*HZ
        return WritebackRules(kernel, low, 30.0, 20.0, 60.0, 30.0, 5.0)
    if kernel == "2.5.32":  # mm/page-writeback.c: dirty_background_ratio 40, dirty_async_ratio 50, 3000 / 500 cs
        total = low + (high - _zone_high_mib(high) if high else 0.0)
        return WritebackRules(kernel, total, 40.0, 40.0, 50.0, 30.0, 5.0)
    raise ValueError(f"no write-back rules for kernel {kernel!r} (2.4.19 or 2.5.32)")


@dataclass(frozen=True)
class DiskRates:
    """What the page cache asks of the disk, from workloads/disk.py's values (module doc)."""

    seek_ms: float = 4.7
    rotation_ms: float = 3.0  #: half a turn at 10k rpm
    mb_per_s: float = 40.0
    request_kib: float = 64.0  #: a write-back request

    def write_ms_per_page(self) -> float:
        """A written-back page's share of a sector-ordered 64 KiB request (half a turn, no seek)."""
        ms = 0.5 * self.rotation_ms + self.request_kib / 1024 / self.mb_per_s * 1000
        return ms * PAGE_KIB / self.request_kib

    def read_ms_per_page(self) -> float:
        """A page's share of a read that misses: one random request per read call (seek and half a turn) for the
        call's pages, READ_PAGES_PER_CALL on average, each page's transfer its own."""
        return (self.seek_ms + self.rotation_ms) / READ_PAGES_PER_CALL + PAGE_KIB / 1024 / self.mb_per_s * 1000


@dataclass(frozen=True)
class PageGroup:
    count: int
    writes: tuple[int, ...]
    freed: int | None


def profile_groups(profile: str = CLIENT_PAGES_PROFILE) -> list[PageGroup]:
    """CLIENT_PAGES_PROFILE's entries as page groups."""
    groups = []
    for entry in profile.split():
        n, writes, freed = entry.split(":")
        groups.append(PageGroup(int(n), tuple(int(b) for b in writes.split(".")), int(freed) if freed else None))
    return groups


def client_profile(lines: Iterable[str]) -> tuple[list[str], list[int]]:
    """CLIENT_PAGES_PROFILE and CLIENT_READ_PAGES from dbench 1.x's client.txt (``git show 68d2eda:client.txt`` in
    sahlberg/dbench), following child.c and fileio.c: an SMBopenX that succeeds opens (or creates) the file and
    extends it to the reply's size with writes (expand_file) or truncates it; SMBwrite / SMBwritebraw write, SMBread /
    SMBreadbraw read (within the file's size) on an open handle; SMBunlink and SMBmv over an existing name free the
    file's pages. Progress is the bytes dbench counts. ``python -m smtlab.workloads.page_cache client.txt`` prints
    both."""
    events: list[tuple[float, str, int, int, int]] = []
    names: dict[str, int] = {}
    sizes: dict[int, int] = {}
    handles: dict[int, int] = {}
    page, done, pending = int(PAGE_KIB * 1024), 0.0, ""
    for raw in lines:
        w = raw.rstrip("\n").replace("\\", "/").replace(" /", " ").split()
        if len(w) < 2:
            continue
        arg = (lambda i: w[i] if i < len(w) else "")
        cmd, kind = w[0], w[1]
        if kind == "REQUEST":
            if cmd == "SMBopenX":
                pending = arg(5).upper()
            elif cmd in ("SMBunlink", "SMBgetatr"):
                pending = arg(3).upper()
            elif cmd == "SMBclose":
                handles.pop(int(arg(3)), None)
            elif cmd == "SMBmv" and arg(3).upper() in names:
                old, new = arg(3).upper(), arg(5).upper()
                if new in names:
                    events.append((done, "free", names[new], 0, 0))
                names[new] = names.pop(old)
            elif cmd in ("SMBwrite", "SMBwritebraw", "SMBread", "SMBreadbraw"):
                raw_mode = cmd.endswith("braw")
                size, off = (int(arg(7)), int(arg(5))) if raw_mode else (int(arg(5)), int(arg(7)))
                handle = int(arg(3))
                if handle in handles and size > 0:
                    ino = handles[handle]
                    done += size
                    if cmd.startswith("SMBwrite"):
                        sizes[ino] = max(sizes[ino], off + size)
                        events.append((done, "w", ino, off // page, (off + size - 1) // page))
                    elif min(size, sizes[ino] - off) > 0:
                        events.append((done, "r", ino, off // page, (off + min(size, sizes[ino] - off) - 1) // page))
        elif not arg(2).startswith("ERR"):
            if cmd == "SMBopenX":
                if pending not in names:
                    names[pending] = len(sizes) + 1
                    sizes[names[pending]] = 0
                ino, size = names[pending], int(arg(5))
                if size > sizes[ino]:
                    events.append((done, "w", ino, sizes[ino] // page, (size - 1) // page))
                elif size < sizes[ino]:
                    events.append((done, "trunc", ino, (size + page - 1) // page, 0))
                sizes[ino] = size
                handles[int(arg(3))] = ino
            elif cmd == "SMBunlink" and pending in names:
                events.append((done, "free", names.pop(pending), 0, 0))
    live: dict[tuple[int, int], list[int]] = {}
    groups: collections.Counter[tuple[tuple[int, ...], int | None]] = collections.Counter()
    reads = [0] * BINS

    def close(key: tuple[int, int], b: int | None) -> None:
        groups[(tuple(sorted(set(live.pop(key)))), b)] += 1

    for at, what, ino, p0, p1 in events:
        b = min(BINS - 1, int(at / done * BINS))
        if what == "w":
            for p in range(p0, p1 + 1):
                live.setdefault((ino, p), []).append(b)
        elif what == "r":
            reads[b] += p1 - p0 + 1
        else:
            for key in [k for k in live if k[0] == ino and (what == "free" or k[1] >= p0)]:
                close(key, b)
    for key in list(live):
        close(key, None)
    entries = [f"{n}:{'.'.join(map(str, w))}:{'' if f is None else f}"
               for (w, f), n in sorted(groups.items(), key=lambda g: (g[0][0], -1 if g[0][1] is None else g[0][1]))]
    return entries, reads


@dataclass(frozen=True)
class RunState:
    """The page cache at one moment of a run (every client's pages together)."""

    t_s: float  #: seconds into the run
    progress: float  #: fraction of client.txt each client has done
    dirty_mib: float
    written_mib: float  #: written back so far
    throttled: bool  #: writers write back their own dirty data (dirty above the kernel's throttle level, or memory full)
    daemon_writing: bool  #: bdflush / pdflush or kupdate writing in the background
    read_miss: float  #: fraction of reads whose page is not in memory
    new_dirty: float  #: fraction of the page writes at this point of the script that dirty a clean page
    cached_mib: float


@dataclass
class Run:
    """A whole run: its length, dbench's figure for it and its states in steps of ``SNAPSHOT_MS``."""

    clients: int
    rules: WritebackRules
    seconds: float = 0.0
    states: list[RunState] = field(default_factory=list)
    throttled_s: float = 0.0

    @property
    def mb_per_s(self) -> float:
        """dbench's figure: the clients' bytes over the run's time."""
        return self.clients * CLIENT_BYTES / self.seconds / 1e6

    def at(self, fraction: float) -> RunState:
        """The state ``fraction`` of the way through the run (in time)."""
        t = fraction * self.seconds
        return min(self.states, key=lambda s: abs(s.t_s - t))


SNAPSHOT_MS = 100.0
#: Where in a run the detailed window is taken, as a fraction of the run's time (chosen: the middle, a point past
#: the start-up (the first tenth creates the long-lived files) and before the end-of-run deletes).
WINDOW_AT = 0.5


def simulate(clients: int, kernel: str, cpu_mbps: float, memory_mib: float = MEMORY_MIB,
             disk: DiskRates = DiskRates(), dt_ms: float = 10.0, profile: str = CLIENT_PAGES_PROFILE,
             read_pages: tuple[int, ...] = CLIENT_READ_PAGES) -> Run:
    """Runs ``clients`` dbench clients through client.txt under ``kernel``'s write-back rules, the CPU alone letting
    them move ``cpu_mbps`` MB/s, in steps of ``dt_ms`` simulated ms (``profile`` and ``read_pages``: another load
    in CLIENT_PAGES_PROFILE's and CLIENT_READ_PAGES's form)."""
    rules = kernel_rules(kernel, memory_mib)
    groups = profile_groups(profile)
    writes_in: list[list[int]] = [[] for _ in range(BINS)]
    frees_in: list[list[int]] = [[] for _ in range(BINS)]
    for i, g in enumerate(groups):
        for b in g.writes:
            writes_in[b].append(i)
        if g.freed is not None:
            frees_in[g.freed].append(i)
    counts = np.array([float(g.count) for g in groups])
    unborn, clean, evicted, dirty = counts.copy(), np.zeros(len(groups)), np.zeros(len(groups)), np.zeros(len(groups))
    writes_at = [np.array(w, dtype=int) for w in writes_in]
    frees_at = [np.array(f, dtype=int) for f in frees_in]
    cohorts: collections.deque[list[float]] = collections.deque()  # [dirtied at (ms), group, pages], oldest first
    by_group: list[list[list[float]]] = [[] for _ in groups]
    mib = clients * PAGE_KIB / 1024  # MiB of all clients per page of one client
    capacity = (memory_mib - RESERVED_MIB - clients * CLIENT_PROCESS_MIB) / mib  # pages of one client
    start_pages = rules.background_pct / 100 * rules.base_mib / mib
    stop_pages = rules.stop_pct / 100 * rules.base_mib / mib
    throttle_pages = rules.throttle_pct / 100 * rules.base_mib / mib
    bin_bytes = clients * CLIENT_BYTES / BINS
    cpu_bins_per_ms = cpu_mbps * 1e3 / bin_bytes
    t_wr, t_rd = disk.write_ms_per_page(), disk.read_ms_per_page()
    run = Run(clients, rules)
    s, t, written, daemon, due = 0.0, 0.0, 0.0, False, 0.0
    next_kupdate, next_snap = rules.interval_s * 1e3, 0.0

    def write_back(pages: float) -> float:
        done = 0.0
        while pages > 1e-12 and cohorts:
            c = cohorts[0]
            n = min(pages, c[2])
            c[2] -= n
            g = int(c[1])
            dirty[g] -= n
            clean[g] += n
            pages -= n
            done += n
            if c[2] <= 1e-12:
                cohorts.popleft()
                by_group[g].remove(c)
        return done

    while s < BINS:
        b, phi = int(s), s - int(s)
        w, fr = writes_at[b], frees_at[b]
        d_tot, c_tot, e_tot = float(dirty.sum()), float(clean.sum()), float(evicted.sum())
        live = d_tot + c_tot + e_tot
        miss = e_tot / live if live > 0 else 0.0
        new_per_bin = float((unborn[w] + clean[w] + evicted[w]).sum()) / (1.0 - phi)
        reads_ms = clients * read_pages[b] * miss * t_rd  # disk ms per bin of progress
        if t >= next_kupdate:
            due = sum(c[2] for c in cohorts if c[0] <= t - rules.expire_s * 1e3)
            next_kupdate += rules.interval_s * 1e3
        if d_tot > start_pages:
            daemon = True
        elif d_tot <= stop_pages:
            daemon = False
        throttled = d_tot > throttle_pages or d_tot >= capacity
        disk_ms = reads_ms + (clients * new_per_bin * t_wr if throttled else 0.0)
        left = (b + 1) - s
        ds = min(cpu_bins_per_ms * dt_ms, dt_ms / disk_ms if disk_ms > 0 else float("inf"), left)
        if t >= next_snap:
            pw = float(counts[w].sum()) * (1.0 - phi)
            run.states.append(RunState(t / 1e3, s / BINS, d_tot * mib, float(written * mib), throttled,
                                       daemon or due > 0, miss, (new_per_bin * (1.0 - phi) / pw) if pw else 0.0,
                                       (d_tot + c_tot) * mib))
            next_snap += SNAPSHOT_MS
        # The script's events over [s, s + ds] of bin b: each page of a group is written (or freed) once, at a
        # uniform point of the bin, so a fraction k of what is left of the bin takes k of the pages not yet done.
        k = ds / (1.0 - phi)
        for g in w:
            n = k * (unborn[g] + clean[g] + evicted[g])
            if n > 0:
                c = [t, float(g), n]
                cohorts.append(c)
                by_group[g].append(c)
        if len(w):
            dirty[w] += k * (unborn[w] + clean[w] + evicted[w])
            unborn[w] -= k * unborn[w]
            clean[w] -= k * clean[w]
            evicted[w] -= k * evicted[w]
        for g in fr:
            for c in by_group[g]:
                c[2] -= k * c[2]
        if len(fr):
            for arr in (dirty, clean, evicted, unborn):
                arr[fr] -= k * arr[fr]
        reads = read_pages[b] * ds * miss
        if reads > 0 and e_tot > 0:
            back = evicted * min(1.0, reads / e_tot)
            evicted -= back
            clean += back
        spare = dt_ms - ds * disk_ms  # disk time left in the step
        if throttled:
            written += write_back(new_per_bin * ds)
        if spare > 0 and (daemon or due > 0):
            want = spare / t_wr / clients
            want = min(want, max(0.0, float(dirty.sum()) - stop_pages) + due) if daemon else min(want, due)
            n = write_back(want)
            written += n
            due = max(0.0, due - n)
        over = float(dirty.sum() + clean.sum()) - capacity
        c_tot = float(clean.sum())
        if over > 0 and c_tot > 0:
            moved = clean * min(1.0, over / c_tot)
            evicted += moved
            clean -= moved
        step_ms = dt_ms if ds < left else max(ds / cpu_bins_per_ms, ds * disk_ms)
        if throttled:
            run.throttled_s += step_ms / 1e3
        t += step_ms
        s = b + 1 if ds >= left else s + ds
    run.seconds = t / 1e3
    return run


def window_state(clients: int, kernel: str, cpu_mbps: float, **kw: float) -> tuple[RunState, Run]:
    """The state a dbench point's detailed window runs at (WINDOW_AT of the way through the run) and the run."""
    run = simulate(clients, kernel, cpu_mbps, **kw)
    return run.at(WINDOW_AT), run


if __name__ == "__main__":
    import sys

    with open(sys.argv[1], errors="replace") as f:
        entries, reads = client_profile(f)
    print(" ".join(entries))
    print(reads)
