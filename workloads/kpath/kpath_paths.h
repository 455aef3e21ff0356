/* The kernel paths of kpath:NAME, one table read by the probe program (probe.c) and by smtlab (src/tracer/kpath.cpp):
 * KPATH(name, kind, "what one recorded instance is"). kind REGION: an instance is everything the CPU ran between
 * the begin and end markers (user and kernel); EXCURSION: each run of kernel instructions inside a marked user region
 * is one instance (for interrupts, which the probe cannot call); RESCHED_IPI: of those runs, each that begins at the
 * reschedule vector (asm_sysvec_reschedule_ipi), cut where the preemption it asks for starts (__schedule), so the
 * instance is the IPI's own handling and a context switch stays the model's separate cost. A path's id is its
 * position here (0, 1, ...); the probe marks each instance with that id, so appending keeps old ids, and a change
 * here rebuilds the kpath cache. */
KPATH(getppid, REGION, "null system call: getppid() from user mode and back")
KPATH(read, REGION, "read() of 1 byte from /dev/zero")
KPATH(write, REGION, "write() of 1 byte to /dev/null")
KPATH(stat, REGION, "stat() of a file on the root file system (ramfs)")
KPATH(fstat, REGION, "fstat() of an open file")
KPATH(open_close, REGION, "open() then close() of a file on the root file system")
KPATH(pipe_write, REGION, "write() of 1 byte into a pipe nobody waits on")
KPATH(pipe_read, REGION, "read() of 1 byte from a pipe that holds it")
KPATH(pipe_write_wake, REGION, "write() of 1 byte into a pipe whose reader sleeps in read() on the other CPU")
KPATH(pipe_roundtrip, REGION, "1-byte pipe round trip to another process and back (LMbench lat_pipe): two context switches")
KPATH(ctxsw, REGION, "sched_yield() to another runnable process: from the yield call to the other process's return from its yield")
KPATH(fork, REGION, "fork() in the parent, up to its return in the parent")
KPATH(exit_wait, REGION, "waitpid() for a child that has still to run: the child's _exit() and the parent's return")
KPATH(execve, REGION, "execve() of a small static program, up to its main()")
KPATH(page_fault, REGION, "first write to an untouched anonymous page")
KPATH(sigaction, REGION, "sigaction() installing a handler")
KPATH(signal, REGION, "kill() of itself with a caught signal: delivery, handler, sigreturn")
KPATH(select, REGION, "select() on 10 regular-file descriptors, all ready, zero timeout (LMbench lat_select)")
KPATH(creat, REGION, "creat() of a new file on the guest's ext4 disk, then close()")
KPATH(link, REGION, "link() of a file on the guest's ext4 disk")
KPATH(unlink, REGION, "unlink() of a file on the guest's ext4 disk")
KPATH(tcp_send, REGION, "send() of 16 bytes on a TCP loopback connection (the receive side runs in the same call)")
KPATH(tcp_recv, REGION, "recv() of 16 bytes waiting on a TCP loopback connection")
KPATH(timer, EXCURSION, "a timer interrupt taken in user mode (the kernel part of a user spin that the tick interrupted)")
KPATH(disk_write, REGION, "write() of 1 KiB appended to a file on the guest's ext4 disk (virtio-blk): into the page cache")
KPATH(fsync, REGION, "fsync() of that file: its data block and the journal commit go to the virtio disk, and wait")
KPATH(resched_ipi, RESCHED_IPI, "reschedule IPI on the receiving CPU (-smp 2): interrupt entry up to __schedule")
