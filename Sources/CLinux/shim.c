// Linux only: on other platforms the module is empty and Platform/Runtime take their #else branches.
#ifdef __linux__
#define _GNU_SOURCE
#include "CLinux.h"
#include <sys/epoll.h>
#include <fcntl.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <pthread.h>

const uint32_t LK_EPOLL_IN = EPOLLIN;
const uint32_t LK_EPOLL_OUT = EPOLLOUT;
const uint32_t LK_EPOLL_ERR = EPOLLERR;
const uint32_t LK_EPOLL_HUP = EPOLLHUP;
const uint32_t LK_EPOLL_RDHUP = EPOLLRDHUP;

int lk_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
int lk_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int lk_pipe_cloexec(int ends[2]) { return pipe2(ends, O_CLOEXEC); }

int lk_name_this_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }

int lk_accept(int fd, struct sockaddr *address, unsigned int *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

static int lk_epoll_control(int epfd, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, operation, fd, &event);
}

int lk_epoll_add(int epfd, int fd, uint32_t events, uint64_t token) { return lk_epoll_control(epfd, EPOLL_CTL_ADD, fd, events, token); }
int lk_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token) { return lk_epoll_control(epfd, EPOLL_CTL_MOD, fd, events, token); }
int lk_epoll_remove(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }

int lk_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    for (int index = 0; index < count; index++) {
        tokens[index] = ready[index].data.u64;
        events[index] = ready[index].events;
    }
    return count;
}

#endif
