/* The kernel paths of kpath:NAME, one table read by the probe program (probe.c) and by smtlab (src/tracer/kpath.cpp):
 * KPATH(name, kind, "what one recorded instance is"). kind REGION: an instance is everything the CPU ran between
 * the begin and end markers (user and kernel); EXCURSION: each run of kernel instructions inside a marked user region
 * is one instance (for interrupts, which the probe cannot call); RESCHED_IPI: of those runs, each that begins at the
 * reschedule vector (asm_sysvec_reschedule_ipi), cut where the preemption it asks for starts (__schedule), so the
 * instance is the IPI's own handling and a context switch stays the model's separate cost; WAKE_IPI: of the whole
 * region (a task that sleeps on a CPU which then halts), the instructions from the first at the call-function-single
 * vector (asm_sysvec_call_function_single) up to the first __schedule after it: the halted CPU's wake-up as it runs
 * it, the switch to the woken task again the model's own cost. A path's id is its
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
KPATH(wake_ipi, WAKE_IPI, "wake-up IPI to a halted CPU (-smp 2): from the call-function-single vector through the wake list to __schedule")
KPATH(file_open, REGION, "open() of an existing 64 KiB file on the guest's ext4 disk, read-write (a file server's open)")
KPATH(file_read, REGION, "pread() of 4 KiB from that file, in the page cache")
KPATH(file_write, REGION, "pwrite() of 4 KiB over data of that file, in the page cache (marks it dirty)")
KPATH(file_lock, REGION, "fcntl(F_SETLK) write lock of a byte range of that file")
KPATH(file_close, REGION, "close() of that file")
KPATH(file_create, REGION, "open(O_CREAT) of a new file on the guest's ext4 disk (without the close)")
KPATH(rename, REGION, "rename() of a file within a directory on the guest's ext4 disk")
KPATH(getdents, REGION, "getdents64() of a directory of 16 files on the guest's ext4 disk, from its start")
KPATH(select_tcp, REGION, "select() on 10 dup()s of one TCP loopback socket as the write set, all writable, zero timeout (LMbench 2 lat_select tcp)")
KPATH(tcp_send_4k, REGION, "send() of 4 KiB on a TCP loopback connection, the receive side's queueing in the same call (tbench's reply)")
KPATH(tcp_recv_4k, REGION, "recv() of 4 KiB that are there on a TCP loopback connection (the tbench client reading its reply)")
KPATH(disk_read, REGION, "read() of 1 KiB from a file on the guest's ext4 disk, in the page cache, at the file position (AIM9 sync_disk_cp's source)")
KPATH(writeback, REGION, "sync_file_range(SYNC_FILE_RANGE_WRITE) of 16 KiB dirty in the page cache of an ext4 file: do_writepages -> ext4_writepages submits the bio (the flusher's write-back code, without waiting)")
KPATH(sh_c, REGION, "execve() of /bin/sh -c (busybox ash) running a small static program: the shell's execve, its start-up, and its execve of the program, up to the program's main()")
