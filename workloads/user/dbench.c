/* The dbench client's per-operation user-mode work: `dbench OPERATIONS` runs OPERATIONS lines of the load file
 * (loadfile.h, wrapping round) the way dbench's child_run does, each between USER_MARK()s (user_mark.h): read and
 * parse the line, find the handle, set up the call's arguments. The file operation itself (open, close, pread,
 * pwrite, stat, fcntl lock, opendir/readdir, unlink, rename, creat) is issued after the end marker on real files in
 * a private directory under /tmp (removed at the end), so instances run from one operation's return to the next
 * operation's call. Deterministic: the same lines in the same order on every run. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loadfile.h"
#include "user_mark.h"

static char data[4096];

static void issue(const struct request *r, unsigned long *sum) {
  struct stat st;
  switch (r->op) {
    case OP_OPEN: case OP_CREATE: {
      const int fd = open(r->name, O_RDWR | O_CREAT | (r->op == OP_CREATE ? O_TRUNC : 0), 0644);
      for (int i = 0; fd >= 0 && i < FTABLE; ++i) {
        if (ftable_handle[i] == 0) {
          ftable_handle[i] = r->handle;
          ftable_fd[i] = fd;
          break;
        }
      }
      break;
    }
    case OP_CLOSE:
      if (r->slot >= 0) {
        close(ftable_fd[r->slot]);
        ftable_handle[r->slot] = 0;
      }
      break;
    case OP_READ:
      if (r->slot >= 0) *sum += (unsigned long)pread(ftable_fd[r->slot], data, (size_t)r->size, r->offset);
      break;
    case OP_WRITE:
      if (r->slot >= 0) *sum += (unsigned long)pwrite(ftable_fd[r->slot], data, (size_t)r->size, r->offset);
      break;
    case OP_LOCK: case OP_UNLOCK:
      if (r->slot >= 0) {
        struct flock fl = {.l_type = (short)(r->op == OP_LOCK ? F_WRLCK : F_UNLCK), .l_whence = SEEK_SET,
                           .l_start = r->offset, .l_len = r->size};
        fcntl(ftable_fd[r->slot], F_SETLK, &fl);
      }
      break;
    case OP_STAT:
      if (stat(r->name, &st) == 0) *sum += 1;
      break;
    case OP_FIND: {
      DIR *d = opendir(".");
      for (struct dirent *e; d && (e = readdir(d));) *sum += e->d_name[0] == 'f';
      if (d) closedir(d);
      break;
    }
    case OP_UNLINK:
      unlink(r->name);
      break;
    case OP_RENAME:
      rename(r->name, r->name2);
      break;
    default:
      *sum += 1000;
      break;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: dbench OPERATIONS\n");
    return 2;
  }
  const long operations = atol(argv[1]);
  char dir[] = "/tmp/smtlab-dbench-XXXXXX";
  if (!mkdtemp(dir) || chdir(dir) != 0) return 1;
  unsigned long sum = 0;
  struct request r;
  for (long i = 0; i < operations; ++i) {
    USER_MARK();
    next_request(&r);
    USER_MARK();
    issue(&r, &sum);
  }
  for (int i = 0; i < FTABLE; ++i)
    if (ftable_handle[i]) close(ftable_fd[i]);
  static const char *const names[] = {"f1", "f2", "f3", "f4", "f5", "f6"};
  for (int i = 0; i < 6; ++i) unlink(names[i]);
  if (chdir("/") != 0 || rmdir(dir) != 0) return 1;
  sink = sum; /* kept (not printed: a traced program's output would land in the study's) */
  return 0;
}
