/*
 * fanwrite: does io_uring make per-listener sends cheaper than epoll + sendmsg?
 *
 * One writer process (single-threaded) and one reader process (forked), on 127.0.0.1 only. The reader opens N TCP
 * connections to the writer's listening socket and drains them with epoll, counting bytes. The writer publishes a
 * page of PAGE bytes every PAGE_MS into a ring and writes each listener every FLUSH_MS (phases spread evenly over the
 * interval) with everything that listener has not been sent yet, one write per listener per interval, like the
 * relay's station network loop. Modes:
 *
 *   sendmsg   epoll_wait until the next listener is due, then one sendmsg(MSG_NOSIGNAL|MSG_DONTWAIT) per due
 *             listener with an iovec of its pages
 *   uring     the same schedule, but every due listener's write is an SQE (IORING_OP_SENDMSG, or IORING_OP_SEND for a
 *             single contiguous buffer) and all of a wake-up's SQEs go in with one io_uring_enter (submit and reap);
 *             ring of --entries (4096) entries, SINGLE_ISSUER|DEFER_TASKRUN when the kernel takes them
 *   uringfix  uring with the sockets registered as fixed files (IOSQE_FIXED_FILE): no fd lookup per send
 *   zerocopy  sendmsg with MSG_ZEROCOPY on SO_ZEROCOPY sockets; before each send one recvmsg(MSG_ERRQUEUE) reaps the
 *             listener's pending completion notifications
 *
 * --reader-nap-ms MS makes the reader drain in rounds MS apart instead of sleeping in epoll_wait, so that the
 * writer's sends almost never wake it (remote listeners cost the relay no wake-ups); with 0, every burst of sends
 * wakes the reader, which on a shared core then preempts the writer between two sendmsg calls (the writer's ivcsw).
 *
 * The connect ramp is held out: after all N are connected the writer runs its schedule for --settle s, then measures
 * its own CPU (getrusage RUSAGE_SELF: every thread, io_uring workers included) over --hold s; the reader measures its
 * own over the same window. At the end the writer closes every socket, the reader drains to EOF and reports its
 * byte count, and the writer checks it against the bytes it wrote. One line of key=value goes to stdout.
 *
 *   cc -O2 -o fanwrite fanwrite.c -luring
 *   ./fanwrite --mode uring -n 10000 --flush-ms 300 --page 1600 --page-ms 100 --hold 20
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

enum { M_SENDMSG, M_URING, M_URINGFIX, M_ZEROCOPY };
static const char *mode_names[] = {"sendmsg", "uring", "uringfix", "zerocopy"};

#define RING_PAGES 256u /* pages kept; a listener further behind than this skips ahead (counted) */
#define MAX_IOV 64      /* pages per write at most; the rest goes at the next due time */

static void die(const char *what) {
    fprintf(stderr, "fanwrite: %s: %s\n", what, strerror(errno));
    exit(2);
}
static void fail(const char *what) {
    fprintf(stderr, "fanwrite: %s\n", what);
    exit(2);
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static uint64_t tv_us(struct timeval tv) { return (uint64_t)tv.tv_sec * 1000000ull + (uint64_t)tv.tv_usec; }

static void raise_nofile(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ------------------------------------------------------------------------------------------------ reader */

struct reader_result {
    uint64_t bytes;
    uint64_t eofs;
    uint64_t user_us, sys_us; /* CPU over the hold window (between 'S' and 'E' on the control pipe) */
    uint64_t connect_failures;
};

static void reader(int port, int n, int ctl, int res, int nap_ms) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    raise_nofile();
    struct reader_result r = {0};
    int ep = epoll_create1(0);
    if (ep < 0) die("reader epoll_create1");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int open = 0;
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("reader socket");
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            r.connect_failures++;
            close(fd);
            continue;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = fd};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) die("reader epoll_ctl");
        open++;
    }
    struct epoll_event cev = {.events = EPOLLIN, .data.fd = ctl};
    epoll_ctl(ep, EPOLL_CTL_ADD, ctl, &cev);
    static char buf[65536];
    struct epoll_event evs[256];
    struct rusage ru0 = {0}, ru1;
    int ctl_open = 1;
    while (open > 0) {
        /* --reader-nap-ms: drain in rounds with a nap between them, so that the writer's sends rarely find the
         * reader asleep in epoll_wait and wake (and, on a shared core, get preempted by) it: closer to remote
         * listeners, whose receive side costs the relay nothing. */
        if (nap_ms > 0) {
            struct timespec nap = {.tv_sec = nap_ms / 1000, .tv_nsec = (long)(nap_ms % 1000) * 1000000L};
            nanosleep(&nap, NULL);
        }
        int k = epoll_wait(ep, evs, 256, nap_ms > 0 ? 0 : 1000);
        if (k < 0) {
            if (errno == EINTR) continue;
            die("reader epoll_wait");
        }
        for (int i = 0; i < k; i++) {
            int fd = evs[i].data.fd;
            if (fd == ctl) {
                char c;
                ssize_t g = read(ctl, &c, 1);
                if (g <= 0) { /* the writer is gone: stop */
                    epoll_ctl(ep, EPOLL_CTL_DEL, ctl, NULL);
                    ctl_open = 0;
                    if (g == 0) _exit(3);
                } else if (c == 'S') {
                    getrusage(RUSAGE_SELF, &ru0);
                } else if (c == 'E') {
                    getrusage(RUSAGE_SELF, &ru1);
                    r.user_us = tv_us(ru1.ru_utime) - tv_us(ru0.ru_utime);
                    r.sys_us = tv_us(ru1.ru_stime) - tv_us(ru0.ru_stime);
                }
                continue;
            }
            ssize_t g = read(fd, buf, sizeof buf);
            if (g > 0) {
                r.bytes += (uint64_t)g;
            } else if (g == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(fd); /* also removes it from the epoll set */
                r.eofs++;
                open--;
            }
        }
    }
    (void)ctl_open;
    if (write(res, &r, sizeof r) != (ssize_t)sizeof r) _exit(4);
    _exit(0);
}

