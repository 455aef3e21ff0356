/* The client load file shared by dbench.c and tbench.c: the operation loop both benchmarks' clients run (dbench's
 * child_run over client.txt; tbench runs the same loop with a socket back end). The file below is a fixed excerpt in
 * the shape of dbench's NetBench-derived client.txt (one operation per line: name, then a path or a handle and
 * numbers), written for this program with dbench's operation mix (about 30 % reads, 22 % writes, 10 % opens, 10 %
 * closes, 12 % stats; locks, finds, unlinks, renames and creates for the rest: fileserver.py's DBENCH_MIX). The
 * per-line work is dbench's: copy the next line out (fgets), split it into words (strtok), look the operation's name
 * up (a strcmp chain), convert the numbers (strtol), and find the handle in the open-file table (linear search). */
#ifndef SMTLAB_LOADFILE_H
#define SMTLAB_LOADFILE_H
#include <stdlib.h>
#include <string.h>

static const char load_file[] =
    "OPEN f1 1\nOPEN f2 2\nREAD 1 0 4096\nWRITE 2 0 4096\nSTAT f1\nREAD 1 4096 4096\nWRITE 2 4096 4096\n"
    "LOCK 1 0 4096\nREAD 1 8192 4096\nSTAT f2\nWRITE 2 8192 4096\nUNLOCK 1 0 4096\nREAD 1 12288 4096\n"
    "CLOSE 1\nOPEN f3 3\nREAD 3 0 4096\nWRITE 2 12288 4096\nSTAT f3\nREAD 3 4096 4096\nFIND f*\n"
    "WRITE 3 0 4096\nREAD 2 0 4096\nCLOSE 2\nSTAT f1\nOPEN f4 4\nREAD 4 0 4096\nWRITE 4 0 4096\n"
    "LOCK 3 0 4096\nREAD 3 8192 4096\nUNLOCK 3 0 4096\nWRITE 4 4096 4096\nSTAT f4\nCLOSE 3\nREAD 4 4096 4096\n"
    "CREATE f5 5\nWRITE 5 0 4096\nREAD 4 8192 4096\nCLOSE 5\nSTAT f5\nRENAME f5 f6\nWRITE 4 8192 4096\n"
    "READ 4 12288 4096\nFIND f*\nUNLINK f6\nSTAT f2\nCLOSE 4\nOPEN f1 1\nREAD 1 0 4096\nWRITE 1 0 4096\nCLOSE 1\n";

enum op { OP_OPEN, OP_CLOSE, OP_READ, OP_WRITE, OP_STAT, OP_LOCK, OP_UNLOCK, OP_FIND, OP_UNLINK, OP_RENAME,
          OP_CREATE, OP_BAD };
static const char *const op_names[] = {"OPEN", "CLOSE", "READ", "WRITE", "STAT", "LOCK", "UNLOCK", "FIND",
                                       "UNLINK", "RENAME", "CREATE"};

struct request {
  enum op op;
  int handle;  /* load-file handle */
  int slot;    /* its index in the open-file table, -1 if not open */
  long offset, size;
  char name[32], name2[32];
};

#define FTABLE 16
static int ftable_handle[FTABLE];  /* load-file handle of each open file, 0 when the slot is free */
__attribute__((unused)) static int ftable_fd[FTABLE];
static unsigned load_pos;

static int find_handle(int handle) {
  for (int i = 0; i < FTABLE; ++i)
    if (ftable_handle[i] == handle) return i;
  return -1;
}

/* The next line of the load file, parsed into a request (wrapping round at the end of the file). */
static void next_request(struct request *r) {
  char line[128], *words[8], *save = 0;
  unsigned n = 0;
  while (load_file[load_pos + n] != '\n' && n < sizeof line - 1) {
    line[n] = load_file[load_pos + n];
    ++n;
  }
  line[n] = 0;
  load_pos += n + 1;
  if (load_file[load_pos] == 0) load_pos = 0;
  int count = 0;
  for (char *w = strtok_r(line, " ", &save); w && count < 8; w = strtok_r(0, " ", &save)) words[count++] = w;
  r->op = OP_BAD;
  for (int i = 0; count > 0 && i < OP_BAD; ++i) {
    if (strcmp(words[0], op_names[i]) == 0) {
      r->op = (enum op)i;
      break;
    }
  }
  r->handle = 0;
  r->offset = r->size = 0;
  r->name[0] = r->name2[0] = 0;
  switch (r->op) {
    case OP_OPEN: case OP_CREATE:
      if (count < 3) { r->op = OP_BAD; break; }
      strncpy(r->name, words[1], sizeof r->name - 1);
      r->handle = (int)strtol(words[2], 0, 10);
      break;
    case OP_STAT: case OP_FIND: case OP_UNLINK:
      if (count < 2) { r->op = OP_BAD; break; }
      strncpy(r->name, words[1], sizeof r->name - 1);
      break;
    case OP_RENAME:
      if (count < 3) { r->op = OP_BAD; break; }
      strncpy(r->name, words[1], sizeof r->name - 1);
      strncpy(r->name2, words[2], sizeof r->name2 - 1);
      break;
    case OP_CLOSE: case OP_READ: case OP_WRITE: case OP_LOCK: case OP_UNLOCK:
      if (count < 2) { r->op = OP_BAD; break; }
      r->handle = (int)strtol(words[1], 0, 10);
      if (count >= 4) {
        r->offset = strtol(words[2], 0, 10);
        r->size = strtol(words[3], 0, 10);
      }
      break;
    default:
      break;
  }
  r->slot = r->handle ? find_handle(r->handle) : -1;
}
#endif
