/* The probe's page-cache phase (probe.c runs it): what AIM9's and dbench's file I/O does to a file of the guest's
 * ext4 disk (/mnt, virtio-blk, make_initramfs.sh) besides the calls of the "disk" and "file server" phases: AIM9's
 * read of a cached file, and the write-back of dirty pages that dbench's writes leave for the flusher. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

/* AIM Suite IX's sync_disk_cp (disk1.c, "Sync Disk Copies (K)") copies its source file block by block: each
 * operation is read(fd, nbuf, sizeof nbuf) from the source, NBUFSIZE = 1024 (disk1.c exits unless it is), followed
 * by the write to an O_SYNC destination. The source was written by the suite's earlier tests, so it is in the page
 * cache. Here: a 64 KiB source written and synced before the instances (its pages stay cached, clean), read forward
 * 1 KiB per instance with read() (the file position advances, as in AIM's loop), back to its start every 64 reads. */
static void disk_read_path(int n) {
  enum { BLOCK = 1024, FILE_BYTES = 64 * 1024 };
  static char block[BLOCK];
  memset(block, 'c', sizeof block);
  int fd = open("/mnt/kpath-src", O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0) die("create /mnt/kpath-src");
  for (int k = 0; k < FILE_BYTES / BLOCK; ++k)
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block) die("fill /mnt/kpath-src");
  if (fsync(fd) != 0) die("fsync /mnt/kpath-src");
  for (int i = 0; i < n; ++i) {
    if (i % (FILE_BYTES / BLOCK) == 0 && lseek(fd, 0, SEEK_SET) != 0) die("lseek /mnt/kpath-src");
    BEGIN(KP_disk_read);
    ssize_t got = read(fd, block, sizeof block);
    END(KP_disk_read);
    if (got != (ssize_t)sizeof block) die("read /mnt/kpath-src");
  }
  close(fd);
  unlink("/mnt/kpath-src");
}

/* What a write-back of dirty file data runs: Linux 6.1's flusher (a kworker in wb_workfn -> wb_writeback ->
 * __writeback_single_inode) calls do_writepages on an inode's dirty pages, which for ext4 is ext4_writepages: map
 * the pages' blocks, build the bio (ext4_bio_write_page per page) and submit it (blk_mq_submit_bio, virtio-blk).
 * The probe cannot run the kworker on demand, so it runs the same do_writepages -> ext4_writepages in its own
 * context: sync_file_range(SYNC_FILE_RANGE_WRITE) is __filemap_fdatawrite_range with WB_SYNC_NONE, which submits and
 * does not wait. Each instance writes back 16 KiB (4 pages) dirtied just before it by a pwrite over blocks that are
 * already on the disk (a 256 KiB file written and fsynced first: no block allocation, as for data overwritten in a
 * file server's files); instance i takes the range at (i mod 16) x 16 KiB. The device's completion is waited for
 * after the region, so an instance never finds the previous one's pages still under write-back; the wait is the
 * writeback_irq region, whose only part kept is the completion interrupt (kpath_paths.h, DEVICE_IRQ). */
static void writeback_path(int n) {
  enum { RANGE = 16 * 1024, RANGES = 16 };
  static char data[RANGE];
  memset(data, 'w', sizeof data);
  int fd = open("/mnt/kpath-wb", O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0) die("create /mnt/kpath-wb");
  for (int k = 0; k < RANGES; ++k)
    if (write(fd, data, sizeof data) != (ssize_t)sizeof data) die("fill /mnt/kpath-wb");
  if (fsync(fd) != 0) die("fsync /mnt/kpath-wb");
  for (int i = 0; i < n; ++i) {
    off_t off = (off_t)(i % RANGES) * RANGE;
    data[0] = (char)('a' + i % 26);
    if (pwrite(fd, data, sizeof data, off) != (ssize_t)sizeof data) die("pwrite /mnt/kpath-wb");
    BEGIN(KP_writeback);
    int started = sync_file_range(fd, off, RANGE, SYNC_FILE_RANGE_WRITE);
    END(KP_writeback);
    if (started != 0) die("sync_file_range /mnt/kpath-wb");
    BEGIN(KP_writeback_irq);  /* the completion interrupt, if it did not land in the call: lands in the wait */
    int waited = sync_file_range(fd, off, RANGE, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WAIT_AFTER);
    END(KP_writeback_irq);
    if (waited != 0) die("sync_file_range wait /mnt/kpath-wb");
  }
  close(fd);
  unlink("/mnt/kpath-wb");
}

void page_cache_paths(int n) {
  disk_read_path(n);
  writeback_path(n);
}
