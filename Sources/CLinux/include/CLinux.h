// Tiny Linux shim: `struct epoll_event` is packed on x86_64, which Swift cannot import
// faithfully, so the event loop reads ready events through these flat arrays instead.
#ifndef LATCHKEY_CLINUX_H
#define LATCHKEY_CLINUX_H

#include <stdint.h>

// epoll_create1(EPOLL_CLOEXEC) and a non-blocking, close-on-exec eventfd for wake-ups.
int lk_epoll_create(void);
int lk_eventfd(void);

// pipe2(O_CLOEXEC): declared only under _GNU_SOURCE.
int lk_pipe_cloexec(int ends[2]);

// pthread_setname_np on the calling thread (at most 15 bytes): declared only under _GNU_SOURCE.
int lk_name_this_thread(const char *name);

// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: glibc declares accept4 only under _GNU_SOURCE.
struct sockaddr;
int lk_accept(int fd, struct sockaddr *address, unsigned int *length);

// Register, change or remove interest in `fd`. `events` is a mask of the LK_EPOLL_* bits;
// `token` comes back with every event, so a stale event for a closed and reused fd is known.
int lk_epoll_add(int epfd, int fd, uint32_t events, uint64_t token);
int lk_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token);
int lk_epoll_remove(int epfd, int fd);

// Waits like epoll_wait and copies each ready event's token and mask into the arrays.
int lk_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms);

extern const uint32_t LK_EPOLL_IN;
extern const uint32_t LK_EPOLL_OUT;
extern const uint32_t LK_EPOLL_ERR;
extern const uint32_t LK_EPOLL_HUP;
extern const uint32_t LK_EPOLL_RDHUP;

#endif
