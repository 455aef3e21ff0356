/* The chat benchmark's per-message user-mode work (VolanoMark-style chat, as in "Hyper-Threading speeds Linux": a
 * server and a client process, one send and one receive thread per connection, rooms of 20 users). One role per run:
 *   chat ROLE MESSAGES     ROLE: client_send | server_recv | server_send | client_recv
 * Each of MESSAGES iterations is one instance between USER_MARK()s (user_mark.h), the system calls outside:
 *   client_send: format the next message of this user (room, user, sequence number, text) and frame it
 *                (4-byte length + body), then write() it (to /dev/null: the kernel side is a kpath: stream).
 *   server_recv: read() one framed message from the connection (a socketpair whose peer write() sits before the
 *                read, outside the instance), check the frame, parse room and sender, and hand the message to each
 *                of the room's USERS - 1 other members (deliver(): one call per member, appending to its queue).
 *   server_send: take the next message from this member's queue, frame it into the send buffer, then write() it.
 *   client_recv: read() one framed echo (peer write first, as above), check it, parse the sender and sequence
 *                number, and update the per-sender receive statistics the client keeps.
 * Deterministic: no time, no randomness, no environment; file descriptors come from the same calls in the same
 * order. The checksum goes to `sink` (user_mark.h), so nothing is optimised away. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "user_mark.h"

#define USERS 20
#define QUEUE 64
#define MSG_MAX 160

struct member {
  char queue[QUEUE][MSG_MAX];
  unsigned short len[QUEUE];
  unsigned head, tail;
  unsigned long delivered;
};

static struct member room[USERS];
static char sendbuf[MSG_MAX + 8], recvbuf[MSG_MAX + 8];
static unsigned long received_from[USERS], last_seq[USERS], checksum;
static const char *const texts[] = {
    "hello everyone, how is the benchmark going today?", "fine thanks, the server is busy but answering",
    "did you see the new kernel with the O(1) scheduler?", "yes, hyper-threading shows up as two processors now",
    "let us keep chatting so that the throughput stays high", "another message in the room for the other users"};

/* Body "room:user:seq:text"; the frame is a 4-byte little-endian length and the body. */
static int format_message(char *out, int room_id, int user, unsigned long seq) {
  int n = snprintf(out + 4, MSG_MAX, "%d:%d:%lu:%s", room_id, user, seq, texts[seq % 6]);
  if (n < 0 || n >= MSG_MAX) n = MSG_MAX - 1;
  memcpy(out, &n, 4);
  return n + 4;
}

/* Parses "room:user:seq:" of a frame; returns the text's offset or -1 on a bad frame. */
static int parse_message(const char *frame, int total, int *room_id, int *user, unsigned long *seq) {
  int n;
  memcpy(&n, frame, 4);
  if (n <= 0 || n + 4 != total) return -1;
  const char *p = frame + 4, *end = frame + 4 + n;
  char *q;
  *room_id = (int)strtol(p, &q, 10);
  if (q >= end || *q != ':') return -1;
  *user = (int)strtol(q + 1, &q, 10);
  if (q >= end || *q != ':') return -1;
  *seq = strtoul(q + 1, &q, 10);
  if (q >= end || *q != ':' || *user < 0 || *user >= USERS) return -1;
  return (int)(q + 1 - frame);
}

/* Appends a message to one member's outgoing queue (what the server's reader does for each other member). */
__attribute__((noinline)) static void deliver(struct member *m, const char *frame, int total) {
  unsigned slot = m->tail++ % QUEUE;
  memcpy(m->queue[slot], frame, (size_t)total);
  m->len[slot] = (unsigned short)total;
  if (m->tail - m->head > QUEUE) m->head = m->tail - QUEUE; /* a slow reader loses its oldest messages */
  m->delivered++;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: chat client_send|server_recv|server_send|client_recv MESSAGES\n");
    return 2;
  }
  const char *role = argv[1];
  const long messages = atol(argv[2]);
  int sv[2];
  const int null_fd = open("/dev/null", O_WRONLY);
  if (null_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  if (!strcmp(role, "client_send")) {
    for (long i = 0; i < messages; ++i) {
      USER_MARK();
      const int total = format_message(sendbuf, 3, 7, (unsigned long)i);
      USER_MARK();
      if (write(null_fd, sendbuf, (size_t)total) != total) return 1;
    }
  } else if (!strcmp(role, "server_recv") || !strcmp(role, "client_recv")) {
    const int server = role[0] == 's';
    char peer[MSG_MAX + 8];
    for (long i = 0; i < messages; ++i) {
      const int total = format_message(peer, 3, (int)(i % USERS), (unsigned long)i); /* the other end's message */
      if (write(sv[0], peer, (size_t)total) != total) return 1;
      if (read(sv[1], recvbuf, sizeof recvbuf) != total) return 1;
      USER_MARK();
      int room_id, user;
      unsigned long seq;
      const int text = parse_message(recvbuf, total, &room_id, &user, &seq);
      if (text < 0) {
        checksum++;
      } else if (server) {
        for (int u = 0; u < USERS; ++u) {
          if (u != user) deliver(&room[u], recvbuf, total);
        }
      } else {
        received_from[user]++;
        if (seq != last_seq[user] + 1) checksum += seq - last_seq[user];
        last_seq[user] = seq;
        checksum += (unsigned char)recvbuf[text];
      }
      USER_MARK();
    }
  } else if (!strcmp(role, "server_send")) {
    struct member *me = &room[0];
    for (long i = 0; i < messages; ++i) {
      if (me->head == me->tail) { /* refill the queue as the readers would (outside the instances) */
        for (int k = 0; k < QUEUE; ++k) {
          char frame[MSG_MAX + 8];
          const int total = format_message(frame, 3, 1 + k % (USERS - 1), (unsigned long)(i + k));
          deliver(me, frame, total);
        }
      }
      USER_MARK();
      const unsigned slot = me->head++ % QUEUE;
      const int total = me->len[slot];
      memcpy(sendbuf, me->queue[slot], (size_t)total);
      USER_MARK();
      if (write(null_fd, sendbuf, (size_t)total) != total) return 1;
    }
  } else {
    fprintf(stderr, "chat: unknown role '%s'\n", role);
    return 2;
  }
  for (int u = 0; u < USERS; ++u) checksum += room[u].delivered + received_from[u];
  sink = checksum; /* kept (not printed: a traced program's output would land in the study's) */
  return 0;
}
