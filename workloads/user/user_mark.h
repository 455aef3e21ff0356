/* The instance marker of the study's user programs (the C files of workloads/user; python/smtlab/workloads/
 * user_streams.py cuts the instances out).
 * One instance (one chat message, one dbench operation, one tbench request) is the user-mode work between a begin
 * and an end marker; the program's system calls lie outside every instance, so an instance runs from a system call's
 * return to the next call. The marker is `pause` (f3 90): it is one record of op class pause in the recorded trace,
 * and nothing else in these single-threaded static programs executes it (glibc spins with pause only in contended
 * locks, which a single thread never meets), so markers come in begin/end pairs, two per instance. */
#ifndef SMTLAB_USER_MARK_H
#define SMTLAB_USER_MARK_H
/* Where a program leaves its result so that the compiler keeps the work that computes it. */
static volatile unsigned long sink;
#define USER_MARK() __asm__ volatile("pause" ::: "memory")
#endif
