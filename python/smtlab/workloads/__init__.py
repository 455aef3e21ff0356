"""smtlab.workloads: the reference study's benchmarks as task models for the smtlab.os kernel.

- :mod:`.kpaths`: kernel-mode paths (system calls, faults, fork / exec / exit, TCP, file system) as documented
  instruction counts, the trap, and the reschedule IPI of a cross-CPU wake-up;
- :mod:`.base`: the simulated system (netburst, HT off / on, a Linux-like kernel) and statistics snapshots;
- :mod:`.lmbench`, :mod:`.aim9`, :mod:`.chat`, :mod:`.fileserver` (dbench, tbench), :mod:`.two_package`;
- :mod:`.disk`: the disk model behind I/O waits. (:mod:`.sysbench` belongs to the energy study.)

docs/study.md says what each models, what it leaves out and how the work was scaled down. The modules are imported
on demand (``from smtlab.workloads import lmbench``) because they import the compiled core.
"""
