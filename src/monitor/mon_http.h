/* mon_http.h - the monitor's /metrics endpoint: a minimal HTTP/1.1 server
 * for Prometheus's scraper, on the one address given (default 127.0.0.1).
 *
 * One connection at a time, in the monitor's own loop (no thread): a
 * request is read up to MON_HTTP_MAX_REQUEST bytes and within
 * MON_HTTP_TIMEOUT_MS, answered, and the connection closed, so no client
 * can hold the sampler longer than that. GET and HEAD of /metrics get the
 * exposition (text/plain; version=0.0.4); other paths 404, other methods
 * 405, an oversized or slow request 431 / 408, garbage 400.
 */
#ifndef CP_MONITOR_MON_HTTP_H
#define CP_MONITOR_MON_HTTP_H

#include "../base/buf.h"
#include "../base/error.h"

#include <stdbool.h>

#define MON_HTTP_MAX_REQUEST 8192
#define MON_HTTP_TIMEOUT_MS 2000

typedef struct mon_http {
    int fd;             /* listening socket, -1 when closed */
    char bound[96];     /* "127.0.0.1:9400" as bound (the port chosen when 0 was asked) */
    long requests, errors;
} mon_http;

/* Listen on "HOST:PORT", "[V6]:PORT" or ":PORT" / "PORT" (127.0.0.1).
 * Returns 0, or CP_ERR_USAGE (a malformed address) / CP_ERR_IO (bind). */
int mon_http_listen(mon_http *h, const char *addr, cp_error *err);
/* Accept and answer one pending connection with body (the current
 * exposition); call when poll says h->fd is readable. */
void mon_http_serve_one(mon_http *h, const cp_buf *body);
void mon_http_close(mon_http *h);

/* For tests: the status an HTTP request gets (200, 400, 404, 405, 408,
 * 431), whether it is HEAD; req is what was read, complete when it holds
 * the blank line ending the headers. */
int mon_http_status_of(const char *req, size_t n, bool complete, bool *head);

#endif
