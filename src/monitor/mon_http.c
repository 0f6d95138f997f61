/* mon_http.c - the /metrics endpoint (see mon_http.h). Blocking calls are
 * avoided with poll against one deadline per connection; SIGPIPE is never
 * raised (MSG_NOSIGNAL), so a scraper that goes away costs nothing. */
#include "mon_http.h"
#include "../base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Split "HOST:PORT" / "[V6]:PORT" / ":PORT" / "PORT". */
static int split_addr(const char *addr, char *host, size_t host_size, long *port)
{
    const char *colon;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':' || (size_t)(close - addr - 1) >= host_size)
            return -1;
        memcpy(host, addr + 1, (size_t)(close - addr - 1));
        host[close - addr - 1] = 0;
        colon = close + 1;
    } else if ((colon = strrchr(addr, ':'))) {
        if ((size_t)(colon - addr) >= host_size)
            return -1;
        memcpy(host, addr, (size_t)(colon - addr));
        host[colon - addr] = 0;
    } else {
        host[0] = 0;
        colon = addr - 1; /* the whole string is the port */
    }
    if (!host[0])
        snprintf(host, host_size, "127.0.0.1");
    char *end;
    *port = strtol(colon + 1, &end, 10);
    return colon[1] && !*end && *port >= 0 && *port <= 65535 ? 0 : -1;
}

int mon_http_listen(mon_http *h, const char *addr, cp_error *err)
{
    memset(h, 0, sizeof *h);
    h->fd = -1;
    char host[64], port_s[16];
    long port;
    if (split_addr(addr, host, sizeof host, &port) < 0)
        return cp_error_set(err, CP_ERR_USAGE, addr, 0, 0, -1, "not an address: expected HOST:PORT, [IPV6]:PORT or :PORT");
    snprintf(port_s, sizeof port_s, "%ld", port);
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE, .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai = NULL;
    int e = getaddrinfo(host, port_s, &hints, &ai);
    if (e != 0)
        return cp_error_set(err, CP_ERR_USAGE, addr, 0, 0, -1, "not a numeric address: %s", gai_strerror(e));
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 16) < 0) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        errno = saved;
        return cp_error_sys(err, CP_ERR_IO, addr, "cannot listen");
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char numeric[64] = "?", serv[16] = "?";
    if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
        getnameinfo((struct sockaddr *)&ss, len, numeric, sizeof numeric, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(h->bound, sizeof h->bound, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", numeric, serv);
    h->fd = fd;
    return 0;
}

void mon_http_close(mon_http *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}

int mon_http_status_of(const char *req, size_t n, bool complete, bool *head)
{
    *head = false;
    if (!complete)
        return n + 1 >= MON_HTTP_MAX_REQUEST ? 431 : 408; /* the buffer keeps one byte for a NUL */
    const char *sp1 = memchr(req, ' ', n);
    if (!sp1)
        return 400;
    const char *sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - req));
    const char *eol = memchr(req, '\r', n);
    if (!sp2 || !eol || sp2 > eol || strncmp(sp2 + 1, "HTTP/1.", 7) != 0)
        return 400;
    size_t mlen = (size_t)(sp1 - req);
    bool get = mlen == 3 && memcmp(req, "GET", 3) == 0;
    *head = mlen == 4 && memcmp(req, "HEAD", 4) == 0;
    if (!get && !*head)
        return 405;
    /* the path, without a query string (Prometheus may add none, a browser may) */
    size_t plen = (size_t)(sp2 - sp1 - 1);
    const char *q = memchr(sp1 + 1, '?', plen);
    if (q)
        plen = (size_t)(q - sp1 - 1);
    if (plen == 8 && memcmp(sp1 + 1, "/metrics", 8) == 0)
        return 200;
    return 404;
}

/* Send all of data before the deadline (ms since the connection began). */
static bool send_all(int fd, const char *data, size_t n, int64_t deadline_ns)
{
    while (n) {
        int64_t left_ms = (deadline_ns - cp_now_ns()) / 1000000;
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        if (left_ms <= 0 || poll(&p, 1, (int)left_ms) <= 0)
            return false;
        ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (w <= 0)
            return false;
        data += w;
        n -= (size_t)w;
    }
    return true;
}

/* Read the request head: true when the blank line arrived in time and size. */
static bool read_request(int fd, char *buf, size_t cap, size_t *n, int64_t deadline_ns)
{
    *n = 0;
    while (*n < cap - 1) {
        int64_t left_ms = (deadline_ns - cp_now_ns()) / 1000000;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (left_ms <= 0 || poll(&p, 1, (int)left_ms) <= 0)
            return false;
        ssize_t r = recv(fd, buf + *n, cap - 1 - *n, 0);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (r <= 0)
            return false;
        *n += (size_t)r;
        buf[*n] = 0;
        if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
            return true;
    }
    return false;
}

static const char *reason_of(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    default: return "Request Header Fields Too Large";
    }
}

void mon_http_serve_one(mon_http *h, const cp_buf *body)
{
    int fd = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return; /* another wake-up took it, or the client gave up */
    int64_t deadline = cp_now_ns() + (int64_t)MON_HTTP_TIMEOUT_MS * 1000000;
    char req[MON_HTTP_MAX_REQUEST];
    size_t n;
    bool complete = read_request(fd, req, sizeof req, &n, deadline);
    bool head;
    int status = mon_http_status_of(req, n, complete, &head);
    h->requests++;
    if (status != 200)
        h->errors++;
    const char *text = status == 200 ? cp_buf_str(body) : reason_of(status);
    size_t len = status == 200 ? body->len : strlen(text);
    char hdr[512];
    int hl = snprintf(hdr, sizeof hdr,
                      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
                      status, reason_of(status),
                      status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8", len,
                      status == 405 ? "Allow: GET, HEAD\r\n" : "");
    if (send_all(fd, hdr, (size_t)hl, deadline) && !head)
        send_all(fd, text, len, deadline);
    shutdown(fd, SHUT_WR);
    close(fd);
}
