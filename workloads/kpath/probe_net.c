/* The network phase of the kpath probe (probe.c runs it): TCP on the guest's loopback device. One connection, made
 * before the first instance, serves every path: a send runs the receiver's side in the same call (the loopback
 * device hands the segment to tcp_v4_rcv in the sender's softirq), so the bytes a recv takes are normally already
 * queued. Not always: when softirqs have run too long (on a loaded host a TCG guest's clock runs on while its vCPU
 * waits), the kernel leaves the rest to ksoftirqd, and the segment reaches the socket later. A recv would then block
 * (an instance with a sleep in it) or, without MSG_WAITALL, return part of the bytes and fail the probe (a suspected
 * cause of a recording that failed on a loaded CI host). So before each recorded recv the probe
 * waits, unrecorded, until the bytes are there (wait_queued). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe.h"

enum { SMALL = 16, REPLY = 4096, SELECT_FDS = 10, CHAT_MSG = 100 };

static void send_all(int fd, const char *buf, size_t len, const char *what) {
  if (send(fd, buf, len, 0) != (ssize_t)len) die(what);
}

/* Unrecorded: waits until `len` bytes are in the socket's receive queue (SIOCINQ), yielding the CPU so that
 * ksoftirqd can deliver them; dies, naming `what`, if they have not come within about five seconds. */
static void wait_queued(int fd, size_t len, const char *what) {
  for (int tries = 0; tries < 50000; ++tries) {
    int queued = 0;
    if (ioctl(fd, SIOCINQ, &queued) != 0) die("ioctl SIOCINQ");
    if ((size_t)queued >= len) return;
    if (tries < 100) {
      sched_yield();
    } else {
      usleep(100);
    }
  }
  errno = 0;
  die(what);
}

static void recv_all(int fd, char *buf, size_t len, const char *what) {
  if (recv(fd, buf, len, MSG_WAITALL) != (ssize_t)len) die(what);
}

/* LMbench 2's "Select on 10 tcp fd's" (lat_select.c, `lat_select tcp 10`): one TCP connection to a loopback server,
 * dup()ed 10 times; each call passes a copy of the set of the 10 duplicates as the *write* set (no read or except
 * set), nfds one past the highest, and a zero timeout. A connected socket with room in its send buffer is writable,
 * so every descriptor is ready and the call polls each once (sock_poll -> tcp_poll) and returns 10. lat_select's
 * server process only accepts; here the probe accepts itself (nothing is sent on this connection meanwhile). */
static void select_tcp_path(int n, int client) {
  int dups[SELECT_FDS], maxfd = -1;
  fd_set set, nosave;
  FD_ZERO(&set);
  for (int k = 0; k < SELECT_FDS; ++k) {
    if ((dups[k] = dup(client)) < 0) die("dup socket");
    if (dups[k] > maxfd) maxfd = dups[k];
    FD_SET(dups[k], &set);
  }
  for (int i = 0; i < n; ++i) {
    struct timeval tv = {0, 0};
    nosave = set;
    BEGIN(KP_select_tcp);
    int ready = select(maxfd + 1, NULL, &nosave, NULL, &tv);
    END(KP_select_tcp);
    if (ready != SELECT_FDS) die("select on tcp sockets");
  }
  for (int k = 0; k < SELECT_FDS; ++k) close(dups[k]);
}

/* chat's batched calls (python/smtlab/workloads/chat.py, _batch_call): a chat task that wakes moves every queued
 * 100-byte message with one call. The server's echo write of B queued messages is one send() of B x 100 bytes
 * (recorded; the peer's drain is not); a recv() takes everything queued: B messages the peer sent as B separate
 * send()s (TCP_NODELAY: B segments, unrecorded) before the reader reads, and must return all B x 100 bytes. The
 * echoes go from the server's end to the client's, the messages from the client's end to the server's, as in chat.
 * One function per batch size B, since a marker's path id is an immediate (probe.h); CHAT_BATCHES lists the sizes
 * that kpath_paths.h names (tcp_send_bB, tcp_recv_bB): a size missing there does not compile. */
#define CHAT_BATCH_PATHS(B)                                                                                \
  static void chat_batch_##B(int n, int client, int conn) {                                                \
    static char buf[(B) * CHAT_MSG];                                                                       \
    memset(buf, 'm', sizeof buf);                                                                          \
    for (int i = 0; i < n; ++i) {                                                                          \
      BEGIN(KP_tcp_send_b##B);                                                                             \
      send_all(conn, buf, sizeof buf, "chat echo send");                                                   \
      END(KP_tcp_send_b##B);                                                                               \
      recv_all(client, buf, sizeof buf, "chat echo drain");                                                \
    }                                                                                                      \
    for (int i = 0; i < n; ++i) {                                                                          \
      for (int k = 0; k < (B); ++k) send_all(client, buf + k * CHAT_MSG, CHAT_MSG, "chat message send");   \
      wait_queued(conn, sizeof buf, "a chat batch never reached the server's socket");                     \
      BEGIN(KP_tcp_recv_b##B);                                                                             \
      const ssize_t got = recv(conn, buf, sizeof buf, 0);                                                  \
      END(KP_tcp_recv_b##B);                                                                               \
      if (got != (ssize_t)sizeof buf) die("chat batch recv did not return every queued message");          \
    }                                                                                                      \
  }
#define CHAT_BATCHES(X) \
  X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20)
CHAT_BATCHES(CHAT_BATCH_PATHS)
#define CHAT_BATCH_CALL(B) chat_batch_##B(n, client, conn);

void tcp_paths(int n) {
  int server = socket(AF_INET, SOCK_STREAM, 0), client = socket(AF_INET, SOCK_STREAM, 0);
  if (server < 0 || client < 0) die("socket");
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(5001);
  int one = 1;
  setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(server, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(server, 1) != 0) die("bind/listen");
  if (connect(client, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect (is lo up?)");
  int conn = accept(server, NULL, NULL);
  if (conn < 0) die("accept");
  setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  static char small[SMALL] = "0123456789abcdef", reply[REPLY];
  memset(reply, 'r', sizeof reply);
  /* A request: 16 bytes from the client, read by the server's side. */
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_tcp_send);
    send_all(client, small, sizeof small, "send");
    END(KP_tcp_send);
    wait_queued(conn, sizeof small, "the 16-byte request never reached the server's socket");
    BEGIN(KP_tcp_recv);
    recv_all(conn, small, sizeof small, "recv");
    END(KP_tcp_recv);
  }
  /* A reply as tbench's server sends it: 4 KiB from the server's side, then the client's recv of the 4 KiB that are
   * there (one segment: loopback's MTU is 64 KiB). */
  for (int i = 0; i < n; ++i) {
    BEGIN(KP_tcp_send_4k);
    send_all(conn, reply, sizeof reply, "send 4 KiB");
    END(KP_tcp_send_4k);
    wait_queued(client, sizeof reply, "the 4 KiB reply never reached the client's socket");
    BEGIN(KP_tcp_recv_4k);
    recv_all(client, reply, sizeof reply, "recv 4 KiB");
    END(KP_tcp_recv_4k);
  }
  CHAT_BATCHES(CHAT_BATCH_CALL)
  select_tcp_path(n, client);
  close(conn);
  close(client);
  close(server);
}
