#include "CLinux.h"
#include <sys/eventfd.h>
#include <sys/socket.h>

int rr_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int rr_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev = { .events = events, .data.u64 = data };
    return epoll_ctl(epfd, op, fd, &ev);
}

int rr_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { events[i] = evs[i].events; data[i] = evs[i].data.u64; }
    return n;
}

int rr_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int rr_eventfd_signal(int fd) { return eventfd_write(fd, 1); }

int rr_eventfd_drain(int fd) { eventfd_t v; return eventfd_read(fd, &v); }

int rr_accept4(int fd, void *addr, uint32_t *addrlen) {
    return accept4(fd, (struct sockaddr *)addr, (socklen_t *)addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
