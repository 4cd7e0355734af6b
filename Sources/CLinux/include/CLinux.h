#ifndef RADIO_RELAY_CLINUX_H
#define RADIO_RELAY_CLINUX_H
/* Linux calls that Glibc's Swift module does not export, behind prefixed wrappers.
   Built as a real C target with _GNU_SOURCE so that no system-library shim has to define it. */
#include <stdint.h>
#include <sys/epoll.h>

int rr_epoll_create(void);
int rr_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/* Waits for events; fills parallel arrays of event masks and data words. Returns the count or -1 (errno set). */
int rr_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms);
/* A nonblocking, close-on-exec eventfd; signal adds 1; drain reads it back to zero (-1 with EAGAIN if zero). */
int rr_eventfd(void);
int rr_eventfd_signal(int fd);
int rr_eventfd_drain(int fd);
/// CPUs in the calling thread's affinity mask (-1: sched_getaffinity failed).
int rr_affinity_cpu_count(void);
/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC. */
int rr_accept4(int fd, void *addr, uint32_t *addrlen);
/* sendmsg of `count` iovecs (struct iovec *) with MSG_NOSIGNAL | MSG_DONTWAIT: a peer that is gone gives EPIPE,
   never SIGPIPE, whatever the process's SIGPIPE disposition. Returns the bytes sent or -1 (errno set). */
long rr_send_iov(int fd, const void *iov, int count);
/* The flags rr_send_iov passes to sendmsg (for tests). */
int rr_send_iov_flags(void);
/* The calling thread's name (at most 15 bytes are kept); 0 or an errno value. */
int rr_thread_set_name(const char *name);
/* pthread_timedjoin_np on a pthread_t passed as an integer, with a relative timeout in milliseconds; 0 or an
   errno value (ETIMEDOUT when the thread still runs). */
int rr_thread_join(unsigned long thread, long timeout_ms);
#endif
