// Package.swift defines _GNU_SOURCE for this target; a build without it still gets the GNU declarations.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CLinux.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>

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

int rr_send_iov_flags(void) { return MSG_NOSIGNAL | MSG_DONTWAIT; }

long rr_send_iov(int fd, const void *iov, int count) {
    struct msghdr message = { 0 };
    message.msg_iov = (struct iovec *)iov;
    message.msg_iovlen = (size_t)(count < 0 ? 0 : count);
    return (long)sendmsg(fd, &message, rr_send_iov_flags());
}

int rr_thread_set_name(const char *name) {
    char short_name[16];
    size_t i = 0;
    for (; name[i] != 0 && i < 15; i++) short_name[i] = name[i];
    short_name[i] = 0;
    return pthread_setname_np(pthread_self(), short_name);
}

int rr_thread_join(unsigned long thread, long timeout_ms) {
    struct timespec deadline;
    if (clock_gettime(CLOCK_REALTIME, &deadline) != 0) return errno;
    if (timeout_ms < 0) timeout_ms = 0;
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    return pthread_timedjoin_np((pthread_t)thread, NULL, &deadline);
}

int rr_affinity_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    return CPU_COUNT(&set);
}