/* ------------------------------------------------------------------------------------------------ writer */

struct listener {
    int fd;
    uint32_t off;     /* bytes of page `seq` already sent */
    uint64_t seq;     /* next page (absolute sequence number) to send */
    uint8_t inflight; /* uring: an SQE is out for it */
    struct msghdr mh; /* uring: stays valid until the completion */
    struct iovec iov[MAX_IOV];
};

static struct {
    int mode, n, flush_ms, page, page_ms, entries, reader_nap_ms;
    double hold_s, settle_s;
} opt = {M_SENDMSG, 2000, 300, 1600, 100, 4096, 0, 20.0, 3.0};

static unsigned char *ring_buf;
static uint64_t head; /* pages published so far: page s is valid for head - RING_PAGES <= s < head */
static struct listener *L;

static struct {
    uint64_t writes, bytes, partial, eagain, errors, skipped_inflight, overruns, iov_capped, enobufs;
    uint64_t zc_notifications, zc_copied, zc_recvmsg;
    uint64_t wakeups, submits;
    uint64_t max_late_ns;
} st;

static unsigned char *page_at(uint64_t s) { return ring_buf + (size_t)(s % RING_PAGES) * (size_t)opt.page; }

static void publish(void) {
    memset(page_at(head), (int)(head & 0xff), (size_t)opt.page);
    head++;
}

/* Fills l->iov with the unsent pages; returns the iovec count (0: nothing new). */
static int build_iov(struct listener *l) {
    if (head - l->seq > RING_PAGES - 4) { /* too far behind: skip ahead (never expected here) */
        st.overruns++;
        l->seq = head - 1;
        l->off = 0;
    }
    int k = 0;
    for (uint64_t s = l->seq; s < head && k < MAX_IOV; s++, k++) {
        uint32_t o = s == l->seq ? l->off : 0;
        l->iov[k].iov_base = page_at(s) + o;
        l->iov[k].iov_len = (size_t)opt.page - o;
    }
    if (l->seq + (uint64_t)k < head) st.iov_capped++;
    return k;
}

static void advance(struct listener *l, size_t n) {
    st.bytes += n;
    while (n > 0) {
        size_t rem = (size_t)opt.page - l->off;
        if (n >= rem) {
            n -= rem;
            l->seq++;
            l->off = 0;
        } else {
            l->off += (uint32_t)n;
            n = 0;
        }
    }
}

static void account(struct listener *l, ssize_t r, size_t want) {
    st.writes++;
    if (r >= 0) {
        if ((size_t)r < want) st.partial++;
        advance(l, (size_t)r);
    } else if (r == -EAGAIN || r == -EWOULDBLOCK) {
        st.eagain++;
    } else if (r == -ENOBUFS) {
        st.enobufs++;
    } else {
        st.errors++;
    }
}

static size_t iov_total(const struct iovec *iov, int k) {
    size_t t = 0;
    for (int i = 0; i < k; i++) t += iov[i].iov_len;
    return t;
}

