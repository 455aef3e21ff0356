/* The probe's page-cache phase (probe.c runs it): what AIM9's and dbench's file I/O does to a file of the guest's
 * ext4 disk (/mnt, virtio-blk, make_initramfs.sh) besides the calls of the "disk" and "file server" phases. */
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

void page_cache_paths(int n) { disk_read_path(n); }
