"""A disk model for the workloads' I/O waits: one spindle, requests served in arrival order.

Service time = seek (random requests; a 2002 10k-rpm SCSI disk averages about 4.7 ms) + rotational latency (half a
turn, 3 ms at 10k rpm) + transfer (size / 40 MB/s media rate). Sequential requests skip the seek and half the
rotation (the next sectors are usually near the head). A request issued while the disk is busy waits for the
requests before it; the caller turns the returned latency into an ``IO`` step. Not modelled: the elevator, the
disk's cache, tagged queueing, the SCSI bus.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Disk:
    """One disk; times are simulated cycles at ``freq_ghz``."""

    freq_ghz: float
    seek_ms: float = 4.7
    rotation_ms: float = 3.0
    mb_per_s: float = 40.0
    busy_until: int = field(default=0)
    requests: int = field(default=0)

    def request(self, now: int, kib: float, sequential: bool = False) -> int:
        """Issues a request of ``kib`` KiB at cycle ``now``; returns the cycles until it completes."""
        ms = kib / 1024.0 / self.mb_per_s * 1000.0
        ms += self.rotation_ms * (0.5 if sequential else 1.0)
        if not sequential:
            ms += self.seek_ms
        service = round(ms * 1e6 * self.freq_ghz)
        start = max(now, self.busy_until)
        self.busy_until = start + service
        self.requests += 1
        return self.busy_until - now