static void zc_reap(struct listener *l) {
    char control[128];
    struct msghdr m = {.msg_control = control, .msg_controllen = sizeof control};
    st.zc_recvmsg++;
    if (recvmsg(l->fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
              (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)))
            continue;
        struct sock_extended_err *e = (struct sock_extended_err *)CMSG_DATA(c);
        if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY) continue;
        uint64_t count = (uint64_t)(e->ee_data - e->ee_info) + 1;
        st.zc_notifications += count;
        if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) st.zc_copied += count;
    }
}

static void send_direct(struct listener *l) {
    if (opt.mode == M_ZEROCOPY) zc_reap(l);
    int k = build_iov(l);
    if (k == 0) return;
    struct msghdr mh = {.msg_iov = l->iov, .msg_iovlen = (size_t)k};
    int flags = MSG_NOSIGNAL | MSG_DONTWAIT | (opt.mode == M_ZEROCOPY ? MSG_ZEROCOPY : 0);
    ssize_t r = sendmsg(l->fd, &mh, flags);
    account(l, r < 0 ? -errno : r, iov_total(l->iov, k));
}

static struct io_uring uring;
static uint64_t inflight;

static void reap(void) {
    struct io_uring_cqe *cqe;
    unsigned head_idx, seen = 0;
    io_uring_for_each_cqe(&uring, head_idx, cqe) {
        struct listener *l = &L[cqe->user_data];
        size_t want = l->mh.msg_iovlen ? iov_total(l->iov, (int)l->mh.msg_iovlen) : 0;
        l->inflight = 0;
        inflight--;
        account(l, cqe->res, want);
        seen++;
    }
    io_uring_cq_advance(&uring, seen);
}

static void submit_and_reap(void) {
    int r = io_uring_submit_and_get_events(&uring);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
        errno = -r;
        die("io_uring_submit_and_get_events");
    }
    st.submits++;
    reap();
}

static void queue_send(uint32_t idx) {
    struct listener *l = &L[idx];
    if (l->inflight) {
        st.skipped_inflight++;
        return;
    }
    int k = build_iov(l);
    if (k == 0) return;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&uring);
    if (!sqe) { /* the SQ is full: push this batch out first */
        submit_and_reap();
        sqe = io_uring_get_sqe(&uring);
        if (!sqe) fail("no SQE after a submit");
    }
    int fd = opt.mode == M_URINGFIX ? (int)idx : l->fd;
    l->mh.msg_iov = l->iov;
    l->mh.msg_iovlen = (size_t)k;
    if (k == 1)
        io_uring_prep_send(sqe, fd, l->iov[0].iov_base, l->iov[0].iov_len, MSG_NOSIGNAL);
    else
        io_uring_prep_sendmsg(sqe, fd, &l->mh, MSG_NOSIGNAL);
    if (opt.mode == M_URINGFIX) sqe->flags |= IOSQE_FIXED_FILE;
    sqe->user_data = idx;
    l->inflight = 1;
    inflight++;
}

static int parse_mode(const char *s) {
    for (int i = 0; i < 4; i++)
        if (strcmp(s, mode_names[i]) == 0) return i;
    fail("--mode must be sendmsg, uring, uringfix or zerocopy");
    return -1;
}

