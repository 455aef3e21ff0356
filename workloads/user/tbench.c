/* tbench's request handling in user mode, one role per run: `tbench client|server REQUESTS`.
 * tbench runs dbench's client loop (loadfile.h) with a socket back end: the client turns each load-file line into a
 * request to its server (tbench_srv) and waits for the reply; the server reads a request, decodes it and replies
 * (for a read, the data). Each of REQUESTS iterations is one instance between USER_MARK()s (user_mark.h), the
 * system calls outside:
 *   client: check the previous reply (header, status, length), parse the next load-file line and build the request
 *           (a fixed header, the operation's fields, the path for name operations), then write() it (to /dev/null:
 *           the network side is the model's kpath: stream) and read() the reply (a socketpair whose peer write()
 *           comes first, outside the instance).
 *   server: after read() of one request (peer write first): check and decode the header, dispatch on the operation,
 *           keep the server's open-handle table, build the reply header, then write() header and data (a 4 KiB
 *           read reply is written from a static buffer: tbench_srv does not copy it in user mode).
 * Deterministic: no time, no randomness. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "loadfile.h"
#include "user_mark.h"

#define MAGIC 0x534d4221u

struct wire_request {
  uint32_t magic, length, op, handle;
  int64_t offset, size;
  char name[32], name2[32];
};
struct wire_reply {
  uint32_t magic, status, op, handle;
  int64_t size;
};

static char data[4096];
static int server_handles[FTABLE];

static void build_request(struct wire_request *w, const struct request *r) {
  memset(w, 0, sizeof *w);
  w->magic = MAGIC;
  w->op = (uint32_t)r->op;
  w->handle = (uint32_t)r->handle;
  w->offset = r->offset;
  w->size = r->op == OP_READ || r->op == OP_WRITE ? r->size : 0;
  if (r->name[0]) memcpy(w->name, r->name, sizeof w->name);
  if (r->name2[0]) memcpy(w->name2, r->name2, sizeof w->name2);
  w->length = (uint32_t)sizeof *w;
}

/* The server's decode and dispatch; returns the reply's data length. */
static int64_t serve(const struct wire_request *w, struct wire_reply *out) {
  out->magic = MAGIC;
  out->op = w->op;
  out->handle = w->handle;
  out->status = 0;
  out->size = 0;
  if (w->magic != MAGIC || w->length != sizeof *w) {
    out->status = 1;
    return 0;
  }
  switch ((enum op)w->op) {
    case OP_OPEN: case OP_CREATE:
      for (int i = 0; i < FTABLE; ++i) {
        if (server_handles[i] == 0) {
          server_handles[i] = (int)w->handle;
          break;
        }
      }
      break;
    case OP_CLOSE:
      for (int i = 0; i < FTABLE; ++i)
        if (server_handles[i] == (int)w->handle) server_handles[i] = 0;
      break;
    case OP_READ:
      out->size = w->size > (int64_t)sizeof data ? (int64_t)sizeof data : w->size;
      break;
    case OP_WRITE: case OP_LOCK: case OP_UNLOCK:
      for (int i = 0; i < FTABLE; ++i)
        if (server_handles[i] == (int)w->handle) return 0;
      out->status = 2; /* unknown handle */
      break;
    case OP_STAT: case OP_FIND: case OP_UNLINK: case OP_RENAME:
      out->status = strnlen(w->name, sizeof w->name) == 0;
      break;
    default:
      out->status = 3;
      break;
  }
  return out->size;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: tbench client|server REQUESTS\n");
    return 2;
  }
  const int client = strcmp(argv[1], "client") == 0;
  if (!client && strcmp(argv[1], "server") != 0) {
    fprintf(stderr, "tbench: unknown role '%s'\n", argv[1]);
    return 2;
  }
  const long requests = atol(argv[2]);
  int sv[2];
  const int null_fd = open("/dev/null", O_WRONLY);
  if (null_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  unsigned long sum = 0;
  struct request r;
  struct wire_request req;
  struct wire_reply rep = {MAGIC, 0, 0, 0, 0};
  for (long i = 0; i < requests; ++i) {
    if (client) {
      USER_MARK();
      if (rep.magic != MAGIC || rep.status != 0) sum++;
      sum += (unsigned long)rep.size;
      next_request(&r);
      build_request(&req, &r);
      USER_MARK();
      if (write(null_fd, &req, sizeof req) != (ssize_t)sizeof req) return 1;
      struct wire_reply peer = {MAGIC, 0, req.op, req.handle, req.op == OP_READ ? req.size : 0};
      if (write(sv[0], &peer, sizeof peer) != (ssize_t)sizeof peer) return 1;  /* the server's side */
      if (read(sv[1], &rep, sizeof rep) != (ssize_t)sizeof rep) return 1;
    } else {
      next_request(&r);  /* the client's side, outside the instance */
      build_request(&req, &r);
      if (write(sv[0], &req, sizeof req) != (ssize_t)sizeof req) return 1;
      struct wire_request in;
      if (read(sv[1], &in, sizeof in) != (ssize_t)sizeof in) return 1;
      USER_MARK();
      const int64_t size = serve(&in, &rep);
      USER_MARK();
      struct iovec iov[2] = {{&rep, sizeof rep}, {data, (size_t)size}};
      if (writev(null_fd, iov, 2) < 0) return 1;
    }
  }
  sink = sum; /* kept (not printed: a traced program's output would land in the study's) */
  return 0;
}
