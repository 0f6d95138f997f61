/* run_clock.c - the clock exchange of `chainprof run` (method in
 * run_clock.h). Wire format, both ways 16 bytes: the request is "CPCLOCK1"
 * and a sequence number (uint64); the reply echoes the sequence and the
 * reference's CLOCK_REALTIME in ns (int64), native byte order (both ends
 * are this program). A reply to another sequence is ignored.
 */
#include "run_clock.h"
#include "../base/log.h"
#include "../collect/col_env.h"
#include "chainprof/cptrace.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 16
static const char magic[8] = { 'C', 'P', 'C', 'L', 'O', 'C', 'K', '1' };

static int64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void file_name(char *out, size_t n, const char *dir, const char *job)
{
    char safe[80];
    size_t k = 0;
    for (const char *p = job; *p && k + 1 < sizeof safe; p++)
        safe[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                            *p == '_' || *p == '.'
                        ? *p
                        : '_';
    safe[k] = 0;
    snprintf(out, n, "%s/.chainprof-clock-%s", dir, k ? safe : "job");
}

static int io_full(int fd, void *buf, size_t n, bool wr, int timeout_ms)
{
    char *p = buf;
    size_t done = 0;
    while (done < n) {
        struct pollfd pf = { fd, wr ? POLLOUT : POLLIN, 0 };
        int pr = poll(&pf, 1, timeout_ms);
        if (pr <= 0)
            return -1;
        ssize_t k = wr ? write(fd, p + done, n - done) : read(fd, p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

/* ---- the reference ---- */

static void serve_one(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (int i = 0; i < ROUNDS; i++) {
        unsigned char req[16], rep[16];
        if (io_full(fd, req, sizeof req, false, 5000) < 0 || memcmp(req, magic, 8) != 0)
            break;
        int64_t now = real_ns();
        memcpy(rep, req + 8, 8);
        memcpy(rep + 8, &now, 8);
        if (io_full(fd, rep, sizeof rep, true, 5000) < 0)
            break;
    }
    close(fd);
}

static void *serve(void *arg)
{
    run_clock *c = arg;
    for (;;) {
        int fd = accept(c->listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL; /* the socket was shut down: the job ended */
        }
        serve_one(fd); /* one at a time: the exchanges are short and a queue keeps them from sharing a core */
    }
}

int run_clock_lead(run_clock *c, const char *dir, const char *job)
{
    c->sync = CPT_SYNC_LEADER;
    c->offset_ns = 0;
    c->rtt_ns = 0;
    c->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY), .sin_port = 0 };
    socklen_t al = sizeof a;
    if (c->listen_fd < 0 || bind(c->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(c->listen_fd, 256) != 0 || getsockname(c->listen_fd, (struct sockaddr *)&a, &al) != 0) {
        cp_log_warn("run: clock reference: cannot listen on TCP: %s (ranks keep their own clocks)", strerror(errno));
        if (c->listen_fd >= 0)
            close(c->listen_fd);
        c->listen_fd = -1;
        return -1;
    }
    char tmp[1300];
    file_name(c->path, sizeof c->path, dir, job);
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", c->path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    struct ifaddrs *ifs = NULL, *i;
    int n = 0;
    if (f && getifaddrs(&ifs) == 0) {
        for (i = ifs; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                continue;
            const struct sockaddr_in *s = (const struct sockaddr_in *)(const void *)i->ifa_addr;
            char ip[INET_ADDRSTRLEN];
            if (!inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip) || !strncmp(ip, "127.", 4))
                continue;
            fprintf(f, "%s %u\n", ip, (unsigned)ntohs(a.sin_port));
            n++;
        }
        freeifaddrs(ifs);
    }
    if (f) /* loopback last: ranks on this host (and a host without other addresses) */
        fprintf(f, "127.0.0.1 %u\n", (unsigned)ntohs(a.sin_port));
    if (!f || fclose(f) != 0 || rename(tmp, c->path) != 0) {
        cp_log_warn("run: clock reference: cannot write %s: %s (ranks keep their own clocks)", c->path,
                    strerror(errno));
        unlink(tmp);
        close(c->listen_fd);
        c->listen_fd = -1;
        c->path[0] = 0;
        return -1;
    }
    pthread_t *t = malloc(sizeof *t);
    if (!t || pthread_create(t, NULL, serve, c) != 0) {
        free(t);
        run_clock_end(c);
        return -1;
    }
    c->thread = t;
    return 0;
}

void run_clock_end(run_clock *c)
{
    if (c->listen_fd >= 0) {
        shutdown(c->listen_fd, SHUT_RDWR);
        if (c->thread) {
            pthread_join(*(pthread_t *)c->thread, NULL);
            free(c->thread);
            c->thread = NULL;
        }
        close(c->listen_fd);
        c->listen_fd = -1;
    }
    if (c->path[0])
        unlink(c->path);
    c->path[0] = 0;
}

/* ---- the others ---- */

static int connect_to(const char *ip, unsigned port, int timeout_ms)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    struct pollfd pf = { fd, POLLOUT, 0 };
    int err = 0;
    socklen_t el = sizeof err;
    if (poll(&pf, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* The rounds over one connection; 0 with the best round's offset. */
static int exchange(int fd, int64_t *offset, int64_t *rtt)
{
    int64_t best = INT64_MAX;
    for (uint64_t seq = 1; seq <= ROUNDS; seq++) {
        unsigned char req[16], rep[16];
        memcpy(req, magic, 8);
        memcpy(req + 8, &seq, 8);
        int64_t t1 = real_ns();
        if (io_full(fd, req, sizeof req, true, 2000) < 0 || io_full(fd, rep, sizeof rep, false, 2000) < 0)
            return best == INT64_MAX ? -1 : 0;
        int64_t t4 = real_ns(), ts;
        uint64_t echo;
        memcpy(&echo, rep, 8);
        memcpy(&ts, rep + 8, 8);
        if (echo != seq)
            continue;
        if (t4 - t1 < best) {
            best = t4 - t1;
            *rtt = best;
            *offset = ts - (t1 + (t4 - t1) / 2);
        }
    }
    return best == INT64_MAX ? -1 : 0;
}

int run_clock_follow(run_clock *c, const char *dir, const char *job, double timeout_s)
{
    c->sync = CPT_SYNC_NONE;
    c->offset_ns = 0;
    c->rtt_ns = -1;
    c->listen_fd = -1;
    c->path[0] = 0;
    char path[1200];
    file_name(path, sizeof path, dir, job);
    struct timespec t0, now, nap = { 0, 50 * 1000000L };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        FILE *f = fopen(path, "r");
        if (f) {
            char ip[64];
            unsigned port;
            while (fscanf(f, "%63s %u", ip, &port) == 2) {
                int fd = connect_to(ip, port, 1000);
                if (fd < 0)
                    continue;
                int64_t off = 0, rtt = 0;
                int rc = exchange(fd, &off, &rtt);
                close(fd);
                if (rc == 0) {
                    fclose(f);
                    c->sync = CPT_SYNC_TCP;
                    c->offset_ns = off;
                    c->rtt_ns = rtt;
                    return 0;
                }
            }
            fclose(f);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) * 1e-9 > timeout_s)
            break;
        nanosleep(&nap, NULL);
    }
    cp_log_warn("run: no clock reference answered within %.0f s (%s): this rank keeps its own clock", timeout_s,
                path);
    return -1;
}