static void usage(void) {
    fprintf(stderr, "usage: fanwrite [--mode sendmsg|uring|uringfix|zerocopy] [-n N] [--flush-ms MS] [--page BYTES]\n"
                    "                [--page-ms MS] [--hold S] [--settle S] [--entries E] [--reader-nap-ms MS]\n");
    exit(2);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--mode")) opt.mode = parse_mode(v);
        else if (!strcmp(a, "-n")) opt.n = atoi(v);
        else if (!strcmp(a, "--flush-ms")) opt.flush_ms = atoi(v);
        else if (!strcmp(a, "--page")) opt.page = atoi(v);
        else if (!strcmp(a, "--page-ms")) opt.page_ms = atoi(v);
        else if (!strcmp(a, "--hold")) opt.hold_s = atof(v);
        else if (!strcmp(a, "--settle")) opt.settle_s = atof(v);
        else if (!strcmp(a, "--entries")) opt.entries = atoi(v);
        else if (!strcmp(a, "--reader-nap-ms")) opt.reader_nap_ms = atoi(v);
        else usage();
    }
    if (opt.n < 1 || opt.flush_ms < 1 || opt.page < 1 || opt.page_ms < 1 || opt.hold_s <= 0 || opt.settle_s < 0)
        usage();
    /* A hard bound on the whole run, whatever happens: the ramp, settle, hold and teardown. */
    alarm((unsigned)(opt.settle_s + opt.hold_s) + 120);
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) die("socket");
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind 127.0.0.1");
    if (listen(lfd, 4096) < 0) die("listen");
    socklen_t sl = sizeof sa;
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    int port = ntohs(sa.sin_port);

    int ctl[2], res[2];
    if (pipe(ctl) < 0 || pipe(res) < 0) die("pipe");
    pid_t rpid = fork();
    if (rpid < 0) die("fork");
    if (rpid == 0) {
        close(lfd);
        close(ctl[1]);
        close(res[0]);
        reader(port, opt.n, ctl[0], res[1], opt.reader_nap_ms);
    }
    close(ctl[0]);
    close(res[1]);

    L = calloc((size_t)opt.n, sizeof *L);
    ring_buf = malloc((size_t)RING_PAGES * (size_t)opt.page);
    if (!L || !ring_buf) fail("out of memory");
    uint64_t t_ramp = now_ns();
    for (int i = 0; i < opt.n; i++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) { i--; continue; }
            die("accept4");
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (opt.mode == M_ZEROCOPY && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) < 0)
            die("SO_ZEROCOPY");
        L[i].fd = fd;
    }
    double ramp_s = (double)(now_ns() - t_ramp) / 1e9;
    close(lfd);

    const char *uring_setup = "-";
    if (opt.mode == M_URING || opt.mode == M_URINGFIX) {
        struct io_uring_params p;
        memset(&p, 0, sizeof p);
        p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
        int r = io_uring_queue_init_params((unsigned)opt.entries, &uring, &p);
        uring_setup = "single_issuer+defer_taskrun";
        if (r < 0) {
            memset(&p, 0, sizeof p);
            r = io_uring_queue_init_params((unsigned)opt.entries, &uring, &p);
            uring_setup = "plain";
        }
        if (r < 0) {
            errno = -r;
            die("io_uring_queue_init");
        }
        if (opt.mode == M_URINGFIX) {
            int *fds = malloc(sizeof(int) * (size_t)opt.n);
            for (int i = 0; i < opt.n; i++) fds[i] = L[i].fd;
            r = io_uring_register_files(&uring, fds, (unsigned)opt.n);
            if (r < 0) {
                errno = -r;
                die("io_uring_register_files");
            }
            free(fds);
        }
    }

    int ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct epoll_event evs[8];

    /* The schedule: write event j goes to listener j % n at base + j * flush / n; page p is published at
     * base + p * page_ms. Every listener starts from the page published at the start. */
    const uint64_t flush_ns = (uint64_t)opt.flush_ms * 1000000ull, page_ns = (uint64_t)opt.page_ms * 1000000ull;
    const uint64_t base = now_ns();
    const uint64_t hold_start = base + (uint64_t)(opt.settle_s * 1e9);
    const uint64_t hold_end = hold_start + (uint64_t)(opt.hold_s * 1e9);
    publish();
    for (int i = 0; i < opt.n; i++) L[i].seq = head - 1;
    uint64_t next_page = base + page_ns, j = 0;
    struct rusage ru0, ru1;
    uint64_t t_hold0 = 0, t_hold1 = 0, hold_bytes0 = 0, hold_writes0 = 0;
    int in_hold = 0;
    for (;;) {
        uint64_t now = now_ns();
        if (!in_hold && now >= hold_start) {
            in_hold = 1;
            if (write(ctl[1], "S", 1) != 1) die("control pipe");
            getrusage(RUSAGE_SELF, &ru0);
            t_hold0 = now_ns();
            hold_bytes0 = st.bytes;
            hold_writes0 = st.writes;
        }
        if (now >= hold_end) break;
        st.wakeups++;
        while (next_page <= now) {
            publish();
            next_page += page_ns;
        }
        uint64_t due;
        int queued = 0;
        while ((due = base + j * flush_ns / (uint64_t)opt.n) <= now) {
            if (now - due > st.max_late_ns) st.max_late_ns = now - due;
            uint32_t idx = (uint32_t)(j % (uint64_t)opt.n);
            if (opt.mode == M_URING || opt.mode == M_URINGFIX) {
                queue_send(idx);
                queued = 1;
            } else {
                send_direct(&L[idx]);
            }
            j++;
        }
        if (queued || inflight > 0) submit_and_reap();
        /* Sleep (the same way in every mode) until the next page, the next listener, or a window edge. */
        uint64_t next = next_page < due ? next_page : due;
        if (!in_hold && hold_start < next) next = hold_start;
        if (hold_end < next) next = hold_end;
        now = now_ns();
        if (next > now) {
            int timeout_ms = (int)((next - now + 999999) / 1000000);
            if (epoll_wait(ep, evs, 8, timeout_ms) < 0 && errno != EINTR) die("epoll_wait");
        }
    }
    getrusage(RUSAGE_SELF, &ru1);
    t_hold1 = now_ns();
    if (write(ctl[1], "E", 1) != 1) die("control pipe");
    uint64_t hold_bytes = st.bytes - hold_bytes0, hold_writes = st.writes - hold_writes0;

    /* Let outstanding io_uring sends finish (bounded), then close everything so the reader sees EOF. */
    if (opt.mode == M_URING || opt.mode == M_URINGFIX) {
        uint64_t deadline = now_ns() + 5000000000ull;
        while (inflight > 0 && now_ns() < deadline) {
            struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 10000000};
            struct io_uring_cqe *cqe;
            io_uring_wait_cqe_timeout(&uring, &cqe, &ts);
            reap();
        }
    }
    char threads[32] = "?";
    {
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "Threads:", 8)) sscanf(line + 8, "%31s", threads);
        if (f) fclose(f);
    }
    if (opt.mode == M_URING || opt.mode == M_URINGFIX) io_uring_queue_exit(&uring);
    for (int i = 0; i < opt.n; i++) close(L[i].fd);

    struct reader_result rr;
    ssize_t g = read(res[0], &rr, sizeof rr);
    int status = 0;
    waitpid(rpid, &status, 0);
    if (g != (ssize_t)sizeof rr) fail("no result from the reader");

    double hold = (double)(t_hold1 - t_hold0) / 1e9;
    double user = (double)(tv_us(ru1.ru_utime) - tv_us(ru0.ru_utime));
    double sys = (double)(tv_us(ru1.ru_stime) - tv_us(ru0.ru_stime));
    double ls = hold * opt.n;
    long vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw, ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
    int ok = rr.bytes == st.bytes && rr.eofs == (uint64_t)opt.n && rr.connect_failures == 0 && st.errors == 0;
    printf("mode=%s n=%d flush_ms=%d page=%d page_ms=%d entries=%d uring_setup=%s ramp_s=%.2f hold_s=%.3f"
           " w_user_us=%.0f w_sys_us=%.0f us_per_ls=%.3f user_per_ls=%.3f sys_per_ls=%.3f"
           " r_us_per_ls=%.3f r_user_us=%llu r_sys_us=%llu us_per_write=%.3f"
           " hold_writes=%llu hold_bytes=%llu bytes_per_write=%.0f writes=%llu bytes_written=%llu bytes_received=%llu"
           " eofs=%llu connect_failures=%llu partial=%llu eagain=%llu enobufs=%llu errors=%llu skipped_inflight=%llu"
           " overruns=%llu iov_capped=%llu wakeups=%llu submits=%llu max_late_ms=%.1f zc_notifications=%llu"
           " zc_copied=%llu threads=%s reader_nap_ms=%d vcsw=%ld ivcsw=%ld ok=%d\n",
           mode_names[opt.mode], opt.n, opt.flush_ms, opt.page, opt.page_ms, opt.entries, uring_setup, ramp_s, hold,
           user, sys, (user + sys) / ls, user / ls, sys / ls, (double)(rr.user_us + rr.sys_us) / ls,
           (unsigned long long)rr.user_us, (unsigned long long)rr.sys_us,
           hold_writes ? (user + sys) / (double)hold_writes : 0.0, (unsigned long long)hold_writes,
           (unsigned long long)hold_bytes, hold_writes ? (double)hold_bytes / (double)hold_writes : 0.0,
           (unsigned long long)st.writes, (unsigned long long)st.bytes, (unsigned long long)rr.bytes,
           (unsigned long long)rr.eofs, (unsigned long long)rr.connect_failures, (unsigned long long)st.partial,
           (unsigned long long)st.eagain, (unsigned long long)st.enobufs, (unsigned long long)st.errors,
           (unsigned long long)st.skipped_inflight, (unsigned long long)st.overruns,
           (unsigned long long)st.iov_capped, (unsigned long long)st.wakeups, (unsigned long long)st.submits,
           (double)st.max_late_ns / 1e6, (unsigned long long)st.zc_notifications, (unsigned long long)st.zc_copied,
           threads, opt.reader_nap_ms, vcsw, ivcsw, ok);
    return ok ? 0 : 1;
}
